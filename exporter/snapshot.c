// SPDX-License-Identifier: MIT
/*
 * Reading the collector's database for one scrape: see snapshot.h. Tables
 * are read in id order so that a child finds its parent by binary search
 * (msnap_find_*()); a row whose parent is not in the snapshot (another
 * shard, a silent host, or a row committed between two of our reads) is
 * skipped.
 */
#include "snapshot.h"
#include "vec.h"
#include "dbread.h"
#include "fabric_snap.h"
#include "fabric_suspect.h"
#include "health_snap.h"
#include "fnv.h"
#include "shard.h"
#include "sqlname.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct snap_read {
	struct msnap *m;
	const struct snap_opts *o;
	unsigned char *skip; /* per host: its rows are not read */
	size_t cap_skip;
	size_t n_detail, n_read; /* hosts with detail; of them, to read */
	struct buf ids;		 /* JSON array of ids for json_each() */
};

/*
 * A host's fingerprint: its change marker and whether its detail is
 * served; 0 without a marker (always read).
 */
static uint64_t host_fp(sqlite3_stmt *s, int64_t id, int detail)
{
	uint64_t v[3];

	if (sqlite3_column_type(s, 4) == SQLITE_NULL)
		return 0;
	v[0] = (uint64_t)sqlite3_column_int64(s, 4);
	v[1] = (uint64_t)id;
	v[2] = (uint64_t)detail;
	return fnv1a_bytes(FNV1A_BASIS, v, sizeof(v)) | 1;
}

static int host_row(void *ctx, sqlite3_stmt *s)
{
	struct snap_read *rd = ctx;
	const char *name = dbread_text(s, 1);
	struct msnap_host_in in = {
		.id = sqlite3_column_int64(s, 0),
		.name = name,
		.probe_version = dbread_text(s, 3),
		.last_report = sqlite3_column_double(s, 2),
	};
	double age = rd->o->now - in.last_report;
	size_t h = rd->m->n_hosts;

	if (!name || shard_of(name, rd->o->shards) != rd->o->shard)
		return 0;
	in.up = age <= rd->o->stale_after;
	in.detail = age <= rd->o->drop_after;
	in.fp = host_fp(s, in.id, in.detail);
	if (vec_grow(&rd->skip, &rd->cap_skip, h, 1))
		return -ENOMEM;
	rd->skip[h] =
		!in.detail || (in.fp && rd->o->held &&
			       rd->o->held(rd->o->held_ctx, in.id, in.fp));
	rd->n_detail += in.detail != 0;
	rd->n_read += !rd->skip[h];
	return msnap_add_host(rd->m, &in);
}

static int device_row(void *ctx, sqlite3_stmt *s)
{
	const struct snap_read *rd = ctx;
	long h = msnap_find_host(rd->m, sqlite3_column_int64(s, 1));
	struct msnap_device_in in = {
		.id = sqlite3_column_int64(s, 0),
		.name = dbread_text(s, 2),
		.node_guid = dbread_text(s, 3),
		.sys_image_guid = dbread_text(s, 4),
		.fw_ver = dbread_text(s, 5),
		.hca_type = dbread_text(s, 6),
		.board_id = dbread_text(s, 7),
		.node_desc = dbread_text(s, 8),
		.numa_node = dbread_int(s, 9),
		.netdevs = dbread_text(s, 10),
		.pcie_address = dbread_text(s, 11),
		.pcie =
			{
				.cur_speed_gts = dbread_real(s, 12),
				.max_speed_gts = dbread_real(s, 13),
				.cur_width = (int)dbread_int(s, 14),
				.max_width = (int)dbread_int(s, 15),
				.aer_correctable = dbread_int(s, 16),
				.aer_nonfatal = dbread_int(s, 17),
				.aer_fatal = dbread_int(s, 18),
			},
	};

	if (h < 0 || rd->skip[h])
		return 0;
	return msnap_add_device(rd->m, (size_t)h, &in);
}

static int port_row(void *ctx, sqlite3_stmt *s)
{
	const struct snap_read *rd = ctx;
	long d = msnap_find_device(rd->m, sqlite3_column_int64(s, 2));
	struct msnap_port_in in = {
		.id = sqlite3_column_int64(s, 0),
		.port = dbread_int(s, 3),
		.state = dbread_int(s, 4),
		.phys_state = dbread_int(s, 5),
		.rate_bytes = dbread_int(s, 6),
		.link_layer = dbread_text(s, 7),
		.lid = dbread_int(s, 8),
		.sm_lid = dbread_int(s, 9),
		.lmc = dbread_int(s, 10),
		.cap_mask = dbread_int(s, 11),
		.port_guid = dbread_text(s, 12),
		.netdev = dbread_text(s, 13),
	};

	return d < 0 ? 0 : msnap_add_port(rd->m, (size_t)d, &in);
}

static int gid_row(void *ctx, sqlite3_stmt *s)
{
	const struct snap_read *rd = ctx;
	long p = msnap_find_port(rd->m, sqlite3_column_int64(s, 0));

	if (p < 0)
		return 0;
	return msnap_add_gid(rd->m, (size_t)p, dbread_int(s, 1),
			     dbread_text(s, 2), dbread_text(s, 3),
			     dbread_text(s, 4));
}

static int pkey_row(void *ctx, sqlite3_stmt *s)
{
	const struct snap_read *rd = ctx;
	long p = msnap_find_port(rd->m, sqlite3_column_int64(s, 0));

	if (p < 0)
		return 0;
	return msnap_add_pkey(rd->m, (size_t)p, dbread_int(s, 1),
			      sqlite3_column_int64(s, 2));
}

/* clang-format off */
#define DEVICE_COLS							\
	"SELECT id, host_id, name, node_guid, sys_image_guid, fw_ver,"	\
	" hca_type, board_id, node_desc, numa_node, netdevs,"		\
	" pcie_address, pcie_cur_speed_gts, pcie_max_speed_gts,"	\
	" pcie_cur_width, pcie_max_width, aer_correctable,"		\
	" aer_nonfatal, aer_fatal"					\
	" FROM device "
#define PORT_COLS							\
	"SELECT id, host_id, device_id, port, state, phys_state,"	\
	" rate_bytes, link_layer, lid, sm_lid, lmc, cap_mask,"		\
	" port_guid, netdev"						\
	" FROM port "
#define GID_COLS							\
	"SELECT port_id, idx, gid, type, netdev "			\
	"FROM port_gid "
#define PKEY_COLS							\
	"SELECT port_id, idx, pkey "					\
	"FROM port_pkey "
#define BY_HOST "WHERE host_id IN (SELECT value FROM json_each(:ids)) "
#define BY_PORT "WHERE port_id IN (SELECT value FROM json_each(:ids)) "
/* clang-format on */

static int read_hosts(sqlite3 *db, struct snap_read *rd, char *err,
		      size_t errlen)
{
	/* clang-format off */
	static const char plain[] =
		"SELECT id, name, last_report, probe_version, NULL "
		"FROM host "
		"ORDER BY id";
	static const char marked[] =
		"SELECT h.id, h.name, h.last_report, h.probe_version, c.seq "
		"FROM host h "
		"LEFT JOIN host_change c ON c.host_id = h.id "
		"ORDER BY h.id";
	/* clang-format on */

	return dbread_each(db,
			   dbread_has_table(db, "host_change") ? marked : plain,
			   "host", NULL, host_row, rd, err, errlen);
}

/* A JSON array of the ids of the hosts to read (@ports 0) or of the
 * ports read (@ports 1), for json_each(). */
static int id_list(struct snap_read *rd, int ports)
{
	const struct msnap *m = rd->m;
	size_t n = ports ? m->n_ports : m->n_hosts;
	int ret;

	buf_reset(&rd->ids);
	ret = buf_addc(&rd->ids, '[');
	for (size_t i = 0, k = 0; !ret && i < n; i++) {
		if (!ports && rd->skip[i])
			continue;
		ret = buf_printf(
			&rd->ids, "%s%lld", k++ ? "," : "",
			(long long)(ports ? m->ports[i].id : m->hosts[i].id));
	}
	return ret ? ret : buf_addc(&rd->ids, ']');
}

/*
 * Devices, ports, GIDs, P_Keys: one statement (read) each; the whole
 * tables when most hosts are read, else those of the hosts to read.
 */
static int read_objects(sqlite3 *db, struct snap_read *rd, char *err,
			size_t errlen)
{
	static const struct {
		const char *what, *all, *some;
		dbread_row_fn fn;
		int by_port;
	} t[] = {
		{"device", DEVICE_COLS "ORDER BY id",
		 DEVICE_COLS BY_HOST "ORDER BY id", device_row, 0},
		{"port", PORT_COLS "ORDER BY id",
		 PORT_COLS BY_HOST "ORDER BY id", port_row, 0},
		{"port_gid/port_pkey", GID_COLS "ORDER BY port_id, idx",
		 GID_COLS BY_PORT "ORDER BY port_id, idx", gid_row, 1},
		{"port_gid/port_pkey", PKEY_COLS "ORDER BY port_id, idx",
		 PKEY_COLS BY_PORT "ORDER BY port_id, idx", pkey_row, 1},
	};
	int some = rd->n_read * 2 < rd->n_detail, ret = 0;

	if (!rd->n_read)
		return 0;
	for (size_t i = 0; !ret && i < sizeof(t) / sizeof(t[0]); i++) {
		struct dbread_arg ids = {.name = ":ids"};

		if (some && (ret = id_list(rd, t[i].by_port)))
			break;
		ids.text = rd->ids.data;
		ret = dbread_each(db, some ? t[i].some : t[i].all, t[i].what,
				  some ? &ids : NULL, t[i].fn, rd, err, errlen);
	}
	return ret;
}

static int change_seq_row(void *ctx, sqlite3_stmt *s)
{
	*(int64_t *)ctx = sqlite3_column_int64(s, 0);
	return 0;
}

/* The collector's change_seq: it only grows, until a database is swapped. */
static int read_change_seq(sqlite3 *db, int64_t *seq, char *err, size_t errlen)
{
	*seq = -1;
	if (!dbread_has_table(db, "change_seq"))
		return 0;
	return dbread_each(db, "SELECT seq FROM change_seq", "change_seq", NULL,
			   change_seq_row, seq, err, errlen);
}

/* Add the row at columns @col.. (source, name, value) for port @port. */
static int row_add(struct msnap *m, size_t port, sqlite3_stmt *s, int col)
{
	const char *name = dbread_text(s, col + 1);
	int source = sqlite3_column_int(s, col);
	long k;

	if (!name || source < 0 || source >= CSRC_COUNT)
		return 0;
	k = msnap_key(m, source, name,
		      (size_t)sqlite3_column_bytes(s, col + 1));
	if (k < 0)
		return -ENOMEM;
	return msnap_add_row(m, (uint32_t)port, (uint32_t)k,
			     (uint64_t)sqlite3_column_int64(s, col + 2));
}

/*
 * Per port, through the (port_id, source, name) index: the counters of
 * ports from *@next on, in one read transaction of about @chunk rows.
 */
static int read_series_ports(sqlite3 *db, sqlite3_stmt *s, struct msnap *m,
			     size_t *next, size_t chunk, char *err,
			     size_t errlen)
{
	size_t start = m->n_rows, p = *next;
	int rc, ret = 0, port_id = sql_param(s, ":port_id");

	rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return dbread_err(db, rc, "series", err, errlen);
	for (; p < m->n_ports && !ret && m->n_rows - start < chunk; p++) {
		sqlite3_bind_int64(s, port_id, m->ports[p].id);
		while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
			ret = row_add(m, p, s, 0);
		if (!ret && rc != SQLITE_DONE)
			ret = dbread_err(db, rc, "series", err, errlen);
		sqlite3_reset(s);
	}
	rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (!ret && rc != SQLITE_OK)
		ret = dbread_err(db, rc, "series", err, errlen);
	*next = p;
	return ret;
}

/*
 * The whole table in rowid order, @chunk rows per statement (each its own
 * read transaction), resuming after the last rowid seen: no index lookups,
 * for scrapes that serve most ports. Rows of ports not served are skipped.
 */
static int read_series_scan(sqlite3 *db, sqlite3_stmt *s, struct msnap *m,
			    int64_t *after, size_t chunk, int *done, char *err,
			    size_t errlen)
{
	int64_t port_id = -1;
	long port = -1;
	size_t n = 0;
	int rc, ret = 0;

	sql_name_int(s, ":after", *after);
	sql_name_int(s, ":limit", (sqlite3_int64)chunk);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 1);

		*after = sqlite3_column_int64(s, 0);
		n++;
		if (id != port_id) { /* rows of one port mostly come together */
			port_id = id;
			port = msnap_find_port(m, id);
		}
		if (port >= 0)
			ret = row_add(m, (size_t)port, s, 2);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = dbread_err(db, rc, "series", err, errlen);
	sqlite3_reset(s);
	*done = n < chunk;
	return ret;
}

static int read_series(sqlite3 *db, struct msnap *m, size_t chunk, int scan,
		       char *err, size_t errlen)
{
	/* clang-format off */
	static const char port_sql[] =
		"SELECT source, name, value "
		"FROM series "
		"WHERE port_id = :port_id";
	static const char scan_sql[] =
		"SELECT id, port_id, source, name, value"
		" FROM series"
		" WHERE id > :after"
		" ORDER BY id"
		" LIMIT :limit";
	/* clang-format on */
	sqlite3_stmt *s;
	int64_t after = 0;
	size_t next = 0;
	int rc, ret = 0, done = 0;

	rc = sql_prepare(db, scan ? scan_sql : port_sql, 0, &s);
	if (rc != SQLITE_OK)
		return dbread_err(db, rc, "series", err, errlen);
	if (!chunk)
		chunk = 1;
	while (!ret && !done) {
		if (scan) {
			ret = read_series_scan(db, s, m, &after, chunk, &done,
					       err, errlen);
		} else {
			ret = read_series_ports(db, s, m, &next, chunk, err,
						errlen);
			done = next >= m->n_ports;
		}
	}
	sqlite3_finalize(s);
	return ret;
}

/*
 * Scan the whole table when the scrape serves at least half of its ports
 * (an unsharded scrape, typically); look each port up otherwise.
 */
static int read_series_best(sqlite3 *db, struct msnap *m, size_t chunk,
			    char *err, size_t errlen)
{
	sqlite3_stmt *s;
	int64_t total = 0;
	int rc;

	rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM port", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return dbread_err(db, rc, "port", err, errlen);
	if (sqlite3_step(s) == SQLITE_ROW)
		total = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return read_series(db, m, chunk, (int64_t)m->n_ports * 2 >= total, err,
			   errlen);
}

static int read_results(sqlite3 *db, struct snapshot *sn,
			const struct snap_opts *o, char *err, size_t errlen)
{
	struct results_opts ro = {
		.now = o->now,
		.period = o->test_period,
		.stale_after = o->stale_after,
		.shard = o->shard,
		.shards = o->shards,
		.max_pairs = o->max_pairs,
		.max_ahead = o->results_max_ahead,
		.group_label = o->group_label,
		.chunk_rows = o->chunk_rows,
		.keep = o->keep,
	};

	return results_read(db, &ro, &sn->results, err, errlen);
}

static int read_regress(sqlite3 *db, struct snapshot *sn,
			const struct snap_opts *o, char *err, size_t errlen)
{
	struct regress_opts ro = {
		.now = o->now,
		.period = o->test_period,
		.shard = o->shard,
		.shards = o->shards,
		.max_links = o->max_pairs,
		.chunk_rows = o->chunk_rows,
	};

	return regress_read(db, &ro, &sn->regress, err, errlen);
}

int snapshot_read(sqlite3 *db, const struct snap_opts *o, struct snapshot **out,
		  char *err, size_t errlen)
{
	struct snapshot *sn = calloc(1, sizeof(*sn));
	struct snap_read rd = {.o = o};
	int ret = -ENOMEM;

	buf_init(&rd.ids, 0);
	if (!sn || msnap_new(&sn->m))
		goto out;
	rd.m = sn->m;
	ret = read_change_seq(db, &sn->change_seq, err, errlen);
	if (!ret)
		ret = read_hosts(db, &rd, err, errlen);
	if (!ret)
		ret = read_objects(db, &rd, err, errlen);
	sn->hosts_read = rd.n_read;
	if (!ret && sn->m->n_ports)
		ret = read_series_best(db, sn->m, o->chunk_rows, err, errlen);
	if (!ret)
		ret = read_results(db, sn, o, err, errlen);
	if (!ret)
		ret = read_regress(db, sn, o, err, errlen);
	if (!ret)
		ret = fabric_read(db, o, sn, err, errlen);
	if (!ret)
		ret = fsus_read(db, o, &sn->fsus, err, errlen);
	if (!ret)
		ret = health_read(db, o->shard, o->shards, &sn->health, err,
				  errlen);
out:
	free(rd.skip);
	buf_free(&rd.ids);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory reading the database");
	if (ret) {
		snapshot_free(sn);
		return ret;
	}
	*out = sn;
	return 0;
}

void snapshot_free(struct snapshot *s)
{
	if (!s)
		return;
	msnap_free(s->m);
	results_free(s->results);
	regress_free(s->regress);
	fabric_snap_free(s->fabric);
	fsus_free(s->fsus);
	health_snap_free(s->health);
	free(s);
}
