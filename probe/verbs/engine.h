/* SPDX-License-Identifier: MIT */
/*
 * Verbs resources for one test: the device and its resolved port (GID,
 * P_Key, MTU), then a protection domain, one registered buffer split per
 * QP, completion queues and RC QPs brought to RTS against the peer's
 * endpoint. Setup unwinds in reverse order on failure; veng_free() is its
 * mirror image. Internal to probe/verbs.
 */
#ifndef IBPULSE_VERBS_ENGINE_H
#define IBPULSE_VERBS_ENGINE_H

#include <infiniband/verbs.h>
#include <stdint.h>

#include "ctrl.h"
#include "resolve.h"
#include "vtest.h"

/* An open device with its port resolved. */
struct vdev {
	struct ibv_context *ctx;
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	char name[VT_NAME_MAX];
	unsigned port;
	unsigned gid_index;
	enum vt_gid_type gid_type;
	union ibv_gid gid;
	unsigned pkey_index;
	unsigned pkey;
	enum ibv_mtu mtu; /* chosen here (forced or active) */
	bool mtu_forced;
	unsigned max_rd_atomic;	     /* what this side can issue */
	unsigned max_dest_rd_atomic; /* what this side can take */
};

/*
 * vdev_open() - open @p->device (or the first one) and resolve its port,
 * GID and P_Key from @p. On failure @err names the valid choices.
 */
int vdev_open(const struct vt_params *p, struct vdev **out, char *err,
	      size_t errlen);
void vdev_close(struct vdev *d);
/* Fill the static part of an endpoint (no QPs yet). */
void vdev_endpoint(const struct vdev *d, struct ctrl_endpoint *ep);
/* MTU in bytes for an enum ibv_mtu, 0 when out of range. */
unsigned veng_mtu_bytes(enum ibv_mtu m);
int veng_mtu_enum(unsigned bytes, enum ibv_mtu *out);

/*
 * Credits for bidirectional SEND: after the per-QP slots, each QP has a
 * VENG_CREDIT_BYTES area. Its first 8 bytes are written by the peer (its
 * count of receives posted on that QP, in all); the next VENG_CREDIT_WRS
 * words are the sources of our own credit writes, one per write in flight.
 * The send queue has VENG_CREDIT_WRS spare entries for them.
 */
#define VENG_CREDIT_BYTES 64
#define VENG_CREDIT_WRS 4

/* UD: every QP's Q_Key, and the GRH space ahead of each received message. */
#define VENG_QKEY 0x11111111u
#define VENG_GRH_BYTES 40

struct veng_cfg {
	unsigned qps;
	uint32_t size;
	unsigned tx_depth; /* send queue depth per QP */
	unsigned rx_depth; /* receive queue depth per QP, 0: none */
	unsigned inline_size;
	unsigned rd_atomic; /* outstanding reads/atomics issued */
	bool ud;	    /* unreliable datagram QPs instead of RC */
	/* Client: the LID to send to on InfiniBand, one of the peer port's
	 * 2^LMC (a plan's choice of path); 0: the LID its endpoint gives. */
	unsigned dlid;
};

struct veng {
	struct vdev *dev;
	struct veng_cfg cfg;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t stride; /* bytes per QP, page-rounded */
	size_t buf_len;
	struct ibv_cq *scq;
	struct ibv_cq *rcq;
	struct ibv_qp **qp;
	uint32_t *psn;
	struct ibv_ah *ah; /* UD: the way to the peer, after veng_connect() */
};

/*
 * Paths: what points a QP at its peer (vah.c, pure). @ethernet: the local
 * port is RoCE, where the GID in a GRH routes and a DLID means nothing.
 */
struct veng_path {
	bool ethernet;
	unsigned port;	    /* the local port */
	unsigned gid_index; /* the local GID, for a GRH */
	unsigned sl, tclass;
	unsigned dlid; /* veng_cfg.dlid */
};

/*
 * veng_dlid() - the DLID a test sends to: @p->dlid when it is one of the
 * LIDs a port with base LID @r->lid may own (LMC <= 7), else @r->lid; 0
 * on RoCE or toward a peer without a LID (routed by GID).
 */
unsigned veng_dlid(const struct veng_path *p, const struct ctrl_endpoint *r);
/* The address vector toward @r (RC RTR, UD address handles). */
void veng_ah_attr(const struct veng_path *p, const struct ctrl_endpoint *r,
		  struct ibv_ah_attr *ah);
/* RC QP @i's RTR attributes toward @r; returns the ibv_modify_qp mask. */
int veng_rtr_attr(const struct veng_path *p, const struct ctrl_endpoint *r,
		  unsigned i, enum ibv_mtu mtu, unsigned dest_rd,
		  struct ibv_qp_attr *a);

int veng_new(struct vdev *dev, const struct veng_cfg *cfg, struct veng **out,
	     char *err, size_t errlen);
void veng_free(struct veng *e);
/* Local endpoint with QPNs, PSNs, rkey and address. */
void veng_endpoint(const struct veng *e, struct ctrl_endpoint *ep);
/*
 * veng_connect() - bring every QP to RTS against @remote using @mtu, the
 * responder-side read depth @dest_rd and the requester depth @rd. UD QPs
 * get an address handle to the peer instead, and a message size above
 * the path MTU is refused with the valid range.
 */
int veng_connect(struct veng *e, const struct ctrl_endpoint *remote,
		 enum ibv_mtu mtu, unsigned sl, unsigned tclass, unsigned rd,
		 unsigned dest_rd, char *err, size_t errlen);
/*
 * Data integrity: fill, or check, the first cfg.size bytes of every QP's
 * receive half (@rx) or send half with a pattern that depends on the QP
 * and the offset. veng_check() returns -EILSEQ and names the first bad
 * byte in @err.
 */
void veng_fill(struct veng *e, bool rx);
int veng_check(const struct veng *e, bool rx, char *err, size_t len);

/*
 * veng_rx_depth() - receives to keep posted per QP on one side of @test
 * (@client or the responder), 0: none. A SEND stream gets 512, and at
 * least twice its send depth, so the receiver always has slack; it
 * depends only on what both sides agree on, so each side knows the
 * other's.
 */
unsigned veng_rx_depth(enum vt_test test, const struct vt_used *u, bool client);
/* QP @i's credit area (see VENG_CREDIT_BYTES). */
uint64_t *veng_credit(const struct veng *e, unsigned i);
/* The peer's credit area of QP @i, for an RDMA WRITE. */
uint64_t veng_remote_credit(const struct ctrl_endpoint *remote, unsigned i);

/* Post one receive of the QP's whole slot on QP @i. */
int veng_post_recv(struct veng *e, unsigned i);

#endif
