// SPDX-License-Identifier: MIT
/*
 * Unit tests for the results spool (probe/daemon/spool.c) on a real temporary
 * directory: a result is a file after spool_put (no temporary left), the
 * index survives a reopen (restart) oldest first, size and age bounds drop
 * the oldest and count it (counts survive a reopen too), a rejected
 * result moves to rejected/ with its reason, leftover temporary files of
 * a crashed write are removed, UUIDs are version 4, and a spool that can
 * no longer be written (its directory removed under it: every create
 * fails) holds results in memory, bounded, and counts what it drops.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "spool.h"

static char dir[256];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/ibpulse-spool-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* Does @dir/@pre@a@post exist? */
static int exists3(const char *pre, const char *a, const char *post)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s%s%s", dir, pre, a, post);
	return stat(path, &st) == 0;
}

static void put(struct spool *sp, char *id, const char *data)
{
	assert_int_equal(spool_uuid(id), 0);
	assert_int_equal(spool_put(sp, id, data, strlen(data)), 0);
}

static void test_uuid(void **state)
{
	char a[SPOOL_ID_LEN + 1], b[SPOOL_ID_LEN + 1];

	assert_int_equal(spool_uuid(a), 0);
	assert_int_equal(spool_uuid(b), 0);
	assert_int_equal(strlen(a), 36);
	assert_int_equal(a[14], '4');
	assert_non_null(strchr("89ab", a[19]));
	assert_string_not_equal(a, b);
}

static void test_put_read_remove(void **state)
{
	char id[SPOOL_ID_LEN + 1], *data;
	struct spool *sp;
	size_t len;

	assert_int_equal(spool_open(dir, 1 << 20, 3600, &sp), 0);
	put(sp, id, "{\"a\":1}");
	assert_true(exists3("", id, ".json"));
	assert_false(exists3(".tmp-", id, ".json"));
	assert_int_equal(spool_count(sp), 1);
	assert_int_equal(spool_bytes(sp), 7);
	assert_int_equal(spool_read(sp, id, &data, &len), 0);
	assert_string_equal(data, "{\"a\":1}");
	free(data);
	assert_int_equal(spool_remove(sp, id), 0);
	assert_false(exists3("", id, ".json"));
	assert_int_equal(spool_remove(sp, id), -ENOENT);
	assert_int_equal(spool_put(sp, "../evil", "x", 1), -EINVAL);
	spool_close(sp);
}

static void test_reload(void **state)
{
	char ids[3][SPOOL_ID_LEN + 1], got[4][SPOOL_ID_LEN + 1];
	struct spool *sp;
	FILE *f;
	char path[512];

	assert_int_equal(spool_open(dir, 1 << 20, 3600, &sp), 0);
	for (int i = 0; i < 3; i++) {
		put(sp, ids[i], "{}");
		usleep(20000); /* distinct mtimes: order by age */
	}
	spool_close(sp);
	/* A crashed write leaves a temporary file: removed on open. */
	snprintf(path, sizeof(path), "%s/.tmp-x.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(spool_open(dir, 1 << 20, 3600, &sp), 0);
	assert_int_equal(spool_count(sp), 3);
	assert_int_equal(spool_oldest(sp, got, 4), 3);
	for (int i = 0; i < 3; i++)
		assert_string_equal(got[i], ids[i]);
	assert_false(exists3("", ".tmp-x.json", ""));
	spool_close(sp);
}

static void test_bounded_size(void **state)
{
	char ids[4][SPOOL_ID_LEN + 1], got[4][SPOOL_ID_LEN + 1];
	char big[200];
	struct spool *sp;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(spool_open(dir, 500, 3600, &sp), 0);
	for (int i = 0; i < 4; i++)
		put(sp, ids[i], big); /* 199 bytes each: 2 fit */
	assert_int_equal(spool_count(sp), 2);
	assert_true(spool_bytes(sp) <= 500);
	assert_int_equal(spool_oldest(sp, got, 4), 2);
	assert_string_equal(got[0], ids[2]);
	assert_false(exists3("", ids[0], ".json"));
	assert_int_equal(spool_dropped(sp).spool_full, 2);
	/* Larger than the whole spool: dropped and counted. */
	{
		char huge[600], id[SPOOL_ID_LEN + 1];

		memset(huge, 'y', sizeof(huge));
		assert_int_equal(spool_uuid(id), 0);
		assert_int_equal(spool_put(sp, id, huge, sizeof(huge)), -E2BIG);
	}
	assert_int_equal(spool_dropped(sp).spool_full, 3);
	spool_close(sp);
	/* The counts are cumulative across restarts. */
	assert_int_equal(spool_open(dir, 500, 3600, &sp), 0);
	assert_int_equal(spool_dropped(sp).spool_full, 3);
	spool_close(sp);
}

static void test_bounded_age(void **state)
{
	char a[SPOOL_ID_LEN + 1], b[SPOOL_ID_LEN + 1];
	struct spool *sp;

	assert_int_equal(spool_open(dir, 1 << 20, 60, &sp), 0);
	put(sp, a, "{}");
	put(sp, b, "{}");
	spool_expire(sp, (double)time(NULL) + 30);
	assert_int_equal(spool_count(sp), 2);
	spool_expire(sp, (double)time(NULL) + 120);
	assert_int_equal(spool_count(sp), 0);
	assert_int_equal(spool_dropped(sp).expired, 2);
	assert_false(exists3("", a, ".json"));
	spool_close(sp);
}

static void test_reject(void **state)
{
	char id[SPOOL_ID_LEN + 1], path[512], text[128];
	struct spool *sp;
	FILE *f;

	assert_int_equal(spool_open(dir, 1 << 20, 3600, &sp), 0);
	put(sp, id, "{\"bad\":true}");
	assert_int_equal(spool_reject(sp, id, "HTTP 400: results[0].profile"),
			 0);
	assert_int_equal(spool_count(sp), 0);
	assert_false(exists3("", id, ".json"));
	assert_true(exists3("rejected/", id, ".json"));
	snprintf(path, sizeof(path), "%s/rejected/%s.reason", dir, id);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(text, sizeof(text), f));
	fclose(f);
	assert_string_equal(text, "HTTP 400: results[0].profile");
	spool_close(sp);
	/* Rejected results are not sent again after a restart. */
	assert_int_equal(spool_open(dir, 1 << 20, 3600, &sp), 0);
	assert_int_equal(spool_count(sp), 0);
	spool_close(sp);
}

/* Remove the spool directory under an open spool: writes now fail. */
static void break_dir(void)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_unwritable_held_in_memory(void **state)
{
	char a[SPOOL_ID_LEN + 1], b[SPOOL_ID_LEN + 1], got[4][SPOOL_ID_LEN + 1];
	char *data;
	struct spool *sp;
	uint64_t bytes;
	size_t len, n;

	assert_int_equal(spool_open(dir, 1 << 20, 3600, &sp), 0);
	put(sp, a, "{\"on\":\"disk\"}");
	break_dir();
	assert_int_equal(spool_uuid(b), 0);
	assert_int_equal(spool_put(sp, b, "{\"in\":1}", 8), SPOOL_IN_MEMORY);
	assert_int_equal(spool_count(sp), 2);
	spool_memory(sp, &n, &bytes);
	assert_int_equal(n, 1);
	assert_int_equal(bytes, 8);
	assert_int_equal(spool_oldest(sp, got, 4), 2);
	assert_string_equal(got[1], b);
	assert_int_equal(spool_read(sp, b, &data, &len), 0);
	assert_int_equal(len, 8);
	assert_string_equal(data, "{\"in\":1}");
	free(data);
	/* sent: gone from memory */
	assert_int_equal(spool_remove(sp, b), 0);
	spool_memory(sp, &n, &bytes);
	assert_int_equal(n + bytes, 0);
	assert_int_equal(spool_count(sp), 1);
	/* refused: it cannot go to rejected/ either, but leaves the index */
	assert_int_equal(spool_put(sp, b, "{}", 2), SPOOL_IN_MEMORY);
	assert_true(spool_reject(sp, b, "HTTP 400") < 0);
	assert_int_equal(spool_count(sp), 1);
	assert_int_equal(spool_dropped(sp).unwritable, 0);
	spool_close(sp);
}

/* Memory holds min(max_bytes, SPOOL_MEM_MAX): past it, the oldest held
 * results are dropped and counted as unwritable; disk results stay. */
static void test_unwritable_bounded(void **state)
{
	char ids[5][SPOOL_ID_LEN + 1], got[8][SPOOL_ID_LEN + 1], big[1500];
	struct spool *sp;
	uint64_t bytes;
	size_t n;

	memset(big, 'x', sizeof(big));
	assert_int_equal(spool_open(dir, 4096, 3600, &sp), 0);
	break_dir();
	for (int i = 0; i < 5; i++) {
		assert_int_equal(spool_uuid(ids[i]), 0);
		assert_int_equal(spool_put(sp, ids[i], big, sizeof(big)),
				 SPOOL_IN_MEMORY);
	}
	spool_memory(sp, &n, &bytes);
	assert_int_equal(n, 2); /* 2 x 1500 fit in 4096, 3 do not */
	assert_true(bytes <= 4096);
	assert_int_equal(spool_dropped(sp).unwritable, 3);
	assert_int_equal(spool_dropped(sp).spool_full, 0);
	assert_int_equal(spool_oldest(sp, got, 8), 2);
	assert_string_equal(got[0], ids[3]);
	assert_string_equal(got[1], ids[4]);
	spool_close(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uuid),
		cmocka_unit_test_setup_teardown(test_put_read_remove, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounded_size, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bounded_age, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reject, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwritable_held_in_memory,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwritable_bounded, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
