// SPDX-License-Identifier: MIT
/*
 * Unit tests for the control-channel codec (probe/verbs/ctrl.c) and its
 * HMAC: every message round-trips in versions 1 and 2, every truncation
 * and every trailing byte is refused, out-of-range fields (v2's device,
 * port and counters too) are refused, a payload of one version does not
 * decode as the other, headers with a wrong magic, version, type or
 * length are refused, and the MAC covers label, both nonces and the
 * payload.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "ctrl.h"

static uint8_t buf[CTRL_HDR_LEN + CTRL_MAX_PAYLOAD];
static unsigned dec_version = CTRL_VERSION; /* for REQUEST and RESULT */

static void fill_ep(struct ctrl_endpoint *e, unsigned nqps)
{
	unsigned i;

	memset(e, 0, sizeof(*e));
	e->lid = 7;
	e->gid[10] = e->gid[11] = 0xff;
	e->gid[15] = 15;
	e->gid_type = 2;
	e->link_layer = 2;
	e->gid_index = 1;
	e->pkey = 0xffff;
	e->mtu = 3;
	e->rd_atomic = 16;
	e->rkey = 0xdeadbeef;
	e->addr = 0x7f0012345000ull;
	e->stride = 8192;
	e->nqps = (uint16_t)nqps;
	for (i = 0; i < nqps; i++) {
		e->qpn[i] = 0x11 + i;
		e->psn[i] = 0xabcdef - i;
	}
}

/* Every strict prefix and every one-byte extension must fail. */
typedef int (*decode_fn)(const uint8_t *p, size_t len, void *m);

#define WRAP(name, type)                                                       \
	static int dec_##name(const uint8_t *p, size_t len, void *m)           \
	{                                                                      \
		return ctrl_##name##_decode(p, len, (type *)m);                \
	}
#define WRAP_V(name, type)                                                     \
	static int dec_##name(const uint8_t *p, size_t len, void *m)           \
	{                                                                      \
		return ctrl_##name##_decode(p, len, dec_version, (type *)m);   \
	}
WRAP_V(request, struct ctrl_request)
WRAP(accept, struct ctrl_accept)
WRAP(connect, struct ctrl_endpoint)
WRAP(refuse, struct ctrl_refuse)
WRAP_V(result, struct ctrl_result)
WRAP(hello, struct ctrl_hello)
WRAP(challenge, struct ctrl_challenge)

static void check_lengths(int len, decode_fn dec, void *m)
{
	uint8_t copy[CTRL_MAX_PAYLOAD + 1];
	size_t plen = (size_t)len - CTRL_HDR_LEN, i;

	memcpy(copy, buf + CTRL_HDR_LEN, plen);
	copy[plen] = 0;
	assert_int_equal(dec(copy, plen, m), 0);
	for (i = 0; i < plen; i++)
		assert_int_equal(dec(copy, i, m), -EBADMSG);
	assert_int_equal(dec(copy, plen + 1, m), -EBADMSG);
}

static void test_header(void **state)
{
	struct ctrl_hdr h;
	int len = ctrl_empty_encode(CTRL_READY, buf, sizeof(buf));

	assert_int_equal(len, CTRL_HDR_LEN);
	assert_int_equal(ctrl_hdr_decode(buf, (size_t)len, &h), 0);
	assert_int_equal(h.type, CTRL_READY);
	assert_int_equal(h.len, 0);
	assert_int_equal(ctrl_hdr_decode(buf, 11, &h), -EBADMSG);
	assert_int_equal(h.version, CTRL_VERSION);
	buf[5] = 1; /* the oldest still spoken */
	assert_int_equal(ctrl_hdr_decode(buf, 12, &h), 0);
	buf[5] = 3; /* the newest: tickets */
	assert_int_equal(ctrl_hdr_decode(buf, 12, &h), 0);
	buf[5] = 4;
	assert_int_equal(ctrl_hdr_decode(buf, 12, &h), -EPROTONOSUPPORT);
	assert_int_equal(h.version, 4);
	buf[5] = 0;
	assert_int_equal(ctrl_hdr_decode(buf, 12, &h), -EPROTONOSUPPORT);
	buf[5] = 2;
	ctrl_hdr_set_version(buf, 1);
	assert_int_equal(ctrl_hdr_decode(buf, 12, &h), 0);
	assert_int_equal(h.version, 1);
	buf[0] = 'X';
	assert_int_equal(ctrl_hdr_decode(buf, 12, &h), -EBADMSG);
	buf[0] = 'I';
	buf[7] = 0;
	assert_int_equal(ctrl_hdr_decode(buf, 12, &h), -EBADMSG);
	buf[7] = CTRL_TYPE_MAX + 1;
	assert_int_equal(ctrl_hdr_decode(buf, 12, &h), -EBADMSG);
	buf[7] = CTRL_READY;
	buf[10] = 0x10; /* 4096 + 1 */
	buf[11] = 0x01;
	assert_int_equal(ctrl_hdr_decode(buf, 12, &h), -EBADMSG);
	assert_int_equal(ctrl_empty_encode(99, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(ctrl_empty_encode(CTRL_READY, buf, 4), -ENOSPC);
	assert_string_equal(ctrl_type_name(CTRL_REQUEST), "REQUEST");
	assert_string_equal(ctrl_type_name(0), "?");
}

static void test_request(void **state)
{
	struct ctrl_request q = {.test = 1,
				 .flags = CTRL_F_BIDIR,
				 .qps = 4,
				 .size = 65536,
				 .tx_depth = 128,
				 .iters = 5000,
				 .duration_ms = 0,
				 .inline_size = 0,
				 .sl = 3,
				 .tclass = 96};
	struct ctrl_request d;
	struct ctrl_hdr h;
	int len;

	fill_ep(&q.ep, 0);
	memset(q.mac, 0x42, sizeof(q.mac));
	len = ctrl_request_encode(&q, buf, sizeof(buf));
	assert_true(len > CTRL_HDR_LEN);
	assert_int_equal(ctrl_hdr_decode(buf, CTRL_HDR_LEN, &h), 0);
	assert_int_equal(h.len, (unsigned)len - CTRL_HDR_LEN);
	check_lengths(len, dec_request, &d);
	assert_int_equal(d.qps, 4);
	assert_int_equal(d.size, 65536);
	assert_int_equal(d.sl, 3);
	assert_int_equal(d.ep.pkey, 0xffff);
	assert_int_equal(d.ep.addr, q.ep.addr);
	assert_memory_equal(d.mac, q.mac, CTRL_MAC_LEN);
	/* Out of range: SL 16, zero QPs, neither iters nor duration. */
	q.sl = 16;
	len = ctrl_request_encode(&q, buf, sizeof(buf));
	assert_int_equal(ctrl_request_decode(buf + 12, (size_t)len - 12, 2, &d),
			 -EBADMSG);
	q.sl = 0;
	q.qps = 0;
	len = ctrl_request_encode(&q, buf, sizeof(buf));
	assert_int_equal(ctrl_request_decode(buf + 12, (size_t)len - 12, 2, &d),
			 -EBADMSG);
	q.qps = 1;
	q.iters = 0;
	len = ctrl_request_encode(&q, buf, sizeof(buf));
	assert_int_equal(ctrl_request_decode(buf + 12, (size_t)len - 12, 2, &d),
			 -EBADMSG);
}

static void fill_request(struct ctrl_request *q, unsigned version)
{
	memset(q, 0, sizeof(*q));
	q->version = (uint16_t)version;
	q->test = 4;
	q->qps = 1;
	q->size = 2;
	q->tx_depth = 1;
	q->iters = 1000;
	fill_ep(&q->ep, 0);
	memset(q->mac, 0x5a, sizeof(q->mac));
}

/* Decode @body (a REQUEST payload) under version 2. */
static int dec_req2(const uint8_t *body, size_t len)
{
	struct ctrl_request d;

	return ctrl_request_decode(body, len, 2, &d);
}

static void fill_ticket(struct ctrl_ticket *t)
{
	memset(t, 0, sizeof(*t));
	ctrl_strlcpy(t->plan_id, "p1764412800-3f0c9a4d1e2b7c55",
		     sizeof(t->plan_id));
	ctrl_strlcpy(t->host, "node01", sizeof(t->host));
	ctrl_strlcpy(t->device, "mlx5_0", sizeof(t->device));
	t->ib_port = 1;
	t->period = 490114;
	t->not_before_ms = 1764413100000ull;
	t->deadline_ms = 1764413130000ull;
}

/* v3: v2 and a ticket's claims; every bad claim refused both ways. */
static void test_request_v3(void **state)
{
	struct ctrl_request q, d;
	struct ctrl_hdr h;
	int len, len2;

	fill_request(&q, 2);
	ctrl_strlcpy(q.device, "mlx5_1", sizeof(q.device));
	q.ib_port = 1;
	len2 = ctrl_request_encode(&q, buf, sizeof(buf));
	q.version = 3;
	fill_ticket(&q.ticket);
	len = ctrl_request_encode(&q, buf, sizeof(buf));
	assert_int_equal(len, len2 + 2 + 28 + 2 + 6 + 2 + 6 + 1 + 3 * 8);
	assert_int_equal(ctrl_hdr_decode(buf, CTRL_HDR_LEN, &h), 0);
	assert_int_equal(h.version, 3);
	dec_version = 3;
	check_lengths(len, dec_request, &d);
	dec_version = CTRL_VERSION;
	assert_int_equal(d.version, 3);
	assert_string_equal(d.device, "mlx5_1");
	assert_string_equal(d.ticket.plan_id, q.ticket.plan_id);
	assert_string_equal(d.ticket.host, "node01");
	assert_string_equal(d.ticket.device, "mlx5_0");
	assert_int_equal(d.ticket.ib_port, 1);
	assert_true(d.ticket.period == 490114);
	assert_true(d.ticket.not_before_ms == q.ticket.not_before_ms);
	assert_true(d.ticket.deadline_ms == q.ticket.deadline_ms);
	assert_memory_equal(d.mac, q.mac, CTRL_MAC_LEN);
	/* ... and a v3 payload is no v2 one. */
	assert_int_equal(dec_req2(buf + 12, (size_t)len - 12), -EBADMSG);
	for (int i = 0; i < 6; i++) {
		fill_ticket(&q.ticket);
		if (i == 0)
			q.ticket.plan_id[0] = '\0';
		else if (i == 1)
			q.ticket.host[0] = '\0';
		else if (i == 2)
			ctrl_strlcpy(q.ticket.host, "node 01",
				     sizeof(q.ticket.host));
		else if (i == 3)
			ctrl_strlcpy(q.ticket.device, "../x",
				     sizeof(q.ticket.device));
		else if (i == 4)
			q.ticket.ib_port = 255;
		else
			q.ticket.deadline_ms = q.ticket.not_before_ms;
		assert_int_equal(ctrl_request_encode(&q, buf, sizeof(buf)),
				 -EINVAL);
	}
	/* On the wire: a slot that ends at its start is refused too. */
	fill_ticket(&q.ticket);
	len = ctrl_request_encode(&q, buf, sizeof(buf));
	memcpy(buf + len - CTRL_MAC_LEN - 8, buf + len - CTRL_MAC_LEN - 16, 8);
	assert_int_equal(ctrl_request_decode(buf + 12, (size_t)len - 12, 3, &d),
			 -EBADMSG);
}

static void test_request_v2(void **state)
{
	struct ctrl_request q, d;
	struct ctrl_hdr h;
	int len, len1;

	/* v1: no device or port on the wire, header version 1. */
	fill_request(&q, 1);
	len1 = ctrl_request_encode(&q, buf, sizeof(buf));
	assert_int_equal(ctrl_hdr_decode(buf, CTRL_HDR_LEN, &h), 0);
	assert_int_equal(h.version, 1);
	dec_version = 1;
	check_lengths(len1, dec_request, &d);
	assert_int_equal(d.version, 1);
	assert_string_equal(d.device, "");
	/* ... and a v1 payload is no v2 one. */
	assert_int_equal(dec_req2(buf + 12, (size_t)len1 - 12), -EBADMSG);

	/* v2 carries them; every length but the exact one is refused. */
	fill_request(&q, 2);
	ctrl_strlcpy(q.device, "mlx5_0", sizeof(q.device));
	q.ib_port = 2;
	len = ctrl_request_encode(&q, buf, sizeof(buf));
	assert_int_equal(len, len1 + 2 + 6 + 1);
	assert_int_equal(ctrl_hdr_decode(buf, CTRL_HDR_LEN, &h), 0);
	assert_int_equal(h.version, 2);
	dec_version = 2;
	check_lengths(len, dec_request, &d);
	assert_string_equal(d.device, "mlx5_0");
	assert_int_equal(d.ib_port, 2);
	assert_int_equal(d.version, 2);
	assert_memory_equal(d.mac, q.mac, CTRL_MAC_LEN);
	dec_version = 1;
	assert_int_equal(dec_request(buf + 12, (size_t)len - 12, &d), -EBADMSG);
	dec_version = CTRL_VERSION;
	/* No version 0 or 4; a v2 payload is no v3 one (no ticket). */
	assert_int_equal(ctrl_request_decode(buf + 12, (size_t)len - 12, 3, &d),
			 -EBADMSG);
	assert_int_equal(ctrl_request_decode(buf + 12, (size_t)len - 12, 4, &d),
			 -EBADMSG);
	q.version = 4;
	assert_int_equal(ctrl_request_encode(&q, buf, sizeof(buf)), -EINVAL);
}

/* A v2 request's device and port: what is refused both ways. */
static void test_request_v2_refused(void **state)
{
	struct ctrl_request q;
	uint8_t p[CTRL_MAX_PAYLOAD];
	int len;
	size_t pre;

	(void)state;
	dec_version = CTRL_VERSION; /* Port 255, a '/' or a space in the name:
				       refused both ways. */
	fill_request(&q, 2);
	q.ib_port = 255;
	assert_int_equal(ctrl_request_encode(&q, buf, sizeof(buf)), -EINVAL);
	q.ib_port = 1;
	ctrl_strlcpy(q.device, "../x", sizeof(q.device));
	assert_int_equal(ctrl_request_encode(&q, buf, sizeof(buf)), -EINVAL);
	memset(q.device, 'a', sizeof(q.device)); /* 64 bytes, no NUL */
	assert_int_equal(ctrl_request_encode(&q, buf, sizeof(buf)), -EINVAL);
	fill_request(&q, 2);
	ctrl_strlcpy(q.device, "abc", sizeof(q.device));
	len = ctrl_request_encode(&q, buf, sizeof(buf));
	pre = (size_t)len - 12 - CTRL_MAC_LEN - 1 - 2 - 3;
	memcpy(p, buf + 12, (size_t)len - 12);
	p[pre + 2 + 1] = '/';
	assert_int_equal(dec_req2(p, (size_t)len - 12), -EBADMSG);
	p[pre + 2 + 1] = 'b';
	p[pre + 2 + 3] = 255; /* the port */
	assert_int_equal(dec_req2(p, (size_t)len - 12), -EBADMSG);
	p[pre + 2 + 3] = 254;
	assert_int_equal(dec_req2(p, (size_t)len - 12), 0);
	/* Names of 63 bytes pass, of 64 do not. */
	for (size_t n = 63; n <= 64; n++) {
		size_t off = pre;

		memcpy(p, buf + 12, pre);
		p[off++] = 0;
		p[off++] = (uint8_t)n;
		memset(p + off, 'd', n);
		off += n;
		p[off++] = 1;
		memset(p + off, 0x5a, CTRL_MAC_LEN);
		off += CTRL_MAC_LEN;
		assert_int_equal(dec_req2(p, off), n == 63 ? 0 : -EBADMSG);
	}
}

static void test_result_v2(void **state)
{
	struct ctrl_result m = {.version = 2, .bytes = 42}, md;
	struct ctrl_hdr h;
	int len, len1;

	m.ctr = (struct ctrl_counters){.has = CTRL_CTR_ALL,
				       .xmit_bytes = 1,
				       .rcv_bytes = 2,
				       .xmit_pkts = 3,
				       .rcv_pkts = 4,
				       .xmit_wait = 5,
				       .cnp = 1ull << 63};
	len = ctrl_result_encode(CTRL_RESULT, &m, buf, sizeof(buf));
	dec_version = 2;
	check_lengths(len, dec_result, &md);
	assert_int_equal(md.version, 2);
	assert_int_equal(md.bytes, 42);
	assert_memory_equal(&md.ctr.has, &m.ctr.has, 1);
	assert_int_equal(md.ctr.rcv_pkts, 4);
	assert_int_equal(md.ctr.cnp, 1ull << 63);
	/* v1 has no counters: 49 bytes shorter, header version 1. */
	m.version = 1;
	len1 = ctrl_result_encode(CTRL_DONE, &m, buf, sizeof(buf));
	assert_int_equal(len1, len - 49);
	assert_int_equal(ctrl_hdr_decode(buf, CTRL_HDR_LEN, &h), 0);
	assert_int_equal(h.version, 1);
	assert_int_equal(h.type, CTRL_DONE);
	dec_version = 1;
	check_lengths(len1, dec_result, &md);
	assert_int_equal(md.ctr.has, 0);
	assert_int_equal(md.ctr.xmit_bytes, 0);
	/* Unknown presence bits, and a value whose bit is clear. */
	m.version = 2;
	m.ctr.has = 0x10;
	assert_int_equal(ctrl_result_encode(CTRL_RESULT, &m, buf, sizeof(buf)),
			 -EINVAL);
	m.ctr.has = CTRL_CTR_ALL;
	len = ctrl_result_encode(CTRL_RESULT, &m, buf, sizeof(buf));
	buf[len - 49] = 0x1f;
	assert_int_equal(ctrl_result_decode(buf + 12, (size_t)len - 12, 2, &md),
			 -EBADMSG);
	buf[len - 49] = CTRL_CTR_ALL & ~CTRL_CTR_WAIT; /* xmit_wait is 5 */
	assert_int_equal(ctrl_result_decode(buf + 12, (size_t)len - 12, 2, &md),
			 -EBADMSG);
	m.ctr.xmit_wait = 0;
	m.ctr.has = CTRL_CTR_ALL & ~CTRL_CTR_WAIT;
	len = ctrl_result_encode(CTRL_RESULT, &m, buf, sizeof(buf));
	assert_int_equal(ctrl_result_decode(buf + 12, (size_t)len - 12, 2, &md),
			 0);
	assert_int_equal(md.ctr.has, CTRL_CTR_ALL & ~CTRL_CTR_WAIT);
	assert_int_equal(ctrl_result_decode(buf + 12, (size_t)len - 12, 0, &md),
			 -EBADMSG);
	dec_version = CTRL_VERSION;
}

static void test_accept_connect(void **state)
{
	struct ctrl_accept a, ad;
	struct ctrl_endpoint e;
	int len;

	fill_ep(&a.ep, CTRL_MAX_QPS);
	memset(a.mac, 7, sizeof(a.mac));
	len = ctrl_accept_encode(&a, buf, sizeof(buf));
	check_lengths(len, dec_accept, &ad);
	assert_int_equal(ad.ep.nqps, CTRL_MAX_QPS);
	assert_int_equal(ad.ep.qpn[63], a.ep.qpn[63]);
	assert_int_equal(ad.ep.psn[0], 0xabcdef);

	fill_ep(&e, 2);
	len = ctrl_connect_encode(&e, buf, sizeof(buf));
	check_lengths(len, dec_connect, &ad.ep);
	/* A 25-bit QPN, an MTU of 0 and P_Key 0x8000 are all refused. */
	e.qpn[1] = 0x1000000;
	len = ctrl_connect_encode(&e, buf, sizeof(buf));
	assert_int_equal(
		ctrl_connect_decode(buf + 12, (size_t)len - 12, &ad.ep),
		-EBADMSG);
	fill_ep(&e, 2);
	e.mtu = 0;
	len = ctrl_connect_encode(&e, buf, sizeof(buf));
	assert_int_equal(
		ctrl_connect_decode(buf + 12, (size_t)len - 12, &ad.ep),
		-EBADMSG);
	fill_ep(&e, 2);
	e.pkey = 0x8000;
	len = ctrl_connect_encode(&e, buf, sizeof(buf));
	assert_int_equal(
		ctrl_connect_decode(buf + 12, (size_t)len - 12, &ad.ep),
		-EBADMSG);
	e.nqps = CTRL_MAX_QPS + 1;
	assert_int_equal(ctrl_connect_encode(&e, buf, sizeof(buf)), -EINVAL);
}

static void test_refuse_result(void **state)
{
	struct ctrl_refuse r = {.code = -EACCES}, rd;
	struct ctrl_result m = {.status = -EIO,
				.wc_status = 12,
				.bytes = 1ull << 40,
				.lat_n = 3},
			   md;
	int len;

	ctrl_strlcpy(r.reason, "P_Key mismatch", sizeof(r.reason));
	len = ctrl_refuse_encode(&r, buf, sizeof(buf));
	check_lengths(len, dec_refuse, &rd);
	assert_string_equal(rd.reason, "P_Key mismatch");
	assert_int_equal(rd.code, -EACCES);
	/* A control character in a reason is refused. */
	r.reason[0] = '\n';
	len = ctrl_refuse_encode(&r, buf, sizeof(buf));
	assert_int_equal(ctrl_refuse_decode(buf + 12, (size_t)len - 12, &rd),
			 -EBADMSG);
	r.reason[0] = 'P';
	r.code = 5; /* must be a negative errno */
	len = ctrl_refuse_encode(&r, buf, sizeof(buf));
	assert_int_equal(ctrl_refuse_decode(buf + 12, (size_t)len - 12, &rd),
			 -EBADMSG);

	m.lat_ns[6] = 1234;
	ctrl_strlcpy(m.error,
		     "completion error: transport retry counter exceeded",
		     sizeof(m.error));
	len = ctrl_result_encode(CTRL_RESULT, &m, buf, sizeof(buf));
	check_lengths(len, dec_result, &md);
	assert_int_equal(md.bytes, 1ull << 40);
	assert_int_equal(md.lat_ns[6], 1234);
	assert_string_equal(md.error, m.error);
	assert_int_equal(ctrl_result_encode(CTRL_READY, &m, buf, sizeof(buf)),
			 -EINVAL);
}

static void test_hello_challenge(void **state)
{
	struct ctrl_hello h, hd;
	struct ctrl_challenge c = {.auth_required = 1}, cd;
	int len;

	memset(h.nonce, 9, sizeof(h.nonce));
	len = ctrl_hello_encode(&h, buf, sizeof(buf));
	check_lengths(len, dec_hello, &hd);
	assert_memory_equal(hd.nonce, h.nonce, CTRL_NONCE_LEN);
	memset(c.nonce, 3, sizeof(c.nonce));
	len = ctrl_challenge_encode(&c, buf, sizeof(buf));
	check_lengths(len, dec_challenge, &cd);
	assert_int_equal(cd.auth_required, 1);
	buf[len - 1] = 2;
	assert_int_equal(ctrl_challenge_decode(buf + 12, (size_t)len - 12, &cd),
			 -EBADMSG);
}

static void test_mac(void **state)
{
	const uint8_t key[] = "a shared secret of some length";
	uint8_t na[CTRL_NONCE_LEN], nb[CTRL_NONCE_LEN], p[40], mac[32],
		mac2[32], want[32], msg[5 + 2 * CTRL_NONCE_LEN + 40];
	unsigned wlen = 32;

	memset(na, 1, sizeof(na));
	memset(nb, 2, sizeof(nb));
	memset(p, 3, sizeof(p));
	assert_int_equal(ctrl_mac(key, sizeof(key) - 1, "label", na, nb, p,
				  sizeof(p), mac),
			 0);
	/* Layout: label || nonce_a || nonce_b || payload. */
	memcpy(msg, "label", 5);
	memcpy(msg + 5, na, 16);
	memcpy(msg + 21, nb, 16);
	memcpy(msg + 37, p, 40);
	HMAC(EVP_sha256(), key, sizeof(key) - 1, msg, sizeof(msg), want, &wlen);
	assert_memory_equal(mac, want, 32);
	assert_int_equal(ctrl_mac_check(mac, want), 0);
	/* Swapped nonces, another label, another key: all differ. */
	ctrl_mac(key, sizeof(key) - 1, "label", nb, na, p, sizeof(p), mac2);
	assert_int_equal(ctrl_mac_check(mac, mac2), -EACCES);
	ctrl_mac(key, sizeof(key) - 1, "lab3l", na, nb, p, sizeof(p), mac2);
	assert_int_equal(ctrl_mac_check(mac, mac2), -EACCES);
	ctrl_mac(key, sizeof(key) - 2, "label", na, nb, p, sizeof(p), mac2);
	assert_int_equal(ctrl_mac_check(mac, mac2), -EACCES);
}

static void test_strlcpy(void **state)
{
	char d[4];

	ctrl_strlcpy(d, "abcdef", sizeof(d));
	assert_string_equal(d, "abc");
	ctrl_strlcpy(d, "", sizeof(d));
	assert_string_equal(d, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_request_v2),
		cmocka_unit_test(test_request_v2_refused),
		cmocka_unit_test(test_request_v3),
		cmocka_unit_test(test_result_v2),
		cmocka_unit_test(test_accept_connect),
		cmocka_unit_test(test_refuse_result),
		cmocka_unit_test(test_hello_challenge),
		cmocka_unit_test(test_mac),
		cmocka_unit_test(test_strlcpy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
