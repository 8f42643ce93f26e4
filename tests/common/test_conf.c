// SPDX-License-Identifier: MIT
/* Unit tests for the table-driven configuration (common/conf.c). */
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

#include "conf.h"

struct settings {
	char *name;
	long long port;
	long long bytes;
	int tls;
	double ratio;
	int extra_seen;
};

static const struct conf_opt opts[] = {
	{"svc", "name", CONF_STR, offsetof(struct settings, name), "alpha", 0,
	 0, "a name"},
	{"svc", "port", CONF_INT, offsetof(struct settings, port), "8080", 0,
	 65535, "TCP port"},
	{"svc", "bytes", CONF_INT, offsetof(struct settings, bytes), "4194304",
	 1, 1073741824, "a size"},
	{"svc", "tls", CONF_BOOL, offsetof(struct settings, tls), "false", 0, 0,
	 "TLS on"},
	{"svc", "ratio", CONF_DOUBLE, offsetof(struct settings, ratio), "0.5",
	 0, 1, "a ratio"},
	{"svc", "old", CONF_GONE, 0, NULL, 0, 0, "the database says it now"},
	{0}};

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/ibpulse-conf-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_defaults(void **state)
{
	struct settings s = {0};

	assert_int_equal(conf_defaults(opts, &s), 0);
	assert_string_equal(s.name, "alpha");
	assert_int_equal(s.port, 8080);
	assert_int_equal(s.tls, 0);
	assert_true(s.ratio == 0.5);
	conf_free(opts, &s);
	assert_null(s.name);
}

static void test_set_range_errors_name_key_and_range(void **state)
{
	struct settings s = {0};
	char err[256];

	conf_defaults(opts, &s);
	assert_int_equal(
		conf_set(opts, &s, NULL, "port", "70000", err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "port"));
	assert_non_null(strstr(err, "[0, 65535]"));
	assert_int_equal(s.port, 8080);
	assert_int_equal(
		conf_set(opts, &s, NULL, "port", "12x", err, sizeof(err)),
		-EINVAL);
	assert_int_equal(
		conf_set(opts, &s, NULL, "tls", "maybe", err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "tls"));
	assert_int_equal(
		conf_set(opts, &s, NULL, "ratio", "nan", err, sizeof(err)),
		-EINVAL);
	assert_int_equal(
		conf_set(opts, &s, NULL, "nope", "1", err, sizeof(err)),
		-ENOENT);
	assert_non_null(strstr(err, "nope"));
	assert_int_equal(
		conf_set(opts, &s, "svc", "tls", "yes", err, sizeof(err)), 0);
	assert_int_equal(s.tls, 1);
	assert_int_equal(
		conf_set(opts, &s, "other", "tls", "no", err, sizeof(err)),
		-ENOENT);
	conf_free(opts, &s);
}

static int extra_handler(void *obj, const char *section, const char *name,
			 const char *value, char *err, size_t errlen)
{
	struct settings *s = obj;

	if (strcmp(section, "tokens")) {
		snprintf(err, errlen, "unknown section [%s]", section);
		return -EINVAL;
	}
	s->extra_seen++;
	return 0;
}

static void test_load_file(void **state)
{
	struct settings s = {0};
	char err[256];
	char *p = write_tmp(
		"[svc]\nname = beta\nport=9\n[tokens]\nh1 = t1\nh2 = t2\n");

	conf_defaults(opts, &s);
	assert_int_equal(
		conf_load(opts, &s, p, extra_handler, err, sizeof(err)), 0);
	assert_string_equal(s.name, "beta");
	assert_int_equal(s.port, 9);
	assert_int_equal(s.extra_seen, 2);
	unlink(p);
	free(p);
	conf_free(opts, &s);
}

static void test_load_error_names_file_line(void **state)
{
	struct settings s = {0};
	char err[256];
	char *p = write_tmp("[svc]\nname = x\n\nport = -1\n");

	conf_defaults(opts, &s);
	assert_int_equal(conf_load(opts, &s, p, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, p));
	assert_non_null(strstr(err, ":4:"));
	assert_non_null(strstr(err, "port"));
	unlink(p);
	free(p);
	p = write_tmp("[bogus]\nk = v\n");
	assert_int_equal(conf_load(opts, &s, p, NULL, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, ":2:"));
	unlink(p);
	free(p);
	assert_int_equal(conf_load(opts, &s, "/nonexistent/x.ini", NULL, err,
				   sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "cannot open"));
	conf_free(opts, &s);
}

/* conf_load() on @text: its return, with the message in @err. */
static int load_text(const char *text, conf_extra_fn extra, char *err,
		     size_t errlen, char **path)
{
	struct settings s = {0};
	int ret;

	*path = write_tmp(text);
	conf_defaults(opts, &s);
	ret = conf_load(opts, &s, *path, extra, err, errlen);
	conf_free(opts, &s);
	unlink(*path);
	return ret;
}

/*
 * Issue 22: the first bad line is the one named, with its key, value and
 * range, whatever follows it (inih reads on after an error; the handler
 * kept the last line's result: "FILE:2: syntax error", or line 2 with
 * line 4's message).
 */
static void test_first_bad_line_is_named(void **state)
{
	char err[512], want[600], *p;

	assert_int_equal(load_text("[svc]\nbogus_key = 1\nport = 0\n", NULL,
				   err, sizeof(err), &p),
			 -ENOENT);
	snprintf(want, sizeof(want),
		 "%s:2: unknown key 'svc.bogus_key' (= "
		 "'1')",
		 p);
	assert_non_null(strstr(err, want));
	free(p);
	assert_int_equal(load_text("[svc]\nport = 70000\n\nbytes = 0\n", NULL,
				   err, sizeof(err), &p),
			 -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:2: port: '70000' is not an integer in [0, 65535]", p);
	assert_string_equal(err, want);
	free(p);
	/* a syntax error before a bad value: the syntax error's line */
	assert_int_equal(load_text("[svc]\nname = a\nport\nbytes = 0\n", NULL,
				   err, sizeof(err), &p),
			 -EINVAL);
	assert_non_null(strstr(err, ":3: syntax error"));
	free(p);
	/* a bad value before a syntax error: the value's line */
	assert_int_equal(load_text("[svc]\ntls = maybe\nport\n", NULL, err,
				   sizeof(err), &p),
			 -EINVAL);
	assert_non_null(strstr(err, ":2: tls: 'maybe' is not a boolean"));
	free(p);
	/* the extra sections' errors too */
	assert_int_equal(load_text("[svc]\n[other]\nk = v\n[svc]\nport = x\n",
				   extra_handler, err, sizeof(err), &p),
			 -EINVAL);
	assert_non_null(strstr(err, ":3: unknown section [other]"));
	free(p);
}

/* Issue 22: a key set twice in one section names both lines. */
static void test_duplicate_key(void **state)
{
	char err[512], *p;

	assert_int_equal(load_text("[svc]\nport = 2\n# note\nport = 3\n", NULL,
				   err, sizeof(err), &p),
			 -EEXIST);
	assert_non_null(strstr(err, ":4: port: set again in [svc] (first on "
				    "line 2)"));
	free(p);
	/* across two [svc] headers, and in an extra section */
	assert_int_equal(load_text("[svc]\ntls = on\n[svc]\ntls = on\n", NULL,
				   err, sizeof(err), &p),
			 -EEXIST);
	assert_non_null(strstr(err, ":4: tls: set again"));
	free(p);
	assert_int_equal(load_text("[tokens]\nh1 = a\nh2 = b\nh1 = c\n",
				   extra_handler, err, sizeof(err), &p),
			 -EEXIST);
	assert_non_null(strstr(err, ":4: h1: set again in [tokens] (first on "
				    "line 2)"));
	free(p);
	/* the same key in two sections is two keys */
	assert_int_equal(load_text("[svc]\nport = 1\n[tokens]\nport = 2\n",
				   extra_handler, err, sizeof(err), &p),
			 0);
	free(p);
}

/*
 * An indented line is a line of its own (inih would take it as the
 * previous value's continuation), comments may be long, and a value line
 * longer than inih's buffer is refused by its number (inih counted it as
 * two lines and parsed the rest as a key).
 */
static void test_lines_as_written(void **state)
{
	char err[512], text[1024], *p;
	struct settings s = {0};

	p = write_tmp("[svc]\nport = 7\n   tls = yes\n");
	conf_defaults(opts, &s);
	assert_int_equal(conf_load(opts, &s, p, NULL, err, sizeof(err)), 0);
	assert_int_equal(s.port, 7);
	assert_int_equal(s.tls, 1);
	conf_free(opts, &s);
	unlink(p);
	free(p);
	snprintf(text, sizeof(text),
		 "[svc]\n# %0300d\nname = %0300d\nport = 1\n", 0, 0);
	assert_int_equal(load_text(text, NULL, err, sizeof(err), &p), -EINVAL);
	assert_non_null(strstr(err, ":3: the line is longer than"));
	free(p);
}

static void test_print_round_trips(void **state)
{
	struct settings s = {0}, t = {0};
	char err[256], *text = NULL, *p;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	conf_defaults(opts, &s);
	conf_set(opts, &s, NULL, "port", "443", err, sizeof(err));
	conf_set(opts, &s, NULL, "tls", "on", err, sizeof(err));
	conf_print(opts, &s, f);
	fclose(f);
	assert_non_null(strstr(text, "range 0 to 65535"));
	assert_non_null(strstr(text, "range 1 to 1073741824"));
	assert_non_null(strstr(text, "bytes = 4194304"));
	p = write_tmp(text);
	conf_defaults(opts, &t);
	assert_int_equal(conf_load(opts, &t, p, NULL, err, sizeof(err)), 0);
	assert_int_equal(t.port, 443);
	assert_int_equal(t.tls, 1);
	assert_string_equal(t.name, "alpha");
	unlink(p);
	free(p);
	free(text);
	conf_free(opts, &s);
	conf_free(opts, &t);
}

/* A key no longer read: a file that sets it loads, nothing changes, and
 * it is not printed. */
static void test_gone_key(void **state)
{
	struct settings s = {0}, d = {0};
	char err[256], *text = NULL,
		       *p = write_tmp("[svc]\nold = 7\nport = 9\n");
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(conf_defaults(opts, &s), 0);
	assert_int_equal(conf_defaults(opts, &d), 0);
	assert_int_equal(conf_load(opts, &s, p, NULL, err, sizeof(err)), 0);
	assert_int_equal(s.port, 9);
	assert_string_equal(s.name, d.name);
	assert_int_equal(s.bytes, d.bytes);
	assert_true(s.ratio == d.ratio);
	assert_int_equal(conf_set(opts, &s, NULL, "old", "8", err, sizeof(err)),
			 0);
	f = open_memstream(&text, &len);
	conf_print(opts, &s, f);
	fclose(f);
	assert_null(strstr(text, "old"));
	unlink(p);
	free(p);
	free(text);
	conf_free(opts, &s);
	conf_free(opts, &d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_set_range_errors_name_key_and_range),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_load_error_names_file_line),
		cmocka_unit_test(test_first_bad_line_is_named),
		cmocka_unit_test(test_duplicate_key),
		cmocka_unit_test(test_lines_as_written),
		cmocka_unit_test(test_print_round_trips),
		cmocka_unit_test(test_gone_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
