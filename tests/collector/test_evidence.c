// SPDX-License-Identifier: MIT
/*
 * Unit tests for evidence per element (collector/evidence.c): an element
 * with K bad results of M involving P peers that are fine with others is
 * a suspect; one outlier, bad results against a single peer, peers bad
 * everywhere, or bad results that a suspect peer explains are not enough;
 * two bad ports tested against each other do not hide each other; a bad
 * result asks for confirmation until enough good results with other peers
 * follow; a device counts the ports its bad and good results came through;
 * a peer exonerates only with its own other results; the settings' rules.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "evidence.h"

static const struct evidence_opts O = {.bad_results = 3,
				       .judged_results = 6,
				       .good_results = 3,
				       .peers = 2,
				       .confirm_tests = 2};

/* A row, newest first in the arrays below: value 100 good, lower bad. */
static struct evidence_row R(int64_t peer, int bad, int fine) {
	return (struct evidence_row){.started = 0,
				     .value = bad ? 80 : 100,
				     .baseline = 100,
				     .peer = peer,
				     .via_port = 1,
				     .bad = bad,
				     .peer_fine = fine};
}

/* Number the rows' times so that row 0 is the newest. */
static void
judge(struct evidence_row *r, size_t n, struct evidence_verdict *v)
{
	for (size_t i = 0; i < n; i++)
		r[i].started = 1000.0 - (double)i;
	evidence_judge(&O, r, n, 1, v);
}

static void test_bad_port_with_good_peers(void **state)
{
	/* three bad results with peers 11, 12, 13, all fine elsewhere */
	struct evidence_row r[] = {R(11, 1, 1), R(12, 1, 1), R(13, 1, 1),
				   R(14, 0, 0)};
	struct evidence_verdict v;

	judge(r, 4, &v);
	assert_true(v.suspect);
	assert_false(v.confirm);
	assert_int_equal(v.judged, 4);
	assert_int_equal(v.bad, 3);
	assert_int_equal(v.peers_bad, 3);
	assert_int_equal(v.peers_exonerating, 3);
	assert_int_equal(v.good_run, 0);
	assert_true(v.first_bad == 998.0);
	assert_true(v.figure == 80 && v.baseline == 100 && v.worst == 80);
}

static void test_not_enough(void **state)
{
	/* one outlier, then two good results with other peers */
	struct evidence_row outlier[] = {R(12, 0, 0), R(13, 0, 0), R(11, 1, 1),
					 R(14, 0, 0)};
	/* one peer only: this port or that one? */
	struct evidence_row one_peer[] = {R(11, 1, 1), R(11, 1, 1), R(11, 1, 1),
					  R(11, 1, 1)};
	/* the peers are bad with others too: not exonerating */
	struct evidence_row bad_peers[] = {R(11, 1, 0), R(12, 1, 0),
					   R(13, 1, 1)};
	/* K bad, but older than the window of M */
	struct evidence_row old[] = {R(1, 0, 0),  R(2, 0, 0),  R(3, 0, 0),
				     R(4, 0, 0),  R(5, 0, 0),  R(6, 0, 0),
				     R(11, 1, 1), R(12, 1, 1), R(13, 1, 1)};
	struct evidence_verdict v;

	judge(outlier, 4, &v);
	assert_false(v.suspect);
	assert_int_equal(v.bad, 1);
	assert_false(v.confirm); /* cleared by the two good ones */
	judge(one_peer, 4, &v);
	assert_false(v.suspect);
	assert_int_equal(v.peers_bad, 1);
	judge(bad_peers, 3, &v);
	assert_false(v.suspect);
	assert_int_equal(v.peers_exonerating, 1);
	judge(old, 9, &v);
	assert_int_equal(v.judged, 6);
	assert_int_equal(v.bad, 0);
	assert_false(v.suspect);
}

static void test_confirmation(void **state)
{
	/* a bad result, newest: confirm */
	struct evidence_row fresh[] = {R(11, 1, 1), R(12, 0, 0), R(13, 0, 0)};
	/* one good result after it: not enough (confirm_tests 2) */
	struct evidence_row one[] = {R(12, 0, 0), R(11, 1, 1), R(13, 0, 0)};
	/* good results after it, but with the same peer: still confirm */
	struct evidence_row same[] = {R(11, 0, 0), R(11, 0, 0), R(11, 1, 1)};
	/* two with others: cleared */
	struct evidence_row two[] = {R(12, 0, 0), R(13, 0, 0), R(11, 1, 1)};
	struct evidence_verdict v;

	judge(fresh, 3, &v);
	assert_true(v.confirm);
	judge(one, 3, &v);
	assert_true(v.confirm);
	judge(same, 3, &v);
	assert_true(v.confirm);
	judge(two, 3, &v);
	assert_false(v.confirm);
	assert_int_equal(v.good_run, 2);
}

static void test_explained(void **state)
{
	/* bad results with a suspect peer (11) count neither for nor
	 * against, but still ask for confirmation: the two may both be bad */
	struct evidence_row r[] = {R(11, 1, 0), R(11, 1, 0), R(12, 1, 1),
				   R(13, 1, 1)};
	struct evidence_verdict v;

	r[0].explained = r[1].explained = 1;
	judge(r, 4, &v);
	assert_int_equal(v.bad, 2);
	assert_int_equal(v.explained, 2);
	assert_false(v.suspect);
	assert_true(v.confirm);
	/* explained rows neither break nor extend a good run */
	{
		struct evidence_row g[] = {R(12, 0, 0), R(11, 1, 0),
					   R(13, 0, 0), R(14, 1, 1)};

		g[1].explained = 1;
		judge(g, 4, &v);
		assert_int_equal(v.good_run, 2);
	}
}

static void test_two_bad_ports_do_not_hide(void **state)
{
	/* ports A and B are both bad and were tested against each other:
	 * B does not exonerate A, but A's bad results with good peers do;
	 * the same holds for B */
	struct evidence_row a[] = {R(2, 1, 0), R(11, 1, 1), R(12, 1, 1)};
	struct evidence_row b[] = {R(1, 1, 0), R(13, 1, 1), R(14, 1, 1)};
	/* A good port tested against both bad ones is no suspect */
	struct evidence_row c[] = {R(1, 1, 0), R(2, 1, 0), R(15, 0, 0)};
	struct evidence_verdict v;

	judge(a, 3, &v);
	assert_true(v.suspect);
	assert_int_equal(v.peers_exonerating, 2);
	judge(b, 3, &v);
	assert_true(v.suspect);
	judge(c, 3, &v);
	assert_false(v.suspect);
	assert_int_equal(v.peers_exonerating, 0);
}

static void test_device_ports(void **state)
{
	/* a device: bad through ports 1 and 2, then a good one through 3 */
	struct evidence_row r[] = {R(13, 0, 0), R(11, 1, 1), R(12, 1, 1),
				   R(14, 1, 1)};
	/* a port fault: port 2 bad, port 1 mostly good with one bad (its
	 * peer bad too, not yet named): no device */
	struct evidence_row p[] = {R(21, 1, 1), R(22, 0, 0), R(23, 1, 1),
				   R(24, 0, 0), R(25, 1, 1), R(26, 1, 0)};
	struct evidence_verdict v;

	r[0].via_port = 3;
	r[1].via_port = 1;
	r[2].via_port = 2;
	r[3].via_port = 1;
	judge(r, 4, &v);
	assert_int_equal(v.ports_bad, 2);
	assert_int_equal(v.ports_good, 1);
	assert_int_equal(v.ports_clear, 1);
	/* all through port 1, nothing else since: nothing clear */
	r[0].via_port = 1;
	r[2].via_port = 1;
	judge(r, 4, &v);
	assert_int_equal(v.ports_bad, 1);
	assert_int_equal(v.ports_good, 0);
	assert_int_equal(v.ports_clear, 0);
	for (size_t i = 0; i < 6; i++)
		p[i].via_port = i % 2 ? 1 : 2;
	judge(p, 6, &v);
	assert_int_equal(v.ports_bad, 1);  /* port 2: 3 bad */
	assert_int_equal(v.ports_good, 1); /* port 1: 2 good, 1 bad */
	p[3].bad = 1;			   /* port 1: 2 bad of 3 now */
	judge(p, 6, &v);
	assert_int_equal(v.ports_bad, 2);
	assert_int_equal(v.ports_good, 0);
}

static void test_peer_fine(void **state)
{
	/* the peer's results: one bad with us (7), good with others */
	struct evidence_row p[] = {R(7, 1, 0), R(8, 0, 0), R(9, 0, 0)};
	/* only results with us: unknown, not fine */
	struct evidence_row only[] = {R(7, 1, 0), R(7, 1, 0)};
	/* bad with others as well: not fine */
	struct evidence_row mixed[] = {R(7, 1, 0), R(8, 1, 0), R(9, 0, 0)};

	assert_true(evidence_peer_fine(p, 3, 7));
	assert_false(evidence_peer_fine(p, 3, 8));
	assert_false(evidence_peer_fine(only, 2, 7));
	assert_false(evidence_peer_fine(mixed, 3, 7));
	assert_false(evidence_peer_fine(NULL, 0, 7));
}

static void test_opts_check(void **state)
{
	struct evidence_opts o = O;
	char err[256];

	assert_int_equal(evidence_opts_check(&o, err, sizeof(err)), 0);
	o.bad_results = 7;
	assert_int_equal(evidence_opts_check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad_results"));
	o = O;
	o.peers = 4;
	assert_int_equal(evidence_opts_check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "peers"));
	o = O;
	o.judged_results = EVIDENCE_MAX_WINDOW + 1;
	assert_int_equal(evidence_opts_check(&o, err, sizeof(err)), -EINVAL);
}

static void test_latency_worst(void **state)
{
	/* latency: higher is worse */
	struct evidence_row r[] = {R(11, 1, 1), R(12, 1, 1), R(13, 1, 1)};
	struct evidence_verdict v;

	r[0].value = 3;
	r[1].value = 5;
	r[2].value = 4;
	for (size_t i = 0; i < 3; i++)
		r[i].started = 10.0 - (double)i;
	evidence_judge(&O, r, 3, 0, &v);
	assert_true(v.worst == 5);
	assert_true(v.figure == 4);
	assert_true(v.suspect);
	/* an empty window */
	evidence_judge(&O, NULL, 0, 0, &v);
	assert_false(v.suspect);
	assert_true(isnan(v.figure) && isnan(v.first_bad));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_port_with_good_peers),
		cmocka_unit_test(test_not_enough),
		cmocka_unit_test(test_confirmation),
		cmocka_unit_test(test_explained),
		cmocka_unit_test(test_two_bad_ports_do_not_hide),
		cmocka_unit_test(test_device_ports),
		cmocka_unit_test(test_peer_fine),
		cmocka_unit_test(test_opts_check),
		cmocka_unit_test(test_latency_worst),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
