// SPDX-License-Identifier: MIT
/*
 * Unit tests for the baseline and regression tables through the store
 * (store_results() -> store_regress.c) on a real SQLite file: a baseline
 * keeps the newest N results, a new link between known ports is judged by
 * their pooled baselines from its first result, a replayed older result
 * changes nothing, a regression open for a whole window expires and the
 * link relearns, pruning closes the regressions of links not measured for
 * a window and deletes them, a latency test is judged on its latency
 * alone, and with no baseline options nothing is judged at all.
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
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "baseline.h"
#include "store.h"
#include "testapi.h"

#define DAY 86400.0
#define GOOD 4.7e10
#define BAD 3.0e10

struct fixture {
	char dir[64];
	char db[128];
	struct baseline_opts bo;
	struct store_opts opts;
	struct store *st;
	double now;
	unsigned seq;
};

/*
 * Hosts a..h register port mlx5_0/1, as their probes would: only results
 * between registered probe ports are judged (store_tests.c).
 */
static void register_ports(const struct fixture *f)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	for (char h = 'a'; h <= 'h'; h++) {
		char sql[512];

		snprintf(sql, sizeof(sql),
			 "INSERT INTO probe (host, address, port, labels, "
			 "profiles, registered, updated) VALUES ('%c', "
			 "'127.0.0.1', 18515, '{}', '[]', 1, 1); INSERT INTO "
			 "probe_port (probe_id, device, port, state, pkeys) "
			 "VALUES (last_insert_rowid(), 'mlx5_0', 1, 4, '[]')",
			 h);
		assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL),
				 SQLITE_OK);
	}
	sqlite3_close(db);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/ibpulse-regress-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	f->bo = (struct baseline_opts){
		.results = 8,
		.window_days = 7,
		.min_results = 5,
		.margin = 0.2,
		.latency_margin = 0.5,
		.latency_floor = 1e-6,
		.spread_factor = 3,
		.bad_results = 3,
		.judged_results = 5,
		.good_results = 5,
		.efficiency_floor = 0.8,
	};
	f->opts = (struct store_opts){
		.path = f->db,
		.schema_dir = SCHEMA_DIR,
		.busy_timeout_ms = 1000,
		.keyframe_interval = 300,
		.retention = 30 * DAY,
		.prune_batch = 5000,
		.wal_max_bytes = 1 << 20,
		.baseline = &f->bo,
		.group_label = "leaf",
	};
	f->now = 1.8e9;
	assert_int_equal(store_open(&f->opts, &f->st), 0);
	register_ports(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[256];

	store_close(f->st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* One number from a query on a separate connection; NAN for NULL. */
static double q(const struct fixture *f, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	double v = -1;

	assert_int_equal(
		sqlite3_open_v2(f->db, &db, SQLITE_OPEN_READONLY, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_type(s, 0) == SQLITE_NULL
			    ? NAN
			    : sqlite3_column_double(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

/* A result of @test (profile "lat" for *_lat, else "bw") of @host ->
 * @peer started at @started with the figures @bw and @lat (NAN: none),
 * stored at f->now (which moves on a minute). */
static void put_test(struct fixture *f, const char *host, const char *peer,
		     double started, const char *test, double bw, double lat)
{
	struct testapi_result t = {0};
	struct testapi_results r = {.host = (char *)host, .v = &t, .n = 1};
	size_t stored, dups;
	char id[64];

	snprintf(id, sizeof(id), "r%u", f->seq++);
	for (int i = 0; i < TESTAPI_FIG_COUNT; i++)
		t.fig[i] = NAN;
	t.id = id;
	t.profile = (char *)(strstr(test, "_lat") ? "lat" : "bw");
	t.test = (char *)test;
	t.started = started;
	t.local_device = t.peer_device = (char *)"mlx5_0";
	t.local_port = t.peer_port = 1;
	t.peer_host = (char *)peer;
	t.outcome = TESTAPI_OK;
	t.fig[TESTAPI_FIG_BW_AVG] = bw;
	t.fig[TESTAPI_FIG_LAT_MEDIAN] = lat;
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_results(f->st, &r, f->now, &stored, &dups), 0);
	assert_int_equal(store_commit(f->st), 0);
	assert_int_equal(stored, 1);
	f->now += 60;
}

/* A bandwidth result of @host -> @peer. */
static void put(struct fixture *f, const char *host, const char *peer,
		double started, double bw)
{
	put_test(f, host, peer, started, "write_bw", bw, NAN);
}

/* A write_lat result of @host -> @peer: @lat seconds, and the bandwidth
 * figure of 0 that earlier probes sent with every latency test. */
static void put_lat(struct fixture *f, const char *host, const char *peer,
		    double started, double lat)
{
	put_test(f, host, peer, started, "write_lat", 0, lat);
}

/* @n results of @host -> @peer at @bw, a minute apart from @*t. */
static void series(struct fixture *f, const char *host, const char *peer,
		   double *t, int n, double bw)
{
	for (int i = 0; i < n; i++) {
		*t += 60;
		put(f, host, peer, *t, bw);
	}
}

static void test_keeps_newest_n(void **state)
{
	struct fixture *f = *state;
	double t = f->now - DAY;

	/* 8 at 4e10, then 8 at 5e10: the baseline has forgotten the first */
	series(f, "a", "b", &t, 8, 4e10);
	assert_true(q(f, "SELECT baseline FROM link_state") == 4e10);
	series(f, "a", "b", &t, 8, 5e10);
	assert_true(q(f, "SELECT count(*) FROM baseline_sample") == 8);
	assert_true(q(f, "SELECT min(value) FROM baseline_sample") == 5e10);
	assert_true(q(f, "SELECT baseline FROM link_state") == 5e10);
	assert_true(q(f, "SELECT samples FROM link_state") == 8);
	/* both ports pool it */
	assert_true(q(f, "SELECT count(*) FROM port_baseline WHERE baseline "
			 "= 5e10") == 2);
}

static void test_new_link_judged_by_ports(void **state)
{
	struct fixture *f = *state;
	double t = f->now - DAY;

	series(f, "a", "b", &t, 6, GOOD);
	series(f, "c", "d", &t, 6, GOOD);
	/* a -> d is new: its ports' pools judge it at once */
	t += 60;
	put(f, "a", "d", t, BAD);
	assert_true(q(f, "SELECT last_bad FROM link_state WHERE a_host = 'a' "
			 "AND b_host = 'd'") == 1);
	assert_true(q(f, "SELECT judged FROM link_state WHERE a_host = 'a' "
			 "AND b_host = 'd'") == 1);
	/* the bad result fed nothing */
	assert_true(q(f, "SELECT samples FROM link_state WHERE a_host = 'a' "
			 "AND b_host = 'd'") == 0);
	series(f, "a", "d", &t, 2, BAD);
	assert_true(q(f,
		      "SELECT count(*) FROM regression WHERE b_host = 'd' "
		      "AND closed IS NULL AND baseline_source = 'port'") == 1);
	/* a brand-new port on both ends: nothing to judge by */
	t += 60;
	put(f, "e", "g", t, BAD);
	assert_true(q(f, "SELECT judged FROM link_state WHERE a_host = "
			 "'e'") == 0);
	assert_true(isnan(q(f, "SELECT baseline FROM link_state WHERE a_host "
			       "= 'e'")));
}

static void test_replay_changes_nothing(void **state)
{
	struct fixture *f = *state;
	double t = f->now - DAY, late;

	series(f, "a", "b", &t, 6, GOOD);
	late = t - 30;
	put(f, "a", "b", late, BAD);
	put(f, "a", "b", late - 60, BAD);
	put(f, "a", "b", late - 120, BAD);
	assert_true(q(f, "SELECT count(*) FROM regression") == 0);
	assert_true(q(f, "SELECT judged FROM link_state") == 1);
	assert_true(q(f, "SELECT last_started FROM link_state") == t);
	/* they are stored as results all the same */
	assert_true(q(f, "SELECT count(*) FROM result") == 9);
}

static void test_expires_after_window(void **state)
{
	struct fixture *f = *state;
	double t = f->now;

	series(f, "a", "b", &t, 6, GOOD);
	series(f, "a", "b", &t, 3, BAD);
	assert_true(q(f, "SELECT count(*) FROM regression WHERE closed IS "
			 "NULL") == 1);
	/* still bad a window later: taken as the link's level */
	t += 7 * DAY + 60;
	f->now = t + 10;
	put(f, "a", "b", t, BAD);
	assert_true(q(f, "SELECT count(*) FROM regression WHERE close_reason "
			 "= 'expired' AND closed = (SELECT last_started FROM "
			 "link_state)") == 1);
	assert_true(isnan(q(f, "SELECT regression_id FROM link_state")));
	/* relearning: the bad level becomes the baseline */
	series(f, "a", "b", &t, 5, BAD);
	assert_true(q(f, "SELECT baseline FROM link_state") == BAD);
	assert_true(q(f, "SELECT count(*) FROM link_state WHERE "
			 "baseline_source = 'link'") == 1);
	assert_true(q(f, "SELECT count(*) FROM regression WHERE closed IS "
			 "NULL") == 0);
}

static void test_prune_stale(void **state)
{
	struct fixture *f = *state;
	double t = f->now;
	size_t deleted = 0;

	series(f, "a", "b", &t, 6, GOOD);
	series(f, "a", "b", &t, 3, BAD);
	series(f, "c", "d", &t, 6, GOOD);
	f->now += 9 * DAY;
	t = f->now;
	series(f, "e", "g", &t, 2, GOOD);
	assert_true(q(f, "SELECT count(*) FROM regression WHERE closed IS "
			 "NULL") == 1);
	/* a -> b and c -> d were last measured 9 days ago: their links go,
	 * the open regression closes as stale */
	assert_true(store_prune(f->st, f->now, &deleted) >= 0);
	assert_true(q(f, "SELECT count(*) FROM regression WHERE close_reason "
			 "= 'stale'") == 1);
	assert_true(q(f, "SELECT count(*) FROM link_state") == 1);
	assert_true(q(f, "SELECT count(*) FROM baseline_sample") == 2);
	assert_true(deleted >= 2);
	/* closed regressions go after retention_days */
	f->now += 31 * DAY;
	assert_true(store_prune(f->st, f->now, &deleted) >= 0);
	assert_true(q(f, "SELECT count(*) FROM regression") == 0);
	/* the counter stays */
	assert_true(q(f, "SELECT opened FROM regression_count") == 1);
}

/* A latency test is judged on its latency only: its bandwidth figure (0)
 * gives no bandwidth link, baseline or port pool. A bandwidth test's
 * figure of 0 (a window in which nothing completed) is still judged. */
static void test_metric_of_the_test(void **state)
{
	struct fixture *f = *state;
	double t = f->now - DAY;

	for (int i = 0; i < 6; i++) {
		t += 60;
		put_lat(f, "a", "b", t, 2e-6);
	}
	assert_true(q(f, "SELECT count(*) FROM link_state WHERE metric = "
			 "'latency'") == 1);
	assert_true(q(f, "SELECT baseline FROM link_state WHERE metric = "
			 "'latency'") == 2e-6);
	assert_true(q(f, "SELECT count(*) FROM link_state WHERE metric = "
			 "'bandwidth'") == 0);
	assert_true(q(f, "SELECT count(*) FROM port_baseline WHERE metric = "
			 "'bandwidth'") == 0);
	series(f, "c", "d", &t, 6, GOOD);
	put(f, "c", "d", t + 60, 0);
	assert_true(q(f, "SELECT last_bad FROM link_state WHERE a_host = 'c' "
			 "AND metric = 'bandwidth'") == 1);
}

static void test_disabled(void **state)
{
	struct fixture *f = *state;
	double t = f->now - DAY;
	char *json = NULL;

	store_close(f->st);
	f->opts.baseline = NULL;
	assert_int_equal(store_open(&f->opts, &f->st), 0);
	series(f, "a", "b", &t, 8, GOOD);
	series(f, "a", "b", &t, 5, BAD);
	assert_true(q(f, "SELECT count(*) FROM result") == 13);
	assert_true(q(f, "SELECT count(*) FROM link_state") == 0);
	assert_int_equal(store_regress_json(f->st, f->now, &json), -ENOTSUP);
	assert_null(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keeps_newest_n, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_new_link_judged_by_ports,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_replay_changes_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_expires_after_window,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_prune_stale, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_metric_of_the_test, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_disabled, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
