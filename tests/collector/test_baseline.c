// SPDX-License-Identifier: MIT
/*
 * Unit tests for the baseline statistics and the regression window
 * (collector/baseline.c): median and MAD on odd, even and outlier-ridden
 * samples, thresholds with margins, spreads and the latency floor, and the
 * K-of-M window opening exactly at the K-th bad result, forgetting results
 * that slid out, closing after good_results good ones in a row and
 * starting afresh after a close.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "baseline.h"

static const struct baseline_opts opts = {
	.results = 20,
	.window_days = 7,
	.min_results = 5,
	.margin = 0.2,
	.latency_margin = 0.5,
	.latency_floor = 1e-6,
	.spread_factor = 3,
	.bad_results = 3,
	.judged_results = 5,
	.good_results = 4,
	.efficiency_floor = 0.8,
};

static void test_median_mad(void **state)
{
	double odd[] = {5, 1, 4, 2, 3};
	double even[] = {10, 40, 20, 30};
	/* one wild outlier moves neither the median nor the MAD much */
	double out[] = {100, 101, 99, 100, 1e6, 102, 98};
	double bad[] = {1, NAN, 3};
	struct baseline_stat b;

	assert_int_equal(baseline_compute(odd, 5, &b), 0);
	assert_true(b.median == 3);
	/* |v - 3| = 0 1 1 2 2: MAD 1 */
	assert_true(fabs(b.spread - 1.4826) < 1e-12);
	assert_int_equal(b.n, 5);
	assert_int_equal(baseline_compute(even, 4, &b), 0);
	assert_true(b.median == 25);
	/* |v - 25| = 5 5 15 15: MAD 10 */
	assert_true(fabs(b.spread - 14.826) < 1e-9);
	assert_int_equal(baseline_compute(out, 7, &b), 0);
	assert_true(b.median == 100);
	assert_true(fabs(b.spread - 1.4826) < 1e-12);
	assert_int_equal(baseline_compute(out, 0, &b), -ENODATA);
	assert_int_equal(baseline_compute(bad, 3, &b), -ENODATA);
}

static void test_thresholds(void **state)
{
	struct baseline_stat tight = {.median = 100, .spread = 1, .n = 20};
	struct baseline_stat noisy = {.median = 100, .spread = 10, .n = 20};
	struct baseline_stat fast = {.median = 2e-7, .spread = 0, .n = 20};
	struct baseline_stat slow = {.median = 4e-6, .spread = 1e-7, .n = 20};
	struct baseline_stat wide = {.median = 4e-6, .spread = 1e-6, .n = 20};

	/* the margin when the spread is small, the spread when it is not */
	assert_true(baseline_threshold(&opts, BASELINE_BANDWIDTH, &tight) ==
		    80);
	assert_true(baseline_threshold(&opts, BASELINE_BANDWIDTH, &noisy) ==
		    70);
	assert_true(baseline_bad(BASELINE_BANDWIDTH, 80, 79.9));
	assert_false(baseline_bad(BASELINE_BANDWIDTH, 80, 80));
	/* a spread beyond the median never gives a negative threshold */
	noisy.spread = 50;
	assert_true(baseline_threshold(&opts, BASELINE_BANDWIDTH, &noisy) == 0);
	/* latency: 0.2 us baseline, 3x is only +0.4 us: the floor rules */
	assert_true(fabs(baseline_threshold(&opts, BASELINE_LATENCY, &fast) -
			 1.2e-6) < 1e-15);
	assert_false(baseline_bad(BASELINE_LATENCY, 1.2e-6, 6e-7));
	/* 4 us: the margin (+2 us) is above the floor */
	assert_true(fabs(baseline_threshold(&opts, BASELINE_LATENCY, &slow) -
			 6e-6) < 1e-15);
	/* a wide spread (3 x 1 us) beats the 50% margin */
	assert_true(fabs(baseline_threshold(&opts, BASELINE_LATENCY, &wide) -
			 7e-6) < 1e-15);
	assert_true(baseline_bad(BASELINE_LATENCY, 6e-6, 6.1e-6));
}

/* Push @seq ("b" bad, "g" good), return the events as a string. */
static void run(struct baseline_window *w, const char *seq, char *ev)
{
	static const char names[] = {'.', 'O', 'C'};

	for (; *seq; seq++)
		*ev++ = names[baseline_step(w, &opts, *seq == 'b')];
	*ev = '\0';
}

static void test_window_opens_at_k(void **state)
{
	struct baseline_window w = {0};
	char ev[64];

	/* one bad is noise; two of five too; the third opens */
	run(&w, "gbgbg", ev);
	assert_string_equal(ev, ".....");
	assert_false(w.open);
	run(&w, "b", ev);
	assert_string_equal(ev, "O");
	assert_true(w.open);
	assert_int_equal(baseline_bad_count(&w, 5), 3);
}

static void test_window_forgets(void **state)
{
	struct baseline_window w = {0};
	char ev[64];

	/* bad results further apart than M never add up to K */
	run(&w, "bggggbggggbggggbgggg", ev);
	assert_string_equal(ev, "....................");
	/* b g g g b b: the first b slid out when the third arrives */
	memset(&w, 0, sizeof(w));
	run(&w, "bgggbb", ev);
	assert_string_equal(ev, "......");
	run(&w, "b", ev);
	assert_string_equal(ev, "O");
}

static void test_window_closes_after_good_run(void **state)
{
	struct baseline_window w = {0};
	char ev[64];

	run(&w, "bbb", ev);
	assert_string_equal(ev, "..O");
	/* three good, then a bad: the run starts over */
	run(&w, "gggb", ev);
	assert_string_equal(ev, "....");
	assert_true(w.open);
	assert_int_equal(baseline_good_run(&w), 0);
	run(&w, "ggg", ev);
	assert_string_equal(ev, "...");
	assert_int_equal(baseline_good_run(&w), 3);
	run(&w, "g", ev);
	assert_string_equal(ev, "C");
	assert_false(w.open);
	assert_int_equal(w.n, 0);
	/* after a close the old bad ones are gone: it takes K again */
	run(&w, "bb", ev);
	assert_string_equal(ev, "..");
	run(&w, "b", ev);
	assert_string_equal(ev, "O");
}

static void test_window_k_equals_m(void **state)
{
	struct baseline_opts o = opts;
	struct baseline_window w = {0};
	int ev[8];

	o.bad_results = o.judged_results = 1;
	o.good_results = 1;
	ev[0] = baseline_step(&w, &o, 1);
	ev[1] = baseline_step(&w, &o, 1);
	ev[2] = baseline_step(&w, &o, 0);
	assert_int_equal(ev[0], BASELINE_OPEN);
	assert_int_equal(ev[1], BASELINE_NONE);
	assert_int_equal(ev[2], BASELINE_CLOSE);
	/* a window of 64 keeps counting past 64 results */
	o.judged_results = o.good_results = 64;
	o.bad_results = 64;
	memset(&w, 0, sizeof(w));
	for (int i = 0; i < 63; i++)
		assert_int_equal(baseline_step(&w, &o, 1), BASELINE_NONE);
	assert_int_equal(baseline_step(&w, &o, 1), BASELINE_OPEN);
	for (int i = 0; i < 63; i++)
		assert_int_equal(baseline_step(&w, &o, 0), BASELINE_NONE);
	assert_int_equal(baseline_step(&w, &o, 0), BASELINE_CLOSE);
}

static void test_opts_check(void **state)
{
	struct baseline_opts o = opts;
	char err[160];

	assert_int_equal(baseline_opts_check(&o, err, sizeof(err)), 0);
	o.min_results = 21;
	assert_int_equal(baseline_opts_check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "min_results (21)"));
	o = opts;
	o.bad_results = 6;
	assert_int_equal(baseline_opts_check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad_results (6)"));
	assert_string_equal(baseline_metric_name(BASELINE_LATENCY), "latency");
	assert_string_equal(baseline_metric_name(BASELINE_BANDWIDTH),
			    "bandwidth");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median_mad),
		cmocka_unit_test(test_thresholds),
		cmocka_unit_test(test_window_opens_at_k),
		cmocka_unit_test(test_window_forgets),
		cmocka_unit_test(test_window_closes_after_good_run),
		cmocka_unit_test(test_window_k_equals_m),
		cmocka_unit_test(test_opts_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
