// SPDX-License-Identifier: MIT
/*
 * Unit tests for GID/P_Key resolution (probe/verbs/resolve.c) on fixture
 * sysfs trees, and for parameter defaults and validation (params.c): each
 * selector picks the expected index, P_Keys resolve by value with the
 * membership bit, two limited members are refused with a reason, the port
 * counters that tell a busy link are read (data words as bytes, packets
 * from counters/ or hw_counters/, the CNP sum), and a bad flag's message
 * names the flag and its range.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resolve.h"
#include "vtest.h"

static const char *root;

static struct vres_port *load(const char *dev)
{
	struct vres_port *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	assert_int_equal(vres_port_read(root, dev, 1, p), 0);
	return p;
}

static unsigned pick(const struct vres_port *p, const char *sel)
{
	size_t pos = 999;

	assert_int_equal(vres_gid_select(p, sel, &pos), 0);
	return p->gids[pos].index;
}

static void test_roce_selectors(void **state)
{
	struct vres_port *p = load("roce0");
	size_t pos;

	assert_true(p->eth);
	assert_int_equal(p->ngids, 5); /* the zero GID is skipped */
	assert_int_equal(pick(p, NULL), 3);
	assert_int_equal(pick(p, ""), 3);
	assert_int_equal(pick(p, "v2"), 1);
	assert_int_equal(pick(p, "v1"), 0);
	assert_int_equal(pick(p, "ipv4"), 2);
	assert_int_equal(pick(p, "v2-ipv4"), 3);
	assert_int_equal(pick(p, "v1-ipv4"), 2);
	assert_int_equal(pick(p, "ipv6"), 0);
	assert_int_equal(pick(p, "v2-ipv6"), 1);
	/* An address carried by both types resolves to RoCE v2. */
	assert_int_equal(pick(p, "10.0.2.15"), 3);
	assert_int_equal(pick(p, "::ffff:10.0.2.15"), 3);
	assert_int_equal(pick(p, "2001:db8::15"), 4);
	assert_int_equal(pick(p, "fe80::5054:ff:fe12:3456"), 1);
	assert_int_equal(vres_gid_select(p, "10.0.2.16", &pos), -ENOENT);
	assert_int_equal(vres_gid_select(p, "v3", &pos), -EINVAL);
	assert_int_equal(vres_gid_by_index(p, 4, &pos), 0);
	assert_int_equal(vres_gid_by_index(p, 5, &pos), -ENOENT);
	free(p);
}

static void test_ib_port(void **state)
{
	struct vres_port *p = load("ib0");
	char table[512];
	size_t pos;

	assert_false(p->eth);
	assert_int_equal(pick(p, NULL), 0);
	assert_int_equal(pick(p, "v1"), 0);
	assert_int_equal(p->gids[0].type, VT_GID_IB);
	assert_int_equal(vres_gid_select(p, "v2", &pos), -ENOENT);
	assert_int_equal(vres_gid_table_str(p, table, sizeof(table)), 0);
	assert_non_null(strstr(table, "fe80::2:c903:0:1234"));
	free(p);
}

static void test_missing(void **state)
{
	struct vres_port p;

	assert_int_equal(vres_port_read(root, "nope0", 1, &p), -ENODEV);
	assert_int_equal(vres_port_read(root, "roce0", 2, &p), -ENODEV);
	assert_int_equal(vres_port_read(root, "../x", 1, &p), -EINVAL);
}

static void test_pkeys(void **state)
{
	struct vres_port *p = load("roce0");
	char err[256], table[256];
	unsigned idx = 99;

	/*
	 * Slot 3 holds 0x0000, an empty slot: the one sysfs reader skips
	 * those, so the table ends at the last P_Key in use (the verbs
	 * engine's own reader counted the empty slot, and 4 here; no lookup
	 * or message ever used it).
	 */
	assert_int_equal(p->npkeys, 3);
	assert_int_equal(vres_pkey_find(p, 0xffff, &idx), 0);
	assert_int_equal(idx, 0);
	assert_int_equal(vres_pkey_find(p, 0x8001, &idx), 0);
	assert_int_equal(idx, 1);
	/* Asked as limited, only the full member exists: use it. */
	assert_int_equal(vres_pkey_find(p, 0x0001, &idx), 0);
	assert_int_equal(idx, 1);
	assert_int_equal(vres_pkey_find(p, 0x8002, &idx), 0);
	assert_int_equal(idx, 2);
	assert_int_equal(vres_pkey_find(p, 0x8003, &idx), -ENOENT);
	assert_int_equal(vres_pkey_find(p, 0x8000, &idx), -EINVAL);
	assert_int_equal(vres_pkey_table_str(p, table, sizeof(table)), 0);
	assert_non_null(strstr(table, "0x0002 (limited)"));
	assert_null(strstr(table, "0x0000"));

	assert_int_equal(vres_pkey_pair_check(0xffff, 0x7fff, err, sizeof(err)),
			 0);
	assert_int_equal(vres_pkey_pair_check(0x8001, 0x0001, err, sizeof(err)),
			 0);
	assert_int_equal(vres_pkey_pair_check(0x0001, 0x0001, err, sizeof(err)),
			 -EACCES);
	assert_non_null(strstr(err, "limited members"));
	assert_int_equal(vres_pkey_pair_check(0x8001, 0x8002, err, sizeof(err)),
			 -EACCES);
	assert_non_null(strstr(err, "P_Key mismatch"));
	free(p);
}

static void test_portctr(void **state)
{
	struct vt_portctr c;

	/* InfiniBand: counters/ only; data counters count 4-octet words. */
	assert_int_equal(vt_portctr_read(root, "ib0", 1, &c), 0);
	assert_true(c.has_bytes);
	assert_true(c.xmit_bytes == 4000);
	assert_true(c.rcv_bytes == UINT64_C(4) << 40);
	assert_true(c.has_pkts && c.xmit_pkts == 10 && c.rcv_pkts == 20);
	assert_true(c.has_wait && c.xmit_wait == 7);
	assert_false(c.has_cnp);

	/*
	 * RoCE: port_xmit_data without port_rcv_data is no byte count;
	 * packets come from hw_counters/, and the three CNP counters add up.
	 */
	assert_int_equal(vt_portctr_read(root, "roce0", 1, &c), 0);
	assert_false(c.has_bytes);
	assert_true(c.xmit_bytes == 0 && c.rcv_bytes == 0);
	assert_true(c.has_pkts && c.xmit_pkts == 30 && c.rcv_pkts == 40);
	assert_false(c.has_wait);
	assert_true(c.has_cnp && c.cnp == 7);

	assert_int_equal(vt_portctr_read(root, "nope0", 1, &c), -ENOENT);
	assert_int_equal(vt_portctr_read(root, "roce0", 2, &c), -ENOENT);
	assert_false(c.has_bytes || c.has_pkts || c.has_wait || c.has_cnp);
}

static void test_params(void **state)
{
	struct vt_params p;
	struct vt_used u;
	char err[256];

	vt_params_default(&p);
	p.test = VT_WRITE_BW;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), 0);
	vt_params_apply(&p, &u);
	assert_int_equal(u.size, 65536);
	assert_int_equal(u.iters, 5000);
	assert_int_equal(u.tx_depth, 128);
	assert_int_equal(u.cq_mod, 1); /* above 8 KiB, as perftest */
	assert_int_equal(u.inline_size, 0);

	p.size = 64;
	p.post_list = 32;
	vt_params_apply(&p, &u);
	/* 100 would let a full queue hold no signaled request. */
	assert_int_equal(u.cq_mod, 128 - 32 + 1);

	p.iters = 50;
	p.post_list = 1;
	vt_params_apply(&p, &u);
	assert_int_equal(u.tx_depth, 50);

	vt_params_default(&p);
	p.test = VT_WRITE_LAT;
	vt_params_apply(&p, &u);
	assert_int_equal(u.size, 2);
	assert_int_equal(u.iters, 1000);
	assert_int_equal(u.inline_size, 220);
	p.test = VT_FADD_BW;
	vt_params_apply(&p, &u);
	assert_int_equal(u.size, 8);

	vt_params_default(&p);
	p.test = VT_WRITE_BW;
	p.duration_s = 4;
	vt_params_apply(&p, &u);
	assert_true(u.margin_s == 1);

	p.qps = 65;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--qps 65: valid range 1..64"));
	p.qps = 1;
	p.mtu = 1500;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--mtu 1500"));
	p.mtu = 1024;
	p.pkey = 0x8000;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--pkey"));
	p.pkey = 0;
	p.test = 0;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), -EINVAL);
	assert_int_equal(vt_test_parse("read_lat"), VT_READ_LAT);
	assert_int_equal(vt_test_parse("read"), 0);
	assert_string_equal(vt_test_name(VT_CAS_BW), "cas_bw");
}

/* The modes added after the first engine: bidirectional SEND, latency -D. */
static void test_params_modes(void **state)
{
	struct vt_params p;
	struct vt_used u;
	char err[256];

	vt_params_default(&p);
	p.test = VT_SEND_BW;
	p.bidir = true;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), 0);
	p.duration_s = 2;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), 0);
	p.verify = true;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--verify"));
	p.verify = false;
	p.test = VT_SEND_LAT;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--bidirectional"));

	/* Duration mode for every latency test, margins D/4 by default. */
	vt_params_default(&p);
	p.duration_s = 2;
	for (p.test = VT_WRITE_LAT; p.test <= VT_CAS_LAT; p.test++) {
		assert_int_equal(vt_params_check(&p, err, sizeof(err)), 0);
		vt_params_apply(&p, &u);
		assert_true(u.duration_s == 2 && u.margin_s == 0.5);
		assert_int_equal(u.tx_depth, 1);
		assert_int_equal(u.cq_mod, 1);
	}
	p.test = VT_READ_LAT;
	p.margin_s = 0.25;
	vt_params_apply(&p, &u);
	assert_true(u.margin_s == 0.25);
	p.margin_s = 1; /* half of the duration leaves no window */
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--margin 1: must be under half"));
	p.margin_s = -1;
	p.duration_s = 0.1;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--duration 0.1: valid range 0.2..86400"));

	/* UD latency: a name, one MTU at most, ping-pong defaults. */
	vt_params_default(&p);
	p.test = vt_test_parse("ud_send_lat");
	assert_int_equal(p.test, VT_UD_SEND_LAT);
	assert_string_equal(vt_test_name(VT_UD_SEND_LAT), "ud_send_lat");
	assert_true(vt_test_is_lat(p.test) && vt_test_answers(p.test));
	assert_false(vt_test_is_atomic(p.test));
	p.size = 4096;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), 0);
	p.size = 4097;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--size 4097: a UD message fits one MTU: "
				    "valid range 1..4096"));
	p.size = 0;
	vt_params_apply(&p, &u);
	assert_int_equal(u.size, 2);
	assert_int_equal(u.inline_size, 220);
	assert_int_equal(u.iters, 1000);
	p.qps = 2;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), -EINVAL);
	p.qps = 1;
	p.bidir = true;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), -EINVAL);
	p.bidir = false;
	p.duration_s = 1;
	assert_int_equal(vt_params_check(&p, err, sizeof(err)), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roce_selectors),
		cmocka_unit_test(test_ib_port),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_pkeys),
		cmocka_unit_test(test_portctr),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_params_modes),
	};

	if (argc < 2)
		return 77;
	root = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
