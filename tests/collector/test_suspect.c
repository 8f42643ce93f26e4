// SPDX-License-Identifier: MIT
/*
 * Unit tests for the group-pair inference (collector/suspect.c): a group
 * pair whose links regress across several ports on each side is named,
 * and not when they are under half of the pair's judged links or when one
 * side is a single port (that port's own evidence names it:
 * test_evidence.c).
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
	 * p1 is fine elsewhere: one port on side 0, no group pair (the
	 * evidence of p0 names it, evidence.h) */
	struct suspect_link l[] = {
		G(0, 2, 0, 1, 'r'), G(0, 3, 0, 1, 'r'), G(0, 1, 0, 0, 'r'),
		G(1, 2, 0, 1, 'h'), G(2, 3, 1, 1, 'h'), G(1, 3, 0, 1, 'h'),
	};
	struct suspect_out o;

	infer(l, 6, 4, &o);
	assert_int_equal(o.n_groups, 0);
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
		cmocka_unit_test(test_group_pair),
		cmocka_unit_test(test_one_port_side_is_a_port),
		cmocka_unit_test(test_pair_helper),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
