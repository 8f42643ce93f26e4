// SPDX-License-Identifier: MIT
/*
 * Unit tests for the exposition writer (common/expo.c): escaping of label
 * values and HELP in both formats, the OpenMetrics family naming (_total,
 * _info) and # EOF, number formatting, sticky errors, the ceiling and
 * the per-family cap.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "expo.h"

static void test_label_escaping(void **state)
{
	struct buf b;

	buf_init(&b, 0);
	assert_int_equal(expo_label(&b, "host", "a\\b\"c\nd"), 0);
	assert_string_equal(b.data, "host=\"a\\\\b\\\"c\\nd\"");
	assert_int_equal(expo_label(&b, "port", "1"), 0);
	assert_string_equal(b.data, "host=\"a\\\\b\\\"c\\nd\",port=\"1\"");
	buf_reset(&b);
	assert_int_equal(expo_label(&b, "x", NULL), 0);
	assert_string_equal(b.data, "x=\"\"");
	buf_free(&b);
}

static void test_label_utf8(void **state)
{
	struct buf b;

	buf_init(&b, 0);
	/* valid multi-byte text passes through untouched */
	assert_int_equal(
		expo_label(&b, "d",
			   "n\xc3\xa9ud \xe2\x82\xac \xf0\x9f\x98\x80"),
		0);
	assert_string_equal(b.data,
			    "d=\"n\xc3\xa9ud \xe2\x82\xac \xf0\x9f\x98\x80\"");
	buf_reset(&b);
	/* a stray continuation byte, a truncated sequence, an overlong '/',
	 * a surrogate: each invalid byte becomes U+FFFD */
	assert_int_equal(expo_label(&b, "d",
				    "a\x80"
				    "b\xc3"),
			 0);
	assert_string_equal(b.data, "d=\"a\xef\xbf\xbd"
				    "b\xef\xbf\xbd\"");
	buf_reset(&b);
	assert_int_equal(expo_label(&b, "d", "\xc0\xaf"), 0);
	assert_string_equal(b.data, "d=\"\xef\xbf\xbd\xef\xbf\xbd\"");
	buf_reset(&b);
	assert_int_equal(expo_label(&b, "d", "\xed\xa0\x80"), 0);
	assert_string_equal(b.data,
			    "d=\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	buf_free(&b);
}

static void test_label_name_rules(void **state)
{
	struct buf b;

	buf_init(&b, 0);
	assert_int_equal(expo_label(&b, "ok_1", "v"), 0);
	assert_int_equal(expo_label(&b, "1bad", "v"), -EINVAL);
	assert_int_equal(expo_label(&b, "__reserved", "v"), -EINVAL);
	assert_int_equal(expo_label(&b, "a-b", "v"), -EINVAL);
	assert_int_equal(expo_label(&b, "", "v"), -EINVAL);
	assert_string_equal(b.data, "ok_1=\"v\"");
	assert_true(expo_metric_name_valid("a:b_c9"));
	assert_false(expo_metric_name_valid("9a"));
	assert_false(expo_metric_name_valid("a.b"));
	buf_free(&b);
}

static void test_help_escaping(void **state)
{
	struct buf b;

	buf_init(&b, 0);
	assert_int_equal(expo_escape_help(&b, "a\\b\nc\"d", EXPO_TEXT), 0);
	assert_string_equal(b.data, "a\\\\b\\nc\"d");
	buf_reset(&b);
	assert_int_equal(expo_escape_help(&b, "a\\b\nc\"d", EXPO_OPENMETRICS),
			 0);
	assert_string_equal(b.data, "a\\\\b\\nc\\\"d");
	buf_free(&b);
}

static char *render(enum expo_format f)
{
	struct buf out, lb;
	struct expo e;

	buf_init(&out, 0);
	buf_init(&lb, 0);
	assert_int_equal(expo_label(&lb, "host", "h\"1"), 0);
	assert_int_equal(expo_label(&lb, "device", "mlx5_0"), 0);
	expo_init(&e, &out, f);
	assert_int_equal(expo_family(&e, "x_bytes_total", EXPO_COUNTER,
				     "Bytes.\nMore \\ text."),
			 0);
	assert_int_equal(expo_sample_u64(&e, lb.data, NULL, 42), 0);
	assert_int_equal(expo_sample_u64(&e, lb.data, "counter=\"c\"", 7), 0);
	assert_int_equal(
		expo_family(&e, "x_empty", EXPO_GAUGE, "Never written."), 0);
	assert_int_equal(expo_family(&e, "x_port_info", EXPO_INFO, "Info."), 0);
	assert_int_equal(expo_sample(&e, NULL, "lid=\"3\"", 1), 0);
	assert_int_equal(expo_family(&e, "x_up", EXPO_GAUGE, NULL), 0);
	assert_int_equal(expo_sample(&e, NULL, NULL, 0.5), 0);
	assert_int_equal(expo_finish(&e), 0);
	assert_int_equal(e.samples, 4);
	expo_free(&e);
	buf_free(&lb);
	return buf_steal(&out, NULL);
}

static void test_text_format(void **state)
{
	char *s = render(EXPO_TEXT);

	assert_string_equal(
		s, "# HELP x_bytes_total Bytes.\\nMore \\\\ text.\n"
		   "# TYPE x_bytes_total counter\n"
		   "x_bytes_total{host=\"h\\\"1\",device=\"mlx5_0\"} 42\n"
		   "x_bytes_total{host=\"h\\\"1\",device=\"mlx5_0\",counter="
		   "\"c\"} 7\n"
		   "# HELP x_port_info Info.\n"
		   "# TYPE x_port_info gauge\n"
		   "x_port_info{lid=\"3\"} 1\n"
		   "# TYPE x_up gauge\n"
		   "x_up 0.5\n");
	free(s);
}

static void test_openmetrics_format(void **state)
{
	char *s = render(EXPO_OPENMETRICS);

	assert_string_equal(
		s, "# HELP x_bytes Bytes.\\nMore \\\\ text.\n"
		   "# TYPE x_bytes counter\n"
		   "x_bytes_total{host=\"h\\\"1\",device=\"mlx5_0\"} 42\n"
		   "x_bytes_total{host=\"h\\\"1\",device=\"mlx5_0\",counter="
		   "\"c\"} 7\n"
		   "# HELP x_port Info.\n"
		   "# TYPE x_port info\n"
		   "x_port_info{lid=\"3\"} 1\n"
		   "# TYPE x_up gauge\n"
		   "x_up 0.5\n"
		   "# EOF\n");
	free(s);
}

static void test_family_rules(void **state)
{
	struct buf out;
	struct expo e;

	buf_init(&out, 0);
	expo_init(&e, &out, EXPO_TEXT);
	assert_int_equal(expo_family(&e, "a_total", EXPO_COUNTER, NULL), 0);
	assert_int_equal(expo_sample_u64(&e, NULL, NULL, 1), 0);
	/* a second TYPE for the same family is refused, and sticks */
	assert_int_equal(expo_family(&e, "a_total", EXPO_COUNTER, NULL),
			 -EEXIST);
	assert_int_equal(expo_sample_u64(&e, NULL, NULL, 2), -EEXIST);
	assert_int_equal(expo_finish(&e), -EEXIST);
	expo_free(&e);

	expo_init(&e, &out, EXPO_TEXT);
	assert_int_equal(expo_family(&e, "a_count", EXPO_COUNTER, NULL),
			 -EINVAL);
	expo_free(&e);
	expo_init(&e, &out, EXPO_TEXT);
	assert_int_equal(expo_family(&e, "a_labels", EXPO_INFO, NULL), -EINVAL);
	expo_free(&e);
	expo_init(&e, &out, EXPO_TEXT);
	assert_int_equal(expo_family(&e, "bad name", EXPO_GAUGE, NULL),
			 -EINVAL);
	expo_free(&e);
	/* nothing but the first family's lines was written */
	assert_string_equal(out.data, "# TYPE a_total counter\na_total 1\n");
	buf_free(&out);
}

static void test_ceiling(void **state)
{
	struct buf out;
	struct expo e;
	int ret = 0;

	buf_init(&out, 100);
	expo_init(&e, &out, EXPO_TEXT);
	assert_int_equal(expo_family(&e, "a_total", EXPO_COUNTER, NULL), 0);
	for (int i = 0; i < 100 && !ret; i++)
		ret = expo_sample_u64(&e, "x=\"y\"", NULL, (uint64_t)i);
	assert_int_equal(ret, -E2BIG);
	assert_int_equal(expo_finish(&e), -E2BIG);
	assert_true(out.len <= 100);
	expo_free(&e);
	buf_free(&out);
}

static void test_long_line(void **state)
{
	struct buf out, lb;
	struct expo e;
	char *big = malloc(5000);

	memset(big, 'v', 4999);
	big[4999] = '\0';
	buf_init(&out, 0);
	buf_init(&lb, 0);
	assert_int_equal(expo_label(&lb, "big", big), 0);
	expo_init(&e, &out, EXPO_TEXT);
	assert_int_equal(expo_family(&e, "g", EXPO_GAUGE, NULL), 0);
	assert_int_equal(expo_sample_u64(&e, lb.data, NULL, 5), 0);
	assert_int_equal(out.len,
			 strlen("# TYPE g gauge\n") + 2 + 4 + 5001 + 4);
	assert_string_equal(out.data + out.len - 4, "} 5\n");
	expo_free(&e);
	buf_free(&out);
	buf_free(&lb);
	free(big);
}

static void check_double(double v, const char *want)
{
	char s[EXPO_NUM_MAX];
	size_t n = expo_format_double(s, v);

	assert_string_equal(s, want);
	assert_int_equal(n, strlen(want));
}

static void test_numbers(void **state)
{
	char s[EXPO_NUM_MAX];

	assert_int_equal(expo_format_u64(s, 0), 1);
	assert_string_equal(s, "0");
	expo_format_u64(s, UINT64_MAX);
	assert_string_equal(s, "18446744073709551615");
	check_double(0, "0");
	check_double(-0.0, "0");
	check_double(1, "1");
	check_double(-42, "-42");
	check_double(9007199254740992.0, "9007199254740992"); /* 2^53 exactly */
	check_double(9007199254740994.0, "9007199254740994");
	check_double(123456789012345678901.0, "1.2345678901234568e+20");
	check_double(1e20, "1e+20");
	check_double(0.5, "0.5");
	check_double(0.1, "0.1");
	check_double(1.0 / 3, "0.3333333333333333");
	check_double(123.456, "123.456");
	check_double(2.5e-7, "2.5e-07");
	check_double(NAN, "NaN");
	check_double(INFINITY, "+Inf");
	check_double(-INFINITY, "-Inf");
	/* a value that needs all 17 digits reads back exactly */
	expo_format_double(s, 0.1 + 0.2);
	assert_true(strtod(s, NULL) == 0.1 + 0.2);
	assert_string_equal(s, "0.30000000000000004");
}

/*
 * The family cap: samples past it are not written but counted per family,
 * under the family's name even when the caller reuses the name's buffer;
 * a family under the cap is untouched, and 0 means no cap.
 */
static void test_family_cap(void **state)
{
	const struct expo_drop *d;
	char name[32], *s;
	struct buf out;
	struct expo e;
	size_t n;

	buf_init(&out, 0);
	expo_init(&e, &out, EXPO_TEXT);
	expo_set_family_cap(&e, 2);
	for (int f = 0; f < 3; f++) {
		snprintf(name, sizeof(name), "fam_%d", f);
		assert_int_equal(expo_family(&e, name, EXPO_GAUGE, NULL), 0);
		for (int i = 0; i < (f == 1 ? 2 : 5); i++)
			assert_int_equal(expo_sample_u64(&e, NULL, NULL, i), 0);
	}
	assert_int_equal(e.samples, 6);
	d = expo_drops(&e, &n);
	assert_int_equal(n, 2);
	assert_string_equal(d[0].family, "fam_0");
	assert_int_equal(d[0].n, 3);
	assert_string_equal(d[1].family, "fam_2");
	assert_int_equal(d[1].n, 3);
	expo_set_family_cap(&e, 0);
	assert_int_equal(expo_family(&e, "own", EXPO_GAUGE, NULL), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(expo_sample_u64(&e, NULL, NULL, i), 0);
	assert_int_equal(expo_finish(&e), 0);
	d = expo_drops(&e, &n);
	assert_int_equal(n, 2);
	expo_free(&e);
	s = buf_steal(&out, NULL);
	assert_string_equal(s, "# TYPE fam_0 gauge\nfam_0 0\nfam_0 1\n"
			       "# TYPE fam_1 gauge\nfam_1 0\nfam_1 1\n"
			       "# TYPE fam_2 gauge\nfam_2 0\nfam_2 1\n"
			       "# TYPE own gauge\nown 0\nown 1\nown 2\nown 3\n"
			       "own 4\n");
	free(s);
}

static void test_content_types(void **state)
{
	assert_string_equal(expo_content_type(EXPO_TEXT),
			    "text/plain; version=0.0.4; charset=utf-8");
	assert_non_null(strstr(expo_content_type(EXPO_OPENMETRICS),
			       "application/openmetrics-text; version=1.0.0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label_escaping),
		cmocka_unit_test(test_label_utf8),
		cmocka_unit_test(test_label_name_rules),
		cmocka_unit_test(test_help_escaping),
		cmocka_unit_test(test_text_format),
		cmocka_unit_test(test_openmetrics_format),
		cmocka_unit_test(test_family_rules),
		cmocka_unit_test(test_ceiling),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_family_cap),
		cmocka_unit_test(test_content_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
