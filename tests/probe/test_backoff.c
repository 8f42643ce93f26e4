// SPDX-License-Identifier: MIT
/*
 * Unit tests for the retry backoff (probe/daemon/backoff.c): every delay lies
 * in [0, cap], the cap doubles from base up to max and stays there, the
 * draws are spread (full jitter, not a fixed delay) and reset returns to
 * the base.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "backoff.h"

static void test_bounds_and_cap(void **state)
{
	struct backoff b;
	double caps[] = {1, 2, 4, 8, 16, 32, 60, 60, 60};

	backoff_init(&b, 1, 60);
	for (size_t i = 0; i < sizeof(caps) / sizeof(*caps); i++) {
		double cap = backoff_cap(&b), d;

		assert_true(cap == caps[i]);
		d = backoff_next(&b);
		assert_true(d >= 0 && d <= cap);
	}
	for (int i = 0; i < 1000; i++)
		assert_true(backoff_next(&b) <= 60);
	backoff_reset(&b);
	assert_true(backoff_cap(&b) == 1);
}

static void test_full_jitter(void **state)
{
	struct backoff b;
	double lo = 1e9, hi = 0, sum = 0;
	int n = 10000;

	backoff_init(&b, 300, 300);
	for (int i = 0; i < n; i++) {
		double d = backoff_next(&b);

		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
		sum += d;
	}
	/* Uniform over [0, 300]: spread over the whole range, mean ~150. */
	assert_true(lo < 10);
	assert_true(hi > 290);
	assert_true(sum / n > 135 && sum / n < 165);
}

static void test_rand_range(void **state)
{
	struct backoff b;

	backoff_init(&b, 1, 1);
	for (int i = 0; i < 10000; i++) {
		double r = backoff_rand(&b);

		assert_true(r >= 0 && r < 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds_and_cap),
		cmocka_unit_test(test_full_jitter),
		cmocka_unit_test(test_rand_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
