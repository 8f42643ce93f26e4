// SPDX-License-Identifier: MIT
/*
 * Unit tests of the test API codec (common/testapi.h): the figure table
 * against the schema's result table, the outcome names, each body's wire
 * text as docs/api.md shows it (so the probe and the collector keep
 * talking to their older peers), and round trips through encoder and
 * decoder with every value known and with values unknown. The rules the
 * decoders enforce are test_testapi_refuse.c's.
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
#include <jansson.h>

#include "buf.h"
#include "testapi_fx.h"

static const char result_wire[] =
	"{\"id\":\"r-1\",\"plan_id\":\"p1764412800-3f0c\",\"profile\":\"bw\","
	"\"test\":\"write_bw\",\"started\":1764413101.25,"
	"\"duration_seconds\":2.5,\"local\":{\"device\":\"mlx5_0\",\"port\":1},"
	"\"peer\":{\"host\":\"node07\",\"device\":\"mlx5_1\",\"port\":2},"
	"\"outcome\":\"ok\",\"error\":null,\"wc_status\":null,\"busy\":true,"
	"\"busy_reason\":\"initiator: busy\","
	"\"bw_avg_bytes_per_second\":0.5,\"bw_peak_bytes_per_second\":1.0,"
	"\"bw_min_bytes_per_second\":1.5,\"msg_rate_per_second\":2.0,"
	"\"lat_min_seconds\":2.5,\"lat_median_seconds\":3.0,"
	"\"lat_mean_seconds\":3.5,\"lat_p99_seconds\":4.0,"
	"\"lat_p999_seconds\":4.5,\"lat_max_seconds\":5.0,"
	"\"lat_stdev_seconds\":5.5,\"cpu_seconds\":6.0,"
	"\"params\":{\"qps\":1,\"size\":65536}}";

static const char failed_wire[] =
	"{\"id\":\"r-2\",\"plan_id\":null,\"profile\":\"lat\",\"test\":"
	"\"send_lat\",\"started\":1000.5,\"local\":{},\"peer\":{},\"outcome\":"
	"\"control_error\",\"error\":\"connect: refused\",\"wc_status\":"
	"\"IBV_WC_RETRY_EXC_ERR\",\"busy\":false}";

static const char reg_wire[] =
	"{\"version\":1,\"host\":\"node01\",\"responder\":{\"address\":"
	"\"10.0.0.1\",\"port\":18515},\"labels\":{\"rack\":\"r12\",\"leaf\":"
	"\"leaf03\"},\"profiles\":[\"bw\",\"lat\"],\"ports\":[{\"device\":"
	"\"mlx5_0\",\"port\":1,\"state\":4,\"link_layer\":\"InfiniBand\","
	"\"lid\":12,\"subnet_prefix\":\"fe80:0000:0000:0000\",\"pkeys\":[65535,"
	"32769],\"gids\":[\"fe80:0000:0000:0000:0000:0000:0000:0001\"]},"
	"{\"device\":\"mlx5_0\",\"port\":2,\"state\":-1,\"pkeys\":[],\"gids\":"
	"[]}]}";

static const char plan_wire[] =
	"{\"version\":1,\"host\":\"node01\",\"period_seconds\":3600.0,"
	"\"period_start\":1764412800.0,\"paused\":false,\"tests\":[{\"id\":"
	"\"p1764412800-3f0c9a4d1e2b7c55\",\"profile\":\"bw\",\"local\":{"
	"\"device\":\"mlx5_0\",\"port\":1},\"peer\":{\"host\":\"node07\","
	"\"address\":\"10.0.0.7\",\"port\":18515,\"device\":\"mlx5_0\","
	"\"port_num\":1},\"not_before\":1764413100.0,\"deadline\":1764413130.0,"
	"\"ticket\":{\"period\":490114,\"not_before_ms\":1764413100000,"
	"\"deadline_ms\":1764413130000,\"key\":\"" KEY_A "\"}},{\"id\":"
	"\"p1764412800-0000000000000002\",\"profile\":\"lat\",\"local\":{"
	"\"device\":\"mlx5_0\",\"port\":2},\"peer\":{\"host\":\"node08\","
	"\"address\":\"10.0.0.8\",\"port\":18515,\"device\":\"mlx5_1\","
	"\"port_num\":1,\"dlid\":153},\"not_before\":1764413200.5,\"deadline\":"
	"1764413230.5}"
	"],\"responder_keys\":[{\"period\":490114,\"key\":\"" KEY_B "\"},{"
	"\"period\":490115,\"key\":\"" KEY_C "\"}]}";

/* ---- comparisons ---- */

static void same_str(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void same_num(double a, double b)
{
	if (isnan(a) || isnan(b))
		assert_true(isnan(a) && isnan(b));
	else
		assert_true(a == b);
}

static void same_result(const struct testapi_result *a,
			const struct testapi_result *b)
{
	same_str(a->id, b->id);
	same_str(a->plan_id, b->plan_id);
	same_str(a->profile, b->profile);
	same_str(a->test, b->test);
	same_num(a->started, b->started);
	same_num(a->duration, b->duration);
	same_str(a->local_device, b->local_device);
	assert_int_equal(a->local_port, b->local_port);
	same_str(a->peer_host, b->peer_host);
	same_str(a->peer_device, b->peer_device);
	assert_int_equal(a->peer_port, b->peer_port);
	assert_int_equal(a->outcome, b->outcome);
	same_str(a->error, b->error);
	same_str(a->wc_status, b->wc_status);
	same_str(a->busy_reason, b->busy_reason);
	assert_int_equal(a->busy, b->busy);
	for (int i = 0; i < TESTAPI_FIG_COUNT; i++)
		same_num(a->fig[i], b->fig[i]);
	same_str(a->params, b->params);
}

static void same_plan_test(const struct testapi_plan_test *a,
			   const struct testapi_plan_test *b)
{
	same_str(a->id, b->id);
	same_str(a->profile, b->profile);
	same_str(a->local_device, b->local_device);
	assert_int_equal(a->local_port, b->local_port);
	same_str(a->peer_host, b->peer_host);
	same_str(a->peer_address, b->peer_address);
	assert_int_equal(a->peer_tcp_port, b->peer_tcp_port);
	same_str(a->peer_device, b->peer_device);
	assert_int_equal(a->peer_hca_port, b->peer_hca_port);
	assert_int_equal(a->dlid, b->dlid);
	same_num(a->not_before, b->not_before);
	same_num(a->deadline, b->deadline);
	assert_int_equal(a->has_ticket, b->has_ticket);
	assert_int_equal(a->ticket.period, b->ticket.period);
	assert_int_equal(a->ticket.not_before_ms, b->ticket.not_before_ms);
	assert_int_equal(a->ticket.deadline_ms, b->ticket.deadline_ms);
	same_str(a->ticket.key, b->ticket.key);
}

/* ---- tables ---- */

/* Every figure is a REAL column of table result, named as it travels. */
static void test_figures_match_schema(void **state)
{
	char path[512], *sql = calloc(1, 1 << 16), col[128];
	const char *cols = TESTAPI_FIG_SQL_COLUMNS;
	const char *params = TESTAPI_FIG_SQL_PARAMS;
	FILE *f;
	int q = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/002_tests.sql", SCHEMA_DIR);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_true(fread(sql, 1, (1 << 16) - 1, f) > 0);
	fclose(f);
	for (int i = 0; i < TESTAPI_FIG_COUNT; i++) {
		const char *k = testapi_figs[i].key;

		snprintf(col, sizeof(col), "\t%s REAL,", k);
		if (!strstr(sql, col))
			fail_msg("%s is not a REAL column of result", k);
		snprintf(col, sizeof(col), ", %s", k);
		assert_non_null(strstr(cols, col));
		for (int j = 0; j < i; j++)
			assert_string_not_equal(k, testapi_figs[j].key);
	}
	for (const char *c = params; *c; c++)
		q += *c == '?';
	assert_int_equal(q, TESTAPI_FIG_COUNT);
	assert_string_equal(testapi_figs[TESTAPI_FIG_LAT_P99].key,
			    "lat_p99_seconds");
	assert_false(testapi_figs[TESTAPI_FIG_BW_MIN].larger_is_worse);
	assert_true(testapi_figs[TESTAPI_FIG_LAT_MAX].larger_is_worse);
	free(sql);
}

static void test_outcomes(void **state)
{
	static const char *const names[] = {"ok",	   "control_error",
					    "verbs_error", "timeout",
					    "refused",	   "aborted"};
	enum testapi_outcome o;

	(void)state;
	assert_int_equal(TESTAPI_OUTCOMES, 6);
	for (int i = 0; i < TESTAPI_OUTCOMES; i++) {
		assert_string_equal(testapi_outcome_name(i), names[i]);
		assert_int_equal(testapi_outcome_parse(names[i], &o), 0);
		assert_int_equal(o, i);
	}
	assert_null(testapi_outcome_name(TESTAPI_OUTCOMES));
	assert_int_equal(testapi_outcome_parse("OK", &o), -EINVAL);
	assert_int_equal(testapi_outcome_parse("", &o), -EINVAL);
}

/* ---- wire text and round trips ---- */

static void test_result_wire(void **state)
{
	struct testapi_result r;
	char *text;

	(void)state;
	fx_good_result(&r);
	assert_int_equal(testapi_result_encode(&r, &text), 0);
	assert_string_equal(text, result_wire);
	free(text);
	fx_failed_result(&r);
	assert_int_equal(testapi_result_encode(&r, &text), 0);
	assert_string_equal(text, failed_wire);
	free(text);
	/* "" says unknown as NULL does: left out, or null */
	r.local_device = r.peer_host = r.error = (char *)"";
	assert_int_equal(testapi_result_encode(&r, &text), 0);
	assert_non_null(strstr(text, "\"local\":{},\"peer\":{}"));
	assert_non_null(strstr(text, "\"error\":null"));
	free(text);
	/* what cannot be encoded is refused, not sent half */
	r.params = (char *)"[1]";
	assert_int_equal(testapi_result_encode(&r, &text), -EINVAL);
	assert_null(text);
	r.params = NULL;
	r.outcome = TESTAPI_OUTCOMES;
	assert_int_equal(testapi_result_encode(&r, &text), -EINVAL);
	assert_null(text);
}

static void test_results_round_trip(void **state)
{
	struct testapi_result v[2];
	struct testapi_results *r;
	char *body, err[256];

	(void)state;
	fx_good_result(&v[0]);
	fx_failed_result(&v[1]);
	body = fx_results_body(v, 2);
	assert_true(!strncmp(body,
			     "{\"version\":1,\"host\":\"node01\","
			     "\"results\":[{\"id\":\"r-1\"",
			     50));
	assert_non_null(strstr(body, "}},{\"id\":\"r-2\""));
	assert_non_null(strstr(body, "\"busy\":false}],\"dropped\":{"
				     "\"spool_full\":3,\"expired\":0}}"));
	assert_int_equal(testapi_results_decode(body, strlen(body), &r, err,
						sizeof(err)),
			 0);
	assert_string_equal(r->host, "node01");
	assert_int_equal(r->n, 2);
	assert_true(r->has_dropped);
	assert_int_equal(r->spool_full, 3);
	same_result(&r->v[0], &v[0]);
	same_result(&r->v[1], &v[1]);
	testapi_results_free(r);
	free(body);
	/* an empty batch, and a host that needs escaping */
	{
		struct buf b;

		buf_init(&b, 4096);
		assert_int_equal(testapi_results_begin(&b, "a\"b"), 0);
		assert_int_equal(testapi_results_end(&b, 0, 7), 0);
		assert_string_equal(b.data,
				    "{\"version\":1,\"host\":\"a\\\"b\","
				    "\"results\":[],\"dropped\":{"
				    "\"spool_full\":0,\"expired\":7}}");
		buf_free(&b);
	}
}

static void test_reg_round_trip(void **state)
{
	struct testapi_reg *g, r;
	struct testapi_reg_port ports[2];
	char *text = fx_reg_body(), err[256];

	(void)state;
	assert_string_equal(text, reg_wire);
	assert_int_equal(
		testapi_reg_decode(text, strlen(text), &g, err, sizeof(err)),
		0);
	fx_good_reg(&r, ports);
	same_str(g->host, r.host);
	same_str(g->address, r.address);
	assert_int_equal(g->port, r.port);
	assert_int_equal(g->n_labels, 2);
	for (size_t i = 0; i < 2; i++) {
		same_str(g->labels[i].key, r.labels[i].key);
		same_str(g->labels[i].value, r.labels[i].value);
		same_str(g->profiles[i], r.profiles[i]);
	}
	assert_int_equal(g->n_profiles, 2);
	assert_int_equal(g->n_ports, 2);
	for (size_t i = 0; i < 2; i++) {
		const struct testapi_reg_port *a = &g->ports[i], *b = &ports[i];

		same_str(a->device, b->device);
		assert_int_equal(a->port, b->port);
		assert_int_equal(a->state, b->state);
		same_str(a->link_layer, b->link_layer);
		same_str(a->subnet_prefix, b->subnet_prefix);
		assert_int_equal(a->lid, b->lid);
		assert_int_equal(a->n_pkeys, b->n_pkeys);
		for (size_t k = 0; k < a->n_pkeys; k++)
			assert_int_equal(a->pkeys[k], b->pkeys[k]);
		/* accepted and ignored (docs/api.md) */
		assert_null(a->gids);
	}
	testapi_reg_free(g);
	free(text);
}

static void test_plan_round_trip(void **state)
{
	struct testapi_plan *p, q;
	struct testapi_plan_test t[2];
	struct testapi_key k[2];
	char *text = fx_plan_body(), err[256];

	(void)state;
	assert_string_equal(text, plan_wire);
	assert_int_equal(
		testapi_plan_decode(text, strlen(text), &p, err, sizeof(err)),
		0);
	fx_good_plan(&q, t, k);
	same_str(p->host, q.host);
	same_num(p->period_seconds, q.period_seconds);
	same_num(p->period_start, q.period_start);
	assert_int_equal(p->paused, 0);
	assert_int_equal(p->n_tests, 2);
	same_plan_test(&p->tests[0], &t[0]);
	same_plan_test(&p->tests[1], &t[1]);
	assert_true(p->has_keys);
	assert_int_equal(p->n_keys, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(p->keys[i].period, k[i].period);
		same_str(p->keys[i].key, k[i].key);
	}
	assert_int_equal(p->n_skipped + p->n_no_ticket, 0);
	testapi_plan_free(p);
	free(text);
	/* a paused host: no tests, no keys (a collector without tickets) */
	q.paused = 1;
	q.n_tests = q.n_keys = 0;
	assert_int_equal(testapi_plan_encode(&q, &text), 0);
	assert_non_null(strstr(text, "\"paused\":true,\"tests\":[],"
				     "\"responder_keys\":[]}"));
	assert_int_equal(
		testapi_plan_decode(text, strlen(text), &p, err, sizeof(err)),
		0);
	assert_true(p->paused);
	assert_int_equal(p->n_tests + p->n_keys, 0);
	testapi_plan_free(p);
	free(text);
}

/* The one classifier: metric, data direction and operation of every test
 * name. */
static void test_kinds(void **state)
{
	static const struct {
		const char *test;
		int bidir;
		enum testapi_metric m;
		unsigned flow;
		enum testapi_op op;
	} rows[] = {
#define BW TESTAPI_METRIC_BANDWIDTH
#define LAT TESTAPI_METRIC_LATENCY
		{"write_bw", 0, BW, TESTAPI_FLOW_FORWARD, TESTAPI_OP_WRITE},
		{"send_bw", 0, BW, TESTAPI_FLOW_FORWARD, TESTAPI_OP_SEND},
		{"read_bw", 0, BW, TESTAPI_FLOW_REVERSE, TESTAPI_OP_READ},
		{"write_bw", 1, BW, TESTAPI_FLOW_BOTH, TESTAPI_OP_WRITE},
		{"read_bw", 1, BW, TESTAPI_FLOW_BOTH, TESTAPI_OP_READ},
		{"fadd_bw", 0, BW, TESTAPI_FLOW_BOTH, TESTAPI_OP_ATOMIC},
		{"write_lat", 0, LAT, TESTAPI_FLOW_BOTH, TESTAPI_OP_WRITE},
		{"read_lat", 0, LAT, TESTAPI_FLOW_BOTH, TESTAPI_OP_READ},
		{"ud_send_lat", 0, LAT, TESTAPI_FLOW_BOTH, TESTAPI_OP_UD_SEND},
#undef BW
#undef LAT
	};
	struct testapi_kind k;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		assert_int_equal(
			testapi_test_kind(rows[i].test, rows[i].bidir, &k), 0);
		assert_int_equal(k.metric, rows[i].m);
		assert_int_equal(k.flow, rows[i].flow);
		assert_int_equal(k.op, rows[i].op);
	}
	assert_int_equal(testapi_test_kind("ping", 0, &k), -ENOENT);
	assert_int_equal(k.metric, TESTAPI_METRIC_NONE);
	assert_int_equal(k.op, TESTAPI_OP_UNKNOWN);
	assert_int_equal(k.flow, TESTAPI_FLOW_BOTH);
	assert_int_equal(testapi_test_kind(NULL, 0, &k), -ENOENT);
	assert_true(
		testapi_test_measures("write_bw", TESTAPI_METRIC_BANDWIDTH));
	assert_false(testapi_test_measures("write_bw", TESTAPI_METRIC_LATENCY));
	assert_true(testapi_test_measures("send_lat", TESTAPI_METRIC_LATENCY));
	assert_true(testapi_test_measures("ping", TESTAPI_METRIC_LATENCY));
}

/* The metrics' names: spelled once, both ways, nothing else accepted. */
static void test_metric_names(void **state)
{
	enum testapi_metric m = TESTAPI_METRIC_NONE;

	(void)state;
	assert_string_equal(testapi_metric_name(TESTAPI_METRIC_BANDWIDTH),
			    "bandwidth");
	assert_string_equal(testapi_metric_name(TESTAPI_METRIC_LATENCY),
			    "latency");
	assert_null(testapi_metric_name(TESTAPI_METRIC_NONE));
	assert_int_equal(testapi_metric_parse("latency", &m), 0);
	assert_int_equal(m, TESTAPI_METRIC_LATENCY);
	assert_int_equal(testapi_metric_parse("bandwidth", &m), 0);
	assert_int_equal(m, TESTAPI_METRIC_BANDWIDTH);
	assert_int_equal(testapi_metric_parse("Latency", &m), -EINVAL);
	assert_int_equal(testapi_metric_parse("", &m), -EINVAL);
	assert_int_equal(testapi_metric_parse(NULL, &m), -EINVAL);
	assert_int_equal(m, TESTAPI_METRIC_BANDWIDTH); /* unchanged */
}

/* Typed params: an older probe's decode, a DLID is read, junk is not. */
static void test_params(void **state)
{
	struct testapi_params p;

	(void)state;
	assert_int_equal(testapi_params_decode(NULL, &p), 0);
	assert_int_equal(p.size, -1);
	assert_int_equal(p.dlid, 0);
	/* what probes before routes sent */
	assert_int_equal(
		testapi_params_decode("{\"duration\":2.0,\"gid_index\":3,"
				      "\"iters\":0,\"mtu\":4096,\"pkey\":0,"
				      "\"qps\":2,\"selftest\":false,"
				      "\"size\":65536,\"sl\":0,"
				      "\"test\":\"write_bw\"}",
				      &p),
		0);
	assert_int_equal(p.size, 65536);
	assert_int_equal(p.qps, 2);
	assert_int_equal(p.mtu, 4096);
	assert_int_equal(p.dlid, 0);
	assert_false(p.bidirectional);
	assert_false(p.selftest);
	assert_int_equal(testapi_params_decode("{\"dlid\":154,\"bidirectional\""
					       ":true,\"selftest\":true}",
					       &p),
			 0);
	assert_int_equal(p.dlid, 154);
	assert_true(p.bidirectional);
	assert_true(p.selftest);
	/* out of range or ill-typed: unknown */
	assert_int_equal(testapi_params_decode("{\"dlid\":49152,\"size\":0,"
					       "\"mtu\":\"4096\"}",
					       &p),
			 0);
	assert_int_equal(p.dlid, 0);
	assert_int_equal(p.size, -1);
	assert_int_equal(p.mtu, -1);
	assert_int_equal(testapi_params_decode("[1]", &p), -EINVAL);
	assert_int_equal(testapi_params_decode("{", &p), -EINVAL);
}

/* What the probe encodes the collector decodes, with the same keys; the
 * unknown stay unknown. */
static void test_params_encode(void **state)
{
	const struct testapi_params in[] = {
		{.size = 65536,
		 .qps = 8,
		 .mtu = 4096,
		 .bidirectional = 1,
		 .dlid = 154},
		{.size = -1, .qps = -1, .mtu = -1, .selftest = 1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		json_t *o = json_object();
		struct testapi_params out;
		char *txt;

		assert_int_equal(testapi_params_encode(&in[i], o), 0);
		txt = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
		assert_int_equal(testapi_params_decode(txt, &out), 0);
		assert_int_equal(out.size, in[i].size);
		assert_int_equal(out.qps, in[i].qps);
		assert_int_equal(out.mtu, in[i].mtu);
		assert_int_equal(out.dlid, in[i].dlid);
		assert_int_equal(out.bidirectional, in[i].bidirectional);
		assert_int_equal(out.selftest, in[i].selftest);
		if (i == 1) /* the unknown are left out */
			assert_string_equal(txt, "{\"bidirectional\":false,"
						 "\"selftest\":true}");
		free(txt);
		json_decref(o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figures_match_schema),
		cmocka_unit_test(test_outcomes),
		cmocka_unit_test(test_result_wire),
		cmocka_unit_test(test_results_round_trip),
		cmocka_unit_test(test_reg_round_trip),
		cmocka_unit_test(test_plan_round_trip),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_metric_names),
		cmocka_unit_test(test_params_encode),
		cmocka_unit_test(test_params),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
