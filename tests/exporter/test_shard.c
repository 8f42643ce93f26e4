// SPDX-License-Identifier: MIT
/*
 * Unit tests for /metrics sharding (exporter/shard.c): the shard of a host
 * is stable (a fixed value, whatever other hosts exist), every host lands
 * in exactly one shard, shards are roughly balanced, and bad query values
 * are refused with a reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "shard.h"

static void test_stable(void **state)
{
	/* FNV-1a 64 of "node001" is fixed: these must never change, or a
	 * restart would move hosts between Prometheus targets. */
	assert_int_equal(shard_of("node001", 1), 0);
	assert_int_equal(shard_of("", 7), 14695981039346656037ULL % 7);
	assert_int_equal(shard_of("a", 1000), 12638187200555641996ULL % 1000);
	for (unsigned n = 1; n < 50; n++)
		assert_int_equal(shard_of("gpu-node-17", n),
				 shard_of("gpu-node-17", n));
}

static void test_partition_and_balance(void **state)
{
	enum { HOSTS = 10000, SHARDS = 8 };
	unsigned count[SHARDS] = {0};
	char name[32];

	for (int i = 0; i < HOSTS; i++) {
		unsigned s;

		snprintf(name, sizeof(name), "node%05d", i);
		s = shard_of(name, SHARDS);
		assert_true(s < SHARDS);
		count[s]++;
	}
	for (int s = 0; s < SHARDS; s++) {
		/* within 10% of HOSTS / SHARDS = 1250 */
		assert_true(count[s] > 1125 && count[s] < 1375);
	}
}

static void check_bad(const char *shard, const char *shards, const char *why)
{
	unsigned i = 99, n = 99;
	char err[128] = "";

	assert_int_equal(shard_parse(shard, shards, &i, &n, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, why));
	assert_int_equal(i, 99);
}

static void test_parse(void **state)
{
	unsigned i, n;
	char err[128];

	assert_int_equal(shard_parse(NULL, NULL, &i, &n, err, sizeof(err)), 0);
	assert_int_equal(i, 0);
	assert_int_equal(n, 1);
	assert_int_equal(shard_parse("3", "4", &i, &n, err, sizeof(err)), 0);
	assert_int_equal(i, 3);
	assert_int_equal(n, 4);
	assert_int_equal(shard_parse("0", "65536", &i, &n, err, sizeof(err)),
			 0);
	check_bad("4", "4", "shard must be");
	check_bad("0", "0", "shards must be");
	check_bad("0", "65537", "shards must be");
	check_bad("-1", "4", "shard must be");
	check_bad("1", "+4", "shards must be");
	check_bad("x", "4", "shard must be");
	check_bad("1 ", "4", "shard must be");
	check_bad("", "4", "shard must be");
	check_bad("0x1", "4", "shard must be");
	check_bad("99999999999999999999", "4", "shard must be");
	check_bad("1", NULL, "go together");
	check_bad(NULL, "2", "go together");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stable),
		cmocka_unit_test(test_partition_and_balance),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
