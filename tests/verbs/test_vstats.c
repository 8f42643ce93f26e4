// SPDX-License-Identifier: MIT
/*
 * Unit tests for probe/verbs/stats.c against hand-computed data: the
 * nearest-rank percentiles, medians of odd and even counts, the sample
 * standard deviation, and sub-interval bandwidth with the trailing
 * partial bin left out.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "stats.h"

static void test_lat_known(void **state)
{
	/* 2 4 4 4 5 5 7 9 (us): mean 5, sample variance 32/7. */
	uint64_t s[] = {9000, 4000, 2000, 4000, 5000, 4000, 7000, 5000};
	struct vstats_lat l;

	assert_int_equal(vstats_lat_compute(s, 8, &l), 0);
	assert_int_equal(l.n, 8);
	assert_true(fabs(l.min_s - 2e-6) < 1e-12);
	assert_true(fabs(l.max_s - 9e-6) < 1e-12);
	assert_true(fabs(l.mean_s - 5e-6) < 1e-12);
	assert_true(fabs(l.median_s - 4.5e-6) < 1e-12);
	assert_true(fabs(l.stdev_s - sqrt(32.0 / 7) * 1e-6) < 1e-12);
	/* nearest rank: ceil(0.99 * 8) = 8 -> the largest. */
	assert_true(fabs(l.p99_s - 9e-6) < 1e-12);
	assert_true(s[0] == 2000 && s[7] == 9000); /* sorted in place */
}

static void test_lat_percentiles(void **state)
{
	uint64_t *s = malloc(1000 * sizeof(*s));
	struct vstats_lat l;
	size_t i;

	for (i = 0; i < 1000; i++)
		s[i] = (uint64_t)(1000 - i) * 1000; /* 1..1000 us, reversed */
	assert_int_equal(vstats_lat_compute(s, 1000, &l), 0);
	assert_true(fabs(l.p99_s - 990e-6) < 1e-12);
	assert_true(fabs(l.p999_s - 999e-6) < 1e-12);
	assert_true(fabs(l.median_s - 500.5e-6) < 1e-12);
	assert_int_equal(vstats_percentile(s, 1000, 0.0), 1000);
	assert_int_equal(vstats_percentile(s, 1000, 1.0), 1000000);
	free(s);
}

static void test_lat_single_and_empty(void **state)
{
	uint64_t one = 1500;
	struct vstats_lat l;

	assert_int_equal(vstats_lat_compute(&one, 0, &l), -EINVAL);
	assert_int_equal(vstats_lat_compute(&one, 1, &l), 0);
	assert_true(l.stdev_s == 0);
	assert_true(fabs(l.median_s - 1.5e-6) < 1e-15);
	assert_true(fabs(l.p999_s - 1.5e-6) < 1e-15);
}

/* Sub-microsecond samples keep their precision (perftest truncates). */
static void test_lat_stdev_not_truncated(void **state)
{
	uint64_t s[] = {1000, 1400, 1000, 1400};
	struct vstats_lat l;

	assert_int_equal(vstats_lat_compute(s, 4, &l), 0);
	assert_true(fabs(l.stdev_s - sqrt(4 * 200.0 * 200 / 3) * 1e-9) < 1e-13);
}

static void test_bins(void **state)
{
	struct vstats_bins b;
	double lo = -1, hi = -1;

	/* 100 ms bins from t=1 s: 10 MB, 5 MB, 10 MB, then a partial. */
	vstats_bins_init(&b, 1000000000ull, 100000000ull, 1000);
	assert_int_equal(vstats_bins_add(&b, 999999999ull, 12345), 0);
	assert_int_equal(vstats_bins_add(&b, 1000000000ull, 6000000), 0);
	assert_int_equal(vstats_bins_add(&b, 1090000000ull, 4000000), 0);
	assert_int_equal(vstats_bins_add(&b, 1150000000ull, 5000000), 0);
	assert_int_equal(vstats_bins_add(&b, 1250000000ull, 10000000), 0);
	assert_int_equal(vstats_bins_add(&b, 1310000000ull, 1000), 0);
	assert_int_equal(vstats_bins_minmax(&b, 1320000000ull, &lo, &hi), 3);
	assert_true(fabs(lo - 50e6) < 1e-3);
	assert_true(fabs(hi - 100e6) < 1e-3);
	/* No whole bin: nothing written. */
	lo = hi = -1;
	assert_int_equal(vstats_bins_minmax(&b, 1050000000ull, &lo, &hi), 0);
	assert_true(lo == -1 && hi == -1);
	vstats_bins_free(&b);
}

static void test_bins_gap_and_ceiling(void **state)
{
	struct vstats_bins b;
	double lo, hi;

	vstats_bins_init(&b, 0, 10, 4);
	assert_int_equal(vstats_bins_add(&b, 5, 100), 0);
	assert_int_equal(vstats_bins_add(&b, 25, 100), 0);
	assert_int_equal(vstats_bins_add(&b, 45, 1), -E2BIG);
	/* The empty bin in the middle is a stall: minimum 0. */
	assert_int_equal(vstats_bins_minmax(&b, 30, &lo, &hi), 3);
	assert_true(lo == 0);
	assert_true(fabs(hi - 1e10) < 1);
	vstats_bins_free(&b);
	vstats_bins_free(NULL);
}

/* Duration-mode latency: only rounds wholly inside the window count. */
static void test_lat_window(void **state)
{
	/* Rounds: [0,10] [10,25] [25,30] [30,42] [42,50] [50,61] */
	uint64_t t[] = {0, 10, 25, 30, 42, 50, 61};
	size_t first = 99;

	/* [10, 50]: rounds 1..4 (round 0 starts early, 5 ends late). */
	assert_int_equal(vstats_lat_window(t, 6, 10, 50, &first), 4);
	assert_int_equal(first, 1);
	/* A round that straddles either edge is out. */
	assert_int_equal(vstats_lat_window(t, 6, 11, 49, &first), 2);
	assert_int_equal(first, 2);
	/* Everything, and nothing. */
	assert_int_equal(vstats_lat_window(t, 6, 0, 61, &first), 6);
	assert_int_equal(first, 0);
	assert_int_equal(vstats_lat_window(t, 6, 26, 29, &first), 0);
	assert_int_equal(first, 0);
	assert_int_equal(vstats_lat_window(t, 6, 62, 100, &first), 0);
	assert_int_equal(vstats_lat_window(t, 0, 0, 100, &first), 0);
	/* One long round covering the whole window is not a sample. */
	assert_int_equal(vstats_lat_window(t, 1, 2, 8, &first), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lat_known),
		cmocka_unit_test(test_lat_percentiles),
		cmocka_unit_test(test_lat_single_and_empty),
		cmocka_unit_test(test_lat_stdev_not_truncated),
		cmocka_unit_test(test_bins),
		cmocka_unit_test(test_bins_gap_and_ceiling),
		cmocka_unit_test(test_lat_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
