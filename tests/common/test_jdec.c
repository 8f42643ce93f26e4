// SPDX-License-Identifier: MIT
/*
 * Unit tests for the field-path JSON decoder (common/jdec.c): the path it
 * names in errors, the top-level name, each getter's message and range,
 * absent and null as "unknown", and the duplicate-key refusal on load.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jdec.h"

struct fx {
	char err[256];
	struct jdec d;
	json_t *root;
};

/* Load @json into a fresh decoder named "doc"; fails the test if invalid. */
static void fx_load(struct fx *f, const char *json)
{
	memset(f, 0, sizeof(*f));
	f->d.err = f->err;
	f->d.errlen = sizeof(f->err);
	f->d.top = "doc";
	assert_int_equal(jdec_load(&f->d, json, strlen(json), &f->root), 0);
}

static void test_path_and_top(void **state)
{
	struct fx f;
	json_t *a;
	void *elems;
	size_t old, o2;
	int64_t n = 0;

	fx_load(&f, "{\"xs\":[{\"n\":1},{\"n\":\"x\"}]}");
	assert_int_equal(jdec_fail(&f.d, "must be %s", "odd"), -EINVAL);
	assert_string_equal(f.err, "doc: must be odd");
	assert_int_equal(jdec_array(&f.d, f.root, "xs", 4, 1, sizeof(int), &a,
				    &elems, &old),
			 0);
	assert_non_null(elems);
	o2 = jdec_index(&f.d, 1);
	assert_int_equal(jdec_int(&f.d, json_array_get(a, 1), "n", 0, 9, 1, &n),
			 -EINVAL);
	assert_string_equal(f.err, "xs[1].n: must be an integer in [0, 9]");
	jdec_pop(&f.d, o2);
	jdec_pop(&f.d, old);
	assert_int_equal(f.d.plen, 0);
	free(elems);
	json_decref(f.root);
}

static void test_getters(void **state)
{
	struct fx f;
	int64_t i = 42;
	double x = 7;
	char *s = NULL;
	json_t *o;

	fx_load(&f, "{\"c\":-1,\"f\":2e15,\"h\":\"-a\",\"nm\":\"\","
		    "\"t\":\"ok\",\"nul\":null,\"o\":[]}");
	assert_int_equal(jdec_count(&f.d, f.root, "c", 1, &i), -EINVAL);
	assert_string_equal(f.err, "c: must be a non-negative integer");
	assert_int_equal(jdec_num(&f.d, f.root, "f", 0, 1e15, 0, &x), -EINVAL);
	assert_string_equal(f.err, "f: must be a number in [0, 1e+15]");
	assert_int_equal(jdec_str(&f.d, f.root, "h", 64, JDEC_HOST, 1, &s),
			 -EINVAL);
	assert_string_equal(f.err, "h: must contain only letters, digits and "
				   ".-_ (starting with a letter or digit)");
	assert_int_equal(jdec_str(&f.d, f.root, "nm", 64, JDEC_NAME, 1, &s),
			 -EINVAL);
	assert_string_equal(f.err, "nm: must not be empty");
	assert_int_equal(jdec_str(&f.d, f.root, "t", 1, JDEC_TEXT, 1, &s),
			 -EINVAL);
	assert_string_equal(f.err, "t: must be at most 1 bytes long");
	assert_int_equal(jdec_obj(&f.d, f.root, "o", 0, &o), -EINVAL);
	assert_string_equal(f.err, "o: must be an object");
	assert_int_equal(jdec_str(&f.d, f.root, "missing", 9, JDEC_TEXT, 1, &s),
			 -EINVAL);
	assert_string_equal(f.err, "missing: is required");
	/* Absent and null leave the caller's "unknown" alone. */
	assert_int_equal(jdec_int(&f.d, f.root, "nul", 0, 9, 0, &i), 0);
	assert_int_equal(jdec_num(&f.d, f.root, "missing", 0, 1, 0, &x), 0);
	assert_int_equal(i, 42);
	assert_true(x == 7);
	assert_int_equal(jdec_str(&f.d, f.root, "t", 8, JDEC_NAME, 1, &s), 0);
	assert_string_equal(s, "ok");
	assert_int_equal(f.d.plen, 0);
	free(s);
	json_decref(f.root);
}

static void test_load_refuses_duplicates(void **state)
{
	const char *json = "{\"a\":1,\"a\":2}";
	char err[128];
	struct jdec d = {.err = err, .errlen = sizeof(err), .top = "doc"};
	json_t *root = NULL;

	assert_int_equal(jdec_load(&d, json, strlen(json), &root), -EINVAL);
	assert_null(root);
	assert_non_null(strstr(err, "invalid JSON at line 1"));
	assert_non_null(strstr(err, "duplicate"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_and_top),
		cmocka_unit_test(test_getters),
		cmocka_unit_test(test_load_refuses_duplicates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
