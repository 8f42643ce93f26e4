// SPDX-License-Identifier: MIT
/*
 * Unit tests for content negotiation (common/negotiate.c): Prometheus's
 * real Accept header gets OpenMetrics, q-values decide, unknown or older
 * OpenMetrics versions fall back to text; gzip per Accept-Encoding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "negotiate.h"

static void test_format(void **state)
{
	/* what Prometheus 2.42 sends */
	assert_int_equal(
		negotiate_format("application/"
				 "openmetrics-text;version=1.0.0,application/"
				 "openmetrics-text;"
				 "version=0.0.1;q=0.75,text/"
				 "plain;version=0.0.4;q=0.5,*/*;q=0.1"),
		EXPO_OPENMETRICS);
	assert_int_equal(negotiate_format(NULL), EXPO_TEXT);
	assert_int_equal(negotiate_format(""), EXPO_TEXT);
	assert_int_equal(negotiate_format("*/*"), EXPO_TEXT);
	assert_int_equal(negotiate_format("text/plain"), EXPO_TEXT);
	assert_int_equal(negotiate_format("application/openmetrics-text"),
			 EXPO_OPENMETRICS);
	assert_int_equal(
		negotiate_format(
			"Application/OpenMetrics-Text ; Version=\"1.0.0\""),
		EXPO_OPENMETRICS);
	/* q-values decide, whatever the order */
	assert_int_equal(negotiate_format("text/plain;version=0.0.4;q=0.9, "
					  "application/openmetrics-text;q=0.5"),
			 EXPO_TEXT);
	assert_int_equal(
		negotiate_format(
			"text/plain;q=0.2, application/openmetrics-text;q=0.8"),
		EXPO_OPENMETRICS);
	assert_int_equal(negotiate_format("application/openmetrics-text;q=0"),
			 EXPO_TEXT);
	assert_int_equal(
		negotiate_format("application/openmetrics-text;q=bogus"),
		EXPO_TEXT);
	/* a version we do not write */
	assert_int_equal(
		negotiate_format("application/openmetrics-text;version=0.0.1"),
		EXPO_TEXT);
	assert_int_equal(
		negotiate_format(
			"application/openmetrics-text;version=2.0.0,text/"
			"plain;q=0.1"),
		EXPO_TEXT);
	assert_int_equal(negotiate_format(",,;;,application/openmetrics-text,"),
			 EXPO_OPENMETRICS);
}

static void test_gzip(void **state)
{
	assert_true(negotiate_gzip("gzip"));
	assert_true(negotiate_gzip("deflate, gzip;q=0.5, br"));
	assert_true(negotiate_gzip("x-gzip"));
	assert_true(negotiate_gzip("*"));
	assert_true(negotiate_gzip("GZIP"));
	assert_false(negotiate_gzip(NULL));
	assert_false(negotiate_gzip(""));
	assert_false(negotiate_gzip("identity"));
	assert_false(negotiate_gzip("deflate, br"));
	assert_false(negotiate_gzip("gzip;q=0"));
	assert_false(negotiate_gzip("gzip;q=0, *"));
	assert_false(negotiate_gzip("*;q=0"));
	assert_false(negotiate_gzip("gzipx"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_gzip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
