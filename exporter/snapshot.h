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
 * Labels are escaped once here (expo_label()): each host, device and port
 * carries its ready-made label list. All strings live in the snapshot's
 * arena and go with snapshot_free().
 */
#ifndef IBPULSE_SNAPSHOT_H
#define IBPULSE_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "counters.h"
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
};

struct snap_host {
	int64_t id;
	const char *name;
	const char *labels; /* host="..." */
	const char *info;   /* probe_version="..." */
	double last_report;
	int up;	    /* reported within stale_after */
	int detail; /* reported within drop_after: series served */
};

/* Unknown numbers are < 0 (doubles) or -1 (integers), as in the schema's NULLs.
 */
struct snap_device {
	int64_t id;
	size_t host;
	const char *labels; /* host="...",device="..." */
	const char *info;   /* board_id="...",firmware_version="...",... */
	double pcie_cur_speed, pcie_max_speed; /* GT/s */
	int64_t pcie_cur_width, pcie_max_width;
	int64_t aer[3]; /* correctable, nonfatal, fatal */
};

struct snap_port {
	int64_t id;
	size_t host, device;
	const char *labels; /* host="...",device="...",port="N" */
	const char *info;   /* link_layer="...",port_guid="...",lid=... */
	int64_t state, phys_state, rate_bytes;
};

struct snap_gid {
	size_t port;
	const char *labels; /* index="...",gid="...",type="...",netdev="..." */
};

struct snap_pkey {
	size_t port;
	const char *labels; /* index="...",pkey="0xffff",membership="full" */
};

/* A distinct counter name, looked up in the counters table once. */
struct snap_key {
	enum counter_source source;
	const char *name;
	const struct counter_def *def;
	const char *extra; /* counter="name" for generic families, else NULL */
	const char
		*sat_extra; /* counter="name" for narrow counters, else NULL */
};

struct snap_row {
	uint32_t port;	/* index into ports */
	uint32_t key;	/* index into keys */
	uint64_t value; /* raw */
};

struct snapshot {
	struct snap_host *hosts;
	size_t n_hosts;
	struct snap_device *devices;
	size_t n_devices;
	struct snap_port *ports;
	size_t n_ports;
	struct snap_gid *gids;
	size_t n_gids;
	struct snap_pkey *pkeys;
	size_t n_pkeys;
	struct snap_key *keys;
	size_t n_keys;
	struct snap_row *rows;
	size_t n_rows;
	struct results *results;    /* fabric tests (results.h) */
	struct regress *regress;    /* baselines, regressions (regress.h) */
	struct fabric_snap *fabric; /* fabric_snap.h */
	struct snapshot_mem *mem;   /* arena, hash and capacities */
};

/*
 * snapshot_db_open() - open @path read-only (it may be a WAL database the
 * collector is writing) and check that its schema is there. Returns 0, or
 * a negative errno with the reason in @err.
 */
int snapshot_db_open(const char *path, int busy_timeout_ms,
		     struct sqlite3 **out, char *err, size_t errlen);

/*
 * snapshot_read() - read what one scrape serves. On success *@out holds a
 * new snapshot (caller frees with snapshot_free()). Returns 0, -ENOMEM,
 * or -EIO with SQLite's message in @err.
 */
int snapshot_read(struct sqlite3 *db, const struct snap_opts *o,
		  struct snapshot **out, char *err, size_t errlen);

void snapshot_free(struct snapshot *s);

/*
 * snapshot_grow() - make room for one more element in the array whose
 * pointer is at @arr (@n used, *@cap allocated; doubles from 64). The
 * scrape's arrays (snapshot.c, results.c) all grow this way. Returns 0 or
 * -ENOMEM, leaving the array as it was.
 */
int snapshot_grow(void *arr, size_t *cap, size_t n, size_t elem);

/*
 * For the readers that add to a snapshot (exporter/fabric_snap.c): a copy of
 * @len bytes of @s in the arena (NULL on -ENOMEM); the index of counter
 * key (@source, @name), added on first sight (-1 on -ENOMEM); one more
 * port (its strings in the arena already) and one more counter row.
 */
const char *snapshot_str(struct snapshot *sn, const char *s, size_t len);
long snapshot_key(struct snapshot *sn, int source, const char *name,
		  size_t len);
int snapshot_add_port(struct snapshot *sn, const struct snap_port *p);
int snapshot_add_row(struct snapshot *sn, uint32_t port, uint32_t key,
		     uint64_t value);

#endif
