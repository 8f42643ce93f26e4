// SPDX-License-Identifier: MIT
/* Unit tests for growable arrays (common/vec.c): room for element n, the
 * elements kept as it doubles, a first call past an empty capacity, and
 * an impossible size refused with the array as it was. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vec.h"

struct pt {
	int x, y;
};

static void test_grow_keeps(void **state)
{
	struct pt *v = NULL;
	size_t n = 0, cap = 0;

	(void)state;
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(vec_grow(&v, &cap, n, sizeof(*v)), 0);
		assert_true(cap > n);
		v[n++] = (struct pt){i, -i};
	}
	assert_int_equal(cap, 1024); /* 16 doubled six times */
	for (int i = 0; i < 1000; i++)
		assert_int_equal(v[i].x + v[i].y, 0);
	free(v);
}

static void test_past_capacity(void **state)
{
	int *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(vec_grow(&v, &cap, 40, sizeof(*v)), 0);
	assert_true(cap >= 41);
	v[40] = 7;
	free(v);
}

static void test_refused(void **state)
{
	char *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(vec_grow(&v, &cap, 3, 1), 0);
	memcpy(v, "ab", 3);
	assert_int_equal(vec_grow(&v, &cap, SIZE_MAX / 2, 4), -ENOMEM);
	assert_int_equal(cap, 16);
	assert_string_equal(v, "ab");
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow_keeps),
		cmocka_unit_test(test_past_capacity),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
