// SPDX-License-Identifier: MIT
/*
 * Encoding and decoding of control-channel messages. Pure functions over
 * byte arrays: a bounded writer and a bounded reader that latch the first
 * overrun, and per-message codecs that check every field's range and the
 * exact payload length, so a peer cannot hand us a half-filled struct.
 */
#include "ctrl.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

struct wr {
	uint8_t *p;
	size_t cap;
	size_t len;
	int err;
};

struct rd {
	const uint8_t *p;
	size_t len;
	size_t off;
	int err;
};

static void w_bytes(struct wr *w, const void *src, size_t n)
{
	if (w->err)
		return;
	if (w->cap - w->len < n) {
		w->err = -ENOSPC;
		return;
	}
	memcpy(w->p + w->len, src, n);
	w->len += n;
}

static void w_u8(struct wr *w, uint8_t v)
{
	w_bytes(w, &v, 1);
}

static void w_u16(struct wr *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	w_bytes(w, b, 2);
}

static void w_u32(struct wr *w, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16),
			(uint8_t)(v >> 8), (uint8_t)v};

	w_bytes(w, b, 4);
}

static void w_u64(struct wr *w, uint64_t v)
{
	w_u32(w, (uint32_t)(v >> 32));
	w_u32(w, (uint32_t)v);
}

/* Strings travel as a u16 length and bytes, no NUL. */
static void w_str(struct wr *w, const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	w_u16(w, (uint16_t)n);
	w_bytes(w, s, n);
}

static void r_bytes(struct rd *r, void *dst, size_t n)
{
	if (r->err || r->len - r->off < n) {
		r->err = -EBADMSG;
		memset(dst, 0, n);
		return;
	}
	memcpy(dst, r->p + r->off, n);
	r->off += n;
}

static uint8_t r_u8(struct rd *r)
{
	uint8_t v;

	r_bytes(r, &v, 1);
	return v;
}

static uint16_t r_u16(struct rd *r)
{
	uint8_t b[2];

	r_bytes(r, b, 2);
	return (uint16_t)(b[0] << 8 | b[1]);
}

static uint32_t r_u32(struct rd *r)
{
	uint8_t b[4];

	r_bytes(r, b, 4);
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

static uint64_t r_u64(struct rd *r)
{
	uint64_t hi = r_u32(r);

	return hi << 32 | r_u32(r);
}

/* Printable ASCII only, so a reason can go to a log line as is. */
static void r_str(struct rd *r, char *dst, size_t max)
{
	uint16_t n = r_u16(r);
	size_t i;

	dst[0] = '\0';
	if (r->err)
		return;
	if (n > max) {
		r->err = -EBADMSG;
		return;
	}
	r_bytes(r, dst, n);
	dst[r->err ? 0 : n] = '\0';
	for (i = 0; i < n && !r->err; i++)
		if ((unsigned char)dst[i] < 0x20 ||
		    (unsigned char)dst[i] > 0x7e)
			r->err = -EBADMSG;
}

/* Anything left over is as wrong as anything missing. */
static int r_end(const struct rd *r)
{
	if (r->err)
		return r->err;
	return r->off == r->len ? 0 : -EBADMSG;
}

static void w_hdr(struct wr *w, int type, unsigned version)
{
	w_u32(w, CTRL_MAGIC);
	w_u16(w, (uint16_t)version);
	w_u16(w, (uint16_t)type);
	w_u32(w, 0); /* patched by w_finish() */
}

static int w_finish(struct wr *w)
{
	size_t plen;

	if (w->err)
		return w->err;
	plen = w->len - CTRL_HDR_LEN;
	if (plen > CTRL_MAX_PAYLOAD)
		return -EINVAL;
	w->p[8] = (uint8_t)(plen >> 24);
	w->p[9] = (uint8_t)(plen >> 16);
	w->p[10] = (uint8_t)(plen >> 8);
	w->p[11] = (uint8_t)plen;
	return (int)w->len;
}

static struct wr w_start(uint8_t *buf, size_t cap, int type)
{
	struct wr w = {.p = buf, .cap = cap};

	w_hdr(&w, type, CTRL_VERSION);
	return w;
}

/* A message whose layout depends on @version (0: CTRL_VERSION). */
static struct wr w_start_v(uint8_t *buf, size_t cap, int type,
			   unsigned *version)
{
	struct wr w = {.p = buf, .cap = cap};

	if (!*version)
		*version = CTRL_VERSION;
	if (*version < CTRL_VERSION_MIN || *version > CTRL_VERSION_MAX)
		w.err = -EINVAL;
	w_hdr(&w, type, *version);
	return w;
}

void ctrl_hdr_set_version(uint8_t *msg, unsigned version)
{
	msg[4] = (uint8_t)(version >> 8);
	msg[5] = (uint8_t)version;
}

int ctrl_hdr_decode(const uint8_t *buf, size_t len, struct ctrl_hdr *h)
{
	struct rd r = {.p = buf, .len = len};

	h->magic = r_u32(&r);
	h->version = r_u16(&r);
	h->type = r_u16(&r);
	h->len = r_u32(&r);
	if (r.err || h->magic != CTRL_MAGIC)
		return -EBADMSG;
	if (h->version < CTRL_VERSION_MIN || h->version > CTRL_VERSION_MAX)
		return -EPROTONOSUPPORT;
	if (h->type < CTRL_HELLO || h->type > CTRL_TYPE_MAX ||
	    h->len > CTRL_MAX_PAYLOAD)
		return -EBADMSG;
	return 0;
}

void ctrl_strlcpy(char *dst, const char *src, size_t len)
{
	size_t n;

	if (!len)
		return;
	n = strnlen(src, len - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

const char *ctrl_type_name(int type)
{
	static const char *const names[] = {
		[CTRL_HELLO] = "HELLO",	    [CTRL_CHALLENGE] = "CHALLENGE",
		[CTRL_REQUEST] = "REQUEST", [CTRL_ACCEPT] = "ACCEPT",
		[CTRL_REFUSE] = "REFUSE",   [CTRL_CONNECT] = "CONNECT",
		[CTRL_READY] = "READY",	    [CTRL_DONE] = "DONE",
		[CTRL_RESULT] = "RESULT",
	};

	if (type < CTRL_HELLO || type > CTRL_TYPE_MAX)
		return "?";
	return names[type];
}

int ctrl_hello_encode(const struct ctrl_hello *m, uint8_t *buf, size_t cap)
{
	struct wr w = w_start(buf, cap, CTRL_HELLO);

	w_bytes(&w, m->nonce, CTRL_NONCE_LEN);
	return w_finish(&w);
}

int ctrl_hello_decode(const uint8_t *p, size_t len, struct ctrl_hello *m)
{
	struct rd r = {.p = p, .len = len};

	r_bytes(&r, m->nonce, CTRL_NONCE_LEN);
	return r_end(&r);
}

int ctrl_challenge_encode(const struct ctrl_challenge *m, uint8_t *buf,
			  size_t cap)
{
	struct wr w = w_start(buf, cap, CTRL_CHALLENGE);

	w_bytes(&w, m->nonce, CTRL_NONCE_LEN);
	w_u8(&w, m->auth_required ? 1 : 0);
	return w_finish(&w);
}

int ctrl_challenge_decode(const uint8_t *p, size_t len,
			  struct ctrl_challenge *m)
{
	struct rd r = {.p = p, .len = len};

	r_bytes(&r, m->nonce, CTRL_NONCE_LEN);
	m->auth_required = r_u8(&r);
	if (!r.err && m->auth_required > 1)
		return -EBADMSG;
	return r_end(&r);
}

static void w_endpoint(struct wr *w, const struct ctrl_endpoint *e)
{
	unsigned i;

	w_u16(w, e->lid);
	w_bytes(w, e->gid, 16);
	w_u8(w, e->gid_type);
	w_u8(w, e->link_layer);
	w_u8(w, e->gid_index);
	w_u16(w, e->pkey);
	w_u16(w, e->pkey_index);
	w_u8(w, e->mtu);
	w_u8(w, e->mtu_forced);
	w_u8(w, e->rd_atomic);
	w_u32(w, e->rkey);
	w_u64(w, e->addr);
	w_u64(w, e->stride);
	if (e->nqps > CTRL_MAX_QPS) {
		w->err = -EINVAL;
		return;
	}
	w_u16(w, e->nqps);
	for (i = 0; i < e->nqps; i++) {
		w_u32(w, e->qpn[i]);
		w_u32(w, e->psn[i]);
	}
}

/* QPNs and PSNs are 24-bit; link layers are 0..2; MTUs 256..4096. */
static void r_endpoint(struct rd *r, struct ctrl_endpoint *e)
{
	unsigned i;

	memset(e, 0, sizeof(*e));
	e->lid = r_u16(r);
	r_bytes(r, e->gid, 16);
	e->gid_type = r_u8(r);
	e->link_layer = r_u8(r);
	e->gid_index = r_u8(r);
	e->pkey = r_u16(r);
	e->pkey_index = r_u16(r);
	e->mtu = r_u8(r);
	e->mtu_forced = r_u8(r);
	e->rd_atomic = r_u8(r);
	e->rkey = r_u32(r);
	e->addr = r_u64(r);
	e->stride = r_u64(r);
	e->nqps = r_u16(r);
	if (r->err)
		return;
	if (e->gid_type > 3 || e->link_layer > 2 || e->mtu < 1 || e->mtu > 5 ||
	    e->mtu_forced > 1 || e->nqps > CTRL_MAX_QPS ||
	    (e->pkey & 0x7fff) == 0) {
		r->err = -EBADMSG;
		return;
	}
	for (i = 0; i < e->nqps; i++) {
		e->qpn[i] = r_u32(r);
		e->psn[i] = r_u32(r);
		if (!r->err && (e->qpn[i] > 0xffffff || e->psn[i] > 0xffffff))
			r->err = -EBADMSG;
	}
}

bool ctrl_dev_name_ok(const char *s)
{
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' &&
		    *s != '.')
			return false;
	return true;
}

static bool ticket_ok(const struct ctrl_ticket *t)
{
	return strnlen(t->plan_id, sizeof(t->plan_id)) <= CTRL_NAME_MAX &&
	       strnlen(t->host, sizeof(t->host)) <= CTRL_NAME_MAX &&
	       strnlen(t->device, sizeof(t->device)) <= CTRL_DEV_MAX &&
	       t->plan_id[0] && t->host[0] && ctrl_dev_name_ok(t->plan_id) &&
	       ctrl_dev_name_ok(t->host) && ctrl_dev_name_ok(t->device) &&
	       t->ib_port != 255 && t->not_before_ms < t->deadline_ms;
}

static void w_ticket(struct wr *w, const struct ctrl_ticket *t)
{
	if (!ticket_ok(t)) {
		w->err = -EINVAL;
		return;
	}
	w_str(w, t->plan_id, CTRL_NAME_MAX);
	w_str(w, t->host, CTRL_NAME_MAX);
	w_str(w, t->device, CTRL_DEV_MAX);
	w_u8(w, t->ib_port);
	w_u64(w, t->period);
	w_u64(w, t->not_before_ms);
	w_u64(w, t->deadline_ms);
}

static void r_ticket(struct rd *r, struct ctrl_ticket *t)
{
	r_str(r, t->plan_id, CTRL_NAME_MAX);
	r_str(r, t->host, CTRL_NAME_MAX);
	r_str(r, t->device, CTRL_DEV_MAX);
	t->ib_port = r_u8(r);
	t->period = r_u64(r);
	t->not_before_ms = r_u64(r);
	t->deadline_ms = r_u64(r);
	if (!r->err && !ticket_ok(t))
		r->err = -EBADMSG;
}

int ctrl_request_encode(const struct ctrl_request *m, uint8_t *buf, size_t cap)
{
	unsigned version = m->version;
	struct wr w = w_start_v(buf, cap, CTRL_REQUEST, &version);

	w_u16(&w, m->test);
	w_u16(&w, m->flags);
	w_u16(&w, m->qps);
	w_u32(&w, m->size);
	w_u32(&w, m->tx_depth);
	w_u32(&w, m->iters);
	w_u32(&w, m->duration_ms);
	w_u32(&w, m->inline_size);
	w_u8(&w, m->sl);
	w_u8(&w, m->tclass);
	w_endpoint(&w, &m->ep);
	if (version >= 2) {
		if (strnlen(m->device, sizeof(m->device)) > CTRL_DEV_MAX ||
		    !ctrl_dev_name_ok(m->device) || m->ib_port == 255)
			return -EINVAL;
		w_str(&w, m->device, CTRL_DEV_MAX);
		w_u8(&w, m->ib_port);
	}
	if (version >= 3)
		w_ticket(&w, &m->ticket);
	w_bytes(&w, m->mac, CTRL_MAC_LEN);
	return w_finish(&w);
}

int ctrl_request_decode(const uint8_t *p, size_t len, unsigned version,
			struct ctrl_request *m)
{
	struct rd r = {.p = p, .len = len};

	memset(m, 0, sizeof(*m));
	if (version < CTRL_VERSION_MIN || version > CTRL_VERSION_MAX)
		return -EBADMSG;
	m->version = (uint16_t)version;
	m->test = r_u16(&r);
	m->flags = r_u16(&r);
	m->qps = r_u16(&r);
	m->size = r_u32(&r);
	m->tx_depth = r_u32(&r);
	m->iters = r_u32(&r);
	m->duration_ms = r_u32(&r);
	m->inline_size = r_u32(&r);
	m->sl = r_u8(&r);
	m->tclass = r_u8(&r);
	r_endpoint(&r, &m->ep);
	if (version >= 2) {
		r_str(&r, m->device, CTRL_DEV_MAX);
		m->ib_port = r_u8(&r);
		if (!r.err &&
		    (!ctrl_dev_name_ok(m->device) || m->ib_port == 255))
			return -EBADMSG;
	}
	if (version >= 3)
		r_ticket(&r, &m->ticket);
	r_bytes(&r, m->mac, CTRL_MAC_LEN);
	if (r.err)
		return r.err;
	if (m->flags & ~(CTRL_F_BIDIR | CTRL_F_INLINE | CTRL_F_VERIFY) ||
	    m->sl > 15 || m->qps == 0 || m->qps > CTRL_MAX_QPS ||
	    m->tx_depth == 0 || (m->iters == 0 && m->duration_ms == 0))
		return -EBADMSG;
	return r_end(&r);
}

int ctrl_accept_encode(const struct ctrl_accept *m, uint8_t *buf, size_t cap)
{
	struct wr w = w_start(buf, cap, CTRL_ACCEPT);

	w_endpoint(&w, &m->ep);
	w_bytes(&w, m->mac, CTRL_MAC_LEN);
	return w_finish(&w);
}

int ctrl_accept_decode(const uint8_t *p, size_t len, struct ctrl_accept *m)
{
	struct rd r = {.p = p, .len = len};

	r_endpoint(&r, &m->ep);
	r_bytes(&r, m->mac, CTRL_MAC_LEN);
	return r_end(&r);
}

int ctrl_connect_encode(const struct ctrl_endpoint *m, uint8_t *buf, size_t cap)
{
	struct wr w = w_start(buf, cap, CTRL_CONNECT);

	w_endpoint(&w, m);
	return w_finish(&w);
}

int ctrl_connect_decode(const uint8_t *p, size_t len, struct ctrl_endpoint *m)
{
	struct rd r = {.p = p, .len = len};

	r_endpoint(&r, m);
	return r_end(&r);
}

int ctrl_refuse_encode(const struct ctrl_refuse *m, uint8_t *buf, size_t cap)
{
	struct wr w = w_start(buf, cap, CTRL_REFUSE);

	w_u32(&w, (uint32_t)m->code);
	w_str(&w, m->reason, CTRL_REASON_MAX);
	return w_finish(&w);
}

int ctrl_refuse_decode(const uint8_t *p, size_t len, struct ctrl_refuse *m)
{
	struct rd r = {.p = p, .len = len};

	m->code = (int32_t)r_u32(&r);
	r_str(&r, m->reason, CTRL_REASON_MAX);
	if (!r.err && (m->code >= 0 || m->code < -4095))
		return -EBADMSG;
	return r_end(&r);
}

/* v2's counter block: the presence bits, then every field. */
static void w_counters(struct wr *w, const struct ctrl_counters *c)
{
	if (c->has & ~CTRL_CTR_ALL) {
		w->err = -EINVAL;
		return;
	}
	w_u8(w, c->has);
	w_u64(w, c->xmit_bytes);
	w_u64(w, c->rcv_bytes);
	w_u64(w, c->xmit_pkts);
	w_u64(w, c->rcv_pkts);
	w_u64(w, c->xmit_wait);
	w_u64(w, c->cnp);
}

/* An absent counter must read 0, so nothing half-set gets through. */
static void r_counters(struct rd *r, struct ctrl_counters *c)
{
	c->has = r_u8(r);
	c->xmit_bytes = r_u64(r);
	c->rcv_bytes = r_u64(r);
	c->xmit_pkts = r_u64(r);
	c->rcv_pkts = r_u64(r);
	c->xmit_wait = r_u64(r);
	c->cnp = r_u64(r);
	if (r->err)
		return;
	if ((c->has & ~CTRL_CTR_ALL) ||
	    (!(c->has & CTRL_CTR_BYTES) && (c->xmit_bytes || c->rcv_bytes)) ||
	    (!(c->has & CTRL_CTR_PKTS) && (c->xmit_pkts || c->rcv_pkts)) ||
	    (!(c->has & CTRL_CTR_WAIT) && c->xmit_wait) ||
	    (!(c->has & CTRL_CTR_CNP) && c->cnp))
		r->err = -EBADMSG;
}

int ctrl_result_encode(int type, const struct ctrl_result *m, uint8_t *buf,
		       size_t cap)
{
	unsigned version = m->version;
	struct wr w;
	unsigned i;

	if (type != CTRL_DONE && type != CTRL_RESULT)
		return -EINVAL;
	w = w_start_v(buf, cap, type, &version);
	w_u32(&w, (uint32_t)m->status);
	w_u16(&w, m->wc_status);
	w_u16(&w, m->wc_opcode);
	w_u64(&w, m->bytes);
	w_u64(&w, m->msgs);
	w_u64(&w, m->elapsed_ns);
	w_u64(&w, m->cpu_ns);
	w_u64(&w, m->bw_avg_Bps);
	w_u64(&w, m->bw_peak_Bps);
	w_u64(&w, m->bw_min_Bps);
	w_u64(&w, m->lat_n);
	for (i = 0; i < 7; i++)
		w_u64(&w, m->lat_ns[i]);
	w_str(&w, m->error, CTRL_REASON_MAX);
	if (version >= 2)
		w_counters(&w, &m->ctr);
	return w_finish(&w);
}

int ctrl_result_decode(const uint8_t *p, size_t len, unsigned version,
		       struct ctrl_result *m)
{
	struct rd r = {.p = p, .len = len};
	unsigned i;

	memset(m, 0, sizeof(*m));
	if (version < CTRL_VERSION_MIN || version > CTRL_VERSION_MAX)
		return -EBADMSG;
	m->version = (uint16_t)version;
	m->status = (int32_t)r_u32(&r);
	m->wc_status = r_u16(&r);
	m->wc_opcode = r_u16(&r);
	m->bytes = r_u64(&r);
	m->msgs = r_u64(&r);
	m->elapsed_ns = r_u64(&r);
	m->cpu_ns = r_u64(&r);
	m->bw_avg_Bps = r_u64(&r);
	m->bw_peak_Bps = r_u64(&r);
	m->bw_min_Bps = r_u64(&r);
	m->lat_n = r_u64(&r);
	for (i = 0; i < 7; i++)
		m->lat_ns[i] = r_u64(&r);
	r_str(&r, m->error, CTRL_REASON_MAX);
	if (version >= 2)
		r_counters(&r, &m->ctr);
	if (!r.err && (m->status > 0 || m->status < -4095 || m->wc_status > 64))
		return -EBADMSG;
	return r_end(&r);
}

int ctrl_empty_encode(int type, uint8_t *buf, size_t cap)
{
	struct wr w;

	if (type < CTRL_HELLO || type > CTRL_TYPE_MAX)
		return -EINVAL;
	w = w_start(buf, cap, type);
	return w_finish(&w);
}
