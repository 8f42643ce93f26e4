// SPDX-License-Identifier: MIT
/*
 * Unit tests for the collector's store: schema migration (from empty, from
 * the previous version, refusing a newer database), the change-only
 * history with keyframes, retention pruning and retirement. Each test works
 * on a fresh database in a temporary directory, with the real schema.
 */
#include <dirent.h>
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

#include "log.h"
#include "report.h"
#include "store.h"

struct fixture {
	char dir[64];
	char db[128];
	char schema[128]; /* a scratch schema dir for migration tests */
	struct store_opts opts;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/ibpulse-store-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	snprintf(f->schema, sizeof(f->schema), "%s/schema", f->dir);
	f->opts = (struct store_opts){
		.path = f->db,
		.schema_dir = SCHEMA_DIR,
		.busy_timeout_ms = 1000,
		.keyframe_interval = 300,
		.retention = 0,
		.prune_batch = 5000,
		.wal_max_bytes = 1 << 20,
	};
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* One integer from a query on a separate connection (as the exporter). */
static long long q(const struct fixture *f, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	long long v = -1;

	assert_int_equal(
		sqlite3_open_v2(f->db, &db, SQLITE_OPEN_READONLY, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

static void exec(const struct fixture *f, const char *sql)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* The shipped schema files into the fixture's own schema directory. */
static void copy_schema(const struct fixture *f)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s' && cp '%s'/[0-9][0-9][0-9]_*.sql '%s/'",
		 f->schema, SCHEMA_DIR, f->schema);
	assert_int_equal(system(cmd), 0);
}

/* The highest NNN of the shipped schema/NNN_*.sql: what a store reaches. */
static int latest_version(void)
{
	DIR *d = opendir(SCHEMA_DIR);
	struct dirent *de;
	int v = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		int n = 0;

		if (sscanf(de->d_name, "%3d_", &n) == 1 && n > v &&
		    strstr(de->d_name, ".sql"))
			v = n;
	}
	closedir(d);
	return v;
}

/* A version-1 database, as the previous release left it. */
static void make_v1(const struct fixture *f)
{
	char path[512], *sql;
	FILE *fp;
	long n;

	snprintf(path, sizeof(path), "%s/001_init.sql", SCHEMA_DIR);
	fp = fopen(path, "r");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	sql = calloc(1, (size_t)n + 1);
	assert_non_null(sql);
	assert_int_equal(fread(sql, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	exec(f, sql);
	free(sql);
	exec(f, "PRAGMA user_version = 1");
}

static void test_migrate_from_empty(void **state)
{
	struct fixture *f = *state;
	struct store *st;

	assert_int_equal(store_open(&f->opts, &st), 0);
	assert_int_equal(store_schema_version(st), latest_version());
	store_close(st);
	assert_int_equal(q(f, "PRAGMA user_version"), latest_version());
	assert_int_equal(q(f,
			   "SELECT count(*) FROM sqlite_master WHERE name IN "
			   "('link_state', 'baseline_sample', 'link_recent', "
			   "'port_baseline', 'regression', "
			   "'regression_count', 'port_suspect', "
			   "'group_pair_suspect')"),
			 8);
	assert_int_equal(q(f,
			   "SELECT count(*) FROM sqlite_master WHERE name IN "
			   "('host', 'device', 'port', 'port_gid', "
			   "'port_pkey', 'series', 'sample')"),
			 7);
	assert_int_equal(q(f,
			   "SELECT count(*) FROM sqlite_master WHERE name IN "
			   "('probe', 'probe_label', 'probe_port', "
			   "'host_pause', 'probe_dropped', 'result', "
			   "'plan_entry', 'pair_seen')"),
			 8);
	/* Opening again applies nothing and keeps the data. */
	exec(f, "INSERT INTO host (name, first_seen, last_report) "
		"VALUES ('a', 1, 1)");
	assert_int_equal(store_open(&f->opts, &st), 0);
	store_close(st);
	assert_int_equal(q(f, "SELECT count(*) FROM host"), 1);
}

static void test_migrate_from_previous(void **state)
{
	struct fixture *f = *state;
	char path[256];
	struct store *st;

	/* A version-1 database with data is upgraded to the latest. */
	make_v1(f);
	exec(f, "INSERT INTO host (name, first_seen, last_report) "
		"VALUES ('a', 1, 1)");
	copy_schema(f);
	f->opts.schema_dir = f->schema;
	assert_int_equal(store_open(&f->opts, &st), 0);
	assert_int_equal(store_schema_version(st), latest_version());
	store_close(st);
	assert_int_equal(q(f, "SELECT count(*) FROM host"), 1);
	/* A later file appears: only it is applied, the data stays. */
	snprintf(path, sizeof(path), "%s/999_extra.sql", f->schema);
	write_file(path, "CREATE TABLE extra (x INTEGER);\n"
			 "INSERT INTO extra SELECT id FROM host;\n");
	snprintf(path, sizeof(path), "%s/README", f->schema);
	write_file(path, "not a schema file\n");
	assert_int_equal(store_open(&f->opts, &st), 0);
	assert_int_equal(store_schema_version(st), 999);
	store_close(st);
	assert_int_equal(q(f, "SELECT count(*) FROM extra"), 1);
	assert_int_equal(q(f, "SELECT count(*) FROM host"), 1);
}

static void test_migrate_failure_is_atomic(void **state)
{
	struct fixture *f = *state;
	char path[256];
	struct store *st;

	copy_schema(f);
	snprintf(path, sizeof(path), "%s/%03d_bad.sql", f->schema,
		 latest_version() + 1);
	write_file(path, "CREATE TABLE half (x INTEGER);\nTHIS IS NOT SQL;\n");
	f->opts.schema_dir = f->schema;
	assert_int_equal(store_open(&f->opts, &st), -EIO);
	/* The shipped files went in, the bad one did not, not even its first
	 * statement. */
	assert_int_equal(q(f, "PRAGMA user_version"), latest_version());
	assert_int_equal(
		q(f, "SELECT count(*) FROM sqlite_master WHERE name = 'half'"),
		0);
}

static void test_refuse_newer(void **state)
{
	struct fixture *f = *state;
	struct store *st = NULL;
	int future = latest_version() + 1;
	char sql[96];

	snprintf(sql, sizeof(sql),
		 "CREATE TABLE future (x); PRAGMA user_version = %d;", future);
	exec(f, sql);
	assert_int_equal(store_open(&f->opts, &st), -EPROTO);
	assert_null(st);
	assert_int_equal(q(f, "PRAGMA user_version"), future);
	assert_int_equal(
		q(f, "SELECT count(*) FROM sqlite_master WHERE name = 'host'"),
		0);
}

static void test_duplicate_version(void **state)
{
	struct fixture *f = *state;
	char path[256];
	struct store *st;

	copy_schema(f);
	snprintf(path, sizeof(path), "%s/001_again.sql", f->schema);
	write_file(path, "SELECT 1;\n");
	f->opts.schema_dir = f->schema;
	assert_int_equal(store_open(&f->opts, &st), -EINVAL);
}

/* A report with one device, one port and three counters. */
struct mini {
	struct report r;
	struct report_device dev;
	struct report_port port;
	struct report_counter ib[3];
	struct report_gid gid;
	struct report_pkey pkey;
};

static void mini_init(struct mini *m, const char *host)
{
	memset(m, 0, sizeof(*m));
	m->ib[0] = (struct report_counter){(char *)"port_xmit_data", 1000};
	m->ib[1] = (struct report_counter){(char *)"port_rcv_data", 2000};
	m->ib[2] = (struct report_counter){(char *)"symbol_error", 0};
	m->gid = (struct report_gid){
		0, (char *)"fe80:0000:0000:0000:0000:0000:0000:0001",
		(char *)"RoCE v2", (char *)"eth0"};
	m->pkey = (struct report_pkey){0, 0xffff};
	m->port = (struct report_port){
		.port = 1,
		.state = 4,
		.phys_state = 5,
		.rate_bytes = 12500000000ULL,
		.link_layer = (char *)"Ethernet",
		.lid = 0,
		.sm_lid = 0,
		.lmc = 0,
		.cap_mask = -1,
		.netdev = (char *)"eth0",
		.gids = &m->gid,
		.n_gids = 1,
		.pkeys = &m->pkey,
		.n_pkeys = 1,
	};
	m->port.counters[CSRC_IB] = m->ib;
	m->port.n_counters[CSRC_IB] = 3;
	m->dev = (struct report_device){
		.name = (char *)"rxe0",
		.numa_node = -1,
		.ports = &m->port,
		.n_ports = 1,
		.pcie = {.cur_speed_gts = -1,
			 .max_speed_gts = -1,
			 .cur_width = -1,
			 .max_width = -1,
			 .aer_correctable = -1,
			 .aer_nonfatal = -1,
			 .aer_fatal = -1},
	};
	m->r = (struct report){.version = 1,
			       .host = (char *)host,
			       .timestamp = 1,
			       .devices = &m->dev,
			       .n_devices = 1};
}

static void put(struct store *st, struct mini *m, double now,
		struct store_stats *stats)
{
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_put_report(st, &m->r, now, stats), 0);
	assert_int_equal(store_commit(st), 0);
}

static void test_history_change_only(void **state)
{
	struct fixture *f = *state;
	struct store_stats stats;
	struct store *st;
	struct mini m;

	mini_init(&m, "node1");
	assert_int_equal(store_open(&f->opts, &st), 0);
	put(st, &m, 1000, &stats);
	assert_int_equal(stats.samples, 3);
	assert_int_equal(stats.series_written, 3);
	assert_int_equal(stats.history_written, 3);
	assert_int_equal(q(f, "SELECT count(*) FROM sample"), 3);
	assert_int_equal(q(f, "SELECT count(*) FROM port_gid"), 1);

	/* Nothing changed: no series or history row, device row untouched. */
	put(st, &m, 1010, &stats);
	assert_int_equal(stats.samples, 3);
	assert_int_equal(stats.series_written + stats.history_written, 0);
	assert_int_equal(q(f, "SELECT count(*) FROM sample"), 3);
	assert_int_equal(q(f, "SELECT updated FROM device"), 1000);
	assert_int_equal(q(f, "SELECT last_report FROM host"), 1010);

	/* One counter moves: one series update, one history row. */
	m.ib[0].value = 5000;
	put(st, &m, 1020, &stats);
	assert_int_equal(stats.series_written, 1);
	assert_int_equal(stats.history_written, 1);
	assert_int_equal(
		q(f, "SELECT value FROM series WHERE name = 'port_xmit_data'"),
		5000);
	assert_int_equal(
		q(f,
		  "SELECT changed FROM series WHERE name = 'port_xmit_data'"),
		1020);
	assert_int_equal(
		q(f, "SELECT changed FROM series WHERE name = 'symbol_error'"),
		1000);

	/* A port attribute changes: the port row is rewritten. */
	m.port.state = 1;
	put(st, &m, 1030, &stats);
	assert_int_equal(q(f, "SELECT state FROM port"), 1);
	assert_int_equal(q(f, "SELECT updated FROM port"), 1030);

	/* Keyframe: unchanged counters go to history after the interval. */
	put(st, &m, 1000 + 300, &stats);
	assert_int_equal(stats.history_written, 2); /* rcv_data, symbol_error */
	put(st, &m, 1020 + 300, &stats);
	assert_int_equal(stats.history_written, 1); /* xmit_data */
	assert_int_equal(q(f, "SELECT count(*) FROM sample"), 7);
	assert_int_equal(q(f,
			   "SELECT count(*) FROM sample s JOIN series x ON "
			   "x.id = s.series_id WHERE x.name = 'symbol_error'"),
			 2);

	/* After a restart the cache is rebuilt: a keyframe, no new series. */
	store_close(st);
	assert_int_equal(store_open(&f->opts, &st), 0);
	put(st, &m, 1400, &stats);
	assert_int_equal(stats.series_written, 0);
	assert_int_equal(stats.history_written, 3);
	assert_int_equal(store_cached_series(st), 3);
	assert_int_equal(q(f, "SELECT count(*) FROM series"), 3);
	store_close(st);
}

/* The exporter's change markers (schema 008): a fresh seq per change. */
static void test_change_markers(void **state)
{
	struct fixture *f = *state;
	struct store_stats stats;
	struct store *st;
	struct mini m, m2;
	long long s1, s2;

	mini_init(&m, "node1");
	mini_init(&m2, "node2");
	assert_int_equal(store_open(&f->opts, &st), 0);
	put(st, &m, 1000, &stats);
	s1 = q(f, "SELECT seq FROM host_change");
	assert_true(s1 > 1);
	/* Only the last report time moved: the marker stays. */
	put(st, &m, 1010, &stats);
	assert_int_equal(stats.rows_written + stats.series_written, 0);
	assert_int_equal(q(f, "SELECT seq FROM host_change"), s1);
	/* A counter moved: a larger seq. */
	m.ib[1].value = 2500;
	put(st, &m, 1020, &stats);
	s2 = q(f, "SELECT seq FROM host_change");
	assert_true(s2 > s1);
	/* A port attribute (a GID) changed: larger again. */
	m.gid.type = (char *)"RoCE v1";
	put(st, &m, 1030, &stats);
	assert_int_equal(stats.rows_written, 1);
	assert_true(q(f, "SELECT seq FROM host_change") > s2);
	s2 = q(f, "SELECT seq FROM host_change");
	/* Retired and back: its row went with it, and no seq comes twice. */
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_retire(st, "node1"), 0);
	assert_int_equal(store_commit(st), 0);
	assert_int_equal(q(f, "SELECT count(*) FROM host_change"), 0);
	put(st, &m2, 1040, &stats);
	put(st, &m, 1050, &stats);
	assert_int_equal(q(f, "SELECT count(*) FROM host_change"), 2);
	assert_true(q(f, "SELECT min(seq) FROM host_change") > s2);
	store_close(st);
}

static void test_rollback_drops_cache(void **state)
{
	struct fixture *f = *state;
	struct store_stats stats;
	struct store *st;
	struct mini m;

	mini_init(&m, "node1");
	assert_int_equal(store_open(&f->opts, &st), 0);
	put(st, &m, 1000, &stats);
	/* A value written and rolled back must not be taken as stored. */
	m.ib[0].value = 7;
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_put_report(st, &m.r, 1010, &stats), 0);
	store_rollback(st);
	assert_int_equal(store_cached_series(st), 0);
	put(st, &m, 1020, &stats);
	assert_int_equal(
		q(f, "SELECT value FROM series WHERE name = 'port_xmit_data'"),
		7);
	store_close(st);
}

static void test_retention(void **state)
{
	struct fixture *f = *state;
	struct store *st;
	struct mini m;
	size_t deleted;

	f->opts.retention = 100;
	f->opts.prune_batch = 2;
	mini_init(&m, "node1");
	assert_int_equal(store_open(&f->opts, &st), 0);
	put(st, &m, 1000, NULL); /* 3 rows at 1000 */
	m.ib[0].value++;
	put(st, &m, 1050, NULL); /* 1 row at 1050 */
	m.ib[0].value++;
	put(st, &m, 1200, NULL); /* 1 row at 1200 */
	assert_int_equal(q(f, "SELECT count(*) FROM sample"), 5);
	/* Cutoff 1160: four rows are old, pruned two per step. */
	assert_int_equal(store_prune(st, 1260, &deleted), 1);
	assert_int_equal(deleted, 2);
	assert_int_equal(store_prune(st, 1260, &deleted), 1);
	assert_int_equal(deleted, 2);
	assert_int_equal(store_prune(st, 1260, &deleted), 0);
	assert_int_equal(deleted, 0);
	assert_int_equal(q(f, "SELECT count(*) FROM sample"), 1);
	assert_int_equal(q(f, "SELECT min(ts) FROM sample"), 1200);
	/* The latest values stay whatever their age. */
	assert_int_equal(q(f, "SELECT count(*) FROM series"), 3);
	store_close(st);
}

/* Test results age out with the same retention, oldest first. */
static void test_result_retention(void **state)
{
	struct fixture *f = *state;
	struct store *st;
	size_t deleted;
	char sql[256];

	f->opts.retention = 100;
	f->opts.prune_batch = 2;
	assert_int_equal(store_open(&f->opts, &st), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO result (result_id, host, profile, test, "
			 "started, outcome, busy, received) VALUES ('r%d', "
			 "'a', 'bw', 'write_bw', %d, 'ok', 0, 0)",
			 i, 1000 + 100 * i);
		exec(f, sql);
	}
	/* Cutoff 1160: two are old; one step deletes both (batch 2). */
	assert_int_equal(store_prune(st, 1260, &deleted), 1);
	assert_int_equal(deleted, 2);
	assert_int_equal(store_prune(st, 1260, &deleted), 0);
	assert_int_equal(q(f, "SELECT count(*) FROM result"), 1);
	assert_int_equal(q(f, "SELECT min(started) FROM result"), 1200);
	store_close(st);
}

static void test_retire(void **state)
{
	struct fixture *f = *state;
	struct store *st;
	struct mini a, b;

	mini_init(&a, "node1");
	mini_init(&b, "node2");
	assert_int_equal(store_open(&f->opts, &st), 0);
	put(st, &a, 1000, NULL);
	put(st, &b, 1000, NULL);
	assert_int_equal(store_begin(st), 0);
	assert_int_equal(store_retire(st, "node1"), 0);
	assert_int_equal(store_retire(st, "nosuch"), -ENOENT);
	assert_int_equal(store_commit(st), 0);
	assert_int_equal(q(f, "SELECT count(*) FROM host"), 1);
	assert_int_equal(q(f, "SELECT count(*) FROM series"), 3);
	assert_int_equal(q(f, "SELECT count(*) FROM sample"), 3);
	assert_int_equal(q(f, "SELECT count(*) FROM port_gid"), 1);
	/* It comes back as a new host, with fresh rows. */
	put(st, &a, 1100, NULL);
	assert_int_equal(q(f, "SELECT count(*) FROM series"), 6);
	assert_int_equal(
		q(f, "SELECT first_seen FROM host WHERE name = 'node1'"), 1100);
	store_close(st);
}

/* Another connection deletes the host (the retire CLI): the cache notices. */
static void test_other_writer(void **state)
{
	struct fixture *f = *state;
	struct store_stats stats;
	struct store *st;
	struct mini m;

	mini_init(&m, "node1");
	assert_int_equal(store_open(&f->opts, &st), 0);
	put(st, &m, 1000, NULL);
	exec(f,
	     "PRAGMA foreign_keys = ON; DELETE FROM host WHERE name = 'node1'");
	put(st, &m, 1010, &stats);
	assert_int_equal(stats.series_written, 3);
	assert_int_equal(q(f, "SELECT count(*) FROM series"), 3);
	assert_int_equal(q(f, "SELECT count(*) FROM port"), 1);
	store_close(st);
}

/*
 * A reader holding an old snapshot blocks truncation: the WAL grows past
 * wal_max_bytes. Once it lets go, the next checkpoint truncates the WAL.
 */
static void test_wal_bounded_after_reader(void **state)
{
	struct fixture *f = *state;
	struct store *st;
	sqlite3 *rd;
	sqlite3_stmt *s;
	long long wal = 0;
	struct mini m;

	assert_int_equal(store_open(&f->opts, &st), 0);
	mini_init(&m, "node1");
	put(st, &m, 1000, NULL);
	assert_int_equal(
		sqlite3_open_v2(f->db, &rd, SQLITE_OPEN_READONLY, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(rd, "SELECT count(*) FROM sample",
					    -1, &s, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_exec(rd, "BEGIN", NULL, NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(s),
			 SQLITE_ROW); /* the snapshot is pinned */
	for (int i = 0; i < 400; i++) {
		m.ib[0].value++;
		m.ib[1].value++;
		put(st, &m, 1000 + i, NULL);
	}
	assert_int_equal(store_checkpoint(st, &wal), 0);
	assert_true(wal > f->opts.wal_max_bytes);
	sqlite3_finalize(s);
	assert_int_equal(sqlite3_exec(rd, "COMMIT", NULL, NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(store_checkpoint(st, &wal), 0);
	assert_int_equal(wal, 0);
	sqlite3_close(rd);
	store_close(st);
}

static void test_wal_and_checkpoint(void **state)
{
	struct fixture *f = *state;
	struct store *st;
	long long wal = -1;

	assert_int_equal(store_open(&f->opts, &st), 0);
	assert_int_equal(store_checkpoint(st, &wal), 0);
	assert_true(wal >= 0);
	store_close(st);
	{
		sqlite3 *db;
		sqlite3_stmt *s;

		assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode",
						    -1, &s, NULL),
				 SQLITE_OK);
		assert_int_equal(sqlite3_step(s), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(s, 0),
				    "wal");
		sqlite3_finalize(s);
		sqlite3_close(db);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_migrate_from_empty, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_migrate_from_previous,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_failure_is_atomic,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_newer, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_version, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_history_change_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_change_markers, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rollback_drops_cache,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_result_retention, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_retire, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_writer, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_wal_bounded_after_reader,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_wal_and_checkpoint, setup,
						teardown),
	};

	log_init("test_store", LOG_LVL_ERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
