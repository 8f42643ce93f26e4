// SPDX-License-Identifier: MIT
/*
 * Unit tests for the suspect inference (collector/suspect.c): a port whose
 * links regress while its peers are fine elsewhere is named, and it is not
 * named when its peers are bad everywhere, when it was tested against one
 * peer only, when most of its links are fine, or when the regressions are
 * two directions of one pair; a group pair whose links regress across
 * several ports on each side is named instead of a port; loopback links
 * are left out.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "suspect.h"

#define N SUSPECT_NONE

/* A link between ports @a and @b: 'r' regressed, 'h' healthy, 'j' judged
 * with a bad latest result. */
static struct suspect_link L(uint32_t a, uint32_t b, char kind) {
	return (struct suspect_link){.a = a,
				     .b = b,
				     .ga = N,
				     .gb = N,
				     .regressed = kind == 'r',
				     .healthy = kind == 'h',
				     .judged = 1};
}

static struct suspect_link
G(uint32_t a, uint32_t b, uint32_t ga, uint32_t gb, char kind) {
	struct suspect_link l = L(a, b, kind);

	l.ga = ga;
	l.gb = gb;
	return l;
}

static void
infer(const struct suspect_link *l, size_t n, size_t ports,
      struct suspect_out *o)
{
	assert_int_equal(suspect_infer(l, n, ports, NULL, 0, o), 0);
}

static void test_shared_port(void **state)
{
	/* port 0 regresses with 1, 2, 3; those are fine with each other */
	struct suspect_link l[] = {
		L(0, 1, 'r'), L(2, 0, 'r'), L(0, 3, 'r'),
		L(1, 2, 'h'), L(2, 3, 'h'), L(3, 1, 'h'),
	};
	struct suspect_out o;

	infer(l, 6, 4, &o);
	assert_int_equal(o.n_ports, 1);
	assert_int_equal(o.ports[0].port, 0);
	assert_int_equal(o.ports[0].regressed, 3);
	assert_int_equal(o.ports[0].judged, 3);
	assert_int_equal(o.ports[0].peers_fine, 3);
	assert_int_equal(o.n_groups, 0);
	suspect_out_free(&o);
	/* with a fourth, healthy link it is still 3 of 4 */
	{
		struct suspect_link m[] = {
			L(0, 1, 'r'), L(2, 0, 'r'), L(0, 3, 'r'), L(0, 4, 'h'),
			L(1, 2, 'h'), L(2, 3, 'h'), L(3, 1, 'h'),
		};

		infer(m, 7, 5, &o);
		assert_int_equal(o.n_ports, 1);
		assert_int_equal(o.ports[0].judged, 4);
		suspect_out_free(&o);
	}
}

static void test_not_enough_evidence(void **state)
{
	/* the peers are bad everywhere: a wider problem, nobody named */
	struct suspect_link all_bad[] = {
		L(0, 1, 'r'), L(0, 2, 'r'), L(1, 2, 'r'),
		L(1, 3, 'r'), L(2, 3, 'r'),
	};
	/* one peer only: port 0 or port 1? */
	struct suspect_link one[] = {L(0, 1, 'r'), L(1, 2, 'h')};
	/* two directions of one pair are one peer */
	struct suspect_link twice[] = {L(0, 1, 'r'), L(1, 0, 'r'),
				       L(1, 2, 'h')};
	/* 2 of 5 peers regress: most of the port is fine */
	struct suspect_link few[] = {
		L(0, 1, 'r'), L(0, 2, 'r'), L(0, 3, 'h'), L(0, 4, 'h'),
		L(0, 5, 'h'), L(1, 3, 'h'), L(2, 4, 'h'),
	};
	/* judged-but-bad links (not yet in regression) are not "fine" */
	struct suspect_link unsure[] = {
		L(0, 1, 'r'), L(0, 2, 'r'), L(0, 3, 'r'),
		L(1, 2, 'j'), L(2, 3, 'j'), L(3, 1, 'j'),
	};
	struct suspect_out o;

	infer(all_bad, 5, 4, &o);
	assert_int_equal(o.n_ports, 0);
	suspect_out_free(&o);
	infer(one, 2, 3, &o);
	assert_int_equal(o.n_ports, 0);
	suspect_out_free(&o);
	infer(twice, 3, 3, &o);
	assert_int_equal(o.n_ports, 0);
	suspect_out_free(&o);
	infer(few, 7, 6, &o);
	assert_int_equal(o.n_ports, 0);
	suspect_out_free(&o);
	infer(unsure, 6, 4, &o);
	assert_int_equal(o.n_ports, 0);
	suspect_out_free(&o);
}

static void test_loopback_left_out(void **state)
{
	/* a port's own loopback links do not count as peers */
	struct suspect_link l[] = {L(0, 0, 'r'), L(0, 0, 'r'), L(0, 1, 'r'),
				   L(1, 2, 'h')};
	struct suspect_out o;

	infer(l, 4, 3, &o);
	assert_int_equal(o.n_ports, 0);
	suspect_out_free(&o);
}

static void test_group_pair(void **state)
{
	/* groups 0 {p0, p1}, 1 {p2, p3}, 2 {p4, p5}: every 0-1 link
	 * regresses, everything else is fine */
	struct suspect_link l[] = {
		G(0, 2, 0, 1, 'r'), G(0, 3, 0, 1, 'r'), G(1, 2, 0, 1, 'r'),
		G(3, 1, 1, 0, 'r'), G(0, 1, 0, 0, 'h'), G(2, 3, 1, 1, 'h'),
		G(0, 4, 0, 2, 'h'), G(2, 5, 1, 2, 'h'), G(1, 5, 0, 2, 'h'),
		G(3, 4, 1, 2, 'h'),
	};
	struct suspect_gtotal gt = {0, 1, 6};
	struct suspect_out o;

	infer(l, 10, 6, &o);
	assert_int_equal(o.n_groups, 1);
	assert_int_equal(o.groups[0].ga, 0);
	assert_int_equal(o.groups[0].gb, 1);
	assert_int_equal(o.groups[0].regressed, 4);
	assert_int_equal(o.groups[0].judged, 4);
	/* the links the group pair explains name no port */
	assert_int_equal(o.n_ports, 0);
	suspect_out_free(&o);
	/* the database says 6 links between them were judged: 4 of 6 */
	assert_int_equal(suspect_infer(l, 10, 6, &gt, 1, &o), 0);
	assert_int_equal(o.n_groups, 1);
	assert_int_equal(o.groups[0].judged, 6);
	suspect_out_free(&o);
	/* 4 of 8: not more than half */
	gt.judged = 8;
	assert_int_equal(suspect_infer(l, 10, 6, &gt, 1, &o), 0);
	assert_int_equal(o.n_groups, 0);
	suspect_out_free(&o);
}

static void test_one_port_side_is_a_port(void **state)
{
	/* p0 in group 0 regresses to p2, p3 (group 1) and p1 (group 0);
	 * p1 is fine elsewhere: one port on side 0, so p0 is the suspect */
	struct suspect_link l[] = {
		G(0, 2, 0, 1, 'r'), G(0, 3, 0, 1, 'r'), G(0, 1, 0, 0, 'r'),
		G(1, 2, 0, 1, 'h'), G(2, 3, 1, 1, 'h'), G(1, 3, 0, 1, 'h'),
	};
	struct suspect_out o;

	infer(l, 6, 4, &o);
	assert_int_equal(o.n_groups, 0);
	assert_int_equal(o.n_ports, 1);
	assert_int_equal(o.ports[0].port, 0);
	suspect_out_free(&o);
}

static void test_pair_helper(void **state)
{
	struct suspect_link l = G(0, 1, 5, 2, 'r');
	uint32_t a, b;

	assert_true(suspect_link_pair(&l, &a, &b));
	assert_int_equal(a, 2);
	assert_int_equal(b, 5);
	l.gb = 5;
	assert_false(suspect_link_pair(&l, &a, &b));
	l.gb = N;
	assert_false(suspect_link_pair(&l, &a, &b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_port),
		cmocka_unit_test(test_not_enough_evidence),
		cmocka_unit_test(test_loopback_left_out),
		cmocka_unit_test(test_group_pair),
		cmocka_unit_test(test_one_port_side_is_a_port),
		cmocka_unit_test(test_pair_helper),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
