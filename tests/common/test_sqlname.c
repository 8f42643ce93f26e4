// SPDX-License-Identifier: MIT
/* Unit tests for SQL parameters by name (common/sqlname.c): a statement
 * whose parameters all have a :name prepares; "?", "?1", "@x" and "$x" are
 * refused at prepare; the binds by name put what they are given, NULL
 * text and NAN as NULL, a repeated name once. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sqlname.h"

static int setup(void **state)
{
	sqlite3 *db = NULL;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		return -1;
	*state = db;
	return 0;
}

static int teardown(void **state)
{
	sqlite3_close(*state);
	return 0;
}

static void test_named_prepares(void **state)
{
	sqlite3_stmt *s = NULL;

	assert_int_equal(sql_prepare(*state, "SELECT :a, :b, :a", 0, &s),
			 SQLITE_OK);
	assert_non_null(s);
	assert_int_equal(sql_names_check(s), 0);
	assert_int_equal(sqlite3_bind_parameter_count(s), 2);
	sqlite3_finalize(s);
	assert_int_equal(sql_prepare(*state, "SELECT 1", 0, &s), SQLITE_OK);
	sqlite3_finalize(s);
}

static void test_nameless_refused(void **state)
{
	static const char *const bad[] = {
		"SELECT ?1", "SELECT ?",     "SELECT :a, ?2", "SELECT @a",
		"SELECT $a", "SELECT :a, ?", "SELECT ?1, :a",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		sqlite3_stmt *s = (sqlite3_stmt *)1;

		assert_int_equal(sql_prepare(*state, bad[i], 0, &s),
				 SQLITE_MISUSE);
		assert_null(s);
	}
}

static void test_binds_by_name(void **state)
{
	sqlite3_stmt *s = NULL;

	assert_int_equal(sql_prepare(*state,
				     "SELECT :t, :n, :i, :r, :nan, :null, :t, "
				     ":known, :unknown",
				     0, &s),
			 SQLITE_OK);
	sql_name_text(s, ":t", "x");
	sql_name_text(s, ":n", NULL);
	sql_name_int(s, ":i", INT64_C(1) << 40);
	sql_name_real(s, ":r", 2.5);
	sql_name_real(s, ":nan", NAN);
	sql_name_null(s, ":null");
	sql_name_known(s, ":known", 0);
	sql_name_known(s, ":unknown", -1);
	assert_int_equal(sql_param(s, ":missing"), 0);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(s, 0), "x");
	assert_int_equal(sqlite3_column_type(s, 1), SQLITE_NULL);
	assert_int_equal(sqlite3_column_int64(s, 2), INT64_C(1) << 40);
	assert_true(sqlite3_column_double(s, 3) == 2.5);
	assert_int_equal(sqlite3_column_type(s, 4), SQLITE_NULL);
	assert_int_equal(sqlite3_column_type(s, 5), SQLITE_NULL);
	assert_string_equal((const char *)sqlite3_column_text(s, 6), "x");
	assert_int_equal(sqlite3_column_type(s, 7), SQLITE_INTEGER);
	assert_int_equal(sqlite3_column_int64(s, 7), 0);
	assert_int_equal(sqlite3_column_type(s, 8), SQLITE_NULL);
	sqlite3_finalize(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_prepares),
		cmocka_unit_test(test_nameless_refused),
		cmocka_unit_test(test_binds_by_name),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
