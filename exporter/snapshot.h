/* SPDX-License-Identifier: MIT */
/*
 * A snapshot of the collector's database as one scrape needs it: hosts
 * (all of the shard's, silent ones included), and for each host still
 * fresh enough its devices, ports, GIDs, P_Keys and counters. The database
 * is opened read-only and read in short transactions, one per table and
 * one per chunk of counter rows, so a scrape never holds a read
 * transaction for long and never while a response is being sent; the
 * whole body is built from the snapshot afterwards. Counters are read by
 * a rowid scan when the scrape serves most ports, through the port index
 * when it serves a few (a shard).
 *
 * The hosts, devices and ports go into a common/msnap.h snapshot, whose
 * label lists and renderer the probe's own /metrics shares.
 *
 * With the collector's change markers (schema/008_exporter_changes.sql)
 * each host gets a fingerprint of its host_change.seq; the rows of a
 * host the block cache holds at that fingerprint are not read at all, and
 * those of the others are read by host (json_each() lists) when they are
 * few.
 */
#ifndef IBPULSE_SNAPSHOT_H
#define IBPULSE_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "msnap.h"
#include "regress.h"
#include "results.h"

struct sqlite3;

struct snap_opts {
	double now;		/* seconds since the epoch */
	double stale_after;	/* host_up is 0 past this many seconds */
	double drop_after;	/* port/device series omitted past this */
	unsigned shard, shards; /* serve hosts with shard_of() == shard */
	size_t chunk_rows;	/* counter rows per read transaction (about) */
	double test_period;	/* window of the test result aggregates */
	size_t max_pairs;	/* per-pair test results served at most */
	double results_max_ahead; /* results started later are not served */
	const char *group_label;  /* probe label that names a group */
	/*
	 * The block cache (bcache.h): 1 when it holds the rendered devices,
	 * ports and counters of host @id as made from @fp; such a host's rows
	 * are not read. NULL: read every host.
	 */
	int (*held)(void *ctx, int64_t id, uint64_t fp);
	void *held_ctx;
	struct res_keep *keep; /* the test results kept (results.h); NULL */
};

/*
 * The scrape: the hosts, devices, ports and counters in @m (common/msnap.h,
 * rendered by msnap_render(); switch ports from the fabric tables are
 * ports there too), and what only the exporter serves.
 */
struct snapshot {
	struct msnap *m;    /* hosts[].fp: their change marker and detail */
	int64_t change_seq; /* change_seq.seq; -1 without the table */
	size_t hosts_read;  /* hosts whose rows were read */
	struct results *results;    /* fabric tests (results.h) */
	struct regress *regress;    /* baselines, regressions (regress.h) */
	struct fabric_snap *fabric; /* fabric_snap.h */
	struct fsus *fsus;	    /* fabric_suspect.h */
	struct health_snap *health; /* host verdicts (health.h) */
};

/*
 * snapshot_read() - read what one scrape serves from @db (dbread_open()).
 * On success *@out holds a new snapshot (caller frees with
 * snapshot_free()). Returns 0, -ENOMEM, or -EIO with SQLite's message in
 * @err.
 */
int snapshot_read(struct sqlite3 *db, const struct snap_opts *o,
		  struct snapshot **out, char *err, size_t errlen);

void snapshot_free(struct snapshot *s);

#endif
