// SPDX-License-Identifier: MIT
/* Unit tests for logging (common/log.c): levels and rate limiting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "log.h"

static void test_level_parse(void **state)
{
	enum log_level l;

	assert_int_equal(log_level_parse("debug", &l), 0);
	assert_int_equal(l, LOG_LVL_DEBUG);
	assert_int_equal(log_level_parse("WARNING", &l), 0);
	assert_int_equal(l, LOG_LVL_WARN);
	assert_true(log_level_parse("loud", &l) < 0);
}

static void test_once_rate_limits_per_key(void **state)
{
	log_init("test", LOG_LVL_INFO);
	assert_int_equal(log_once("/sys/a", 3600, LOG_LVL_WARN, "bad %s", "a"),
			 1);
	assert_int_equal(log_once("/sys/a", 3600, LOG_LVL_WARN, "bad %s", "a"),
			 0);
	assert_int_equal(log_once("/sys/b", 3600, LOG_LVL_WARN, "bad %s", "b"),
			 1);
	/* Interval 0: never suppressed. */
	assert_int_equal(log_once("/sys/c", 0, LOG_LVL_WARN, "c"), 1);
	assert_int_equal(log_once("/sys/c", 0, LOG_LVL_WARN, "c"), 1);
	/* Below the threshold: not printed at all. */
	assert_int_equal(log_once("/sys/d", 3600, LOG_LVL_DEBUG, "d"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level_parse),
		cmocka_unit_test(test_once_rate_limits_per_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
