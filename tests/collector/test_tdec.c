// SPDX-License-Identifier: MIT
/*
 * Unit tests of the test API decoders (common/testapi.h) on the seed
 * bodies decode to the values they hold (unknowns as NULL/NAN/0, control
 * characters in messages as spaces), and each kind of bad field is refused
 * with a message that starts with its path.
 */
#include "testapi.h"

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

static char *slurp(const char *name)
{
	char path[512], *text;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", SEEDS_DIR, name);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return text;
}

static void test_results_good(void **state)
{
	char *text = slurp("results.json"), err[256];
	struct testapi_results *r;
	struct testapi_result *t;

	(void)state;
	assert_int_equal(testapi_results_decode(text, strlen(text), &r, err,
						sizeof(err)),
			 0);
	assert_string_equal(r->host, "node01");
	assert_int_equal(r->n, 2);
	assert_true(r->has_dropped);
	assert_int_equal(r->spool_full, 3);
	t = &r->v[0];
	assert_string_equal(testapi_outcome_name(t->outcome), "ok");
	assert_string_equal(t->peer_host, "node07");
	assert_int_equal(t->local_port, 1);
	assert_true(t->fig[TESTAPI_FIG_BW_AVG] == 4.7e10);
	assert_true(isnan(t->fig[TESTAPI_FIG_BW_PEAK]));
	assert_string_equal(t->params, "{\"qps\":1,\"size\":65536}");
	t = &r->v[1];
	assert_null(t->plan_id);
	assert_null(t->peer_host); /* "" is unknown */
	assert_null(t->local_device);
	assert_int_equal(t->local_port, 0);
	assert_true(isnan(t->duration));
	assert_string_equal(t->error, "connect: refused ");
	assert_true(t->busy);
	testapi_results_free(r);
	free(text);
}

/* "started" within [now - age, now + ahead]; the first outside is named. */
static void test_results_window(void **state)
{
	struct testapi_result v[3] = {
		{.started = 1000}, {.started = 1299}, {.started = 1301}};
	struct testapi_results r = {.host = "h", .v = v, .n = 3};
	char err[256], key[64];

	(void)state;
	assert_int_equal(
		testapi_results_window(&r, 1000, 100, 300, err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "results[2].started: 1301.000 is 301 s "
				    "ahead"));
	assert_non_null(strstr(err, "results_max_ahead"));
	r.n = 2;
	assert_int_equal(
		testapi_results_window(&r, 1000, 100, 300, err, sizeof(err)),
		0);
	v[0].started = 899;
	assert_int_equal(
		testapi_results_window(&r, 1000, 100, 300, err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "results[0].started: 899.000 is 101 s "
				    "behind"));
	assert_non_null(strstr(err, "results_max_age"));
	/* the peer key: all three parts or none */
	v[0].peer_host = "n7";
	v[0].peer_device = "mlx5_0";
	assert_null(testapi_peer_key(&v[0], key, sizeof(key)));
	v[0].peer_port = 2;
	assert_string_equal(testapi_peer_key(&v[0], key, sizeof(key)),
			    "n7\x1fmlx5_0\x1f"
			    "2");
	assert_null(testapi_peer_key(&v[0], key, 6));
}

static void test_register_good(void **state)
{
	char *text = slurp("register.json"), err[256];
	struct testapi_reg *g;

	(void)state;
	assert_int_equal(
		testapi_reg_decode(text, strlen(text), &g, err, sizeof(err)),
		0);
	assert_string_equal(g->address, "10.0.0.1");
	assert_int_equal(g->port, 18515);
	assert_int_equal(g->n_labels, 2);
	assert_int_equal(g->n_profiles, 2);
	assert_int_equal(g->n_ports, 2);
	assert_int_equal(g->ports[0].n_pkeys, 2);
	assert_int_equal(g->ports[0].pkeys[1], 32769);
	assert_int_equal(g->ports[0].lid, 12);
	assert_int_equal(g->ports[1].state, -1);
	assert_int_equal(g->ports[1].lid, -1);
	testapi_reg_free(g);
	free(text);
}

/* Replace the first @from in the seed by @to, decode, expect @msg. */
static void expect(const char *seed, const char *from, const char *to,
		   const char *msg)
{
	char *text = slurp(seed), *at = strstr(text, from), err[256];
	size_t len = strlen(text) - strlen(from) + strlen(to);
	char *bad = calloc(1, len + 1);
	struct testapi_results *r = NULL;
	struct testapi_reg *g = NULL;
	int ret;

	assert_non_null(at);
	assert_non_null(bad);
	memcpy(bad, text, (size_t)(at - text));
	strcat(bad, to);
	strcat(bad, at + strlen(from));
	if (!strcmp(seed, "results.json"))
		ret = testapi_results_decode(bad, len, &r, err, sizeof(err));
	else
		ret = testapi_reg_decode(bad, len, &g, err, sizeof(err));
	assert_int_equal(ret, -EINVAL);
	assert_null(r);
	assert_null(g);
	if (strncmp(err, msg, strlen(msg)))
		fail_msg("'%s' gave '%s', expected '%s'", to, err, msg);
	free(bad);
	free(text);
}

static void test_results_bad(void **state)
{
	(void)state;
	expect("results.json", "\"version\":1", "\"version\":2",
	       "version: must be an integer in [1, 1]");
	expect("results.json", "\"host\":\"node01\"", "\"host\":\"-x\"",
	       "host: must contain only");
	expect("results.json", "\"lat_p99_seconds\":2.1e-6",
	       "\"lat_p99_seconds\":-1",
	       "results[0].lat_p99_seconds: must be a number in [0, 1e+15]");
	expect("results.json", "\"outcome\":\"control_error\"",
	       "\"outcome\":\"meh\"", "results[1].outcome: must be one of");
	expect("results.json", "\"started\":1,", "\"started\":\"1\",",
	       "results[1].started: must be a number");
	expect("results.json", "\"local\":{\"device\":\"mlx5_0\",\"port\":1}",
	       "\"local\":{\"device\":\"mlx5_0\",\"port\":256}",
	       "results[0].local.port: must be an integer in [1, 255]");
	expect("results.json", "\"local\":{\"device\":null,\"port\":null}",
	       "\"x\":1", "results[1].local: is required");
	expect("results.json", "\"busy\":true", "\"busy\":1",
	       "results[1].busy: must be true or false");
	expect("results.json", "\"params\":{\"size\":65536,\"qps\":1}",
	       "\"params\":[1]", "results[0].params: must be an object");
	expect("results.json", "\"id\":\"x2\"", "\"id\":\"a b\"",
	       "results[1].id: must contain only");
	expect("results.json", "\"spool_full\":3", "\"spool_full\":-3",
	       "dropped.spool_full: must be an integer");
	expect("results.json", "\"version\":1", "\"version\":1,\"version\":1",
	       "invalid JSON");
}

static void test_register_bad(void **state)
{
	(void)state;
	expect("register.json", "\"port\":18515", "\"port\":0",
	       "responder.port: must be an integer in [1, 65535]");
	expect("register.json", "\"address\":\"10.0.0.1\"", "\"address\":\"\"",
	       "responder.address: must not be empty");
	expect("register.json", "\"rack\":\"r12\"", "\"ra ck\":\"r12\"",
	       "labels.ra ck: must contain only");
	expect("register.json", "\"rack\":\"r12\"", "\"rack\":12",
	       "labels.rack: must be a string");
	expect("register.json", "\"profiles\":[\"bw\"", "\"profiles\":[\"\"",
	       "profiles[0]: must not be empty");
	expect("register.json", "\"port\":2,", "\"port\":1,",
	       "ports[1].port: duplicate port mlx5_0/1");
	expect("register.json", "[65535,32769]", "[65535,65536]",
	       "ports[0].pkeys[1]: must be an integer in [0, 65535]");
	expect("register.json", "\"state\":4", "\"state\":9",
	       "ports[0].state: must be an integer in [-1, 7]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_results_good),
		cmocka_unit_test(test_register_good),
		cmocka_unit_test(test_results_window),
		cmocka_unit_test(test_results_bad),
		cmocka_unit_test(test_register_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
