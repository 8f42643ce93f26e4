/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by store.c (connection, transactions, maintenance) and
 * store_put.c (reports to rows, and the cache that makes unchanged counters
 * free). Not for other files.
 */
#ifndef IBPULSE_COLLECTOR_STORE_INT_H
#define IBPULSE_COLLECTOR_STORE_INT_H

#include "store.h"
#include "hmap.h"
#include "sqlname.h"

#include <sqlite3.h>

enum store_sql {
	SQL_BEGIN,
	SQL_COMMIT,
	SQL_ROLLBACK,
	SQL_HOST_UPSERT,
	SQL_DEVICE_UPSERT,
	SQL_PORT_UPSERT,
	SQL_GID_DEL,
	SQL_GID_INS,
	SQL_PKEY_DEL,
	SQL_PKEY_INS,
	SQL_SERIES_LOAD,
	SQL_SERIES_INS,
	SQL_SERIES_UPD,
	SQL_SAMPLE_INS,
	SQL_HOST_DEL,
	SQL_PRUNE_HEAD,
	SQL_PRUNE_DEL,
	SQL_DATA_VERSION,
	SQL_COUNT
};

/* Statements on the test tables (store_tests.c). */
enum store_tsql {
	TSQL_PROBE_UPSERT,
	TSQL_LABEL_DEL,
	TSQL_LABEL_INS,
	TSQL_PORT_DEL,
	TSQL_PORT_INS,
	TSQL_RESULT_INS,
	TSQL_PAIR_UPSERT,
	TSQL_DROPPED_UPSERT,
	TSQL_PAUSE_UPSERT,
	TSQL_PAUSE_GET,
	TSQL_PROBES_LOAD,
	TSQL_PORTS_LOAD,
	TSQL_PLAN_DEL,
	TSQL_PLAN_INS,
	TSQL_COVER_PAIRS,
	TSQL_COVER_PORTS,
	TSQL_RETIRE_PROBE,
	TSQL_RETIRE_PAUSE,
	TSQL_RETIRE_DROPPED,
	TSQL_RETIRE_RESULTS,
	TSQL_RETIRE_PAIRS,
	TSQL_RETIRE_PLAN,
	TSQL_PRUNE_RESULTS,
	TSQL_PORT_KNOWN,
	TSQL_CAPS_LOAD,
	TSQL_COUNT
};

/*
 * The parameter indexes of the statements store_put.c runs per counter,
 * looked up by name once, at open (store_put_params()).
 */
struct store_put_ix {
	int sample_series, sample_ts, sample_value; /* SQL_SAMPLE_INS */
	int upd_id, upd_value, upd_changed;	    /* SQL_SERIES_UPD */
};

/* Fill st->put_ix from the prepared statements; -EINVAL, logged, when one
 * lacks a name. */
int store_put_params(struct store *st);

/* One counter as the database holds it (an entry of cache_port.series). */
struct cache_series {
	const char *name; /* interned in store.names */
	int64_t id;
	uint64_t value;
	double hist_ts; /* last history row; 0 unknown (keyframe next) */
	int source;
};

struct cache_port {
	unsigned num;
	int64_t id;
	uint64_t hash;	    /* of attributes, GIDs and P_Keys */
	struct hmap series; /* of struct cache_series, on (source, name) */
};

struct cache_device {
	int64_t id;
	uint64_t hash;
	struct cache_port **ports;
	size_t n_ports;
};

struct cache_host {
	int64_t id;
	struct map *devices; /* name -> struct cache_device */
};

struct store {
	struct store_opts opts;
	char *path, *wal_path;
	sqlite3 *db;
	sqlite3_stmt *sql[SQL_COUNT];
	struct store_put_ix put_ix;	/* store_put.c's per-counter binds */
	sqlite3_stmt *tsql[TSQL_COUNT]; /* store_tests.c */
	struct store_regress *regress;	/* store_regress.c; NULL: off */
	int in_txn;
	long long data_version; /* to notice other writers (retire CLI) */
	struct map *hosts;	/* name -> struct cache_host */
	struct map *names;	/* interned counter names */
	size_t n_series;	/* cached series, all ports */
	struct map *caps;	/* host -> struct tcap (store_tests.c) */
	char last_error[160];	/* sqlite3_errmsg of the last failure */

	struct store_fabric *fabric;	 /* store_fabric.c */
	struct store_route *route;	 /* store_route.c */
	struct store_localize *localize; /* store_localize.c; NULL: off */
	struct store_health *health;	 /* store_health.c; NULL: off */
	sqlite3_stmt *change[2];	 /* store_change.c; NULL: no table */
	size_t put_rows; /* device/port rows the report being put wrote */
};

/* Convert an SQLite result code to a negative errno, logging @what. */
int store_err(struct store *st, int rc, const char *what);
/* Reset and clear bindings of a cached statement; returns it. */
sqlite3_stmt *store_stmt(struct store *st, enum store_sql which);

/* The same for the test statements (store_tests.c). */
sqlite3_stmt *store_tstmt(struct store *st, enum store_tsql which);
/* Step @s (bindings in place) to SQLITE_DONE and reset it; errors via
 * store_err() naming @what. */
int store_done(struct store *st, sqlite3_stmt *s, const char *what);
int store_cache_new(struct store *st);
void store_cache_drop(struct store *st);
void store_cache_free(struct store *st);

#endif
