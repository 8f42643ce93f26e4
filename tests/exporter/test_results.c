// SPDX-License-Identifier: MIT
/*
 * Unit tests for the fabric test families (exporter/results.c,
 * results_render.c) through a whole scrape of a real SQLite database made
 * from the schema files: worst and median per port and per group pair against
 * hand-computed figures, busy results kept out of the aggregates but
 * counted, outcome counts (verbs errors by wc_status), the per-pair cap
 * (the newest pairs), overdue ports (a dead probe's at once, a new
 * probe's not yet, a paused one's never), overdue group pairs, sharding,
 * and a database without the tests schema.
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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "dbsettings.h"
#include "results.h"
#include "scrape.h"
#include "exporter_settings.h"

struct fixture {
	char dir[64];
	char db[128];
	double now;
	struct exporter_settings cfg;
	struct scrape_stats stats;
};

static void exec_sql(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
}

/* @sql on @f's database, on a connection of its own. */
static void db_exec(const struct fixture *f, const char *sql)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	exec_sql(db, sql);
	sqlite3_close(db);
}

static void apply_file(sqlite3 *db, const char *name, int version)
{
	char path[512], *text = malloc(1 << 20), pragma[64];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", SCHEMA_DIR, name);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(text, 1, (1 << 20) - 1, f);
	text[n] = '\0';
	fclose(f);
	exec_sql(db, text);
	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", version);
	exec_sql(db, pragma);
	free(text);
}

/*
 * Probes h1, h2 (group A), h3 (B), h4 (C, silent: its counter reports
 * stopped), h5 (B, paused), h6 (no group, registered a minute ago). Each
 * has mlx5_0 port 1 ACTIVE; h1 also port 2, DOWN.
 */
static void fill_probes(sqlite3 *db, double now)
{
	static const struct {
		const char *name, *group;
		double age, registered_age;
	} p[] = {
		{"h1", "A", 1, 7200}, {"h2", "A", 1, 7200},
		{"h3", "B", 1, 7200}, {"h4", "C", 1000, 7200},
		{"h5", "B", 1, 7200}, {"h6", NULL, 1, 60},
	};
	char sql[1024];

	for (int i = 0; i < 6; i++) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO host (id, name, first_seen, last_report)"
			 " VALUES (%d, '%s', 0, %f);"
			 "INSERT INTO probe VALUES (%d, '%s', '10.0.0.%d',"
			 " 18515, '{}', '[\"bw\",\"lat\"]', %f, %f);"
			 "INSERT INTO probe_port (probe_id, device, port,"
			 " state, pkeys) VALUES (%d, 'mlx5_0', 1, 4, '[]');",
			 i + 1, p[i].name, now - p[i].age, i + 1, p[i].name,
			 i + 1, now - p[i].registered_age, now - 10, i + 1);
		exec_sql(db, sql);
		if (p[i].group) {
			snprintf(sql, sizeof(sql),
				 "INSERT INTO probe_label VALUES (%d, 'leaf',"
				 " '%s'), (%d, 'rack', 'r%d')",
				 i + 1, p[i].group, i + 1, i);
			exec_sql(db, sql);
		}
	}
	exec_sql(db, "INSERT INTO probe_port (probe_id, device, port, state,"
		     " pkeys) VALUES (1, 'mlx5_0', 2, 1, '[]');"
		     "INSERT INTO host_pause VALUES ('h5', 1, 0, 1);"
		     "INSERT INTO probe_dropped VALUES ('h1', 3, 1, 0);");
}

static void add_result(sqlite3 *db, double now, int n, const char *a,
		       const char *b, const char *profile, double age,
		       const char *outcome, const char *wc, int busy,
		       const char *figs)
{
	char sql[1024];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO result (result_id, host, profile, test, started,"
		 " local_device, local_port, peer_host, peer_device, peer_port,"
		 " outcome, wc_status, busy, received, bw_avg_bytes_per_second,"
		 " bw_peak_bytes_per_second, bw_min_bytes_per_second,"
		 " lat_median_seconds, lat_p99_seconds)"
		 " VALUES ('r%d', '%s', '%s', 'x', %f, 'mlx5_0', 1, '%s',"
		 " 'mlx5_0', 1, '%s', %s%s%s, %d, %f, %s)",
		 n, a, profile, now - age, b, outcome, wc ? "'" : "",
		 wc ? wc : "NULL", wc ? "'" : "", busy, now, figs);
	exec_sql(db, sql);
}

#define NO_FIGS "NULL, NULL, NULL, NULL, NULL"

static void fill_results(sqlite3 *db, double now)
{
	/* bandwidth avg, peak, min; latency median, p99 */
	add_result(db, now, 1, "h1", "h2", "bw", 900, "ok", NULL, 0,
		   "100, 120, 80, NULL, NULL");
	add_result(db, now, 2, "h1", "h3", "bw", 800, "ok", NULL, 0,
		   "50, 60, 40, NULL, NULL");
	add_result(db, now, 3, "h2", "h3", "bw", 700, "ok", NULL, 1,
		   "7, 8, 6, NULL, NULL");
	add_result(db, now, 4, "h3", "h1", "bw", 600, "ok", NULL, 0,
		   "90, 95, 85, NULL, NULL");
	add_result(db, now, 5, "h1", "h4", "bw", 500, "control_error", NULL, 0,
		   NO_FIGS);
	add_result(db, now, 6, "h2", "h4", "bw", 400, "verbs_error",
		   "IBV_WC_RETRY_EXC_ERR", 0, NO_FIGS);
	/* before the period: ignored everywhere */
	add_result(db, now, 7, "h1", "h2", "bw", 7000, "ok", NULL, 0,
		   "1, 1, 1, NULL, NULL");
	add_result(db, now, 8, "h1", "h2", "lat", 300, "ok", NULL, 0,
		   "NULL, NULL, NULL, 1e-6, 2e-6");
	add_result(db, now, 9, "h2", "h1", "lat", 200, "ok", NULL, 0,
		   "NULL, NULL, NULL, 1.5e-6, 4e-6");
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	sqlite3 *db;

	snprintf(f->dir, sizeof(f->dir), "/tmp/ibpulse-results-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	exec_sql(db, "PRAGMA journal_mode=WAL");
	apply_file(db, "001_init.sql", 1);
	apply_file(db, "002_tests.sql", 2);
	/* the setting table alone (the version stays 2: no other table) */
	apply_file(db, "010_settings.sql", 2);
	f->now = (double)time(NULL);
	fill_probes(db, f->now);
	fill_results(db, f->now);
	sqlite3_close(db);
	assert_int_equal(exporter_settings_init(&f->cfg), 0);
	free(f->cfg.db);
	f->cfg.db = strdup(f->db);
	f->cfg.chunk_rows = 2; /* many small read transactions */
	scrape_stats_init(&f->stats);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char path[160];

	for (const char *const *s =
		     (const char *const[]){"", "-wal", "-shm", NULL};
	     *s; s++) {
		snprintf(path, sizeof(path), "%s%s", f->db, *s);
		unlink(path);
	}
	rmdir(f->dir);
	exporter_settings_free(&f->cfg);
	scrape_stats_destroy(&f->stats);
	free(f);
	return 0;
}

static char *scrape(struct fixture *f, unsigned shard, unsigned shards)
{
	struct scrape_req rq = {.shard = shard,
				.shards = shards,
				.format = EXPO_TEXT,
				.now = f->now};
	char err[256];
	struct buf out;

	buf_init(&out, 0);
	assert_int_equal(
		scrape_build(&f->cfg, &f->stats, &rq, &out, err, sizeof(err)),
		0);
	return buf_steal(&out, NULL);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* The body has the line @want (a whole line). */
static void has(const char *body, const char *want)
{
	char line[512];

	snprintf(line, sizeof(line), "\n%s\n", want);
	if (!strstr(body, line))
		fail_msg("missing line: %s", want);
}

#define PORT(h, p) "{host=\"" h "\",device=\"mlx5_0\",port=\"" #p "\""
#define BW "ibpulse_test_port_bandwidth_bytes_per_second"
#define LAT "ibpulse_test_port_latency_seconds"
#define GBW "ibpulse_test_group_pair_bandwidth_bytes_per_second"

static void test_port_aggregates(void **state)
{
	char *s = scrape(*state, 0, 1);

	/* h1: 100, 50, 90 (the busy 7 and the old 1 are left out) */
	has(s, BW PORT("h1", 1) ",profile=\"bw\",stat=\"avg\","
				"aggregate=\"worst\"} 50");
	has(s, BW PORT("h1", 1) ",profile=\"bw\",stat=\"avg\","
				"aggregate=\"median\"} 90");
	has(s, BW PORT("h1", 1) ",profile=\"bw\",stat=\"min\","
				"aggregate=\"worst\"} 40");
	has(s, BW PORT("h1", 1) ",profile=\"bw\",stat=\"min\","
				"aggregate=\"median\"} 80");
	/* h3: 50, 90 as responder and initiator; even count: the mean */
	has(s, BW PORT("h3", 1) ",profile=\"bw\",stat=\"avg\","
				"aggregate=\"median\"} 70");
	has(s, BW PORT("h2", 1) ",profile=\"bw\",stat=\"avg\","
				"aggregate=\"worst\"} 100");
	/* latency: the largest is worst */
	has(s, LAT PORT("h1", 1) ",profile=\"lat\",stat=\"p99\","
				 "aggregate=\"worst\"} 4e-06");
	has(s, LAT PORT("h1", 1) ",profile=\"lat\",stat=\"p99\","
				 "aggregate=\"median\"} 3e-06");
	has(s, LAT PORT("h2", 1) ",profile=\"lat\",stat=\"median\","
				 "aggregate=\"worst\"} 1.5e-06");
	/* peak is served per pair, not aggregated; no figures: no series */
	assert_null(strstr(s, BW "{host=\"h1\",device=\"mlx5_0\",port=\"1\","
				 "profile=\"bw\",stat=\"peak\""));
	assert_null(strstr(s, BW PORT("h4", 1)));
	assert_null(strstr(s, "quantile="));
	free(s);
}

static void test_group_aggregates(void **state)
{
	char *s = scrape(*state, 0, 1);

	has(s, GBW "{group_a=\"A\",group_b=\"A\",profile=\"bw\",stat=\"avg\","
		   "aggregate=\"worst\"} 100");
	has(s, GBW "{group_a=\"A\",group_b=\"B\",profile=\"bw\",stat=\"avg\","
		   "aggregate=\"worst\"} 50");
	has(s, GBW "{group_a=\"A\",group_b=\"B\",profile=\"bw\",stat=\"avg\","
		   "aggregate=\"median\"} 70");
	/* A, B, C planned (h5 paused, h6 unlabelled): A-B measured */
	has(s, "ibpulse_test_planned_group_pairs 3");
	has(s, "ibpulse_test_overdue_group_pairs 2");
	/* headline figures only per group pair */
	assert_null(strstr(s, GBW "{group_a=\"A\",group_b=\"B\",profile=\"bw\","
				  "stat=\"min\""));
	has(s, "ibpulse_test_group_pair_latency_seconds{group_a=\"A\","
	       "group_b=\"A\",profile=\"lat\",stat=\"p99\",aggregate="
	       "\"worst\"} 4e-06");
	assert_null(strstr(s, "ibpulse_test_group_pair_message_rate"));
	/* each probe's group, to aggregate per-link series by group; h6
	 * has none */
	has(s, "ibpulse_test_host_group_info{host=\"h1\",group=\"A\"} 1");
	has(s, "ibpulse_test_host_group_info{host=\"h5\",group=\"B\"} 1");
	assert_int_equal(count(s, "\nibpulse_test_host_group_info{"), 5);
	assert_null(strstr(s, "ibpulse_test_host_group_info{host=\"h6\""));
	free(s);
}

static void test_outcomes_and_busy(void **state)
{
	char *s = scrape(*state, 0, 1);

	has(s, "ibpulse_test_port_results" PORT("h1", 1) ",profile=\"bw\","
							 "outcome=\"ok\"} 3");
	has(s, "ibpulse_test_port_results" PORT(
		       "h1", 1) ",profile=\"bw\","
				"outcome=\"control_error\"} 1");
	has(s, "ibpulse_test_port_results" PORT(
		       "h4", 1) ",profile=\"bw\","
				"outcome=\"verbs_error\",wc_status=\"IBV_WC_"
				"RETRY_EXC_ERR\"} 1");
	has(s, "ibpulse_test_port_results" PORT("h2", 1) ",profile=\"bw\","
							 "outcome=\"ok\"} 2");
	has(s, "ibpulse_test_port_busy_results" PORT("h3", 1) ",profile="
							      "\"bw\"} 1");
	has(s, "ibpulse_test_pair_busy" PORT("h2",
					     1) ",peer_host=\"h3\","
						"peer_device=\"mlx5_0\",peer_"
						"port=\"1\",profile=\"bw\"} 1");
	has(s, "ibpulse_test_pair_bandwidth_bytes_per_second" PORT(
		       "h2", 1) ",peer_host=\"h3\",peer_device=\"mlx5_0\",peer_"
				"port=\"1\","
				"profile=\"bw\",stat=\"peak\"} 8");
	has(s, "ibpulse_test_pair_success" PORT(
		       "h1", 1) ",peer_host=\"h4\","
				"peer_device=\"mlx5_0\",peer_port=\"1\","
				"profile=\"bw\"} 0");
	has(s, "ibpulse_test_host_paused{host=\"h5\"} 1");
	has(s, "ibpulse_test_host_paused{host=\"h1\"} 0");
	has(s, "ibpulse_probe_results_dropped_total{host=\"h1\","
	       "reason=\"spool_full\"} 3");
	free(s);
}

/*
 * Counters of the whole table (the old result too), counted once at the
 * first scrape and then only the new rows: a result added later counts
 * once, however many scrapes follow.
 */
static void test_totals(void **state)
{
	struct fixture *f = *state;
	char *s = scrape(f, 0, 1);
	sqlite3 *db;

	has(s, "ibpulse_test_results_total{host=\"h1\",profile=\"bw\","
	       "outcome=\"ok\"} 3");
	has(s, "ibpulse_test_results_total{host=\"h2\",profile=\"bw\","
	       "outcome=\"verbs_error\",wc_status=\"IBV_WC_RETRY_EXC_ERR\"} 1");
	has(s, "ibpulse_test_results_total{host=\"h1\",profile=\"bw\","
	       "outcome=\"control_error\"} 1");
	free(s);
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	add_result(db, f->now, 10, "h1", "h3", "bw", 100, "timeout", NULL, 0,
		   NO_FIGS);
	sqlite3_close(db);
	for (int i = 0; i < 2; i++) {
		s = scrape(f, 0, 1);
		has(s, "ibpulse_test_results_total{host=\"h1\",profile="
		       "\"bw\",outcome=\"timeout\"} 1");
		has(s, "ibpulse_test_results_total{host=\"h1\",profile="
		       "\"bw\",outcome=\"ok\"} 3");
		free(s);
	}
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	exec_sql(db, "DELETE FROM result WHERE result_id = 'r10'");
	sqlite3_close(db);
}

static void test_overdue(void **state)
{
	char *s = scrape(*state, 0, 1);

	/* h4's probe is silent: overdue at once */
	has(s, "ibpulse_test_port_overdue" PORT("h4", 1) "} 1");
	has(s, "ibpulse_test_port_overdue" PORT("h1", 1) "} 0");
	/* registered a minute ago: not overdue yet */
	has(s, "ibpulse_test_port_overdue" PORT("h6", 1) "} 0");
	/* paused, or DOWN: not planned */
	assert_null(strstr(s, "ibpulse_test_port_overdue" PORT("h5", 1)));
	assert_null(strstr(s, "ibpulse_test_port_overdue" PORT("h1", 2)));
	has(s, "ibpulse_test_planned_ports 5");
	has(s, "ibpulse_test_overdue_ports 1");
	free(s);
}

/* h2's probe gets no ok result in a shorter period: overdue. */
static void test_overdue_period(void **state)
{
	struct fixture *f = *state;
	char *s;

	f->cfg.test_period = 250; /* only result 9 (h2 -> h1, lat) */
	s = scrape(f, 0, 1);
	has(s, "ibpulse_test_port_overdue" PORT("h2", 1) "} 0");
	has(s, "ibpulse_test_port_overdue" PORT("h3", 1) "} 1");
	has(s, "ibpulse_test_overdue_ports 2");
	assert_int_equal(count(s, "ibpulse_test_pair_success{"), 1);
	free(s);
	/* a collector whose period is longer: its period is the window */
	db_exec(f,
		"INSERT INTO setting VALUES ('" DBSET_PLAN_PERIOD "', '3600')");
	s = scrape(f, 0, 1);
	has(s, "ibpulse_test_overdue_ports 1");
	assert_int_equal(count(s, "ibpulse_test_pair_success{"), 8);
	db_exec(f, "DELETE FROM setting");
	f->cfg.test_period = 3600;
	free(s);
}

static void test_pair_cap(void **state)
{
	struct fixture *f = *state;
	char *s = scrape(f, 0, 1);

	/* 8 pairs in the period (the old h1 -> h2 bw is the same pair) */
	assert_int_equal(count(s, "ibpulse_test_pair_success{"), 8);
	free(s);
	f->cfg.max_pair_series = 3; /* the newest three: results 9, 8, 6 */
	s = scrape(f, 0, 1);
	assert_int_equal(count(s, "ibpulse_test_pair_success{"), 3);
	assert_int_equal(count(s, "ibpulse_test_pair_timestamp_seconds{"), 3);
	assert_non_null(strstr(s, "ibpulse_test_pair_success" PORT(
					  "h2", 1) ",peer_host=\"h4\""));
	assert_non_null(strstr(s, "ibpulse_test_pair_latency_seconds" PORT(
					  "h2", 1) ",peer_host=\"h1\""));
	assert_null(strstr(s, "ibpulse_test_pair_success" PORT(
				      "h1", 1) ",peer_host=\"h3\""));
	/* aggregates do not depend on the cap */
	assert_non_null(strstr(s, BW PORT("h3", 1)));
	f->cfg.max_pair_series = 0;
	free(s);
	s = scrape(f, 0, 1);
	assert_int_equal(count(s, "ibpulse_test_pair_"), 0);
	f->cfg.max_pair_series = 10000;
	free(s);
}

/*
 * Only registered probe ports get series: a result from an unregistered
 * local port is left out, one to an unregistered peer counts at its local
 * port only (no pair); a result dated far ahead of now is not read.
 */
static void test_registered_ports_only(void **state)
{
	struct fixture *f = *state;
	sqlite3 *db;
	char *s;

	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	/* h1 -> ghost (no probe), from h1's unregistered mlx5_9 */
	add_result(db, f->now, 100, "h1", "ghost", "bw", 100, "ok", NULL, 0,
		   "1000, 1000, 1000, NULL, NULL");
	exec_sql(db,
		 "INSERT INTO result (result_id, host, profile, test, "
		 "started, local_device, local_port, peer_host, "
		 "peer_device, peer_port, outcome, busy, received) VALUES "
		 "('r101', 'h1', 'bw', 'x', 1, 'mlx5_9', 1, 'h2', 'mlx5_0', "
		 "1, 'ok', 0, 1)");
	exec_sql(db, "UPDATE result SET started = (SELECT max(started) FROM "
		     "result) WHERE result_id = 'r101'");
	/* far ahead: not served, though within every other rule */
	add_result(db, f->now, 102, "h2", "h3", "bw", -1e6, "ok", NULL, 0,
		   "1, 1, 1, NULL, NULL");
	sqlite3_close(db);
	s = scrape(f, 0, 1);
	assert_null(strstr(s, "ghost"));
	assert_null(strstr(s, "mlx5_9"));
	/* the ghost result counts at h1's port: 3 + 1 ok */
	has(s, "ibpulse_test_port_results" PORT("h1", 1) ",profile=\"bw\","
							 "outcome=\"ok\"} 4");
	has(s, BW PORT("h1", 1) ",profile=\"bw\",stat=\"avg\","
				"aggregate=\"median\"} 95");
	/* the future result: h3's port is as before */
	has(s, BW PORT("h3", 1) ",profile=\"bw\",stat=\"avg\","
				"aggregate=\"median\"} 70");
	free(s);
	/* the collector's results_max_ahead, as it writes it (dbsettings.h) */
	db_exec(f, "INSERT INTO setting VALUES ('" DBSET_RESULTS_MAX_AHEAD
		   "', '2e6')");
	s = scrape(f, 0, 1);
	has(s, BW PORT("h3", 1) ",profile=\"bw\",stat=\"avg\","
				"aggregate=\"worst\"} 1");
	db_exec(f, "DELETE FROM setting");
	free(s);
}

/* A family past max_family_series is cut and counted, not the scrape. */
static void test_family_cap(void **state)
{
	struct fixture *f = *state;
	char *s;

	f->cfg.max_family_series = 2;
	s = scrape(f, 0, 1);
	assert_int_equal(count(s, "\nibpulse_test_port_results{"), 2);
	assert_int_equal(count(s, "\nibpulse_test_port_overdue{"), 2);
	assert_non_null(strstr(s, "\nibpulse_exporter_series_dropped_total{"
				  "family=\"ibpulse_test_port_overdue\"} 3\n"));
	free(s);
	s = scrape(f, 0, 1); /* cumulative */
	assert_non_null(strstr(s, "\nibpulse_exporter_series_dropped_total{"
				  "family=\"ibpulse_test_port_overdue\"} 6\n"));
	/* the exporter's own families are not capped */
	assert_true(count(s, "\nibpulse_exporter_series_dropped_total{") > 2);
	f->cfg.max_family_series = 1000000;
	free(s);
}

static int line_value(const char *body, const char *prefix)
{
	const char *p = strstr(body, prefix);

	return p ? (int)strtol(p + strlen(prefix), NULL, 10) : -1;
}

static void test_shards(void **state)
{
	int planned = 0, overdue = 0, paused = 0, group_pairs = 0, groups = 0;

	for (unsigned i = 0; i < 3; i++) {
		char *s = scrape(*state, i, 3);

		planned += line_value(s, "\nibpulse_test_planned_ports ");
		overdue += line_value(s, "\nibpulse_test_overdue_ports ");
		paused += count(s, "\nibpulse_test_host_paused{");
		groups += count(s, "\nibpulse_test_host_group_info{");
		group_pairs += count(s, "\nibpulse_test_planned_group_pairs ");
		/* fabric-wide families in shard 0 only */
		assert_int_equal(count(s, "\n" GBW "{") > 0, i == 0);
		free(s);
	}
	assert_int_equal(planned, 5);
	assert_int_equal(overdue, 1);
	assert_int_equal(paused, 6);
	assert_int_equal(groups, 5); /* by host, each in one shard */
	assert_int_equal(group_pairs, 1);
}

static void test_median(void **state)
{
	double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2}, one[] = {7};

	(void)state;
	assert_true(results_median(odd, 3) == 3);
	assert_true(results_median(even, 4) == 2.5);
	assert_true(results_median(one, 1) == 7);
	assert_true(isnan(results_median(one, 0)));
}

static void test_round(void **state)
{
	(void)state;
	assert_true(results_round(47123456789.123) == 47123456800.0);
	assert_true(results_round(1.23456789123e-6) == 1.23456789e-6);
	assert_true(results_round(-2.5) == -2.5);
	assert_true(results_round(0) == 0);
	assert_true(isnan(results_round(NAN)));
}

/* A database the collector has not upgraded: no test families. */
static void test_schema_v1(void **state)
{
	struct fixture *f = *state;
	char path[160], *good = f->cfg.db, *s;
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/v1.db", f->dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	apply_file(db, "001_init.sql", 1);
	sqlite3_close(db);
	f->cfg.db = path;
	s = scrape(f, 0, 1);
	assert_null(strstr(s, "ibpulse_test_"));
	assert_non_null(strstr(s, "ibpulse_exporter_series "));
	f->cfg.db = good;
	free(s);
	unlink(path);
}

/* A table whose ids went backwards (a new database): counts start over. */
static void test_totals_reset(void **state)
{
	struct fixture *f = *state;
	sqlite3 *db;
	char *s = scrape(f, 0, 1);

	free(s);
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	exec_sql(db, "DELETE FROM result");
	add_result(db, f->now, 1, "h1", "h2", "bw", 100, "timeout", NULL, 0,
		   NO_FIGS);
	sqlite3_close(db);
	s = scrape(f, 0, 1);
	has(s, "ibpulse_test_results_total{host=\"h1\",profile=\"bw\","
	       "outcome=\"timeout\"} 1");
	has(s, "ibpulse_test_results_total{host=\"h1\",profile=\"bw\","
	       "outcome=\"ok\"} 0");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_port_aggregates),
		cmocka_unit_test(test_group_aggregates),
		cmocka_unit_test(test_outcomes_and_busy),
		cmocka_unit_test(test_totals),
		cmocka_unit_test(test_overdue),
		cmocka_unit_test(test_overdue_period),
		cmocka_unit_test(test_pair_cap),
		cmocka_unit_test(test_shards),
		cmocka_unit_test_setup_teardown(test_registered_ports_only,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_family_cap, setup,
						teardown),
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_round),
		cmocka_unit_test(test_schema_v1),
		cmocka_unit_test(
			test_totals_reset), /* last: empties the table */
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
