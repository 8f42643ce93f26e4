// SPDX-License-Identifier: MIT
/*
 * Unit tests for the pairing checks both sides run before any traffic
 * (vsess_agree in probe/verbs/session.c): link layer, GID type on RoCE,
 * P_Key partition and membership, and forced MTUs are refused with a
 * reason; otherwise the smaller active MTU is used.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "session.h"

static void ep(struct ctrl_endpoint *e, unsigned mtu)
{
	memset(e, 0, sizeof(*e));
	e->link_layer = IBV_LINK_LAYER_ETHERNET;
	e->gid_type = VT_GID_ROCE_V2;
	e->pkey = 0xffff;
	e->mtu = (uint8_t)mtu;
}

static void test_agree(void **state)
{
	struct vsess s = {0};
	struct ctrl_endpoint a, b;
	char err[256];

	ep(&a, IBV_MTU_4096);
	ep(&b, IBV_MTU_1024);
	assert_int_equal(vsess_agree(&s, &a, &b, err, sizeof(err)), 0);
	assert_int_equal(s.mtu, IBV_MTU_1024);

	b.gid_type = VT_GID_ROCE_V1;
	assert_int_equal(vsess_agree(&s, &a, &b, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "GID type mismatch: RoCE v2 here"));

	/* On InfiniBand the GID type does not matter. */
	a.link_layer = b.link_layer = IBV_LINK_LAYER_INFINIBAND;
	assert_int_equal(vsess_agree(&s, &a, &b, err, sizeof(err)), 0);
	b.link_layer = IBV_LINK_LAYER_ETHERNET;
	assert_int_equal(vsess_agree(&s, &a, &b, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "link layer mismatch"));

	ep(&a, IBV_MTU_1024);
	ep(&b, IBV_MTU_1024);
	a.pkey = 0x0005;
	b.pkey = 0x0005;
	assert_int_equal(vsess_agree(&s, &a, &b, err, sizeof(err)), -EACCES);
	assert_non_null(strstr(err, "limited members"));
	b.pkey = 0x8005;
	assert_int_equal(vsess_agree(&s, &a, &b, err, sizeof(err)), 0);
	b.pkey = 0x8006;
	assert_int_equal(vsess_agree(&s, &a, &b, err, sizeof(err)), -EACCES);
	assert_non_null(strstr(err, "P_Key mismatch"));

	ep(&a, IBV_MTU_2048);
	ep(&b, IBV_MTU_1024);
	a.mtu_forced = 1;
	assert_int_equal(vsess_agree(&s, &a, &b, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "MTU mismatch: 2048 here (--mtu), 1024 at "
				    "the peer (active)"));
	b.mtu = IBV_MTU_2048;
	assert_int_equal(vsess_agree(&s, &a, &b, err, sizeof(err)), 0);
	assert_int_equal(s.mtu, IBV_MTU_2048);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
