// SPDX-License-Identifier: MIT
/*
 * Unit test for the loops' clock (probe/verbs/vclock.c): after calibration
 * it agrees with CLOCK_MONOTONIC over a sleep, and its drift factor is
 * close to 1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "ctrl.h"
#include "vclock.h"

static void test_agrees(void **state)
{
	struct timespec ts = {.tv_nsec = 30000000};
	struct vclock c;
	uint64_t a, b, ra, rb;
	double k, ratio;

	vclock_init(&c);
	a = vclock_now(&c);
	ra = ctrl_now_ns();
	nanosleep(&ts, NULL);
	b = vclock_now(&c);
	rb = ctrl_now_ns();
	assert_true(b > a);
	/* Generous: a loaded 2-core machine may stretch either reading. */
	ratio = (double)(b - a) / (double)(rb - ra);
	assert_true(ratio > 0.8 && ratio < 1.25);
	k = vclock_drift(&c);
	assert_true(k > 0.9 && k < 1.1);
	/* On CLOCK_MONOTONIC's scale, not an arbitrary origin. */
	assert_true(a > ra - 100000000ull && a < ra + 100000000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agrees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
