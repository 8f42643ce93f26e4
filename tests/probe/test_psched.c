// SPDX-License-Identifier: MIT
/*
 * Unit tests for the per-port test budget (probe/daemon/psched.c), driven with
 * a clock of the test's own: one test per port in either role, the duty cycle
 * (a port that spent its budget waits until it earned the next test; over a
 * long run its share of time in tests stays under the duty cycle), pause
 * reasons, ports that are not ACTIVE, and the list of ACTIVE ports a responder
 * names when it refuses a port it lacks.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "psched.h"

static void test_one_per_port(void **state)
{
	struct psched s;
	char why[160];

	psched_init(&s, 0.5, 100);
	assert_int_equal(psched_port_set(&s, "mlx5_0", 1, 1, 0), 0);
	assert_int_equal(psched_port_set(&s, "mlx5_1", 1, 1, 0), 0);
	assert_int_equal(psched_acquire(&s, "mlx5_0", 1, PSCHED_INITIATOR, 2, 0,
					why, sizeof(why)),
			 0);
	/* The responder refuses "busy" while the initiator runs ... */
	assert_int_equal(psched_acquire(&s, "mlx5_0", 1, PSCHED_RESPONDER, 0, 1,
					why, sizeof(why)),
			 -EBUSY);
	assert_non_null(strstr(why, "busy"));
	/* ... another port is free ... */
	assert_int_equal(psched_acquire(&s, "mlx5_1", 1, PSCHED_RESPONDER, 0, 1,
					why, sizeof(why)),
			 0);
	/* ... and the other way round. */
	assert_int_equal(psched_acquire(&s, "mlx5_1", 1, PSCHED_INITIATOR, 1, 1,
					why, sizeof(why)),
			 -EBUSY);
	psched_release(&s, "mlx5_0", 1, 2, 2);
	assert_int_equal(psched_acquire(&s, "mlx5_0", 1, PSCHED_RESPONDER, 0, 2,
					why, sizeof(why)),
			 0);
	assert_int_equal(psched_acquire(&s, "nope", 1, PSCHED_INITIATOR, 1, 2,
					why, sizeof(why)),
			 -ENODEV);
	psched_destroy(&s);
}

static void test_duty_cycle(void **state)
{
	struct psched s;
	char why[160];
	double now = 0, busy = 0;
	int ran = 0;

	/* 5% over 100 s: a budget of 5 s; 2-s tests. */
	psched_init(&s, 0.05, 100);
	psched_port_set(&s, "d", 1, 1, 0);
	assert_int_equal(psched_acquire(&s, "d", 1, PSCHED_INITIATOR, 2, 0, why,
					sizeof(why)),
			 0);
	psched_release(&s, "d", 1, 2, 2);
	assert_int_equal(psched_acquire(&s, "d", 1, PSCHED_INITIATOR, 2, 2, why,
					sizeof(why)),
			 0);
	psched_release(&s, "d", 1, 2, 4);
	/* 1.1 s of budget left: a 2-s test must wait ~18 s. */
	assert_int_equal(psched_acquire(&s, "d", 1, PSCHED_INITIATOR, 2, 4, why,
					sizeof(why)),
			 -EAGAIN);
	assert_non_null(strstr(why, "duty cycle"));
	assert_true(psched_wait(&s, "d", 1, 2, 4) > 17 &&
		    psched_wait(&s, "d", 1, 2, 4) < 19);
	/* Try every second for a day: the share stays under 5%. */
	for (now = 4; now < 86400; now += 1) {
		if (psched_acquire(&s, "d", 1, PSCHED_INITIATOR, 2, now, why,
				   sizeof(why)))
			continue;
		psched_release(&s, "d", 1, 2, now + 2);
		busy += 2;
		ran++;
		now += 2;
	}
	assert_true(busy / 86400 <= 0.05 + 1e-3);
	assert_true(busy / 86400 > 0.04); /* and it does use its budget */
	assert_true(ran > 1000);
	psched_destroy(&s);
}

static void test_duty_zero_and_responder(void **state)
{
	struct psched s;
	char why[160];

	psched_init(&s, 0, 100);
	psched_port_set(&s, "d", 1, 1, 0);
	assert_int_equal(psched_acquire(&s, "d", 1, PSCHED_INITIATOR, 1, 0, why,
					sizeof(why)),
			 -EAGAIN);
	psched_configure(&s, 0.1, 10);
	psched_port_set(&s, "e", 1, 1, 0); /* full budget: 1 s */
	assert_int_equal(psched_acquire(&s, "e", 1, PSCHED_RESPONDER, 0, 0, why,
					sizeof(why)),
			 0);
	psched_release(&s, "e", 1, 5, 5); /* a long peer test: in debt */
	assert_int_equal(psched_acquire(&s, "e", 1, PSCHED_RESPONDER, 0, 6, why,
					sizeof(why)),
			 -EAGAIN);
	psched_destroy(&s);
}

static void test_pause_and_down(void **state)
{
	struct psched s;
	char why[160];

	psched_init(&s, 1, 100);
	psched_port_set(&s, "d", 1, 0, 0);
	assert_int_equal(psched_acquire(&s, "d", 1, PSCHED_INITIATOR, 1, 0, why,
					sizeof(why)),
			 -ENETDOWN);
	psched_port_set(&s, "d", 1, 1, 0);
	assert_int_equal(psched_pause(&s, PSCHED_PAUSE_CTL, 1),
			 PSCHED_PAUSE_CTL);
	psched_pause(&s, PSCHED_PAUSE_FILE, 1);
	assert_int_equal(psched_acquire(&s, "d", 1, PSCHED_RESPONDER, 0, 0, why,
					sizeof(why)),
			 -ECANCELED);
	/* Resume clears only its own reason: the file still pauses. */
	assert_int_equal(psched_pause(&s, PSCHED_PAUSE_CTL, 0),
			 PSCHED_PAUSE_FILE);
	assert_int_equal(psched_acquire(&s, "d", 1, PSCHED_INITIATOR, 1, 0, why,
					sizeof(why)),
			 -ECANCELED);
	psched_pause(&s, PSCHED_PAUSE_FILE, 0);
	assert_int_equal(psched_acquire(&s, "d", 1, PSCHED_INITIATOR, 1, 0, why,
					sizeof(why)),
			 0);
	/* "" is the first port (the responder's default device). */
	assert_int_equal(psched_acquire(&s, "", 1, PSCHED_RESPONDER, 0, 0, why,
					sizeof(why)),
			 -EBUSY);
	psched_destroy(&s);
}

/* What the responder names when a peer asks for a port it lacks. */
static void test_active_list(void **state)
{
	struct psched s;
	char list[32], dev[PSCHED_NAME_MAX];
	unsigned port = 0;

	psched_init(&s, 0.5, 100);
	psched_active_list(&s, list, sizeof(list));
	assert_string_equal(list, "none");
	assert_int_equal(psched_first(&s, dev, sizeof(dev), &port), -ENODEV);
	psched_port_set(&s, "mlx5_0", 1, 1, 0);
	psched_port_set(&s, "mlx5_1", 2, 0, 0);
	psched_port_set(&s, "mlx5_2", 1, 1, 0);
	psched_active_list(&s, list, sizeof(list));
	assert_string_equal(list, "mlx5_0/1, mlx5_2/1");
	assert_int_equal(psched_first(&s, dev, sizeof(dev), &port), 0);
	assert_string_equal(dev, "mlx5_0");
	assert_int_equal(port, 1);
	/* A short buffer is cut, still terminated. */
	psched_active_list(&s, list, 12);
	assert_string_equal(list, "mlx5_0/1, m");
	psched_destroy(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_per_port),
		cmocka_unit_test(test_duty_cycle),
		cmocka_unit_test(test_duty_zero_and_responder),
		cmocka_unit_test(test_pause_and_down),
		cmocka_unit_test(test_active_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
