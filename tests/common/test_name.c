// SPDX-License-Identifier: MIT
/*
 * Unit tests of the shared small pieces: the name rules (common/name.c),
 * FNV-1a (common/fnv.h) against the reference vectors, and the
 * shared-secret reader (common/secret.c) on real files.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "fnv.h"
#include "name.h"
#include "secret.h"

static void test_label_rule(void **state)
{
	(void)state;
	assert_true(name_valid(NAME_LABEL, "rx_prio3_pause", 64));
	assert_true(name_valid(NAME_LABEL, "VL15_dropped", 64));
	assert_true(name_valid(NAME_LABEL, "a:b+c-d.e", 64));
	assert_false(name_valid(NAME_LABEL, "", 64));
	assert_false(name_valid(NAME_LABEL, "rx pause", 64));
	assert_false(name_valid(NAME_LABEL, "a/b", 64));
	assert_true(name_valid(NAME_LABEL, "abcd", 4));
	assert_false(name_valid(NAME_LABEL, "abcde", 4));
}

static void test_host_rule(void **state)
{
	(void)state;
	assert_true(name_valid(NAME_HOST, "node01.example-1_a", 64));
	assert_false(name_valid(NAME_HOST, "-node", 64));
	assert_false(name_valid(NAME_HOST, ".node", 64));
	assert_false(name_valid(NAME_HOST, "node:1", 64));
	assert_false(name_valid(NAME_HOST, "node+1", 64));
	assert_true(name_char_ok(NAME_HOST, '-', 1));
	assert_false(name_char_ok(NAME_HOST, '-', 0));
	assert_true(name_char_ok(NAME_TEXT, ' ', 0));
	assert_false(name_char_ok(NAME_TEXT, '\n', 0));
	assert_non_null(strstr(name_class_desc(NAME_HOST), "starting with"));
}

/* The published FNV-1a 64 test vectors (Fowler, Noll, Vo). */
static void test_fnv_vectors(void **state)
{
	(void)state;
	assert_true(fnv1a_str(FNV1A_BASIS, "") == 0xcbf29ce484222325ULL);
	assert_true(fnv1a_str(FNV1A_BASIS, "a") == 0xaf63dc4c8601ec8cULL);
	assert_true(fnv1a_str(FNV1A_BASIS, "foobar") == 0x85944171f73967e8ULL);
	assert_true(fnv1a_bytes(FNV1A_BASIS, "foobar", 6) ==
		    fnv1a_str(FNV1A_BASIS, "foobar"));
	assert_true(fnv1a_mix(FNV1A_BASIS, 'a') == 0xaf63dc4c8601ec8cULL);
}

static char *secret_file(const char *text, mode_t mode)
{
	char *path = strdup("/tmp/ibpulse-secret-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

static void test_secret_read(void **state)
{
	uint8_t buf[64];
	char err[256], *p;
	size_t len = 0;

	(void)state;
	p = secret_file("0123456789abcdef0123\r\n", 0600);
	assert_int_equal(secret_read(p, "secret_file", buf, sizeof(buf), &len,
				     err, sizeof(err)),
			 0);
	assert_int_equal(len, 20);
	assert_memory_equal(buf, "0123456789abcdef0123", 20);
	unlink(p);
	free(p);

	/* Too short: refused, naming the setting; the buffer kept. */
	memset(buf, 'K', sizeof(buf));
	p = secret_file("short\n", 0600);
	assert_int_equal(secret_read(p, "--secret-file", buf, sizeof(buf), &len,
				     err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "--secret-file"));
	assert_non_null(strstr(err, "need at least 16 bytes"));
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 'K');
	unlink(p);
	free(p);

	assert_int_equal(secret_read("/nonexistent/secret", "secret_file", buf,
				     sizeof(buf), &len, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "secret_file /nonexistent/secret"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label_rule),
		cmocka_unit_test(test_host_rule),
		cmocka_unit_test(test_fnv_vectors),
		cmocka_unit_test(test_secret_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
