// SPDX-License-Identifier: MIT
/*
 * Unit tests of the exporter's scrape authentication (exporter/webauth.c):
 * which hashes and names are accepted, bcrypt $2y$/$2b$/$2a$ through
 * libxcrypt, the remembered password, bearer tokens from a file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <crypt.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "webauth.h"

/* bcrypt of "secret" (cost 10 as $2y$, cost 4 as $2b$) */
#define Y10 "$2y$10$w8ngB993nJjuA4Q.KG3Wq.ubx0tkiohTyRPZNwU7JCpGoMc1mU.iy"
#define B04 "$2b$04$abcdefghijklmnopqrstuu2r9OfJnfCsdneAXAGHnS4UpFFP8WIrW"

static void test_hashes_and_names(void **state)
{
	static const char *bad[] = {
		"secret",
		"$6$salt$abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopq",
		"$2y$10$short",
		"$2y$03$abcdefghijklmnopqrstuu2r9OfJnfCsdneAXAGHnS4UpFFP8WIrW",
		"$2x$10$abcdefghijklmnopqrstuu2r9OfJnfCsdneAXAGHnS4UpFFP8WIrW",
		"$2b$04$abcdefghijklmnopqrstuu2r9OfJnfCsdneAXAGHnS4UpFFP8WIr!",
	};
	struct webauth *a;
	char err[256];

	(void)state;
	assert_int_equal(webauth_new(&a), 0);
	assert_false(webauth_enabled(a));
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(
			webauth_add_user(a, "u", bad[i], err, sizeof(err)),
			-EINVAL);
		assert_non_null(strstr(err, "not a bcrypt hash"));
	}
	assert_int_equal(webauth_add_user(a, "a:b", Y10, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(webauth_add_user(a, "", Y10, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(webauth_add_user(a, "prom", Y10, err, sizeof(err)), 0);
	assert_int_equal(webauth_add_user(a, "prom", B04, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "twice"));
	assert_true(webauth_enabled(a));
	assert_int_equal(webauth_users(a), 1);
	webauth_free(a);
}

static void test_basic(void **state)
{
	char hash_a[128], err[256];
	struct webauth *a;

	(void)state;
	/* $2a$ is the same algorithm for ASCII passwords */
	snprintf(hash_a, sizeof(hash_a), "%s", B04);
	hash_a[2] = 'a';
	assert_int_equal(webauth_new(&a), 0);
	assert_int_equal(webauth_add_user(a, "prom", Y10, err, sizeof(err)), 0);
	assert_int_equal(webauth_add_user(a, "graf", B04, err, sizeof(err)), 0);
	assert_int_equal(webauth_add_user(a, "old", hash_a, err, sizeof(err)),
			 0);
	assert_int_equal(webauth_check_basic(a, "prom", "secret"), WEBAUTH_OK);
	assert_int_equal(webauth_check_basic(a, "prom", "secret"), WEBAUTH_OK);
	assert_int_equal(webauth_check_basic(a, "prom", "Secret"),
			 WEBAUTH_DENIED);
	assert_int_equal(webauth_check_basic(a, "prom", ""), WEBAUTH_DENIED);
	assert_int_equal(webauth_check_basic(a, "graf", "secret"), WEBAUTH_OK);
	assert_int_equal(webauth_check_basic(a, "old", "secret"), WEBAUTH_OK);
	assert_int_equal(webauth_check_basic(a, "nobody", "secret"),
			 WEBAUTH_DENIED);
	/* a wrong password does not forget the right one */
	assert_int_equal(webauth_check_basic(a, "prom", "secret"), WEBAUTH_OK);
	assert_int_equal(webauth_check_bearer(a, "x", 1), WEBAUTH_DENIED);
	webauth_free(a);
}

static void test_token_file(void **state)
{
	char path[] = "/tmp/ibpulse-webauth-XXXXXX", err[256];
	const char tok[] = "0123456789abcdef0123";
	struct webauth *a;
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "short\n");
	fclose(f);
	assert_int_equal(webauth_new(&a), 0);
	assert_int_equal(webauth_token_file(a, path, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "16"));
	f = fopen(path, "w");
	fprintf(f, "%s\nsecond line ignored\n", tok);
	fclose(f);
	assert_int_equal(webauth_token_file(a, path, err, sizeof(err)), 0);
	assert_true(webauth_has_token(a));
	assert_int_equal(webauth_check_bearer(a, tok, strlen(tok)), WEBAUTH_OK);
	assert_int_equal(webauth_check_bearer(a, tok, strlen(tok) - 1),
			 WEBAUTH_DENIED);
	assert_int_equal(webauth_check_bearer(a, "0123456789abcdef0124", 20),
			 WEBAUTH_DENIED);
	assert_int_equal(webauth_check_basic(a, "prom", "secret"),
			 WEBAUTH_DENIED);
	unlink(path);
	assert_true(webauth_token_file(a, path, err, sizeof(err)) == -ENOENT);
	webauth_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hashes_and_names),
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_token_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
