// SPDX-License-Identifier: MIT
/*
 * The per-test verbs resources: one page-aligned buffer registered once and
 * split into a slot per QP (a receive half and a send half, so a latency
 * test never sends from the bytes the peer is writing), a send CQ, a
 * receive CQ, and RC QPs taken INIT -> RTR -> RTS the way rc_pingpong and
 * perftest do; or, for UD latency, UD QPs (a Q_Key, no peer in the QP)
 * and an address handle built from the peer's LID and GID, as ud_pingpong
 * does.
 */
#include "engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096

unsigned veng_mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

int veng_mtu_enum(unsigned bytes, enum ibv_mtu *out)
{
	enum ibv_mtu m;

	for (m = IBV_MTU_256; m <= IBV_MTU_4096; m++) {
		if (veng_mtu_bytes(m) == bytes) {
			*out = m;
			return 0;
		}
	}
	return -EINVAL;
}

static int make_qp(struct veng *e, unsigned i, char *err, size_t len)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->scq,
		.recv_cq = e->rcq,
		.cap =
			{
				.max_send_wr =
					e->cfg.tx_depth + VENG_CREDIT_WRS,
				.max_recv_wr =
					e->cfg.rx_depth ? e->cfg.rx_depth : 1,
				.max_send_sge = 1,
				.max_recv_sge = 1,
				.max_inline_data = e->cfg.inline_size,
			},
		.qp_type = e->cfg.ud ? IBV_QPT_UD : IBV_QPT_RC,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = (uint16_t)e->dev->pkey_index,
		.port_num = (uint8_t)e->dev->port,
		.qp_access_flags =
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};
	uint8_t rnd[3];
	int rc;

	e->qp[i] = ibv_create_qp(e->pd, &ia);
	if (!e->qp[i]) {
		rc = errno ? errno : ENOMEM;
		snprintf(err, len,
			 "ibv_create_qp (send depth %u, inline %u): %s",
			 e->cfg.tx_depth, e->cfg.inline_size, strerror(rc));
		return -rc;
	}
	/* The provider may round the inline size; keep what it gave. */
	if (ia.cap.max_inline_data < e->cfg.inline_size)
		e->cfg.inline_size = ia.cap.max_inline_data;
	if (e->cfg.ud) {
		a.qkey = VENG_QKEY;
		rc = ibv_modify_qp(e->qp[i], &a,
				   IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					   IBV_QP_PORT | IBV_QP_QKEY);
	} else {
		rc = ibv_modify_qp(e->qp[i], &a,
				   IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	}
	if (rc) {
		snprintf(err, len, "ibv_modify_qp(INIT): %s", strerror(rc));
		return -rc;
	}
	if (ctrl_random(rnd, sizeof(rnd)))
		memset(rnd, 0x5a, sizeof(rnd));
	e->psn[i] = (uint32_t)rnd[0] << 16 | (uint32_t)rnd[1] << 8 | rnd[2];
	return 0;
}

static int make_buf(struct veng *e, char *err, size_t len)
{
	size_t half = e->cfg.size + (e->cfg.ud ? VENG_GRH_BYTES : 0);

	if (half < 64)
		half = 64;

	half = (half + 63) & ~(size_t)63;
	e->stride = (2 * half + PAGE - 1) & ~(size_t)(PAGE - 1);
	e->buf_len = e->stride * e->cfg.qps + VENG_CREDIT_BYTES * e->cfg.qps;
	e->buf_len = (e->buf_len + PAGE - 1) & ~(size_t)(PAGE - 1);
	e->buf = aligned_alloc(PAGE, e->buf_len);
	if (!e->buf) {
		snprintf(err, len, "cannot allocate %zu bytes", e->buf_len);
		return -ENOMEM;
	}
	memset(e->buf, 0, e->buf_len);
	e->mr = ibv_reg_mr(e->pd, e->buf, e->buf_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC);
	if (!e->mr) {
		int rc = errno ? errno : ENOMEM;

		snprintf(err, len, "ibv_reg_mr(%zu bytes): %s", e->buf_len,
			 strerror(rc));
		return -rc;
	}
	return 0;
}

int veng_new(struct vdev *dev, const struct veng_cfg *cfg, struct veng **out,
	     char *err, size_t errlen)
{
	struct veng *e;
	unsigned i;
	int rc = -ENOMEM;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->dev = dev;
	e->cfg = *cfg;
	e->qp = calloc(cfg->qps, sizeof(*e->qp));
	e->psn = calloc(cfg->qps, sizeof(*e->psn));
	if (!e->qp || !e->psn)
		goto fail;
	e->pd = ibv_alloc_pd(dev->ctx);
	if (!e->pd) {
		snprintf(err, errlen, "ibv_alloc_pd failed");
		goto fail;
	}
	rc = make_buf(e, err, errlen);
	if (rc)
		goto fail;
	e->scq = ibv_create_cq(
		dev->ctx,
		(int)((cfg->tx_depth + VENG_CREDIT_WRS) * cfg->qps + 1), NULL,
		NULL, 0);
	e->rcq = ibv_create_cq(
		dev->ctx,
		(int)((cfg->rx_depth ? cfg->rx_depth : 1) * cfg->qps + 1), NULL,
		NULL, 0);
	if (!e->scq || !e->rcq) {
		rc = errno ? -errno : -ENOMEM;
		snprintf(err, errlen, "ibv_create_cq: %s", strerror(-rc));
		goto fail;
	}
	for (i = 0; i < cfg->qps; i++) {
		rc = make_qp(e, i, err, errlen);
		if (rc)
			goto fail;
	}
	*out = e;
	return 0;
fail:
	veng_free(e);
	return rc;
}

void veng_free(struct veng *e)
{
	unsigned i;

	if (!e)
		return;
	for (i = 0; e->qp && i < e->cfg.qps; i++)
		if (e->qp[i])
			ibv_destroy_qp(e->qp[i]);
	if (e->ah)
		ibv_destroy_ah(e->ah);
	if (e->rcq)
		ibv_destroy_cq(e->rcq);
	if (e->scq)
		ibv_destroy_cq(e->scq);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	free(e->buf);
	free(e->psn);
	free(e->qp);
	free(e);
}

void veng_endpoint(const struct veng *e, struct ctrl_endpoint *ep)
{
	unsigned i;

	vdev_endpoint(e->dev, ep);
	ep->rkey = e->mr->rkey;
	ep->addr = (uint64_t)(uintptr_t)e->buf;
	ep->stride = e->stride;
	ep->nqps = (uint16_t)e->cfg.qps;
	for (i = 0; i < e->cfg.qps; i++) {
		ep->qpn[i] = e->qp[i]->qp_num;
		ep->psn[i] = e->psn[i];
	}
}

/* This engine's path toward its peer (vah.c): RoCE always routes by GID,
 * InfiniBand by LID (the plan's DLID when it chose one). */
static void path_of(const struct veng *e, unsigned sl, unsigned tclass,
		    struct veng_path *p)
{
	*p = (struct veng_path){
		.ethernet = e->dev->pattr.link_layer == IBV_LINK_LAYER_ETHERNET,
		.port = e->dev->port,
		.gid_index = e->dev->gid_index,
		.sl = sl,
		.tclass = tclass,
		.dlid = e->cfg.dlid,
	};
}

static int to_rtr(struct veng *e, unsigned i, const struct ctrl_endpoint *r,
		  enum ibv_mtu mtu, unsigned sl, unsigned tclass,
		  unsigned dest_rd)
{
	struct ibv_qp_attr a;
	struct veng_path p;
	int mask;

	path_of(e, sl, tclass, &p);
	mask = veng_rtr_attr(&p, r, i, mtu, dest_rd, &a);
	return ibv_modify_qp(e->qp[i], &a, mask);
}

static int to_rts(struct veng *e, unsigned i, unsigned rd)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = e->psn[i],
		.max_rd_atomic = (uint8_t)rd,
	};

	return ibv_modify_qp(e->qp[i], &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				     IBV_QP_MAX_QP_RD_ATOMIC);
}

/* UD: RTR and RTS need no peer; the address handle carries it. */
static int ud_connect(struct veng *e, const struct ctrl_endpoint *remote,
		      enum ibv_mtu mtu, unsigned sl, unsigned tclass, char *err,
		      size_t errlen)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR};
	struct ibv_ah_attr ah;
	struct veng_path p;
	unsigned i;
	int rc;

	if (e->cfg.size > veng_mtu_bytes(mtu)) {
		snprintf(err, errlen,
			 "--size %u: a UD message fits one MTU: valid range "
			 "1..%u (the path MTU)",
			 e->cfg.size, veng_mtu_bytes(mtu));
		return -EMSGSIZE;
	}
	for (i = 0; i < e->cfg.qps; i++) {
		a.qp_state = IBV_QPS_RTR;
		rc = ibv_modify_qp(e->qp[i], &a, IBV_QP_STATE);
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = e->psn[i];
		if (!rc)
			rc = ibv_modify_qp(e->qp[i], &a,
					   IBV_QP_STATE | IBV_QP_SQ_PSN);
		if (rc) {
			snprintf(err, errlen, "ibv_modify_qp(UD RTR/RTS): %s",
				 strerror(rc));
			return -rc;
		}
	}
	path_of(e, sl, tclass, &p);
	veng_ah_attr(&p, remote, &ah);
	e->ah = ibv_create_ah(e->pd, &ah);
	if (!e->ah) {
		rc = errno ? errno : EINVAL;
		snprintf(err, errlen, "ibv_create_ah: %s", strerror(rc));
		return -rc;
	}
	return 0;
}

int veng_connect(struct veng *e, const struct ctrl_endpoint *remote,
		 enum ibv_mtu mtu, unsigned sl, unsigned tclass, unsigned rd,
		 unsigned dest_rd, char *err, size_t errlen)
{
	unsigned i;
	int rc;

	if (remote->nqps != e->cfg.qps) {
		snprintf(err, errlen, "peer has %u QPs, expected %u",
			 remote->nqps, e->cfg.qps);
		return -EPROTO;
	}
	if (e->cfg.ud)
		return ud_connect(e, remote, mtu, sl, tclass, err, errlen);
	for (i = 0; i < e->cfg.qps; i++) {
		rc = to_rtr(e, i, remote, mtu, sl, tclass, dest_rd);
		if (rc) {
			snprintf(err, errlen, "ibv_modify_qp(RTR): %s",
				 strerror(rc));
			return -rc;
		}
		rc = to_rts(e, i, rd);
		if (rc) {
			snprintf(err, errlen, "ibv_modify_qp(RTS): %s",
				 strerror(rc));
			return -rc;
		}
	}
	return 0;
}

unsigned veng_rx_depth(enum vt_test test, const struct vt_used *u, bool client)
{
	unsigned d = 512;

	if (test == VT_SEND_LAT || test == VT_UD_SEND_LAT)
		return 4;
	if (test != VT_SEND_BW || (client && !u->bidir))
		return 0;
	if (d < 2 * u->tx_depth)
		d = 2 * u->tx_depth;
	/*
	 * Bidirectional: credits come back behind a full send queue of the
	 * peer's own data, so the window is four send queues deep.
	 */
	if (u->bidir && d < 4 * u->tx_depth)
		d = 4 * u->tx_depth;
	if (u->bidir && d < 1024)
		d = 1024;
	return d > 16384 ? 16384 : d;
}

uint64_t *veng_credit(const struct veng *e, unsigned i)
{
	return (uint64_t *)(void *)(e->buf + e->stride * e->cfg.qps +
				    (size_t)VENG_CREDIT_BYTES * i);
}

uint64_t veng_remote_credit(const struct ctrl_endpoint *remote, unsigned i)
{
	return remote->addr + remote->stride * remote->nqps +
	       (uint64_t)VENG_CREDIT_BYTES * i;
}

int veng_post_recv(struct veng *e, unsigned i)
{
	struct ibv_sge sge = {
		.addr = (uint64_t)(uintptr_t)(e->buf + (size_t)i * e->stride),
		.length = e->cfg.size + (e->cfg.ud ? VENG_GRH_BYTES : 0),
		.lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad;

	return -ibv_post_recv(e->qp[i], &wr, &bad);
}

static uint8_t pattern(unsigned qp, size_t off)
{
	return (uint8_t)(off * 131 + (off >> 8) * 17 + qp * 7 + 0x5a);
}

static uint8_t *half(const struct veng *e, unsigned qp, bool rx)
{
	return e->buf + (size_t)qp * e->stride + (rx ? 0 : e->stride / 2);
}

void veng_fill(struct veng *e, bool rx)
{
	unsigned i;
	size_t k;

	for (i = 0; i < e->cfg.qps; i++)
		for (k = 0; k < e->cfg.size; k++)
			half(e, i, rx)[k] = pattern(i, k);
}

int veng_check(const struct veng *e, bool rx, char *err, size_t len)
{
	unsigned i;
	size_t k;

	for (i = 0; i < e->cfg.qps; i++) {
		const uint8_t *b = half(e, i, rx);

		for (k = 0; k < e->cfg.size; k++) {
			if (b[k] == pattern(i, k))
				continue;
			snprintf(err, len,
				 "data mismatch: QP %u byte %zu is "
				 "0x%02x, expected 0x%02x",
				 i, k, b[k], pattern(i, k));
			return -EILSEQ;
		}
	}
	return 0;
}
