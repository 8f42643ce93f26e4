// SPDX-License-Identifier: MIT
/*
 * Unit tests for host health verdicts: every reason of collector/health.h
 * from its facts (and not below its threshold, and not when its level is
 * ignore), the sticky window of health_merge(), the [health] settings'
 * checks; then through the store on a real SQLite file (reports decoded
 * and stored as the collector stores them): a port that was ACTIVE and
 * goes DOWN fails the host at once and keeps it failed for quiet_seconds
 * after it comes back, a port never ACTIVE is no reason, counters read
 * over their window from history, an open suspect (schema 005) fails
 * the host, the switch port facing a host's port names the host, a port
 * gone from the reports is down, retirement forgets it all, and a
 * failure to judge loses no report.
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
#include <sqlite3.h>

#include "health.h"
#include "report.h"
#include "collector_settings.h"
#include "store.h"

/* The shipped defaults (settings.c), parsed. */
static void defaults(struct collector_settings *s)
{
	char err[256];

	assert_int_equal(collector_settings_init(s), 0);
	assert_int_equal(health_opts_check(&s->health, err, sizeof(err)), 0);
}

static const struct health_reason *only(const struct health_list *l)
{
	assert_int_equal(l->n, 1);
	return &l->v[0];
}

static struct health_port port(int state, double active_seen)
{
	return (struct health_port){
		.device = "mlx5_0",
		.port = 1,
		.state = state,
		.phys_state = state == 4 ? 5 : 3,
		.rate_bytes = 12500000000LL,
		.active_seen = active_seen,
		.down_since = state == 4 ? -1 : 200,
		.missing_since = -1,
		.best_rate = 12500000000LL,
	};
}

static void test_defaults_and_checks(void **state)
{
	struct collector_settings s;
	char err[256];

	(void)state;
	defaults(&s);
	assert_int_equal(s.health.quiet_seconds, 600);
	assert_int_equal(s.health.level[HK_PORT_DOWN], HEALTH_FAILED);
	assert_int_equal(s.health.level[HK_SYMBOL_ERROR], HEALTH_DEGRADED);
	assert_int_equal(s.health.level[HK_SUSPECT_BANDWIDTH], HEALTH_FAILED);
	assert_int_equal(s.health.level[HK_SUSPECT_LATENCY], HEALTH_DEGRADED);
	assert_int_equal(s.health.rule[HK_SYMBOL_ERROR].max, 120);
	assert_int_equal(s.health.rule[HK_SYMBOL_ERROR].window, 3600);
	assert_int_equal(s.health.rule[HK_LINK_ERROR_RECOVERY].max, 5);
	assert_int_equal(s.health.rule[HK_LINK_ERROR_RECOVERY].window, 60);
	free(s.health.level_text[HK_REGRESSION]);
	s.health.level_text[HK_REGRESSION] = strdup("fatal");
	assert_int_equal(health_opts_check(&s.health, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "[health] regression: 'fatal' is not one of "
				 "failed, degraded, ignore");
	collector_settings_free(&s);
}

static void test_port_down(void **state)
{
	struct collector_settings s;
	struct health_list l = {0};
	struct health_port p = port(1, 100);
	const struct health_reason *r;

	(void)state;
	defaults(&s);
	assert_int_equal(health_port_reasons(&s.health, &p, &l), 0);
	r = only(&l);
	assert_int_equal(r->kind, HK_PORT_DOWN);
	assert_int_equal(r->level, HEALTH_FAILED);
	assert_string_equal(r->key, "port_down/mlx5_0/1");
	assert_string_equal(r->device, "mlx5_0");
	assert_int_equal(r->port, 1);
	assert_non_null(strstr(r->text, "mlx5_0/1 port down: DOWN"));
	assert_non_null(strstr(r->evidence, "\"down_since\":200"));
	health_list_free(&l);
	/* INIT is not ACTIVE either */
	p = port(2, 100);
	assert_int_equal(health_port_reasons(&s.health, &p, &l), 0);
	assert_int_equal(only(&l)->kind, HK_PORT_DOWN);
	health_list_free(&l);
	/* never ACTIVE (an unused second port): no reason */
	p = port(1, -1);
	assert_int_equal(health_port_reasons(&s.health, &p, &l), 0);
	assert_int_equal(l.n, 0);
	/* gone from the reports */
	p = port(4, 100);
	p.missing_since = 300;
	assert_int_equal(health_port_reasons(&s.health, &p, &l), 0);
	assert_non_null(strstr(only(&l)->text, "gone from the host's reports"));
	health_list_free(&l);
	/* ACTIVE again: fine */
	p = port(4, 100);
	assert_int_equal(health_port_reasons(&s.health, &p, &l), 0);
	assert_int_equal(l.n, 0);
	/* ignored */
	free(s.health.level_text[HK_PORT_DOWN]);
	s.health.level_text[HK_PORT_DOWN] = strdup("ignore");
	assert_int_equal(health_opts_check(&s.health, NULL, 0), 0);
	p = port(1, 100);
	assert_int_equal(health_port_reasons(&s.health, &p, &l), 0);
	assert_int_equal(l.n, 0);
	collector_settings_free(&s);
}

static void test_link_degraded(void **state)
{
	struct collector_settings s;
	struct health_list l = {0};
	struct health_port p = port(4, 100);

	(void)state;
	defaults(&s);
	p.rate_bytes = 3125000000LL; /* 25 of 100 Gb/s */
	assert_int_equal(health_port_reasons(&s.health, &p, &l), 0);
	assert_int_equal(only(&l)->kind, HK_LINK_DEGRADED);
	assert_int_equal(only(&l)->level, HEALTH_DEGRADED);
	assert_string_equal(only(&l)->text, "mlx5_0/1 runs at 25 Gb/s, below "
					    "the 100 Gb/s it ran at");
	health_list_free(&l);
	/* the switch port facing it trained narrower */
	p = port(4, 100);
	p.switch_desc = "leaf03";
	p.switch_port = 7;
	p.switch_degraded = "width 1X of 4X enabled";
	assert_int_equal(health_port_reasons(&s.health, &p, &l), 0);
	assert_string_equal(only(&l)->text, "mlx5_0/1 link degraded at switch "
					    "leaf03 port 7: width 1X of 4X "
					    "enabled");
	assert_string_equal(only(&l)->key, "link_degraded/mlx5_0/1/switch");
	health_list_free(&l);
	collector_settings_free(&s);
}

static void test_pcie_and_aer(void **state)
{
	struct collector_settings s;
	struct health_list l = {0};
	struct report_pcie pc = {.cur_speed_gts = 8,
				 .max_speed_gts = 16,
				 .cur_width = 8,
				 .max_width = 16,
				 .aer_fatal = 0};

	(void)state;
	defaults(&s);
	assert_int_equal(health_pcie_reasons(&s.health, "mlx5_0", &pc, &l), 0);
	assert_int_equal(only(&l)->kind, HK_PCIE_DEGRADED);
	assert_int_equal(only(&l)->level, HEALTH_DEGRADED);
	assert_int_equal(only(&l)->port, -1);
	health_list_free(&l);
	pc.cur_speed_gts = 16;
	pc.cur_width = 16;
	assert_int_equal(health_pcie_reasons(&s.health, "mlx5_0", &pc, &l), 0);
	assert_int_equal(l.n, 0);
	pc.aer_fatal = 2;
	assert_int_equal(health_pcie_reasons(&s.health, "mlx5_0", &pc, &l), 0);
	assert_int_equal(only(&l)->kind, HK_AER_FATAL);
	assert_int_equal(only(&l)->level, HEALTH_FAILED);
	assert_string_equal(only(&l)->text,
			    "mlx5_0 PCIe AER: 2 fatal error(s) since boot");
	health_list_free(&l);
	collector_settings_free(&s);
}

/* Each counter reason: at its threshold nothing, one above it a reason
 * at its level. */
static void test_counters(void **state)
{
	static const struct {
		enum health_kind kind;
		const char *name;
		int level;
	} t[] = {
		{HK_LINK_DOWNED, "link_downed", HEALTH_FAILED},
		{HK_CARRIER_CHANGES, "carrier_changes", HEALTH_FAILED},
		{HK_LINK_ERROR_RECOVERY, "link_error_recovery", HEALTH_FAILED},
		{HK_SYMBOL_ERROR, "symbol_error", HEALTH_DEGRADED},
		{HK_BUFFER_OVERRUN, "excessive_buffer_overrun_errors",
		 HEALTH_FAILED},
	};
	struct collector_settings s;
	struct health_list l = {0};

	(void)state;
	defaults(&s);
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		long long max = s.health.rule[t[i].kind].max;
		struct health_count c = {.kind = t[i].kind,
					 .device = "mlx5_0",
					 .port = 1,
					 .name = t[i].name,
					 .then = 10,
					 .now = 10 + (uint64_t)max,
					 .seconds = 60};

		assert_int_equal(health_counter_reason(&s.health, &c, &l), 0);
		assert_int_equal(l.n, 0);
		c.now++;
		assert_int_equal(health_counter_reason(&s.health, &c, &l), 0);
		assert_int_equal(only(&l)->kind, t[i].kind);
		assert_int_equal(only(&l)->level, t[i].level);
		assert_non_null(strstr(only(&l)->evidence, "\"increase\":"));
		health_list_free(&l);
	}
	collector_settings_free(&s);
}

static void test_counter_reset_saturation_switch(void **state)
{
	struct collector_settings s;
	struct health_list l = {0};
	struct health_count c = {.kind = HK_SYMBOL_ERROR,
				 .device = "mlx5_0",
				 .port = 1,
				 .name = "symbol_error",
				 .then = 1000,
				 .now = 500,
				 .seconds = 3600};

	(void)state;
	defaults(&s);
	/* reset (perfquery -R): 500 since the reset, over 120 */
	assert_int_equal(health_increase(1000, 500), 500);
	assert_int_equal(health_counter_reason(&s.health, &c, &l), 0);
	assert_non_null(strstr(only(&l)->text, "symbol_error +500 within "
					       "3600 s (more than 120)"));
	health_list_free(&l);
	/* stuck at 65535: no increase shows, saturation does */
	c.then = c.now = 65535;
	assert_int_equal(health_counter_reason(&s.health, &c, &l), 0);
	assert_int_equal(only(&l)->kind, HK_COUNTER_SATURATED);
	assert_int_equal(only(&l)->level, HEALTH_DEGRADED);
	health_list_free(&l);
	/* read at the switch port facing the host's port */
	c.then = 0;
	c.now = 121;
	c.sw_guid = "0x0002c90300a1b2c3";
	c.sw_desc = "leaf03";
	c.sw_port = 7;
	assert_int_equal(health_counter_reason(&s.health, &c, &l), 0);
	assert_string_equal(only(&l)->key, "symbol_error/mlx5_0/1/switch/"
					   "0x0002c90300a1b2c3/7");
	assert_non_null(strstr(only(&l)->text, "at switch leaf03 port 7"));
	assert_non_null(strstr(only(&l)->evidence, "\"switch\":\"leaf03\""));
	health_list_free(&l);
	collector_settings_free(&s);
}

static void test_suspect_and_regression(void **state)
{
	struct collector_settings s;
	struct health_list l = {0};
	struct health_suspect sp = {.kind = "port",
				    .device = "mlx5_0",
				    .port = 1,
				    .profile = "bw",
				    .metric = "bandwidth",
				    .baseline = 4.7e10,
				    .figure = 3.0e10,
				    .bad_results = 3,
				    .judged_results = 5,
				    .peers_bad = 3};
	struct health_regression rg = {.id = 12,
				       .local_device = "mlx5_0",
				       .local_port = 1,
				       .peer_host = "node07",
				       .peer_device = "mlx5_0",
				       .peer_port = 1,
				       .profile = "bw",
				       .metric = "bandwidth",
				       .baseline = 4.7e10,
				       .figure = 3.0e10};

	(void)state;
	defaults(&s);
	assert_int_equal(health_suspect_reason(&s.health, &sp, &l), 0);
	assert_int_equal(only(&l)->level, HEALTH_FAILED);
	assert_string_equal(only(&l)->text,
			    "mlx5_0/1 suspect for bw bandwidth: 30.0 GB/s "
			    "against a baseline of 47.0 GB/s (3 bad of 5 "
			    "results, 3 peers)");
	health_list_free(&l);
	sp.metric = "latency";
	sp.kind = "device";
	assert_int_equal(health_suspect_reason(&s.health, &sp, &l), 0);
	assert_int_equal(only(&l)->kind, HK_SUSPECT_LATENCY);
	assert_int_equal(only(&l)->level, HEALTH_DEGRADED);
	assert_int_equal(only(&l)->port, -1);
	health_list_free(&l);
	assert_int_equal(health_regression_reason(&s.health, &rg, &l), 0);
	assert_int_equal(only(&l)->level, HEALTH_DEGRADED);
	assert_string_equal(only(&l)->key, "regression/12");
	assert_non_null(strstr(only(&l)->text, "<-> node07 mlx5_0/1"));
	health_list_free(&l);
	collector_settings_free(&s);
}

static void add_reason(struct health_list *l, const char *key, int level)
{
	struct health_reason *r = health_list_add(l);

	assert_non_null(r);
	snprintf(r->key, sizeof(r->key), "%s", key);
	r->level = level;
	r->evidence = strdup("{}");
}

/* A reason enters at once and holds the verdict for quiet seconds. */
static void test_sticky(void **state)
{
	struct health_list cur = {0}, old = {0};
	double quiet = 600;

	(void)state;
	add_reason(&cur, "port_down/mlx5_0/1", HEALTH_FAILED);
	assert_int_equal(health_merge(&cur, &old, 1000, quiet), HEALTH_FAILED);
	assert_true(cur.v[0].active && cur.v[0].dirty);
	assert_true(cur.v[0].first_seen == 1000);
	/* seen again: first_seen kept */
	old = cur;
	memset(&cur, 0, sizeof(cur));
	add_reason(&cur, "port_down/mlx5_0/1", HEALTH_FAILED);
	assert_int_equal(health_merge(&cur, &old, 1030, quiet), HEALTH_FAILED);
	assert_true(cur.v[0].first_seen == 1000 && cur.v[0].last_seen == 1030);
	health_list_free(&old);
	/* gone: still failed, inactive, until quiet after 1030 */
	old = cur;
	memset(&cur, 0, sizeof(cur));
	assert_int_equal(health_merge(&cur, &old, 1060, quiet), HEALTH_FAILED);
	assert_int_equal(cur.n, 1);
	assert_false(cur.v[0].active);
	assert_true(cur.v[0].dirty); /* it was active: the row changes */
	health_list_free(&old);
	old = cur;
	memset(&cur, 0, sizeof(cur));
	assert_int_equal(health_merge(&cur, &old, 1629, quiet), HEALTH_FAILED);
	assert_false(cur.v[0].dirty); /* inactive before: nothing to write */
	health_list_free(&old);
	old = cur;
	memset(&cur, 0, sizeof(cur));
	assert_int_equal(health_merge(&cur, &old, 1630, quiet), HEALTH_HEALTHY);
	assert_int_equal(cur.n, 0);
	health_list_free(&old);
	/* a degraded reason during a failed one's quiet window: the failed
	 * one holds until its window ends, then degraded remains */
	add_reason(&old, "port_down/mlx5_0/1", HEALTH_FAILED);
	old.v[0].last_seen = 1000;
	add_reason(&cur, "symbol_error/mlx5_0/1", HEALTH_DEGRADED);
	assert_int_equal(health_merge(&cur, &old, 1100, quiet), HEALTH_FAILED);
	health_list_free(&old);
	health_list_free(&cur);
	add_reason(&old, "port_down/mlx5_0/1", HEALTH_FAILED);
	old.v[0].last_seen = 1000;
	add_reason(&cur, "symbol_error/mlx5_0/1", HEALTH_DEGRADED);
	assert_int_equal(health_merge(&cur, &old, 1600, quiet),
			 HEALTH_DEGRADED);
	health_list_free(&old);
	health_list_free(&cur);
	/* quiet 0: gone at once */
	add_reason(&old, "port_down/mlx5_0/1", HEALTH_FAILED);
	old.v[0].last_seen = 1000;
	assert_int_equal(health_merge(&cur, &old, 1000.5, 0), HEALTH_HEALTHY);
	health_list_free(&old);
	health_list_free(&cur);
}

/* ---- through the store, on a real SQLite file ---- */

struct fixture {
	char dir[64];
	char db[128];
	struct collector_settings s;
	struct store_opts opts;
	struct store *st;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/ibpulse-health-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	defaults(&f->s);
	f->opts = (struct store_opts){
		.path = f->db,
		.schema_dir = SCHEMA_DIR,
		.busy_timeout_ms = 1000,
		.keyframe_interval = 300,
		.retention = 30 * 86400.0,
		.prune_batch = 5000,
		.wal_max_bytes = 1 << 20,
		.health = &f->s.health,
	};
	assert_int_equal(store_open(&f->opts, &f->st), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[160];

	store_close(f->st);
	collector_settings_free(&f->s);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* A report of host @host: mlx5_0 port 1 in @state with @link_downed,
 * node GUID b859:9f03:00d4:0a1c; port 2 (never up) DOWN. */
static void put(struct fixture *f, const char *host, int state,
		unsigned link_downed, double now)
{
	char json[2048], err[256];
	struct report *r = NULL;

	snprintf(json, sizeof(json),
		 "{\"version\": 1, \"host\": \"%s\", \"timestamp\": %.3f, "
		 "\"devices\": [{\"name\": \"mlx5_0\", \"node_guid\": "
		 "\"b859:9f03:00d4:0a1c\", \"ports\": [{\"port\": 1, "
		 "\"state\": %d, \"phys_state\": %d, "
		 "\"rate_bytes_per_second\": 12500000000, \"counters\": "
		 "{\"ib\": {\"link_downed\": %u, \"symbol_error\": 0}}}, "
		 "{\"port\": 2, \"state\": 1, \"phys_state\": 3}]}]}",
		 host, now, state, state == 4 ? 5 : 3, link_downed);
	assert_int_equal(
		report_decode(json, strlen(json), &r, err, sizeof(err)), 0);
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_put_report(f->st, r, now, NULL), 0);
	assert_int_equal(store_commit(f->st), 0);
	report_free(r);
}

static void sql(struct fixture *f, const char *text)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, text, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* GET's answer at @now: its verdict in @verdict; the JSON, freed. */
static char *answer(struct fixture *f, const char *host, double now)
{
	char *out = NULL;

	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_health_json(f->st, host, now, &out), 0);
	assert_int_equal(store_commit(f->st), 0);
	return out;
}

static void assert_verdict(struct fixture *f, const char *host, double now,
			   const char *verdict)
{
	char *a = answer(f, host, now), want[64];

	snprintf(want, sizeof(want), "\"verdict\":\"%s\"", verdict);
	if (!strstr(a, want))
		fail_msg("want %s, got %s", verdict, a);
	free(a);
}

static void test_store_port_down_sticky(void **state)
{
	struct fixture *f = *state;
	double t = 1.8e9;
	char *out = NULL;

	put(f, "node1", 4, 0, t);
	assert_verdict(f, "node1", t, "healthy"); /* port 2: never up */
	put(f, "node1", 1, 0, t + 30);
	assert_verdict(f, "node1", t + 30, "failed");
	put(f, "node1", 4, 0, t + 60); /* back: sticky */
	out = answer(f, "node1", t + 60);
	assert_non_null(strstr(out, "\"verdict\":\"failed\""));
	assert_non_null(strstr(out, "\"active\":false"));
	assert_non_null(strstr(out, "port down: DOWN"));
	free(out);
	put(f, "node1", 4, 0, t + 30 + 599);
	assert_verdict(f, "node1", t + 30 + 599, "failed");
	put(f, "node1", 4, 0, t + 30 + 601);
	assert_verdict(f, "node1", t + 30 + 601, "healthy");
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_health_json(f->st, "nobody", t, &out), -ENOENT);
	store_rollback(f->st);
}

/* link_downed counted over its window from the history. */
static void test_store_counters_window(void **state)
{
	struct fixture *f = *state;
	double t = 1.8e9;

	put(f, "node1", 4, 7, t); /* first seen at 7: no increase */
	assert_verdict(f, "node1", t, "healthy");
	put(f, "node1", 4, 8, t + 30);
	assert_verdict(f, "node1", t + 30, "failed");
	/* 900 s window and 600 s quiet after it */
	put(f, "node1", 4, 8, t + 30 + 899);
	assert_verdict(f, "node1", t + 30 + 899, "failed");
	put(f, "node1", 4, 8, t + 30 + 901 + 601);
	assert_verdict(f, "node1", t + 30 + 901 + 601, "healthy");
}

/* An open suspect (schema 005) fails the host; closed, it does not. */
static void test_store_suspect(void **state)
{
	struct fixture *f = *state;
	double t = 1.8e9;
	char *out;

	put(f, "node1", 4, 0, t);
	sql(f, "INSERT INTO suspect (kind, host, device, port, profile, "
	       "metric, since, first_bad, opened, judged_results, bad_results, "
	       "good_results, peers_bad, peers_exonerating, baseline, figure, "
	       "worst, last, updated) VALUES ('port', 'node1', 'mlx5_0', 1, "
	       "'bw', 'bandwidth', 1, 1, 1, 5, 3, 0, 3, 3, 4.7e10, 3e10, "
	       "2.9e10, 3.1e10, 1)");
	out = answer(f, "node1", t + 10);
	assert_non_null(strstr(out, "\"verdict\":\"failed\""));
	assert_non_null(strstr(out, "\"kind\":\"suspect\""));
	assert_non_null(strstr(out, "30.0 GB/s against a baseline of 47.0"));
	free(out);
	sql(f, "UPDATE suspect SET closed = 2, close_reason = 'recovered'");
	assert_verdict(f, "node1", t + 10 + 601, "healthy");
}

/* A switch sweep whose port facing node1's mlx5_0/1 counts symbol
 * errors: node1 is degraded, the reason names the switch port. */
static void test_store_switch_port(void **state)
{
	struct fixture *f = *state;
	double t = 1.8e9;
	char *out;

	put(f, "node1", 4, 0, t);
	sql(f, "INSERT INTO fabric_node VALUES ('0x0002c90300000001', 2, "
	       "'leaf03', 1, 36, 'poller', 1.8e9);"
	       "INSERT INTO fabric_port (id, node_guid, port, state, "
	       "phys_state, remote_guid, remote_port, changed) VALUES (1, "
	       "'0x0002c90300000001', 7, 4, 5, '0xb8599f0300d40a1c', 1, "
	       "1.8e9);"
	       "INSERT INTO fabric_series VALUES (1, 1, 'symbol_error', 500, "
	       "1800000020);"
	       "INSERT INTO fabric_sample VALUES (1, 1.8e9, 0), (1, "
	       "1800000020, 500)");
	out = answer(f, "node1", t + 30);
	assert_non_null(strstr(out, "\"verdict\":\"degraded\""));
	assert_non_null(strstr(out, "mlx5_0/1 symbol_error +500 within 3600 "
				    "s at switch leaf03 port 7"));
	free(out);
	/* degraded at the switch end too */
	sql(f, "UPDATE fabric_port SET degraded = 'width 1X of 4X enabled'");
	out = answer(f, "node1", t + 40);
	assert_non_null(strstr(out, "link degraded at switch leaf03 port 7"));
	free(out);
}

/* A device gone from the reports: its ACTIVE port is down. */
static void test_store_missing_and_retire(void **state)
{
	struct fixture *f = *state;
	double t = 1.8e9;
	const char *j = "{\"version\": 1, \"host\": \"node1\", "
			"\"timestamp\": 1, \"devices\": [{\"name\": "
			"\"mlx5_1\"}]}";
	char err[256], *out;
	struct report *r = NULL;

	put(f, "node1", 4, 0, t);
	/* a report of another device only */
	assert_int_equal(report_decode(j, strlen(j), &r, err, sizeof(err)), 0);
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_put_report(f->st, r, t + 30, NULL), 0);
	assert_int_equal(store_commit(f->st), 0);
	report_free(r);
	out = answer(f, "node1", t + 30);
	assert_non_null(strstr(out, "\"verdict\":\"failed\""));
	assert_non_null(strstr(out, "mlx5_0/1 is gone from the host's "
				    "reports"));
	free(out);
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_retire(f->st, "node1"), 0);
	assert_int_equal(store_commit(f->st), 0);
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_health_json(f->st, "node1", t + 40, &out),
			 -ENOENT);
	store_rollback(f->st);
}

/* Judging fails (its table is gone): the report is stored all the same. */
static void test_store_failure_keeps_report(void **state)
{
	struct fixture *f = *state;
	double t = 1.8e9;
	sqlite3 *db;
	sqlite3_stmt *s;
	char *out = NULL;

	sql(f, "DROP TABLE health_reason");
	put(f, "node1", 1, 5, t); /* asserts the commit */
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db,
					    "SELECT value FROM series WHERE "
					    "name = 'link_downed'",
					    -1, &s, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(s, 0), 5);
	sqlite3_finalize(s);
	sqlite3_close(db);
	/* a GET's failure is its own: the transaction goes on */
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_health_json(f->st, "node1", t + 1, &out),
			 -ECANCELED);
	assert_null(out);
	assert_int_equal(store_commit(f->st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_checks),
		cmocka_unit_test(test_port_down),
		cmocka_unit_test(test_link_degraded),
		cmocka_unit_test(test_pcie_and_aer),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_counter_reset_saturation_switch),
		cmocka_unit_test(test_suspect_and_regression),
		cmocka_unit_test(test_sticky),
		cmocka_unit_test_setup_teardown(test_store_port_down_sticky,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_counters_window,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_suspect, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_store_switch_port, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_store_missing_and_retire,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_failure_keeps_report,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
