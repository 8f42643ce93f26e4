// SPDX-License-Identifier: MIT
/*
 * Unit tests for the baseline and regression families (exporter/regress.c)
 * through a whole scrape of a real SQLite database made from the schema
 * files: each link family's value, a regressed link served long after its
 * last test, a stale healthy one not served, links never judged without a
 * regression series, port baselines and suspects (1 for the suspect, 0
 * for the other ends), suspects by kind with their ratio, group pairs and
 * the counter on shard 0 only, the
 * cap keeping regressed links first, shards partitioning the links, and a
 * database older than the schema serving none of it.
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

#include "scrape.h"
#include "exporter_settings.h"
#include "shard.h"

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

/* One link_state row; NAN numbers are NULL. */
static void link_row(sqlite3 *db, const char *a, const char *b,
		     const char *metric, double baseline, double threshold,
		     double last, double age, int reg, double expected,
		     double eff, int under, int judged, double now)
{
	char sql[1024], v[5][32];
	const double x[5] = {baseline, threshold, last, expected, eff};

	for (int i = 0; i < 5; i++)
		if (isnan(x[i]))
			snprintf(v[i], sizeof(v[i]), "NULL");
		else
			snprintf(v[i], sizeof(v[i]), "%.17g", x[i]);
	snprintf(sql, sizeof(sql),
		 "INSERT INTO link_state (a_host, a_device, a_port, b_host, "
		 "b_device, b_port, profile, metric, baseline, threshold, "
		 "last_value, last_started, regression_id, expected, "
		 "efficiency, under_since, judged, updated) VALUES ('%s', "
		 "'mlx5_0', 1, '%s', 'mlx5_0', 1, '%s', '%s', %s, %s, %s, "
		 "%.17g, %s, %s, %s, %s, %d, %.17g)",
		 a, b, !strcmp(metric, "latency") ? "lat" : "bw", metric, v[0],
		 v[1], v[2], now - age, reg ? "1" : "NULL", v[3], v[4],
		 under ? "1" : "NULL", judged, now);
	exec_sql(db, sql);
}

static void fill(sqlite3 *db, double now)
{
	/* h1 -> h2: regressed and under its expected figure */
	link_row(db, "h1", "h2", "bandwidth", 4.7e10, 3.76e10, 3e10, 60, 1,
		 4.9e10, 3e10 / 4.9e10, 1, 10, now);
	/* h1 -> h3: fine, no expected figure (a Soft-RoCE peer) */
	link_row(db, "h1", "h3", "bandwidth", 4.7e10, 3.76e10, 4.6e10, 120, 0,
		 NAN, NAN, 0, 5, now);
	/* h2 -> h1 latency: fine */
	link_row(db, "h2", "h1", "latency", 2e-6, 3e-6, 2.1e-6, 30, 0, NAN, NAN,
		 0, 7, now);
	/* h3 -> h2: new, no baseline yet */
	link_row(db, "h3", "h2", "bandwidth", NAN, NAN, 4e10, 30, 0, 4.9e10,
		 4e10 / 4.9e10, 0, 0, now);
	/* h4 -> h1: healthy but last tested 5 days ago: not served */
	link_row(db, "h4", "h1", "bandwidth", 4.7e10, 3.76e10, 4.7e10,
		 5 * 86400, 0, NAN, NAN, 0, 9, now);
	/* h4 -> h2: in regression, last tested 5 days ago: served */
	link_row(db, "h4", "h2", "bandwidth", 4.7e10, 3.76e10, 1e10, 5 * 86400,
		 1, NAN, NAN, 0, 9, now);
	exec_sql(db,
		 "INSERT INTO port_baseline VALUES ('h1', 'mlx5_0', 1, 'bw', "
		 "'bandwidth', 4.7e10, 1e8, 20, 0), ('h1', 'mlx5_0', 1, 'lat', "
		 "'latency', 2e-6, 1e-8, 20, 0), ('h2', 'mlx5_0', 1, 'bw', "
		 "'bandwidth', NULL, NULL, 2, 0);"
		 "INSERT INTO suspect (kind, host, device, port, profile, "
		 "metric, since, first_bad, opened, judged_results, "
		 "bad_results, good_results, peers_bad, peers_exonerating, "
		 "baseline, figure, worst, last, updated) VALUES ('port', "
		 "'h1', 'mlx5_0', 1, 'bw', 'bandwidth', 0, 0, 0, 6, 3, 3, 3, "
		 "3, 4.8e10, 4.32e10, 4.3e10, 4.3e10, 0), ('device', 'h3', "
		 "'mlx5_0', 0, 'bw', 'bandwidth', 0, 0, 0, 6, 4, 2, 4, 3, "
		 "4.8e10, 2.4e10, 2.3e10, 2.4e10, 0), ('port', 'h4', 'mlx5_0', "
		 "1, 'bw', 'bandwidth', 0, 0, 0, 6, 3, 3, 3, 3, 4.8e10, "
		 "4.3e10, 4.3e10, 4.3e10, 0);"
		 "UPDATE suspect SET closed = 1 WHERE host = 'h4';"
		 "INSERT INTO group_pair_suspect VALUES ('A', 'B', 'bw', "
		 "'bandwidth', 0, 4, 4);"
		 "INSERT INTO regression_count VALUES ('bw', 'bandwidth', 3);");
}

static void make_db(struct fixture *f, int with_003)
{
	sqlite3 *db;

	unlink(f->db);
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	exec_sql(db, "PRAGMA journal_mode=WAL");
	apply_file(db, "001_init.sql", 1);
	apply_file(db, "002_tests.sql", 2);
	if (with_003) {
		apply_file(db, "003_baselines.sql", 3);
		apply_file(db, "004_fabric.sql", 4);
		apply_file(db, "005_evidence.sql", 5);
		fill(db, f->now);
	}
	sqlite3_close(db);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/ibpulse-regress-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	f->now = (double)time(NULL);
	make_db(f, 1);
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

static void has(const char *body, const char *want)
{
	char line[512];

	snprintf(line, sizeof(line), "\n%s\n", want);
	if (!strstr(body, line))
		fail_msg("missing line: %s", want);
}

#define LINK(a, b, p)                                                          \
	"{host=\"" a "\",device=\"mlx5_0\",port=\"1\",peer_host=\"" b          \
	"\",peer_device=\"mlx5_0\",peer_port=\"1\",profile=\"" p "\""

static void test_link_families(void **state)
{
	char *s = scrape(*state, 0, 1);

	has(s, "ibpulse_link_bandwidth_bytes_per_second" LINK(
		       "h1", "h2", "bw") "} 30000000000");
	has(s, "ibpulse_link_bandwidth_baseline_bytes_per_second" LINK(
		       "h1", "h2", "bw") "} 47000000000");
	has(s, "ibpulse_link_bandwidth_threshold_bytes_per_second" LINK(
		       "h1", "h2", "bw") "} 37600000000");
	has(s, "ibpulse_link_bandwidth_expected_bytes_per_second" LINK(
		       "h1", "h2", "bw") "} 49000000000");
	has(s, "ibpulse_link_bandwidth_efficiency_ratio" LINK(
		       "h1", "h2", "bw") "} 0.612244898");
	has(s, "ibpulse_link_under_expected" LINK("h1", "h2", "bw") "} 1");
	has(s, "ibpulse_link_under_expected" LINK("h3", "h2", "bw") "} 0");
	has(s, "ibpulse_link_regression" LINK("h1", "h2",
					      "bw") ",metric=\"bandwidth\"} 1");
	has(s, "ibpulse_link_regression" LINK("h1", "h3",
					      "bw") ",metric=\"bandwidth\"} 0");
	has(s, "ibpulse_link_regression" LINK("h2", "h1",
					      "lat") ",metric=\"latency\"} 0");
	has(s,
	    "ibpulse_link_latency_seconds" LINK("h2", "h1", "lat") "} 2.1e-06");
	has(s, "ibpulse_link_latency_baseline_seconds" LINK("h2", "h1",
							    "lat") "} 2e-06");
	has(s, "ibpulse_link_latency_threshold_seconds" LINK("h2", "h1",
							     "lat") "} 3e-06");
	/* no expected figure: no expected, efficiency or under series */
	assert_int_equal(count(s, LINK("h1", "h3", "bw")), 4);
	/* never judged: its figure, no regression series */
	assert_int_equal(
		count(s, "ibpulse_link_regression" LINK("h3", "h2", "bw")), 0);
	/* in regression for days: still served; healthy and stale: not */
	has(s, "ibpulse_link_regression" LINK("h4", "h2",
					      "bw") ",metric=\"bandwidth\"} 1");
	assert_int_equal(count(s, LINK("h4", "h1", "bw")), 0);
	free(s);
}

static void test_ports_groups_counter(void **state)
{
	char *s = scrape(*state, 0, 1);

	has(s, "ibpulse_port_bandwidth_baseline_bytes_per_second{host=\"h1\","
	       "device=\"mlx5_0\",port=\"1\",profile=\"bw\"} 47000000000");
	has(s, "ibpulse_port_latency_baseline_seconds{host=\"h1\",device="
	       "\"mlx5_0\",port=\"1\",profile=\"lat\"} 2e-06");
	assert_int_equal(count(s, "ibpulse_port_bandwidth_baseline_bytes_per_"
				  "second{host=\"h2\""),
			 0);
	has(s, "ibpulse_port_suspect{host=\"h1\",device=\"mlx5_0\",port=\"1\","
	       "profile=\"bw\",metric=\"bandwidth\"} 1");
	has(s, "ibpulse_port_suspect{host=\"h2\",device=\"mlx5_0\",port=\"1\","
	       "profile=\"bw\",metric=\"bandwidth\"} 0");
	has(s, "ibpulse_port_suspect{host=\"h4\",device=\"mlx5_0\",port=\"1\","
	       "profile=\"bw\",metric=\"bandwidth\"} 0");
	assert_int_equal(count(s, "ibpulse_port_suspect{"), 3);
	/* the open suspects by kind; a device's port is empty; a closed
	 * one (h4) is not served */
	has(s, "ibpulse_suspect{host=\"h1\",device=\"mlx5_0\",port=\"1\","
	       "kind=\"port\",profile=\"bw\",metric=\"bandwidth\"} 1");
	has(s, "ibpulse_suspect{host=\"h3\",device=\"mlx5_0\",port=\"\","
	       "kind=\"device\",profile=\"bw\",metric=\"bandwidth\"} 1");
	assert_int_equal(count(s, "ibpulse_suspect{"), 2);
	has(s, "ibpulse_suspect_ratio{host=\"h1\",device=\"mlx5_0\","
	       "port=\"1\",kind=\"port\",profile=\"bw\",metric=\"bandwidth\"}"
	       " 0.9");
	has(s, "ibpulse_suspect_ratio{host=\"h3\",device=\"mlx5_0\",port="
	       "\"\",kind=\"device\",profile=\"bw\",metric=\"bandwidth\"} "
	       "0.5");
	has(s, "ibpulse_group_pair_suspect{group_a=\"A\",group_b=\"B\","
	       "profile=\"bw\",metric=\"bandwidth\"} 1");
	has(s, "# TYPE ibpulse_regressions_opened_total counter");
	has(s, "ibpulse_regressions_opened_total{profile=\"bw\",metric="
	       "\"bandwidth\"} 3");
	free(s);
}

static void test_cap_keeps_regressions(void **state)
{
	struct fixture *f = *state;
	char *s;

	f->cfg.max_pair_series = 2;
	s = scrape(f, 0, 1);
	assert_int_equal(count(s, LINK("h1", "h2", "bw")), 7);
	assert_int_equal(count(s, LINK("h4", "h2", "bw")), 4);
	assert_int_equal(count(s, LINK("h1", "h3", "bw")), 0);
	assert_int_equal(count(s, LINK("h2", "h1", "lat")), 0);
	free(s);
	f->cfg.max_pair_series = 0;
	s = scrape(f, 0, 1);
	assert_int_equal(count(s, "ibpulse_link_"), 0);
	/* ports are not capped with the links */
	assert_int_equal(count(s, "ibpulse_port_suspect{"), 3);
	free(s);
}

static void test_shards(void **state)
{
	static const char *const links[] = {
		LINK("h1", "h2", "bw"), LINK("h1", "h3", "bw"),
		LINK("h2", "h1", "lat"), LINK("h3", "h2", "bw")};
	static const char *const initiators[] = {"h1", "h1", "h2", "h3"};
	char *s[2] = {scrape(*state, 0, 2), scrape(*state, 1, 2)};

	for (size_t i = 0; i < 4; i++) {
		unsigned home = shard_of(initiators[i], 2);

		assert_true(count(s[home], links[i]) > 0);
		assert_int_equal(count(s[!home], links[i]), 0);
	}
	assert_int_equal(count(s[0], "ibpulse_group_pair_suspect{"), 1);
	assert_int_equal(count(s[1], "ibpulse_group_pair_suspect{"), 0);
	assert_int_equal(count(s[1], "ibpulse_regressions_opened_total{"), 0);
	assert_int_equal(count(s[0], "ibpulse_port_suspect{") +
				 count(s[1], "ibpulse_port_suspect{"),
			 3);
	/* a suspect is served by its host's shard */
	assert_int_equal(
		count(s[shard_of("h1", 2)], "ibpulse_suspect{host=\"h1\""), 1);
	assert_int_equal(
		count(s[!shard_of("h1", 2)], "ibpulse_suspect{host=\"h1\""), 0);
	free(s[0]);
	free(s[1]);
}

static void test_old_schema(void **state)
{
	struct fixture *f = *state;
	char *s;

	make_db(f, 0);
	s = scrape(f, 0, 1);
	assert_int_equal(count(s, "ibpulse_link_"), 0);
	assert_int_equal(count(s, "ibpulse_port_suspect"), 0);
	assert_non_null(strstr(s, "ibpulse_exporter_series"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_link_families, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ports_groups_counter,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap_keeps_regressions,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_shards, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_schema, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
