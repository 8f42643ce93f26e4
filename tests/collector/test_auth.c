// SPDX-License-Identifier: MIT
/*
 * Unit tests for the collector's token table (auth.c) and its string map
 * (map.c): a token names its host, near misses name nobody, bad token
 * files are refused with the line, and the map survives heavy churn.
 * Enrolment: one token per host name, digests only on disk, reloaded
 * after a restart, a torn last line ignored, bad request bodies refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth.h"
#include "map.h"

static const char *host_of(struct auth *a, const char *tok)
{
	return auth_host(a, tok, strlen(tok));
}

static void test_tokens(void **state)
{
	struct auth *a;
	char err[256], tok[64], host[32];

	assert_int_equal(auth_new(&a), 0);
	assert_int_equal(
		auth_add(a, "node1", "0123456789abcdef-1", err, sizeof(err)),
		0);
	assert_int_equal(
		auth_add(a, "node2", "0123456789abcdef-2", err, sizeof(err)),
		0);
	assert_string_equal(host_of(a, "0123456789abcdef-1"), "node1");
	assert_string_equal(host_of(a, "0123456789abcdef-2"), "node2");
	assert_null(host_of(a, "0123456789abcdef-3"));
	assert_null(host_of(a, "0123456789abcdef-"));
	assert_null(host_of(a, "0123456789abcdef-11"));
	assert_null(host_of(a, ""));
	/* The same token twice, even for the same host, is refused. */
	assert_int_equal(
		auth_add(a, "node3", "0123456789abcdef-1", err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "node3"));
	assert_int_equal(auth_add(a, "node3", "short", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "shorter"));
	/* Many tokens: the table grows and every one still resolves. */
	for (int i = 0; i < 5000; i++) {
		snprintf(tok, sizeof(tok), "token-%08d-xyzxyz", i);
		snprintf(host, sizeof(host), "h%d", i);
		assert_int_equal(auth_add(a, host, tok, err, sizeof(err)), 0);
	}
	for (int i = 0; i < 5000; i += 7) {
		snprintf(tok, sizeof(tok), "token-%08d-xyzxyz", i);
		snprintf(host, sizeof(host), "h%d", i);
		assert_string_equal(host_of(a, tok), host);
	}
	assert_int_equal(auth_count(a), 5002);
	auth_free(a);
	auth_free(NULL);
}

static void test_tokens_file(void **state)
{
	char path[] = "/tmp/ibpulse-tokens-XXXXXX";
	int fd = mkstemp(path);
	struct auth *a;
	char err[256];
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("# comment\n\n  node1   aaaaaaaaaaaaaaaa1  "
	      "\nnode2\tbbbbbbbbbbbbbbbb2\n",
	      f);
	fclose(f);
	assert_int_equal(auth_new(&a), 0);
	assert_int_equal(auth_load_file(a, path, err, sizeof(err)), 0);
	assert_string_equal(host_of(a, "aaaaaaaaaaaaaaaa1"), "node1");
	assert_string_equal(host_of(a, "bbbbbbbbbbbbbbbb2"), "node2");
	auth_free(a);

	f = fopen(path, "w");
	fputs("node1 aaaaaaaaaaaaaaaa1\nnode2 bbbbbbbbbbbbbbbb2 extra\n", f);
	fclose(f);
	assert_int_equal(auth_new(&a), 0);
	assert_int_equal(auth_load_file(a, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2:"));
	auth_free(a);
	unlink(path);

	assert_int_equal(auth_new(&a), 0);
	assert_int_equal(auth_load_file(a, path, err, sizeof(err)), -ENOENT);
	auth_free(a);
}

static void test_bearer(void **state)
{
	size_t len = 0;
	const char *t;

	t = auth_bearer("Bearer abc", &len);
	assert_non_null(t);
	assert_int_equal(len, 3);
	assert_memory_equal(t, "abc", 3);
	t = auth_bearer("bearer   abc  ", &len);
	assert_int_equal(len, 3);
	assert_null(auth_bearer("Basic abc", &len));
	assert_null(auth_bearer("Bearer ", &len));
	assert_null(auth_bearer(NULL, &len));
	assert_true(auth_equal("abc", 3, "abc", 3));
	assert_false(auth_equal("abc", 3, "abd", 3));
	assert_false(auth_equal("abc", 3, "abcd", 4));
}

static int freed;

static void count_free(void *v)
{
	freed++;
	free(v);
}

static void test_map_churn(void **state)
{
	struct map *m;
	char key[32];

	assert_int_equal(map_new(count_free, &m), 0);
	for (int i = 0; i < 20000; i++) {
		int *v = malloc(sizeof(*v));

		*v = i;
		snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(map_put(m, key, v), 0);
	}
	/* Delete two thirds, then every survivor must still be found. */
	for (int i = 0; i < 20000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		if (i % 3)
			assert_int_equal(map_del(m, key), 0);
	}
	assert_int_equal(map_count(m), 6667);
	assert_int_equal(freed, 13333);
	for (int i = 0; i < 20000; i++) {
		int *v;

		snprintf(key, sizeof(key), "k%d", i);
		v = map_get(m, key);
		if (i % 3) {
			assert_null(v);
		} else {
			assert_non_null(v);
			assert_int_equal(*v, i);
		}
	}
	assert_int_equal(map_del(m, "nope"), -ENOENT);
	/* Interned keys are stable pointers. */
	assert_ptr_equal(map_intern(m, "k0"), map_intern(m, "k0"));
	map_clear(m);
	assert_int_equal(map_count(m), 0);
	assert_int_equal(freed, 20000);
	map_free(m);
	map_free(NULL);
}

#define SECRET "enrol-secret-0123456789"

static struct auth *enrol_table(const char *path, size_t max)
{
	struct auth *a;
	char err[256];

	assert_int_equal(auth_new(&a), 0);
	assert_int_equal(auth_add(a, "static1", "static-token-0123456789", err,
				  sizeof(err)),
			 0);
	assert_int_equal(
		auth_enrol_setup(a, SECRET, path, max, err, sizeof(err)), 0);
	return a;
}

/* Enrol, refuse a second time, persist digests only, reload. */
static void test_enrol(void **state)
{
	char dir[] = "/tmp/ibpulse-enrol-XXXXXX", path[64], err[256];
	char t1[2 * AUTH_TOKEN_BYTES + 1], t2[sizeof(t1)], text[512];
	struct auth *a;
	FILE *f;
	size_t n;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/enrolled", dir);
	a = enrol_table(path, 2);
	assert_true(auth_enrol_enabled(a));
	assert_true(auth_enrol_secret_ok(a, SECRET, strlen(SECRET)));
	assert_false(auth_enrol_secret_ok(a, SECRET, strlen(SECRET) - 1));
	assert_int_equal(auth_enrol(a, "node1", t1, sizeof(t1)), 0);
	assert_int_equal(strlen(t1), 2 * AUTH_TOKEN_BYTES);
	assert_string_equal(host_of(a, t1), "node1");
	assert_int_equal(auth_enrol(a, "node1", t2, sizeof(t2)), -EEXIST);
	assert_int_equal(t2[0], '\0');
	assert_int_equal(auth_enrol(a, "static1", t2, sizeof(t2)), -EEXIST);
	assert_int_equal(auth_enrol(a, "node2", t2, sizeof(t2)), 0);
	assert_string_not_equal(t1, t2);
	assert_int_equal(auth_enrol(a, "node3", t2, sizeof(t2)), -ENOSPC);
	assert_int_equal(auth_enrolled(a), 2);
	auth_free(a);

	/* The file has the hosts and digests, never a token. */
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	assert_non_null(strstr(text, "node1 "));
	assert_null(strstr(text, t1));
	/* Reloaded: the token still names node1; node1 cannot enrol. */
	a = enrol_table(path, 10);
	assert_int_equal(auth_enrolled(a), 2);
	assert_string_equal(host_of(a, t1), "node1");
	assert_int_equal(auth_enrol(a, "node1", t2, sizeof(t2)), -EEXIST);
	auth_free(a);

	/* A torn last line is ignored; a bad one is refused with its line. */
	f = fopen(path, "a");
	fputs("node9 abc", f);
	fclose(f);
	a = enrol_table(path, 10);
	assert_int_equal(auth_enrolled(a), 2);
	assert_int_equal(auth_enrol(a, "node4", t2, sizeof(t2)), 0);
	auth_free(a);
	a = enrol_table(path, 10);
	assert_int_equal(auth_enrolled(a), 3);
	assert_string_equal(host_of(a, t2), "node4");
	auth_free(a);
	f = fopen(path, "a");
	fputs("\nnode8 xyz\n", f);
	fclose(f);
	assert_int_equal(auth_new(&a), 0);
	assert_int_equal(
		auth_enrol_setup(a, SECRET, path, 10, err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, ":5:"));
	assert_int_equal(
		auth_enrol_setup(a, "short", path, 10, err, sizeof(err)),
		-EINVAL);
	auth_free(a);
	unlink(path);
	rmdir(dir);
}

/* The request decoder: 400 for bad bodies, the answer names the host. */
static void test_enrol_request(void **state)
{
	char dir[] = "/tmp/ibpulse-enrol-XXXXXX", path[64], err[256];
	static const char *const bad[] = {
		"",
		"[]",
		"{}",
		"{\"host\": 1}",
		"{\"host\": \"a b\"}",
		"{\"host\": \"-x\"}",
		("{\"host\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		 "aaaaaaaaaaaaaaaaaaaaaa\"}"),
	};
	const char *ok = "{\"host\": \"node-7.rack2\"}";
	json_t *answer = NULL;
	struct auth *a;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/enrolled", dir);
	a = enrol_table(path, 10);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(auth_enrol_request(a, bad[i], strlen(bad[i]),
						    &answer, err, sizeof(err)),
				 -EINVAL);
		assert_null(answer);
	}
	assert_int_equal(auth_enrolled(a), 0);
	assert_int_equal(auth_enrol_request(a, ok, strlen(ok), &answer, err,
					    sizeof(err)),
			 0);
	assert_string_equal(json_string_value(json_object_get(answer, "host")),
			    "node-7.rack2");
	assert_string_equal(
		host_of(a, json_string_value(json_object_get(answer, "token"))),
		"node-7.rack2");
	json_decref(answer);
	assert_int_equal(auth_enrol_request(a, ok, strlen(ok), &answer, err,
					    sizeof(err)),
			 -EEXIST);
	assert_non_null(strstr(err, "already enrolled"));
	auth_free(a);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_tokens_file),
		cmocka_unit_test(test_bearer),
		cmocka_unit_test(test_map_churn),
		cmocka_unit_test(test_enrol),
		cmocka_unit_test(test_enrol_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
