// SPDX-License-Identifier: MIT
/*
 * The collector's SQLite connection: open with the durability settings,
 * apply the schema, cache prepared statements, run transactions, retire
 * hosts, prune history, manage checkpoints. See store.h; reports are
 * turned into rows in store_put.c.
 */
#include "store_int.h"
#include "store_change.h"
#include "store_fabric.h"
#include "store_localize.h"
#include "log.h"
#include "map.h"
#include "dbsettings.h"
#include "schema.h"
#include "store_health.h"
#include "store_regress.h"
#include "store_tests.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* clang-format off */
static const char *const store_sql_text[SQL_COUNT] = {
	[SQL_BEGIN] = "BEGIN IMMEDIATE",
	[SQL_COMMIT] = "COMMIT",
	[SQL_ROLLBACK] = "ROLLBACK",
	[SQL_HOST_UPSERT] =
		"INSERT INTO host (name, first_seen, last_report, probe_timestamp, "
		"probe_version) "
		"VALUES (:name, :now, :now, :probe_timestamp, :probe_version) "
		"ON CONFLICT (name) DO UPDATE SET last_report = excluded.last_report, "
		"probe_timestamp = excluded.probe_timestamp, "
		"probe_version = excluded.probe_version "
		"RETURNING id",
	[SQL_DEVICE_UPSERT] =
		"INSERT INTO device (host_id, name, node_guid, sys_image_guid, fw_ver, "
		"hca_type, board_id, node_desc, numa_node, netdevs, pcie_address, "
		"pcie_cur_speed_gts, pcie_max_speed_gts, pcie_cur_width, pcie_max_width, "
		"aer_correctable, aer_nonfatal, aer_fatal, updated) "
		"VALUES (:host_id, :name, :node_guid, :sys_image_guid, :fw_ver, "
		":hca_type, :board_id, :node_desc, :numa_node, :netdevs, :pcie_address, "
		":pcie_cur_speed_gts, :pcie_max_speed_gts, :pcie_cur_width, "
		":pcie_max_width, :aer_correctable, :aer_nonfatal, :aer_fatal, :updated) "
		"ON CONFLICT (host_id, name) DO UPDATE SET node_guid = :node_guid, "
		"sys_image_guid = :sys_image_guid, fw_ver = :fw_ver, "
		"hca_type = :hca_type, board_id = :board_id, node_desc = :node_desc, "
		"numa_node = :numa_node, netdevs = :netdevs, "
		"pcie_address = :pcie_address, "
		"pcie_cur_speed_gts = :pcie_cur_speed_gts, "
		"pcie_max_speed_gts = :pcie_max_speed_gts, "
		"pcie_cur_width = :pcie_cur_width, pcie_max_width = :pcie_max_width, "
		"aer_correctable = :aer_correctable, aer_nonfatal = :aer_nonfatal, "
		"aer_fatal = :aer_fatal, updated = :updated "
		"RETURNING id",
	[SQL_PORT_UPSERT] =
		"INSERT INTO port (host_id, device_id, port, state, phys_state, "
		"rate_bytes, link_layer, lid, sm_lid, lmc, cap_mask, port_guid, netdev, "
		"updated) "
		"VALUES (:host_id, :device_id, :port, :state, :phys_state, :rate_bytes, "
		":link_layer, :lid, :sm_lid, :lmc, :cap_mask, :port_guid, :netdev, "
		":updated) "
		"ON CONFLICT (device_id, port) DO UPDATE SET state = :state, "
		"phys_state = :phys_state, rate_bytes = :rate_bytes, "
		"link_layer = :link_layer, lid = :lid, sm_lid = :sm_lid, lmc = :lmc, "
		"cap_mask = :cap_mask, port_guid = :port_guid, netdev = :netdev, "
		"updated = :updated "
		"RETURNING id",
	[SQL_GID_DEL] = "DELETE FROM port_gid WHERE port_id = :port_id",
	[SQL_GID_INS] =
		"INSERT INTO port_gid (port_id, idx, gid, type, netdev) "
		"VALUES (:port_id, :idx, :gid, :type, :netdev)",
	[SQL_PKEY_DEL] = "DELETE FROM port_pkey WHERE port_id = :port_id",
	[SQL_PKEY_INS] =
		"INSERT INTO port_pkey (port_id, idx, pkey) "
		"VALUES (:port_id, :idx, :pkey)",
	[SQL_SERIES_LOAD] =
		"SELECT id, source, name, value FROM series "
		"WHERE port_id = :port_id",
	[SQL_SERIES_INS] =
		"INSERT INTO series (port_id, source, name, value, changed) "
		"VALUES (:port_id, :source, :name, :value, :changed)",
	[SQL_SERIES_UPD] =
		"UPDATE series SET value = :value, changed = :changed "
		"WHERE id = :id",
	[SQL_SAMPLE_INS] =
		"INSERT INTO sample (series_id, ts, value) "
		"VALUES (:series_id, :ts, :value)",
	[SQL_HOST_DEL] = "DELETE FROM host WHERE name = :name",
	[SQL_PRUNE_HEAD] = "SELECT ts FROM sample ORDER BY rowid LIMIT 1",
	[SQL_PRUNE_DEL] =
		"DELETE FROM sample "
		"WHERE rowid IN (SELECT rowid FROM sample ORDER BY rowid LIMIT :batch) "
		"AND ts < :cutoff",
	[SQL_DATA_VERSION] = "PRAGMA data_version",
};
/* clang-format on */

int store_err(struct store *st, int rc, const char *what)
{
	snprintf(st->last_error, sizeof(st->last_error), "%s",
		 sqlite3_errmsg(st->db));
	/* A full disk fails every batch: say so every 10 s, not every time. */
	log_once(what, 10, LOG_LVL_ERR, "store: %s: %s (%s)", what,
		 sqlite3_errmsg(st->db), sqlite3_errstr(rc));
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
		return -EINVAL;
	default:
		return -EIO;
	}
}

sqlite3_stmt *store_stmt(struct store *st, enum store_sql which)
{
	sqlite3_stmt *s = st->sql[which];

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return s;
}

int store_done(struct store *st, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : store_err(st, rc, what);
}

/* Run a statement that returns no rows (or whose rows are ignored). */
static int store_exec(struct store *st, enum store_sql which)
{
	int rc = sqlite3_step(store_stmt(st, which));

	sqlite3_reset(st->sql[which]);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return store_err(st, rc, store_sql_text[which]);
	return 0;
}

static int store_pragmas(struct store *st)
{
	char sql[256];
	char *msg = NULL;
	int rc;

	snprintf(
		sql, sizeof(sql),
		"PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; "
		"PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 8192; "
		"PRAGMA journal_size_limit = %lld; PRAGMA cache_size = -65536;",
		st->opts.wal_max_bytes / 4);
	sqlite3_busy_timeout(st->db, (int)st->opts.busy_timeout_ms);
	rc = sqlite3_exec(st->db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		log_err("store: %s: %s", st->path,
			msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

/* WAL mode is persistent, but check: the exporter relies on it. */
static int store_check_wal(struct store *st)
{
	sqlite3_stmt *s;
	int ok = 0;

	if (sqlite3_prepare_v2(st->db, "PRAGMA journal_mode", -1, &s, NULL))
		return store_err(st, sqlite3_errcode(st->db), "journal_mode");
	if (sqlite3_step(s) == SQLITE_ROW)
		ok = !strcmp((const char *)sqlite3_column_text(s, 0), "wal");
	sqlite3_finalize(s);
	if (!ok) {
		log_err("store: %s: cannot switch to WAL mode", st->path);
		return -EIO;
	}
	return 0;
}

static int store_prepare(struct store *st)
{
	for (int i = 0; i < SQL_COUNT; i++) {
		int rc = sql_prepare(st->db, store_sql_text[i],
				     SQLITE_PREPARE_PERSISTENT, &st->sql[i]);

		if (rc != SQLITE_OK)
			return store_err(st, rc, store_sql_text[i]);
	}
	return store_put_params(st);
}

static int store_paths(struct store *st, const char *path)
{
	size_t len = strlen(path) + 5;

	st->path = strdup(path);
	st->wal_path = malloc(len);
	if (!st->path || !st->wal_path)
		return -ENOMEM;
	snprintf(st->wal_path, len, "%s-wal", path);
	return 0;
}

/* clang-format off */
static const char store_setting_sql[] =
	"INSERT INTO setting (key, value) VALUES (:key, :value) "
	"ON CONFLICT (key) DO UPDATE SET value = excluded.value";
/* clang-format on */

/*
 * The settings the exporter must use as the collector does
 * (common/dbsettings.h), written at every start: one transaction.
 */
static int store_settings_write(struct store *st)
{
	const struct store_opts *o = &st->opts;
	char period[32], ahead[32];
	const char *kv[][2] = {
		{DBSET_PLAN_PERIOD, period},
		{DBSET_GROUP_LABEL, o->group_label ? o->group_label : ""},
		{DBSET_RESULTS_MAX_AHEAD, ahead},
	};
	sqlite3_stmt *s = NULL;
	int rc;

	snprintf(period, sizeof(period), "%.17g", o->results_period);
	snprintf(ahead, sizeof(ahead), "%.17g", o->results_max_ahead);
	rc = sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sql_prepare(st->db, store_setting_sql, 0, &s);
	for (size_t i = 0; rc == SQLITE_OK && i < sizeof(kv) / sizeof(*kv);
	     i++) {
		sql_name_text(s, ":key", kv[i][0]);
		sql_name_text(s, ":value", kv[i][1]);
		rc = sqlite3_step(s);
		rc = rc == SQLITE_DONE ? sqlite3_reset(s) : rc;
	}
	sqlite3_finalize(s);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return store_err(st, rc, "settings for the exporter");
	}
	return 0;
}

int store_open(const struct store_opts *o, struct store **out)
{
	struct store *st = calloc(1, sizeof(*st));
	int ret, rc, version;

	if (!st)
		return -ENOMEM;
	st->opts = *o;
	ret = store_paths(st, o->path);
	if (ret)
		goto fail;
	rc = sqlite3_open_v2(o->path, &st->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				     SQLITE_OPEN_NOMUTEX,
			     NULL);
	if (rc != SQLITE_OK) {
		ret = st->db ? store_err(st, rc, o->path) : -ENOMEM;
		goto fail;
	}
	sqlite3_extended_result_codes(st->db, 1);
	ret = store_pragmas(st);
	if (!ret)
		ret = store_check_wal(st);
	if (!ret)
		ret = schema_apply(st->db, o->schema_dir, &version);
	if (!ret)
		ret = store_settings_write(st);
	if (!ret)
		ret = store_prepare(st);
	if (!ret)
		ret = store_tests_prepare(st);
	if (!ret)
		ret = store_regress_prepare(st, o->baseline, o->evidence,
					    o->group_label);
	if (!ret && o->baseline)
		ret = store_localize_open(st, o->localize);
	if (!ret)
		ret = store_cache_new(st);
	if (!ret)
		ret = store_fabric_open(st);
	if (!ret)
		ret = store_health_prepare(st, o->health);
	if (!ret)
		ret = store_change_open(st);
	if (ret)
		goto fail;
	log_info("store: %s open, schema version %d, WAL, synchronous=FULL",
		 o->path, version);
	*out = st;
	return 0;
fail:
	store_close(st);
	return ret;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	if (st->in_txn && st->db)
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	store_cache_free(st);
	store_fabric_close(st);
	store_change_close(st);
	for (int i = 0; i < SQL_COUNT; i++)
		sqlite3_finalize(st->sql[i]);
	store_tests_finalize(st);
	store_localize_close(st);
	store_regress_finalize(st);
	store_health_finalize(st);
	if (st->db && sqlite3_close(st->db) != SQLITE_OK)
		log_err("store: close: %s", sqlite3_errmsg(st->db));
	free(st->path);
	free(st->wal_path);
	free(st);
}

void store_global_init(void)
{
	/* Each connection is used by one thread (the writer's, or the CLI's):
	 * SQLite's per-connection mutexes and memory statistics are overhead.
	 */
	sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

const char *store_last_error(const struct store *st)
{
	return st->last_error;
}

int store_schema_version(struct store *st)
{
	return schema_version(st->db);
}

/*
 * Another connection committed (ibpulse-collector retire run by hand): the
 * cached ids may point at deleted rows, so start the cache over.
 */
static int store_check_others(struct store *st)
{
	sqlite3_stmt *s = store_stmt(st, SQL_DATA_VERSION);
	int rc = sqlite3_step(s);
	long long v;

	if (rc != SQLITE_ROW) {
		sqlite3_reset(s);
		return store_err(st, rc, "data_version");
	}
	v = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (v != st->data_version) {
		if (st->data_version)
			store_cache_drop(st);
		st->data_version = v;
	}
	return 0;
}

int store_begin(struct store *st)
{
	int ret = store_exec(st, SQL_BEGIN);

	st->in_txn = !ret;
	if (!ret)
		ret = store_check_others(st);
	if (ret)
		store_rollback(st);
	return ret;
}

int store_commit(struct store *st)
{
	int ret = store_exec(st, SQL_COMMIT);

	if (ret) {
		/* A failed COMMIT may leave the transaction open. */
		store_rollback(st);
		return ret;
	}
	st->in_txn = 0;
	return 0;
}

void store_rollback(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		store_exec(st, SQL_ROLLBACK);
	st->in_txn = 0;
	store_cache_drop(st);
	store_regress_reset(st);
	store_localize_drop(st);
}

int store_retire(struct store *st, const char *host)
{
	sqlite3_stmt *s = store_stmt(st, SQL_HOST_DEL);
	size_t tests = 0, regress = 0;
	int rc, ret;

	sql_name_text(s, ":name", host);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return store_err(st, rc, "retire");
	map_del(st->hosts, host);
	rc = sqlite3_changes(st->db);
	/* A probe may have registered without ever reporting counters. */
	ret = store_tests_retire(st, host, &tests);
	if (!ret)
		ret = store_regress_retire(st, host, 0, &regress);
	if (!ret)
		ret = store_health_retire(st, host);
	if (ret)
		return ret;
	if (rc == 0 && tests == 0)
		return -ENOENT;
	log_info("store: retired host %s", host);
	return 0;
}

/* rowid order is arrival order: look at the oldest rows only. */
static int store_prune_step(struct store *st, double cutoff, size_t *deleted)
{
	sqlite3_stmt *s = store_stmt(st, SQL_PRUNE_HEAD);
	int rc = sqlite3_step(s);
	double head;

	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return store_err(st, rc, "prune");
	head = sqlite3_column_double(s, 0);
	sqlite3_reset(s);
	if (head >= cutoff)
		return 0;
	s = store_stmt(st, SQL_PRUNE_DEL);
	sql_name_int(s, ":batch", st->opts.prune_batch);
	sql_name_real(s, ":cutoff", cutoff);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return store_err(st, rc, "prune");
	*deleted = (size_t)sqlite3_changes(st->db);
	return 0;
}

int store_prune(struct store *st, double now, size_t *deleted)
{
	int keep = st->opts.retention <= 0;
	size_t n = 0, nr = 0, ng = 0, nf = 0;
	int ret, more = 0;

	if (deleted)
		*deleted = 0;
	if (keep && !st->regress)
		return 0;
	ret = store_begin(st);
	if (ret)
		return ret;
	if (!keep)
		ret = store_prune_step(st, now - st->opts.retention, &n);
	if (!ret && !keep)
		ret = store_prune_results(st, now - st->opts.retention,
					  st->opts.prune_batch, &nr);
	/* stale links go after a window even when history is kept */
	if (!ret)
		ret = more = store_regress_prune(
			st, now, keep ? -INFINITY : now - st->opts.retention,
			st->opts.prune_batch, &ng);
	if (ret > 0)
		ret = 0;
	if (!ret && !keep)
		ret = store_fabric_prune(st, now - st->opts.retention,
					 st->opts.prune_batch, &nf);
	if (!ret)
		ret = store_commit(st);
	else
		store_rollback(st);
	if (ret)
		return ret;
	if (deleted)
		*deleted = n + nr + ng + nf;
	return n >= (size_t)st->opts.prune_batch ||
	       nr >= (size_t)st->opts.prune_batch ||
	       nf >= (size_t)st->opts.prune_batch || more == 1;
}

static long long store_wal_size(const struct store *st)
{
	struct stat sb;

	return stat(st->wal_path, &sb) ? 0 : (long long)sb.st_size;
}

int store_checkpoint(struct store *st, long long *wal_bytes)
{
	int rc, log_frames = 0, done = 0;
	long long size;

	rc = sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
				       &log_frames, &done);
	if (rc != SQLITE_OK && rc != SQLITE_BUSY)
		return store_err(st, rc, "checkpoint");
	size = store_wal_size(st);
	if (size > st->opts.wal_max_bytes) {
		/* TRUNCATE waits for readers: bound the wait, retry later. */
		sqlite3_busy_timeout(st->db, 100);
		rc = sqlite3_wal_checkpoint_v2(st->db, NULL,
					       SQLITE_CHECKPOINT_TRUNCATE,
					       &log_frames, &done);
		sqlite3_busy_timeout(st->db, (int)st->opts.busy_timeout_ms);
		if (rc == SQLITE_BUSY)
			log_once("store-wal", 60, LOG_LVL_WARN,
				 "store: WAL is %lld bytes and a reader blocks "
				 "truncation (%d of %d frames checkpointed)",
				 size, done, log_frames);
		else if (rc != SQLITE_OK)
			return store_err(st, rc, "checkpoint");
		size = store_wal_size(st);
	}
	if (wal_bytes)
		*wal_bytes = size;
	return 0;
}
