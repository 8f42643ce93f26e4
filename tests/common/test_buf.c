// SPDX-License-Identifier: MIT
/* Unit tests for the growable buffer with a ceiling (common/buf.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "buf.h"

static void test_grow_and_terminate(void **state)
{
	struct buf b;

	buf_init(&b, 0);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(buf_printf(&b, "%d,", i % 10), 0);
	assert_int_equal(b.len, 2000);
	assert_int_equal(b.data[b.len], '\0');
	assert_memory_equal(b.data, "0,1,2,", 6);
	buf_free(&b);
}

/* Freed, empty and valid, its ceiling kept (curl's dynbuf contract). */
static void assert_failed_empty(const struct buf *b, size_t max)
{
	assert_null(b->data);
	assert_int_equal(b->len, 0);
	assert_int_equal(b->cap, 0);
	assert_int_equal(b->max, max);
}

/* Every way an append fails frees the buffer, which then works again. */
static void test_failure_frees(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 10);
	assert_int_equal(buf_adds(&b, "12345678"), 0);
	assert_int_equal(buf_room(&b), 2);
	assert_int_equal(buf_adds(&b, "abc"), -E2BIG);
	assert_failed_empty(&b, 10);
	assert_int_equal(buf_adds(&b, "12345678"), 0);
	assert_int_equal(buf_printf(&b, "%s", "xyz"), -E2BIG); /* in cap */
	assert_failed_empty(&b, 10);
	assert_int_equal(buf_printf(&b, "%s", "0123456789A"), -E2BIG);
	assert_failed_empty(&b, 10);
	assert_int_equal(buf_adds(&b, "12345678"), 0);
	assert_int_equal(buf_addc(&b, '9'), 0);
	assert_int_equal(buf_addc(&b, '0'), 0);
	assert_string_equal(b.data, "1234567890");
	assert_int_equal(buf_room(&b), 0);
	assert_int_equal(buf_addc(&b, '!'), -E2BIG);
	assert_failed_empty(&b, 10);
	assert_int_equal(buf_adds(&b, "ok"), 0);
	assert_int_equal(buf_reserve(&b, 9), -E2BIG);
	assert_failed_empty(&b, 10);
	buf_free(&b);
	/* no ceiling: a length no machine can hold (refused before malloc,
	 * as a sanitizer build aborts on such a request) */
	buf_init(&b, 0);
	assert_int_equal(buf_adds(&b, "abc"), 0);
	assert_int_equal(buf_add(&b, "x", SIZE_MAX - 2), -E2BIG);
	assert_failed_empty(&b, 0);
	assert_int_equal(buf_adds(&b, "abc"), 0);
	assert_int_equal(buf_reserve(&b, SIZE_MAX - 3), -E2BIG);
	assert_failed_empty(&b, 0);
	assert_int_equal(buf_adds(&b, "after"), 0);
	assert_string_equal(b.data, "after");
	buf_free(&b);
}

/* A pooled allocation taken as the empty content. */
static void test_adopt(void **state)
{
	struct buf b;
	char *p = malloc(64);

	(void)state;
	assert_non_null(p);
	memset(p, 'x', 64);
	buf_init(&b, 0);
	assert_int_equal(buf_adds(&b, "old"), 0);
	buf_adopt(&b, p, 64);
	assert_ptr_equal(b.data, p);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.data, "");
	assert_int_equal(buf_adds(&b, "new"), 0);
	assert_ptr_equal(b.data, p); /* fits: no realloc */
	assert_string_equal(b.data, "new");
	buf_free(&b);
}

static void test_printf_large(void **state)
{
	struct buf b;
	char big[5000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	buf_init(&b, 0);
	assert_int_equal(buf_adds(&b, "a"), 0);
	assert_int_equal(buf_printf(&b, "[%s]", big), 0);
	assert_int_equal(b.len, 1 + 2 + 4999);
	assert_int_equal(b.data[b.len - 1], ']');
	buf_free(&b);
}

static void test_steal_and_reset(void **state)
{
	struct buf b;
	size_t len;
	char *s;

	buf_init(&b, 0);
	s = buf_steal(&b, &len);
	assert_non_null(s);
	assert_int_equal(len, 0);
	free(s);
	buf_adds(&b, "hello");
	s = buf_steal(&b, &len);
	assert_string_equal(s, "hello");
	assert_int_equal(len, 5);
	assert_null(b.data);
	free(s);
	buf_adds(&b, "x");
	buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.data, "");
	buf_free(&b);
	buf_free(NULL);
}

/* Cut back, or take bytes written into reserved room; never past it. */
static void test_setlen(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 0);
	assert_int_equal(buf_setlen(&b, 0), 0);
	assert_int_equal(buf_setlen(&b, 1), -EINVAL); /* no memory yet */
	assert_int_equal(buf_adds(&b, "hello, world"), 0);
	assert_int_equal(buf_setlen(&b, 5), 0);
	assert_string_equal(b.data, "hello");
	assert_int_equal(buf_reserve(&b, 100), 0);
	memcpy(b.data + b.len, "!!", 2); /* a producer writes into the room */
	assert_int_equal(buf_setlen(&b, b.len + 2), 0);
	assert_string_equal(b.data, "hello!!");
	assert_int_equal(buf_setlen(&b, b.cap), -EINVAL); /* no room for NUL */
	assert_int_equal(b.len, 7);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow_and_terminate),
		cmocka_unit_test(test_failure_frees),
		cmocka_unit_test(test_adopt),
		cmocka_unit_test(test_printf_large),
		cmocka_unit_test(test_steal_and_reset),
		cmocka_unit_test(test_setlen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
