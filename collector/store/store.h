/* SPDX-License-Identifier: MIT */
/*
 * The collector's database: one write connection (owned by the writer
 * thread, see writer.h) that applies the schema at open, turns decoded
 * reports into rows, and runs the maintenance (history retention, WAL
 * checkpoints). Durability: WAL with synchronous=FULL, so a transaction
 * that store_commit() reports committed survives a crash or a power loss.
 *
 * An in-memory cache of what the database holds (host, device and port ids
 * with a hash of their attributes; per counter its series id, last value
 * and last history time) lets an unchanged counter cost no SQL at all.
 * store_rollback() drops the cache, which is rebuilt from the database.
 *
 * Not thread-safe: one thread uses a store.
 */
#ifndef IBPULSE_COLLECTOR_STORE_H
#define IBPULSE_COLLECTOR_STORE_H

#include <stddef.h>
#include <stdint.h>

struct baseline_opts;
struct evidence_opts;
struct store_localize_opts;
struct health_opts;
struct report;
struct store;

struct store_opts {
	const char *path;
	const char *schema_dir;
	long long busy_timeout_ms;
	double keyframe_interval; /* seconds */
	double retention;	  /* seconds of history; 0 keeps all */
	long long prune_batch;	  /* rows per store_prune() step */
	long long wal_max_bytes;
	/* baselines and regressions (store_regress.h); NULL: not judged */
	const struct baseline_opts *baseline;
	/* evidence per element and suspects (store_evidence.h); NULL: none */
	const struct evidence_opts *evidence;
	const char *group_label; /* probe label naming a host's group */
	/* where in the fabric (store_localize.h); NULL: off */
	const struct store_localize_opts *localize;
	/* host health verdicts (store_health.h); NULL: not judged */
	const struct health_opts *health;
	/* What one host's results may add (store_results(); docs/api.md) */
	double results_max_age;		/* "started" at most this far back */
	double results_max_ahead;	/* ... and at most this far ahead */
	double results_period;		/* the caps' window: the plan period */
	long long results_max_peers;	/* distinct peer ports per period */
	long long results_max_profiles; /* distinct profiles per period */
};

/* What one report cost, for logs and responses. */
struct store_stats {
	size_t samples;		/* counters in the report */
	size_t series_written;	/* series rows inserted or updated */
	size_t history_written; /* sample rows inserted */
	size_t rows_written;	/* device and port rows (with GIDs, P_Keys) */
};

/*
 * store_global_init() - SQLite settings for the whole process; call first
 * thing in main(), before any other SQLite use (later calls do nothing).
 */
void store_global_init(void);

/*
 * store_open() - open or create the database, set WAL, synchronous=FULL,
 * foreign_keys and busy_timeout, apply the schema. Returns 0, -EPROTO for
 * a database newer than the schema files, or another negative errno.
 */
int store_open(const struct store_opts *o, struct store **out);
/* Close (a transaction in progress is rolled back). NULL is fine. */
void store_close(struct store *st);
int store_schema_version(struct store *st);

int store_begin(struct store *st);
int store_commit(struct store *st);
/* Roll back the open transaction and drop the cache. */
void store_rollback(struct store *st);

/*
 * store_put_report() - write @r received at @now (collector clock) inside
 * the open transaction: upsert host, devices, ports, GIDs and P_Keys when
 * they changed, series rows for changed counters, and history rows for
 * changed counters and for those whose last history row is older than
 * the keyframe interval. Returns 0 or a negative errno (the caller rolls
 * back). @stats may be NULL.
 */
int store_put_report(struct store *st, const struct report *r, double now,
		     struct store_stats *stats);

/*
 * store_retire() - delete @host and, by cascade, everything it reported.
 * Inside the open transaction. 0, -ENOENT for an unknown host, or -errno.
 */
int store_retire(struct store *st, const char *host);

/*
 * store_prune() - one retention step in its own transaction: delete up to
 * prune_batch of the oldest history rows older than now - retention.
 * *@deleted (may be NULL) gets the count. Returns 1 when it deleted a full
 * batch (more is due: call again), 0 when done, or a negative errno.
 */
int store_prune(struct store *st, double now, size_t *deleted);

/*
 * store_checkpoint() - a PASSIVE checkpoint, then a TRUNCATE attempt with
 * a short busy timeout if the WAL is still larger than wal_max_bytes (a
 * reader pinning old pages must not let it grow without bound). Returns 0
 * or -errno; *@wal_bytes (may be NULL) gets the WAL size afterwards.
 */
int store_checkpoint(struct store *st, long long *wal_bytes);

/* SQLite's message for the last failure ("" if none); lives in @st. */
const char *store_last_error(const struct store *st);

/* Number of cached series (tests and logs). */
size_t store_cached_series(const struct store *st);

/* The rest of the door (collector/store/: one folder, this one header
 * for the rest of the collector): tests and plans, judgements,
 * evidence, localization, routes, host health. */
#include "store_evidence.h"
#include "store_health.h"
#include "store_localize.h"
#include "store_regress.h"
#include "store_route.h"
#include "store_tests.h"

#endif
