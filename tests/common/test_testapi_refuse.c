// SPDX-License-Identifier: MIT
/*
 * Unit tests of every rule the test API decoders enforce
 * (common/testapi.h): a refused body names the field and why; in a plan,
 * an entry or responder key that breaks a rule is left out by itself with
 * its reason, a bad ticket costs only the ticket, and entries and keys
 * past their caps are left out and counted. Each case edits a good body
 * (testapi_fx.h) in one place.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testapi_fx.h"

enum body { RESULTS, REG, PLAN };

/* @base with the first @from replaced by @to (caller frees). */
static char *edit(const char *base, const char *from, const char *to)
{
	const char *at = strstr(base, from);
	size_t len;
	char *out;

	if (!at)
		fail_msg("'%s' is not in %s", from, base);
	len = strlen(base) - strlen(from) + strlen(to);
	out = calloc(1, len + 1);
	assert_non_null(out);
	memcpy(out, base, (size_t)(at - base));
	strcat(out, to);
	strcat(out, at + strlen(from));
	return out;
}

static char *base_body(enum body which)
{
	struct testapi_result v[2];

	if (which == REG)
		return fx_reg_body();
	if (which == PLAN)
		return fx_plan_body();
	fx_good_result(&v[0]);
	fx_failed_result(&v[1]);
	return fx_results_body(v, 2);
}

static int decode(enum body which, const char *text, char *err)
{
	struct testapi_results *r = NULL;
	struct testapi_reg *g = NULL;
	struct testapi_plan *p = NULL;
	int ret;

	if (which == RESULTS)
		ret = testapi_results_decode(text, strlen(text), &r, err, 256);
	else if (which == REG)
		ret = testapi_reg_decode(text, strlen(text), &g, err, 256);
	else
		ret = testapi_plan_decode(text, strlen(text), &p, err, 256);
	if (ret)
		assert_true(!r && !g && !p);
	testapi_results_free(r);
	testapi_reg_free(g);
	testapi_plan_free(p);
	return ret;
}

/* The body with @from replaced by @to is refused with @msg first. */
static void refused(enum body which, const char *from, const char *to,
		    const char *msg)
{
	char *base = base_body(which), *bad = edit(base, from, to), err[256];

	if (decode(which, bad, err) != -EINVAL)
		fail_msg("'%s' was not refused", to);
	if (strncmp(err, msg, strlen(msg)))
		fail_msg("'%s' gave '%s', expected '%s'", to, err, msg);
	free(bad);
	free(base);
}

/* "\"KEY\":\"<n times c>\"" in a static buffer of @slot (0..1). */
static const char *longstr(int slot, const char *key, char c, size_t n)
{
	static char buf[2][20000];

	assert_true(n + strlen(key) + 8 < sizeof(buf[0]));
	snprintf(buf[slot], sizeof(buf[slot]), "\"%s\":\"%*s\"", key, (int)n,
		 "");
	for (char *s = strchr(buf[slot], ':') + 2; *s == ' '; s++)
		*s = c;
	return buf[slot];
}

/* "[" + @n copies of @elem joined by "," + "]" (caller frees). */
static char *many(const char *elem, size_t n)
{
	char *s = calloc(1, n * (strlen(elem) + 1) + 3);

	assert_non_null(s);
	strcat(s, "[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, elem);
	}
	strcat(s, "]");
	return s;
}

static void test_envelopes_refused(void **state)
{
	static const enum body all[] = {RESULTS, REG, PLAN};

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		enum body w = all[i];

		refused(w, "\"version\":1", "\"version\":1,\"version\":1",
			"invalid JSON at line 1");
		refused(w, "\"version\":1", "\"version\":2",
			"version: must be an integer in [1, 1]");
		refused(w, "\"version\":1,", "", "version: is required");
		refused(w, "\"host\":\"node01\"", "\"host\":\"-x\"",
			"host: must contain only letters, digits and .-_");
		refused(w, "\"host\":\"node01\"",
			longstr(0, "host", 'h', TESTAPI_MAX_NAME + 1),
			"host: must be at most 64 bytes long");
	}
	{
		char err[256];

		assert_int_equal(decode(REG, "[1]", err), -EINVAL);
		assert_string_equal(err, "body: must be a JSON object");
		assert_int_equal(decode(RESULTS, "[]", err), -EINVAL);
		assert_string_equal(err, "body: must be a JSON object");
		assert_int_equal(decode(PLAN, "[1]", err), -EINVAL);
		assert_string_equal(err, "body: must be a JSON object");
		assert_int_equal(decode(PLAN, "", err), -EINVAL);
		assert_true(!strncmp(err, "invalid JSON", 12));
	}
	refused(RESULTS, "\"host\":\"node01\",", "", "host: is required");
	refused(REG, "\"host\":\"node01\",", "", "host: is required");
}

static void test_results_refused(void **state)
{
	char *big;

	(void)state;
	refused(RESULTS, "\"results\":[", "\"x\":[", "results: is required");
	refused(RESULTS, "\"results\":[", "\"results\":5,\"x\":[",
		"results: must be an array");
	big = many("{}", TESTAPI_MAX_RESULTS + 1);
	{
		char *body = calloc(1, strlen(big) + 64), err[256];

		sprintf(body, "{\"version\":1,\"host\":\"h\",\"results\":%s}",
			big);
		assert_int_equal(decode(RESULTS, body, err), -EINVAL);
		assert_string_equal(err, "results: must have at most 1000 "
					 "elements");
		free(body);
	}
	free(big);
	refused(RESULTS, "{\"id\":\"r-1\"", "1,{\"id\":\"r-1\"",
		"results[0]: must be an object");
	refused(RESULTS, "\"id\":\"r-1\",", "", "results[0].id: is required");
	refused(RESULTS, "\"id\":\"r-2\"", "\"id\":\"a b\"",
		"results[1].id: must contain only");
	refused(RESULTS, "\"plan_id\":\"p1764412800-3f0c\"",
		"\"plan_id\":\"p/1\"", "results[0].plan_id: must contain only");
	refused(RESULTS, "\"profile\":\"bw\"", "\"profile\":\"\"",
		"results[0].profile: must not be empty");
	refused(RESULTS, "\"test\":\"send_lat\",", "",
		"results[1].test: is required");
	refused(RESULTS, "\"started\":1000.5", "\"started\":\"1\"",
		"results[1].started: must be a number in [0, 1e+11]");
	refused(RESULTS, "\"started\":1000.5", "\"started\":1e12",
		"results[1].started: must be a number in [0, 1e+11]");
	refused(RESULTS, "\"duration_seconds\":2.5", "\"duration_seconds\":2e6",
		"results[0].duration_seconds: must be a number in [0, 1e+06]");
	refused(RESULTS, "\"local\":{},", "", "results[1].local: is required");
	refused(RESULTS, "\"local\":{}", "\"local\":[]",
		"results[1].local: must be an object");
	refused(RESULTS, "\"device\":\"mlx5_0\"", "\"device\":\"a b\"",
		"results[0].local.device: must contain only");
	refused(RESULTS, "\"port\":1}", "\"port\":0}",
		"results[0].local.port: must be an integer in [1, 255]");
	refused(RESULTS, "\"peer\":{}", "\"peer\":1",
		"results[1].peer: must be an object");
	refused(RESULTS, "\"host\":\"node07\"", "\"host\":\"a b\"",
		"results[0].peer.host: must contain only");
	refused(RESULTS, "\"device\":\"mlx5_1\"", "\"device\":5",
		"results[0].peer.device: must be a string");
	refused(RESULTS, "\"port\":2}", "\"port\":256}",
		"results[0].peer.port: must be an integer in [1, 255]");
}

/* A result's outcome, error, busy flag, figures, params, drops. */
static void test_result_fields_refused(void **state)
{
	(void)state;
	refused(RESULTS, "\"outcome\":\"ok\",", "",
		"results[0].outcome: is required");
	refused(RESULTS, "\"outcome\":\"ok\"", "\"outcome\":\"meh\"",
		"results[0].outcome: must be one of ok, control_error, "
		"verbs_error, timeout, refused, aborted");
	refused(RESULTS, "\"error\":\"connect: refused\"", "\"error\":5",
		"results[1].error: must be a string");
	refused(RESULTS, "\"error\":\"connect: refused\"",
		longstr(0, "error", 'e', TESTAPI_MAX_ERROR + 1),
		"results[1].error: must be at most 1024 bytes long");
	refused(RESULTS, "\"wc_status\":\"IBV_WC_RETRY_EXC_ERR\"",
		"\"wc_status\":\"a b\"",
		"results[1].wc_status: must contain only");
	refused(RESULTS, "\"busy\":true", "\"busy\":1",
		"results[0].busy: must be true or false");
	refused(RESULTS, "\"busy_reason\":\"initiator: busy\"",
		longstr(0, "busy_reason", 'b', TESTAPI_MAX_ERROR + 1),
		"results[0].busy_reason: must be at most 1024 bytes long");
	for (int i = 0; i < TESTAPI_FIG_COUNT; i++) {
		char from[64], to[64], msg[128];
		const char *k = testapi_figs[i].key;

		snprintf(from, sizeof(from), "\"%s\":", k);
		snprintf(to, sizeof(to), "\"%s\":-1,\"x\":", k);
		snprintf(msg, sizeof(msg),
			 "results[0].%s: must be a number in [0, 1e+15]", k);
		refused(RESULTS, from, to, msg);
		snprintf(to, sizeof(to), "\"%s\":\"1\",\"x\":", k);
		refused(RESULTS, from, to, msg);
	}
	refused(RESULTS, "\"params\":{\"qps\":1,\"size\":65536}",
		"\"params\":[1]", "results[0].params: must be an object");
	{
		char to[TESTAPI_MAX_PARAMS + 64];

		snprintf(to, sizeof(to), "\"params\":{%s}",
			 longstr(1, "k", 'p', TESTAPI_MAX_PARAMS));
		refused(RESULTS, "\"params\":{\"qps\":1,\"size\":65536}", to,
			"results[0].params: must be at most 8192 bytes as "
			"JSON");
	}
	/* the typed params (testapi.h): a DLID is a unicast LID */
	refused(RESULTS, "\"params\":{\"qps\":1,",
		"\"params\":{\"dlid\":0,\"qps\":1,",
		"results[0].params.dlid: must be an integer in [1, 49151]");
	refused(RESULTS, "\"params\":{\"qps\":1,",
		"\"params\":{\"dlid\":\"12\",\"qps\":1,",
		"results[0].params.dlid: must be an integer in [1, 49151]");
	refused(RESULTS, "\"dropped\":{\"spool_full\":3,\"expired\":0}",
		"\"dropped\":1", "dropped: must be an object");
	refused(RESULTS, "\"spool_full\":3", "\"spool_full\":-3",
		"dropped.spool_full: must be an integer in [0, ");
	refused(RESULTS, "\"expired\":0", "\"expired\":0.5",
		"dropped.expired: must be an integer in [0, ");
}

static void test_reg_refused(void **state)
{
	char *big;

	(void)state;
	refused(REG, "\"responder\":{\"address\":\"10.0.0.1\",\"port\":18515},",
		"", "responder: is required");
	refused(REG, "\"responder\":{\"address\":\"10.0.0.1\",\"port\":18515}",
		"\"responder\":1", "responder: must be an object");
	refused(REG, "\"address\":\"10.0.0.1\",", "",
		"responder.address: is required");
	refused(REG, "\"address\":\"10.0.0.1\"", "\"address\":\"\"",
		"responder.address: must not be empty");
	refused(REG, "\"address\":\"10.0.0.1\"", "\"address\":\"10.0.0.1/8\"",
		"responder.address: must contain only");
	refused(REG, "\"address\":\"10.0.0.1\"",
		longstr(0, "address", 'a', TESTAPI_MAX_ADDRESS + 1),
		"responder.address: must be at most 255 bytes long");
	refused(REG, "\"port\":18515", "\"port\":0",
		"responder.port: must be an integer in [1, 65535]");
	refused(REG, ",\"port\":18515", "", "responder.port: is required");
	refused(REG, "\"labels\":{\"rack\":\"r12\",\"leaf\":\"leaf03\"}",
		"\"labels\":[]", "labels: must be an object");
	big = calloc(1, 4096);
	strcpy(big, "\"labels\":{");
	for (int i = 0; i <= TESTAPI_MAX_LABELS; i++)
		sprintf(big + strlen(big), "%s\"k%d\":\"v\"", i ? "," : "", i);
	strcat(big, "}");
	refused(REG, "\"labels\":{\"rack\":\"r12\",\"leaf\":\"leaf03\"}", big,
		"labels: must have at most 64 labels");
	free(big);
	refused(REG, "\"rack\":\"r12\"", "\"ra ck\":\"r12\"",
		"labels.ra ck: must contain only");
	refused(REG, "\"rack\":\"r12\"", "\"rack\":12",
		"labels.rack: must be a string");
	refused(REG, "\"rack\":\"r12\"", "\"rack\":\"r\\u0001\"",
		"labels.rack: must contain only printable characters");
	refused(REG, "\"rack\":\"r12\"",
		longstr(0, "rack", 'r', TESTAPI_MAX_LABEL_VALUE + 1),
		"labels.rack: must be at most 256 bytes long");
}

/* A registration's profiles, ports and P_Keys. */
static void test_reg_lists_refused(void **state)
{
	char *big, to[40000];

	(void)state;
	refused(REG, "\"profiles\":[\"bw\",\"lat\"]", "\"profiles\":{}",
		"profiles: must be an array");
	big = many("\"p\"", TESTAPI_MAX_PROFILES + 1);
	snprintf(to, sizeof(to), "\"profiles\":%s", big);
	refused(REG, "\"profiles\":[\"bw\",\"lat\"]", to,
		"profiles: must have at most 64 elements");
	free(big);
	refused(REG, "\"profiles\":[\"bw\"", "\"profiles\":[\"\"",
		"profiles[0]: must not be empty");
	refused(REG, "\"profiles\":[\"bw\"", "\"profiles\":[1",
		"profiles[0]: must be a string");
	refused(REG, "\"ports\":[", "\"ports\":5,\"x\":[",
		"ports: must be an array");
	refused(REG, "\"ports\":[{", "\"ports\":[1,{",
		"ports[0]: must be an object");
	refused(REG, "\"device\":\"mlx5_0\",\"port\":1,", "\"port\":1,",
		"ports[0].device: is required");
	refused(REG, "\"device\":\"mlx5_0\",\"port\":1,", "\"device\":\"x\",",
		"ports[0].port: is required");
	refused(REG, "\"device\":\"mlx5_0\",\"port\":1,",
		"\"device\":\"x\",\"port\":256,",
		"ports[0].port: must be an integer in [1, 255]");
	refused(REG, "\"port\":2,", "\"port\":1,",
		"ports[1].port: duplicate port mlx5_0/1");
	refused(REG, "\"state\":4", "\"state\":9",
		"ports[0].state: must be an integer in [-1, 7]");
	refused(REG, "\"link_layer\":\"InfiniBand\"", "\"link_layer\":5",
		"ports[0].link_layer: must be a string");
	refused(REG, "\"lid\":12", "\"lid\":65536",
		"ports[0].lid: must be an integer in [0, 65535]");
	refused(REG, "\"subnet_prefix\":\"fe80:0000:0000:0000\"",
		"\"subnet_prefix\":\"fe80 0\"",
		"ports[0].subnet_prefix: must contain only");
	refused(REG, "\"pkeys\":[65535,32769]", "\"pkeys\":{}",
		"ports[0].pkeys: must be an array");
	big = many("1", TESTAPI_MAX_PKEYS + 1);
	snprintf(to, sizeof(to), "\"pkeys\":%s", big);
	refused(REG, "\"pkeys\":[65535,32769]", to,
		"ports[0].pkeys: must have at most 256 elements");
	free(big);
	refused(REG, "[65535,32769]", "[65535,65536]",
		"ports[0].pkeys[1]: must be an integer in [0, 65535]");
}

/* More ports than a registration may hold, built whole. */
static void test_reg_too_many_ports(void **state)
{
	char *ports = calloc(1, 64 * (TESTAPI_MAX_PORTS + 2)), *body, err[256];

	(void)state;
	for (int i = 0; i <= TESTAPI_MAX_PORTS; i++)
		sprintf(ports + strlen(ports),
			"%s{\"device\":\"d%d\",\"port\":1}", i ? "," : "", i);
	body = calloc(1, strlen(ports) + 128);
	sprintf(body,
		"{\"version\":1,\"host\":\"h\",\"responder\":{\"address\":"
		"\"a\",\"port\":1},\"ports\":[%s]}",
		ports);
	assert_int_equal(decode(REG, body, err), -EINVAL);
	assert_string_equal(err, "ports: must have at most 256 elements");
	free(body);
	free(ports);
}

static void test_plan_envelope_refused(void **state)
{
	(void)state;
	refused(PLAN, "\"period_seconds\":3600.0", "\"period_seconds\":-1",
		"period_seconds: must be a number in [0, 1e+11]");
	refused(PLAN, "\"period_start\":1764412800.0", "\"period_start\":\"x\"",
		"period_start: must be a number in [0, 1e+11]");
	refused(PLAN, "\"paused\":false", "\"paused\":0",
		"paused: must be true or false");
	refused(PLAN, "\"tests\":[", "\"x\":[", "tests: is required");
	refused(PLAN, "\"tests\":[", "\"tests\":5,\"x\":[",
		"tests: must be an array");
	refused(PLAN, "\"responder_keys\":[", "\"responder_keys\":5,\"x\":[",
		"responder_keys: must be an array");
}

/* Decode the plan edited so; expect @n_tests entries, 1 left out. */
static struct testapi_plan *plan_edited(const char *from, const char *to)
{
	char *base = fx_plan_body(), *text = edit(base, from, to), err[256];
	struct testapi_plan *p = NULL;

	if (testapi_plan_decode(text, strlen(text), &p, err, sizeof(err)))
		fail_msg("'%s' refused the plan: %s", to, err);
	free(text);
	free(base);
	return p;
}

/* The first entry left out for @msg; the second still there. */
static void entry_dropped(const char *from, const char *to, const char *msg)
{
	struct testapi_plan *p = plan_edited(from, to);

	assert_int_equal(p->n_skipped, 1);
	if (strncmp(p->skipped, msg, strlen(msg)))
		fail_msg("'%s' gave '%s', expected '%s'", to, p->skipped, msg);
	assert_int_equal(p->n_tests, 1);
	assert_string_equal(p->tests[0].id, "p1764412800-0000000000000002");
	assert_int_equal(p->n_keys, 2);
	testapi_plan_free(p);
}

static void test_plan_entries_dropped(void **state)
{
	struct testapi_plan *p;

	(void)state;
	p = plan_edited("\"tests\":[", "\"tests\":[7,");
	assert_int_equal(p->n_skipped, 1);
	assert_string_equal(p->skipped, "tests[0]: must be an object");
	assert_int_equal(p->n_tests, 2);
	testapi_plan_free(p);
	entry_dropped("\"id\":\"p1764412800-3f0c9a4d1e2b7c55\",", "",
		      "tests[0].id: is required");
	entry_dropped("\"id\":\"p1764412800-3f0c9a4d1e2b7c55\"",
		      "\"id\":\"a b\"", "tests[0].id: must contain only");
	entry_dropped("\"profile\":\"bw\",", "",
		      "tests[0].profile: is required");
	entry_dropped("\"local\":{\"device\":\"mlx5_0\",\"port\":1},", "",
		      "tests[0].local: is required");
	entry_dropped("\"local\":{\"device\":\"mlx5_0\",\"port\":1}",
		      "\"local\":1", "tests[0].local: must be an object");
	entry_dropped("\"local\":{\"device\":\"mlx5_0\"",
		      "\"local\":{\"device\":\"\"",
		      "tests[0].local.device: must not be empty");
	entry_dropped("\"port\":1},\"peer\"", "\"port\":256},\"peer\"",
		      "tests[0].local.port: must be an integer in [1, 255]");
	entry_dropped("\"peer\":{\"host\":\"node07\",",
		      "\"x\":{\"host\":\"node07\",",
		      "tests[0].peer: is required");
	entry_dropped("\"host\":\"node07\"", "\"host\":\"-n\"",
		      "tests[0].peer.host: must contain only");
	entry_dropped("\"address\":\"10.0.0.7\",", "",
		      "tests[0].peer.address: is required");
	entry_dropped("\"port\":18515", "\"port\":0",
		      "tests[0].peer.port: must be an integer in [1, 65535]");
	entry_dropped("\"port\":18515,", "", "tests[0].peer.port: is required");
	entry_dropped("\"device\":\"mlx5_0\",\"port_num\"",
		      "\"device\":\"a b\",\"port_num\"",
		      "tests[0].peer.device: must contain only");
	entry_dropped("\"port_num\":1}", "\"port_num\":0}",
		      "tests[0].peer.port_num: must be an integer in [1, 255]");
	entry_dropped("\"port_num\":1}", "\"port_num\":1,\"dlid\":49152}",
		      "tests[0].peer.dlid: must be an integer in [1, 49151]");
	entry_dropped("\"not_before\":1764413100.0", "\"not_before\":-1",
		      "tests[0].not_before: must be a number in [0, 1e+11]");
	entry_dropped("\"deadline\":1764413130.0", "\"deadline\":\"x\"",
		      "tests[0].deadline: must be a number in [0, 1e+11]");
}

/* The first entry keeps running without its ticket, for @msg. */
static void ticket_dropped(const char *from, const char *to, const char *msg)
{
	struct testapi_plan *p = plan_edited(from, to);

	assert_int_equal(p->n_skipped, 0);
	assert_int_equal(p->n_no_ticket, 1);
	if (strncmp(p->no_ticket, msg, strlen(msg)))
		fail_msg("'%s' gave '%s', expected '%s'", to, p->no_ticket,
			 msg);
	assert_int_equal(p->n_tests, 2);
	assert_false(p->tests[0].has_ticket);
	assert_null(p->tests[0].ticket.key);
	assert_string_equal(p->tests[0].profile, "bw");
	testapi_plan_free(p);
}

static void test_plan_tickets_dropped(void **state)
{
	(void)state;
	ticket_dropped("\"ticket\":{\"period\":490114,", "\"ticket\":5,\"x\":{",
		       "tests[0].ticket: must be an object");
	ticket_dropped("\"period\":490114,\"not_before_ms\"",
		       "\"period\":-1,\"not_before_ms\"",
		       "tests[0].ticket.period: must be an integer in [0, ");
	ticket_dropped("\"period\":490114,\"not_before_ms\"",
		       "\"not_before_ms\"",
		       "tests[0].ticket.period: is required");
	ticket_dropped(
		"\"not_before_ms\":1764413100000", "\"not_before_ms\":0",
		"tests[0].ticket.not_before_ms: must be an integer in [1, ");
	ticket_dropped("\"deadline_ms\":1764413130000,", "",
		       "tests[0].ticket.deadline_ms: is required");
	ticket_dropped(
		"\"deadline_ms\":1764413130000",
		"\"deadline_ms\":1764413100000",
		"tests[0].ticket.deadline_ms: must be after not_before_ms");
	ticket_dropped("\"key\":\"" KEY_A "\"", "\"key\":\"abc\"",
		       "tests[0].ticket.key: must be 64 hex digits");
	ticket_dropped("\"key\":\"8c9183dc", "\"key\":\"8c9183dg",
		       "tests[0].ticket.key: must be 64 hex digits");
	ticket_dropped("\"key\":\"" KEY_A "\"", "\"key\":\"\"",
		       "tests[0].ticket.key: must not be empty");
}

static void key_dropped(const char *from, const char *to, const char *msg)
{
	struct testapi_plan *p = plan_edited(from, to);

	assert_int_equal(p->n_skipped, 1);
	if (strncmp(p->skipped, msg, strlen(msg)))
		fail_msg("'%s' gave '%s', expected '%s'", to, p->skipped, msg);
	assert_int_equal(p->n_keys, 1);
	assert_int_equal(p->keys[0].period, 490115);
	assert_int_equal(p->n_tests, 2);
	testapi_plan_free(p);
}

static void test_plan_keys_dropped(void **state)
{
	(void)state;
	key_dropped("{\"period\":490114,\"key\":\"" KEY_B "\"}", "1",
		    "responder_keys[0]: must be an object");
	key_dropped("{\"period\":490114,\"key\":\"" KEY_B "\"}",
		    "{\"key\":\"" KEY_B "\"}",
		    "responder_keys[0].period: is required");
	key_dropped("{\"period\":490114,\"key\"", "{\"period\":-5,\"key\"",
		    "responder_keys[0].period: must be an integer in [0, ");
	key_dropped("\"key\":\"" KEY_B "\"", "\"key\":\"" KEY_B "0\"",
		    "responder_keys[0].key: must be at most 64 bytes long");
	key_dropped("\"key\":\"" KEY_B "\"", "\"x\":1",
		    "responder_keys[0].key: is required");
}

/* Past the caps, the rest is left out and counted. */
static void test_plan_caps(void **state)
{
	const char *entry = "{\"id\":\"t\",\"profile\":\"bw\",\"local\":{},"
			    "\"peer\":{\"address\":\"a\",\"port\":1}}";
	const char *key = "{\"period\":1,\"key\":\"" KEY_A "\"}";
	char *tests = many(entry, TESTAPI_MAX_PLAN + 2);
	char *keys = many(key, TESTAPI_MAX_KEYS + 1), err[256];
	char *body = calloc(1, strlen(tests) + strlen(keys) + 128);
	struct testapi_plan *p;

	(void)state;
	sprintf(body, "{\"version\":1,\"tests\":%s,\"responder_keys\":%s}",
		tests, keys);
	assert_int_equal(
		testapi_plan_decode(body, strlen(body), &p, err, sizeof(err)),
		0);
	assert_int_equal(p->n_tests, TESTAPI_MAX_PLAN);
	assert_int_equal(p->n_keys, TESTAPI_MAX_KEYS);
	assert_int_equal(p->n_skipped, 3);
	assert_string_equal(p->skipped, "tests[1024]: more than 1024 entries");
	assert_null(p->host);
	assert_true(p->has_keys);
	assert_null(p->tests[0].local_device);
	assert_int_equal(p->tests[0].local_port, 0);
	assert_true(p->tests[0].not_before == 0 && p->tests[0].deadline == 0);
	testapi_plan_free(p);
	/* no responder_keys at all: an older collector */
	sprintf(body, "{\"version\":1,\"tests\":[]}");
	assert_int_equal(
		testapi_plan_decode(body, strlen(body), &p, err, sizeof(err)),
		0);
	assert_false(p->has_keys);
	testapi_plan_free(p);
	/* keys past the cap: the first reason is the cap's */
	free(keys);
	keys = many(key, TESTAPI_MAX_KEYS + 1);
	sprintf(body, "{\"version\":1,\"tests\":[],\"responder_keys\":%s}",
		keys);
	assert_int_equal(
		testapi_plan_decode(body, strlen(body), &p, err, sizeof(err)),
		0);
	assert_int_equal(p->n_skipped, 1);
	assert_string_equal(p->skipped,
			    "responder_keys[16]: more than 16 keys");
	testapi_plan_free(p);
	free(body);
	free(keys);
	free(tests);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_envelopes_refused),
		cmocka_unit_test(test_results_refused),
		cmocka_unit_test(test_result_fields_refused),
		cmocka_unit_test(test_reg_refused),
		cmocka_unit_test(test_reg_lists_refused),
		cmocka_unit_test(test_reg_too_many_ports),
		cmocka_unit_test(test_plan_envelope_refused),
		cmocka_unit_test(test_plan_entries_dropped),
		cmocka_unit_test(test_plan_tickets_dropped),
		cmocka_unit_test(test_plan_keys_dropped),
		cmocka_unit_test(test_plan_caps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
