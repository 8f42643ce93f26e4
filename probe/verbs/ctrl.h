/* SPDX-License-Identifier: MIT */
/*
 * The out-of-band TCP control channel between a verbs test client and its
 * responder. Every message is a 12-byte header (magic "IBPV", version,
 * type, payload length, all big-endian) and a payload of at most
 * CTRL_MAX_PAYLOAD bytes. The codec below is pure (bytes in, struct out,
 * every field range-checked) so it can be unit-tested and fuzzed; the
 * socket half sends and receives whole messages against a deadline.
 *
 * Exchange: HELLO (client nonce) -> CHALLENGE (responder nonce, whether a
 * secret is required) -> REQUEST (test parameters, client endpoint, MAC)
 * -> ACCEPT (responder endpoint with QPNs, MAC) or REFUSE (reason) ->
 * CONNECT (client QPNs) -> READY -> test -> DONE (client result) ->
 * RESULT (responder's view). Either side may send REFUSE at any step.
 *
 * Versions: 1 and 2 differ only in REQUEST (v2 adds the device and port
 * the client wants at the responder) and DONE/RESULT (v2 adds the port
 * counter deltas the sender saw over the test). The client speaks its
 * version from HELLO on; a responder answers every message in the
 * client's version, so a v1 client still works against a v2 responder.
 * A v1 responder refuses a v2 client's HELLO ("unsupported control
 * protocol version 2"): there is no fallback.
 *
 * Version 3 is version 2 with a ticket in REQUEST (struct ctrl_ticket,
 * after the port): the claims of a test the collector planned, whose
 * ticket (never sent) is the MAC key of REQUEST and ACCEPT. A client
 * speaks 3 only when it holds a ticket, else 2, so a plain client still
 * reaches a v2 responder.
 */
#ifndef IBPULSE_VERBS_CTRL_H
#define IBPULSE_VERBS_CTRL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTRL_MAGIC 0x49425056u /* "IBPV" */
#define CTRL_VERSION 2	       /* what this side speaks first */
#define CTRL_VERSION_TICKET 3  /* ... when it presents a ticket */
#define CTRL_VERSION_MAX 3     /* the newest it speaks */
#define CTRL_VERSION_MIN 1     /* the oldest it still answers */
#define CTRL_HDR_LEN 12
#define CTRL_MAX_PAYLOAD 4096
#define CTRL_NONCE_LEN 16
#define CTRL_MAC_LEN 32
#define CTRL_MAX_QPS 64
#define CTRL_REASON_MAX 200
#define CTRL_DEV_MAX 63	 /* device name bytes, [A-Za-z0-9_.-] */
#define CTRL_NAME_MAX 64 /* plan id and host name bytes, the same set */

enum ctrl_type {
	CTRL_HELLO = 1,
	CTRL_CHALLENGE,
	CTRL_REQUEST,
	CTRL_ACCEPT,
	CTRL_REFUSE,
	CTRL_CONNECT,
	CTRL_READY,
	CTRL_DONE,
	CTRL_RESULT,
	CTRL_TYPE_MAX = CTRL_RESULT,
};

struct ctrl_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t len;
};

struct ctrl_hello {
	uint8_t nonce[CTRL_NONCE_LEN];
};

struct ctrl_challenge {
	uint8_t nonce[CTRL_NONCE_LEN];
	uint8_t auth_required;
};

/* One side's view of its port and, after resource setup, its QPs. */
struct ctrl_endpoint {
	uint16_t lid;
	uint8_t gid[16];
	uint8_t gid_type;   /* enum vt_gid_type */
	uint8_t link_layer; /* IBV_LINK_LAYER_* */
	uint8_t gid_index;
	uint16_t pkey; /* value with the membership bit */
	uint16_t pkey_index;
	uint8_t mtu;	    /* enum ibv_mtu, 1..5 */
	uint8_t mtu_forced; /* 1: the user asked for exactly this MTU */
	uint8_t rd_atomic;  /* outstanding reads/atomics it can take */
	uint32_t rkey;
	uint64_t addr;
	uint64_t stride; /* bytes between per-QP buffers */
	uint16_t nqps;
	uint32_t qpn[CTRL_MAX_QPS];
	uint32_t psn[CTRL_MAX_QPS];
};

#define CTRL_F_BIDIR 0x1
#define CTRL_F_INLINE 0x2
#define CTRL_F_VERIFY 0x4

/*
 * v3: what the initiator's ticket vouches for (common/ticket.h): its plan
 * entry, itself, and the slot. The responder's device and port are the
 * REQUEST's own. Names are [A-Za-z0-9_.-]; the plan id and host are not
 * empty; not_before_ms < deadline_ms.
 */
struct ctrl_ticket {
	char plan_id[CTRL_NAME_MAX + 1];
	char host[CTRL_NAME_MAX + 1];
	char device[CTRL_DEV_MAX + 1];
	uint8_t ib_port;
	uint64_t period;
	uint64_t not_before_ms, deadline_ms; /* epoch milliseconds */
};

struct ctrl_request {
	uint16_t version; /* 0: CTRL_VERSION; set by the decoder */
	uint16_t test;	  /* enum vt_test */
	uint16_t flags;	  /* CTRL_F_* */
	uint16_t qps;
	uint32_t size;
	uint32_t tx_depth;
	uint32_t iters;
	uint32_t duration_ms; /* 0: iteration mode */
	uint32_t inline_size;
	uint8_t sl;
	uint8_t tclass;
	struct ctrl_endpoint ep; /* static part; nqps is 0 */
	/* v2: the responder's port to use; "" and 0: its default. */
	char device[CTRL_DEV_MAX + 1];
	uint8_t ib_port;	   /* 0..254 */
	struct ctrl_ticket ticket; /* v3 */
	uint8_t mac[CTRL_MAC_LEN];
};

struct ctrl_accept {
	struct ctrl_endpoint ep;
	uint8_t mac[CTRL_MAC_LEN];
};

struct ctrl_refuse {
	int32_t code; /* negative errno */
	char reason[CTRL_REASON_MAX + 1];
};

#define CTRL_CTR_BYTES 0x1 /* xmit_bytes, rcv_bytes */
#define CTRL_CTR_PKTS 0x2  /* xmit_pkts, rcv_pkts */
#define CTRL_CTR_WAIT 0x4  /* xmit_wait */
#define CTRL_CTR_CNP 0x8   /* cnp: congestion notifications, summed */
#define CTRL_CTR_ALL 0xf

/*
 * v2: how much a port's counters rose over the test, as the sender read
 * them. A field whose CTRL_CTR_* bit is clear is 0 on the wire.
 */
struct ctrl_counters {
	uint8_t has; /* CTRL_CTR_* */
	uint64_t xmit_bytes, rcv_bytes;
	uint64_t xmit_pkts, rcv_pkts;
	uint64_t xmit_wait;
	uint64_t cnp;
};

/* The numbers one side measured; sent in DONE and RESULT. */
struct ctrl_result {
	uint16_t version;   /* 0: CTRL_VERSION; set by the decoder */
	int32_t status;	    /* 0 or negative errno */
	uint16_t wc_status; /* enum ibv_wc_status of the first failure */
	uint16_t wc_opcode;
	uint64_t bytes;
	uint64_t msgs;
	uint64_t elapsed_ns;
	uint64_t cpu_ns;
	uint64_t bw_avg_Bps;
	uint64_t bw_peak_Bps;
	uint64_t bw_min_Bps;
	uint64_t lat_n;
	uint64_t lat_ns[7]; /* min, median, mean, p99, p99.9, max, stdev */
	char error[CTRL_REASON_MAX + 1];
	struct ctrl_counters ctr; /* v2 */
};

/*
 * Encoders write a whole message (header + payload) into @buf of @cap
 * bytes and return its length, or -EINVAL/-ENOSPC. The header says
 * CTRL_VERSION, except for REQUEST, DONE and RESULT, whose layout depends
 * on the version: they say m->version (0: CTRL_VERSION). Decoders take a
 * payload whose header was already checked with ctrl_hdr_decode() (and,
 * where the layout depends on it, the header's version) and return 0 or
 * -EBADMSG when anything is out of range or the length is not exact.
 */
int ctrl_hdr_decode(const uint8_t *buf, size_t len, struct ctrl_hdr *h);

int ctrl_hello_encode(const struct ctrl_hello *m, uint8_t *buf, size_t cap);
int ctrl_hello_decode(const uint8_t *p, size_t len, struct ctrl_hello *m);
int ctrl_challenge_encode(const struct ctrl_challenge *m, uint8_t *buf,
			  size_t cap);
int ctrl_challenge_decode(const uint8_t *p, size_t len,
			  struct ctrl_challenge *m);
int ctrl_request_encode(const struct ctrl_request *m, uint8_t *buf, size_t cap);
int ctrl_request_decode(const uint8_t *p, size_t len, unsigned version,
			struct ctrl_request *m);
int ctrl_accept_encode(const struct ctrl_accept *m, uint8_t *buf, size_t cap);
int ctrl_accept_decode(const uint8_t *p, size_t len, struct ctrl_accept *m);
/* CONNECT carries a bare endpoint. */
int ctrl_connect_encode(const struct ctrl_endpoint *m, uint8_t *buf,
			size_t cap);
int ctrl_connect_decode(const uint8_t *p, size_t len, struct ctrl_endpoint *m);
int ctrl_refuse_encode(const struct ctrl_refuse *m, uint8_t *buf, size_t cap);
int ctrl_refuse_decode(const uint8_t *p, size_t len, struct ctrl_refuse *m);
/* @type is CTRL_DONE or CTRL_RESULT. */
int ctrl_result_encode(int type, const struct ctrl_result *m, uint8_t *buf,
		       size_t cap);
int ctrl_result_decode(const uint8_t *p, size_t len, unsigned version,
		       struct ctrl_result *m);
/* READY has an empty payload. */
int ctrl_empty_encode(int type, uint8_t *buf, size_t cap);

/* Rewrite the version in the header of the encoded message @msg. */
void ctrl_hdr_set_version(uint8_t *msg, unsigned version);

/* Copy a string, truncating to @len - 1 bytes; always NUL-terminated. */
void ctrl_strlcpy(char *dst, const char *src, size_t len);

/* A device name as the kernel forms them ([A-Za-z0-9_.-]), safe in a path. */
bool ctrl_dev_name_ok(const char *s);

/* Name of a message type for logs ("REQUEST"), "?" when unknown. */
const char *ctrl_type_name(int type);

/*
 * ctrl_mac() - HMAC-SHA256 over a label, both nonces and the payload of a
 * message up to (not including) its trailing MAC field, keyed with the
 * shared secret. The label differs per direction so a reflected MAC is
 * useless, and the nonces make a recorded exchange worthless later.
 */
int ctrl_mac(const uint8_t *secret, size_t secret_len, const char *label,
	     const uint8_t *nonce_a, const uint8_t *nonce_b,
	     const uint8_t *payload, size_t len, uint8_t mac[CTRL_MAC_LEN]);
/* Constant-time comparison; 0 when equal. */
int ctrl_mac_check(const uint8_t *a, const uint8_t *b);
/* Fill @buf with random bytes from the OS; 0 or negative errno. */
int ctrl_random(uint8_t *buf, size_t len);

/*
 * Socket half. ctrl_send() writes one whole message built by an encoder;
 * ctrl_recv() reads one message into @payload (cap CTRL_MAX_PAYLOAD) and
 * fills @h. Both give up at @deadline_ns (CLOCK_MONOTONIC) with -ETIMEDOUT;
 * a closed peer is -ECONNRESET; a bad header is -EBADMSG, a version this
 * side does not speak (outside CTRL_VERSION_MIN..CTRL_VERSION_MAX)
 * -EPROTONOSUPPORT (h->version tells which). With a
 * @stop flag (NULL: none), they give up with -ECANCELED within 100 ms of
 * it being set.
 */
int ctrl_send(int fd, const uint8_t *msg, size_t len, uint64_t deadline_ns,
	      const volatile sig_atomic_t *stop);
int ctrl_recv(int fd, struct ctrl_hdr *h, uint8_t *payload,
	      uint64_t deadline_ns, const volatile sig_atomic_t *stop);
/*
 * Send a REFUSE in protocol @version with a reason, best effort (errors
 * are ignored). Before a client said its version, CTRL_VERSION_MIN: every
 * client reads that.
 */
void ctrl_send_refuse(int fd, unsigned version, int code, const char *reason,
		      uint64_t deadline_ns);

/*
 * Connect to @host:@port (port may be 0 for the default) before deadline,
 * or until *@stop (-ECANCELED).
 */
int ctrl_connect(const char *host, const char *port, uint64_t deadline_ns,
		 const volatile sig_atomic_t *stop, int *fd_out);
/* Listen on @addr (NULL: any) and @port; *port_out is the bound port. */
int ctrl_listen(const char *addr, const char *port, int *fd_out,
		unsigned *port_out);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t ctrl_now_ns(void);

#endif
