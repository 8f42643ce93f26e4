// SPDX-License-Identifier: MIT
/*
 * Unit tests for the control-channel codec (probe/verbs/ctrl.c) and its
 * HMAC: every message round-trips, every truncation and every trailing
 * byte is refused, out-of-range fields are refused, headers with a wrong
 * magic, version, type or length are refused, and the MAC covers label,
 * both nonces and the payload.
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
WRAP(request, struct ctrl_request)
WRAP(accept, struct ctrl_accept)
WRAP(connect, struct ctrl_endpoint)
WRAP(refuse, struct ctrl_refuse)
WRAP(result, struct ctrl_result)
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
	buf[5] = 2; /* version 2 */
	assert_int_equal(ctrl_hdr_decode(buf, 12, &h), -EPROTONOSUPPORT);
	assert_int_equal(h.version, 2);
	buf[5] = 1;
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
	assert_int_equal(ctrl_request_decode(buf + 12, (size_t)len - 12, &d),
			 -EBADMSG);
	q.sl = 0;
	q.qps = 0;
	len = ctrl_request_encode(&q, buf, sizeof(buf));
	assert_int_equal(ctrl_request_decode(buf + 12, (size_t)len - 12, &d),
			 -EBADMSG);
	q.qps = 1;
	q.iters = 0;
	len = ctrl_request_encode(&q, buf, sizeof(buf));
	assert_int_equal(ctrl_request_decode(buf + 12, (size_t)len - 12, &d),
			 -EBADMSG);
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
		cmocka_unit_test(test_accept_connect),
		cmocka_unit_test(test_refuse_result),
		cmocka_unit_test(test_hello_challenge),
		cmocka_unit_test(test_mac),
		cmocka_unit_test(test_strlcpy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
