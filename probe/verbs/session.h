/* SPDX-License-Identifier: MIT */
/*
 * One side of a control-channel session: the socket, the nonces, the
 * opened device and resources, and the helpers both the client (client.c)
 * and the responder (serve.c) use to speak the protocol and to agree on
 * MTU, P_Key and GID type before any traffic. Internal to probe/verbs.
 */
#ifndef IBPULSE_VERBS_SESSION_H
#define IBPULSE_VERBS_SESSION_H

#include "engine.h"
#include "run.h"

struct vsess {
	int fd;
	unsigned version; /* control protocol of this session; 0 unknown */
	double step_s;	  /* timeout of each control step */
	const volatile sig_atomic_t *stop; /* ends control waits, NULL */
	const uint8_t *secret; /* MAC key: the shared secret or the ticket */
	size_t secret_len;
	bool ticketed;			    /* v3: secret is ticket_key */
	uint8_t ticket_key[TICKET_KEY_LEN]; /* the ticket, responder side */
	struct ticket_claims claims;	    /* v3: the REQUEST's claims */
	uint8_t nonce_c[CTRL_NONCE_LEN];
	uint8_t nonce_s[CTRL_NONCE_LEN];
	struct vdev *dev;
	struct veng *eng;
	struct ctrl_endpoint local;
	struct ctrl_endpoint remote;
	enum ibv_mtu mtu;
	unsigned rd; /* reads/atomics this side issues */
	uint8_t out[CTRL_HDR_LEN + CTRL_MAX_PAYLOAD];
	uint8_t in[CTRL_MAX_PAYLOAD];
	struct ctrl_hdr h;
	struct vt_result *res;
	enum vt_test test;
	bool check_rx; /* verify the receive halves at DONE */
};

uint64_t vsess_deadline(const struct vsess *s);
/* Send the @len bytes in s->out, in the session's protocol version. */
int vsess_send(struct vsess *s, int len);
/*
 * Receive the next message until @deadline_ns and insist it is @type in
 * the session's version; a REFUSE becomes an error carrying the peer's
 * reason.
 */
int vsess_expect(struct vsess *s, int type, uint64_t deadline_ns);
/* Sign the message in s->out (@len bytes, trailing MAC) in place. */
int vsess_sign(struct vsess *s, int len, const char *label, const uint8_t *na,
	       const uint8_t *nb);
/* Check the MAC of the payload in s->in (@len bytes, trailing MAC). */
int vsess_verify(struct vsess *s, size_t len, const char *label,
		 const uint8_t *na, const uint8_t *nb);
/*
 * vsess_agree() - may these endpoints talk? Same link layer, same GID
 * type on RoCE, compatible P_Keys, and an MTU both accept (the smaller
 * active one unless either side forced its own). Sets s->mtu.
 */
int vsess_agree(struct vsess *s, const struct ctrl_endpoint *mine,
		const struct ctrl_endpoint *peer, char *err, size_t len);
/* Record the resolved port and remote identity in res->used. */
void vsess_fill_used(struct vsess *s);
/*
 * Set up @r for the measured loop from the agreed settings in res->used;
 * the caller picks the direction (do_send, do_recv, peer_may_end).
 */
void vsess_run_init(struct vsess *s, enum vt_test test, double interval_s,
		    struct vwatch *w, struct vrun *r);
/* vt_side <-> wire form. */
void vsess_side_to_msg(const struct vt_side *s, struct ctrl_result *m);
void vsess_msg_to_side(const struct ctrl_result *m, struct vt_side *s);
void vsess_ctr_to_msg(const struct vt_portctr *c, struct ctrl_counters *m);
void vsess_msg_to_ctr(const struct ctrl_counters *m, struct vt_portctr *c);
/* Set res->status and res->error, formatted. */
int vsess_fail(struct vsess *s, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Release the resources and the device (not the socket). */
void vsess_release(struct vsess *s);
/* Post every receive of every QP (SEND tests, before traffic). */
int vsess_prepost(struct vsess *s);

#define VSESS_LABEL_REQ "ibpulse-verbs-v1 request"
#define VSESS_LABEL_ACC "ibpulse-verbs-v1 accept"

#endif
