// SPDX-License-Identifier: MIT
/*
 * Unit tests for logging (common/log.c): levels and rate limiting, with
 * keys that share a slot of the table, many distinct keys, and the bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
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

/* FNV-1a, the hash log.c indexes its table with (to build collisions). */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

/*
 * Two keys whose hashes share the low 16 bits land in one slot of any
 * power-of-two table up to 65,536 slots; each must still be quiet after
 * its first line (the old 256-slot table evicted one with the other, so
 * both warned on every read).
 */
static void test_once_colliding_keys(void **state)
{
	char a[64], b[64];
	static uint32_t seen[65536];
	int found = 0;

	log_once_reset();
	log_init("test", LOG_LVL_INFO);
	memset(seen, 0, sizeof(seen));
	for (uint32_t i = 1; !found && i < 1000000; i++) {
		char k[64];
		uint32_t low;

		snprintf(k, sizeof(k), "/sys/class/infiniband/x/%u", i);
		low = (uint32_t)(fnv1a(k) & 0xffff);
		if (seen[low]) {
			snprintf(a, sizeof(a), "/sys/class/infiniband/x/%u",
				 seen[low]);
			snprintf(b, sizeof(b), "%s", k);
			found = 1;
		}
		seen[low] = i;
	}
	assert_true(found);
	assert_int_equal(fnv1a(a) & 0xffff, fnv1a(b) & 0xffff);
	assert_int_equal(log_once(a, 3600, LOG_LVL_WARN, "a"), 1);
	assert_int_equal(log_once(b, 3600, LOG_LVL_WARN, "b"), 1);
	for (int round = 0; round < 13; round++) {
		assert_int_equal(log_once(a, 3600, LOG_LVL_WARN, "a"), 0);
		assert_int_equal(log_once(b, 3600, LOG_LVL_WARN, "b"), 0);
	}
}

/* 1,000 distinct keys, each logged 3 times: 1,000 lines, not more. */
static void test_once_many_keys(void **state)
{
	char k[64];
	int printed = 0;

	log_once_reset();
	log_init("test", LOG_LVL_ERR); /* keep the output short */
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 1000; i++) {
			int p;

			snprintf(k, sizeof(k), "counters/c%d", i);
			p = log_once(k, 3600, LOG_LVL_ERR, "k%d", i);
			if (round)
				assert_int_equal(p, 0);
			else
				printed += p;
		}
	}
	assert_int_equal(printed, 1000);
	log_once_reset();
}

/*
 * Past 1,024 keys: the next new condition prints one summary line, the
 * ones after it nothing (until a minute has passed); known keys stay quiet.
 * Keys whose interval is over are reclaimed: then new keys print again.
 */
static void test_once_bound_and_reclaim(void **state)
{
	char k[64];

	log_once_reset();
	log_init("test", LOG_LVL_ERR);
	for (int i = 0; i < 1024; i++) {
		snprintf(k, sizeof(k), "full/%d", i);
		assert_int_equal(log_once(k, 3600, LOG_LVL_ERR, "k%d", i), 1);
	}
	assert_int_equal(log_once("new/1", 3600, LOG_LVL_ERR, "n1"), 1);
	assert_int_equal(log_once("new/2", 3600, LOG_LVL_ERR, "n2"), 0);
	assert_int_equal(log_once("new/1", 3600, LOG_LVL_ERR, "n1"), 0);
	assert_int_equal(log_once("full/7", 3600, LOG_LVL_ERR, "k7"), 0);
	/* interval 0 is never stored, never suppressed */
	assert_int_equal(log_once("new/3", 0, LOG_LVL_ERR, "n3"), 1);

	log_once_reset();
	for (int i = 0; i < 1024; i++) {
		snprintf(k, sizeof(k), "short/%d", i);
		assert_int_equal(log_once(k, 1, LOG_LVL_ERR, "s%d", i), 1);
	}
	sleep(2);
	assert_int_equal(log_once("after/1", 3600, LOG_LVL_ERR, "a1"), 1);
	assert_int_equal(log_once("after/2", 3600, LOG_LVL_ERR, "a2"), 1);
	assert_int_equal(log_once("after/1", 3600, LOG_LVL_ERR, "a1"), 0);
	assert_int_equal(log_once("after/2", 3600, LOG_LVL_ERR, "a2"), 0);
	log_once_reset();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level_parse),
		cmocka_unit_test(test_once_rate_limits_per_key),
		cmocka_unit_test(test_once_colliding_keys),
		cmocka_unit_test(test_once_many_keys),
		cmocka_unit_test(test_once_bound_and_reclaim),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
