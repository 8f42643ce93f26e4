// SPDX-License-Identifier: MIT
/*
 * Reading the collector's database for one scrape: see snapshot.h. Tables
 * are read in id order so that a child finds its parent by binary search;
 * a row whose parent is not in the snapshot (another shard, a silent host,
 * or a row committed between two of our reads) is skipped.
 */
#include "snapshot.h"
#include "fnv.h"
#include "fabric_snap.h"
#include "expo.h"
#include "shard.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK (256 * 1024)

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	max_align_t data[];
};

struct snapshot_mem {
	struct arena_block *blocks;
	size_t cap_hosts, cap_devices, cap_ports, cap_gids, cap_pkeys;
	size_t cap_keys, cap_rows;
	uint32_t *slots; /* key hash: index + 1, 0 empty */
	size_t n_slots;
	struct buf scratch; /* label lists being built */
};

static void *arena_alloc(struct snapshot_mem *m, size_t n)
{
	struct arena_block *b = m->blocks;
	size_t need = (n + 15) & ~(size_t)15;

	if (!b || b->size - b->used < need) {
		size_t size = need > ARENA_BLOCK ? need : ARENA_BLOCK;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->size = size;
		b->used = 0;
		b->next = m->blocks;
		m->blocks = b;
	}
	b->used += need;
	return (char *)b->data + b->used - need;
}

static const char *arena_str(struct snapshot_mem *m, const char *s, size_t len)
{
	char *p = arena_alloc(m, len + 1);

	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* The label list in the scratch buffer, copied into the arena. */
static const char *arena_labels(struct snapshot_mem *m)
{
	return arena_str(m, m->scratch.data ? m->scratch.data : "",
			 m->scratch.len);
}

/*
 * Make room for one more element in the array whose pointer is at @arr
 * (@n used, *@cap allocated). The pointer is read and written with memcpy:
 * it is a struct pointer, not a void *, and must not be accessed as one.
 */
int snapshot_grow(void *arr, size_t *cap, size_t n, size_t elem)
{
	void *p, *q;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	memcpy(&p, arr, sizeof(p));
	q = realloc(p, c * elem);
	if (!q)
		return -ENOMEM;
	memcpy(arr, &q, sizeof(q));
	*cap = c;
	return 0;
}

static int sql_err(sqlite3 *db, int rc, const char *what, char *err,
		   size_t errlen)
{
	snprintf(err, errlen, "%s: %s (%s)", what, sqlite3_errmsg(db),
		 sqlite3_errstr(rc));
	return -EIO;
}

static const char *col_text(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

static int64_t col_int(sqlite3_stmt *s, int i)
{
	if (sqlite3_column_type(s, i) == SQLITE_NULL)
		return -1;
	return sqlite3_column_int64(s, i);
}

static double col_double(sqlite3_stmt *s, int i)
{
	if (sqlite3_column_type(s, i) == SQLITE_NULL)
		return -1;
	return sqlite3_column_double(s, i);
}

int snapshot_db_open(const char *path, int busy_timeout_ms, sqlite3 **out,
		     char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	sqlite3 *db = NULL;
	int rc, version = 0;

	rc = sqlite3_open_v2(path, &db,
			     SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	sqlite3_busy_timeout(db, busy_timeout_ms);
	rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		version = sqlite3_column_int(s, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_OK)
		goto fail;
	if (version < 1) {
		snprintf(err, errlen,
			 "%s: no ibpulse schema (user_version %d); "
			 "has the collector started?",
			 path, version);
		sqlite3_close(db);
		return -ENOENT;
	}
	*out = db;
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", path,
		 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
	sqlite3_close(db);
	return -EIO;
}

static int host_add(struct snapshot *sn, const struct snap_opts *o,
		    sqlite3_stmt *s)
{
	struct snapshot_mem *m = sn->mem;
	const char *name = col_text(s, 1);
	struct snap_host *h;
	double age;

	if (!name || shard_of(name, o->shards) != o->shard)
		return 0;
	if (snapshot_grow(&sn->hosts, &m->cap_hosts, sn->n_hosts, sizeof(*h)))
		return -ENOMEM;
	h = &sn->hosts[sn->n_hosts];
	h->id = sqlite3_column_int64(s, 0);
	h->last_report = sqlite3_column_double(s, 2);
	age = o->now - h->last_report;
	h->up = age <= o->stale_after;
	h->detail = age <= o->drop_after;
	buf_reset(&m->scratch);
	if (expo_label(&m->scratch, "host", name))
		return -ENOMEM;
	h->name = arena_str(m, name, strlen(name));
	h->labels = arena_labels(m);
	buf_reset(&m->scratch);
	if (expo_label(&m->scratch, "probe_version", col_text(s, 3)))
		return -ENOMEM;
	h->info = arena_labels(m);
	if (!h->name || !h->labels || !h->info)
		return -ENOMEM;
	sn->n_hosts++;
	return 0;
}

static int read_hosts(sqlite3 *db, struct snapshot *sn,
		      const struct snap_opts *o, char *err, size_t errlen)
{
	static const char sql[] = "SELECT id, name, last_report, probe_version "
				  "FROM host ORDER BY id";
	sqlite3_stmt *s;
	int rc, ret = 0;

	rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sql_err(db, rc, "host", err, errlen);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
		ret = host_add(sn, o, s);
	if (!ret && rc != SQLITE_DONE)
		ret = sql_err(db, rc, "host", err, errlen);
	sqlite3_finalize(s);
	return ret;
}

/*
 * Binary search by id in an array sorted by id, whose elements (@stride
 * bytes) start with their int64_t id; -1 when absent.
 */
static long find_id(const void *arr, size_t n, size_t stride, int64_t want)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t id;

		memcpy(&id, (const char *)arr + mid * stride, sizeof(id));
		if (id < want)
			lo = mid + 1;
		else if (id > want)
			hi = mid;
		else
			return (long)mid;
	}
	return -1;
}

static long find_host(const struct snapshot *sn, int64_t id)
{
	return find_id(sn->hosts, sn->n_hosts, sizeof(*sn->hosts), id);
}

static long find_device(const struct snapshot *sn, int64_t id)
{
	return find_id(sn->devices, sn->n_devices, sizeof(*sn->devices), id);
}

static long find_port(const struct snapshot *sn, int64_t id)
{
	return find_id(sn->ports, sn->n_ports, sizeof(*sn->ports), id);
}

static int device_info(struct buf *b, sqlite3_stmt *s)
{
	static const struct {
		const char *label;
		int col;
	} text[] = {
		{"board_id", 7},  {"firmware_version", 5}, {"hca_type", 6},
		{"node_guid", 3}, {"sys_image_guid", 4},   {"node_desc", 8},
		{"netdevs", 10},  {"pcie_address", 11},
	};
	int ret = 0;

	for (size_t i = 0; !ret && i < sizeof(text) / sizeof(text[0]); i++)
		ret = expo_label(b, text[i].label, col_text(s, text[i].col));
	if (!ret)
		ret = expo_label_int(b, "numa_node", col_int(s, 9), 0);
	return ret;
}

static int device_add(struct snapshot *sn, sqlite3_stmt *s)
{
	struct snapshot_mem *m = sn->mem;
	long h = find_host(sn, sqlite3_column_int64(s, 1));
	struct snap_device *d;
	int ret;

	if (h < 0 || !sn->hosts[h].detail)
		return 0;
	if (snapshot_grow(&sn->devices, &m->cap_devices, sn->n_devices,
			  sizeof(*d)))
		return -ENOMEM;
	d = &sn->devices[sn->n_devices];
	d->id = sqlite3_column_int64(s, 0);
	d->host = (size_t)h;
	buf_reset(&m->scratch);
	ret = buf_adds(&m->scratch, sn->hosts[h].labels);
	if (!ret)
		ret = expo_label(&m->scratch, "device", col_text(s, 2));
	if (ret || !(d->labels = arena_labels(m)))
		return -ENOMEM;
	buf_reset(&m->scratch);
	if (device_info(&m->scratch, s) || !(d->info = arena_labels(m)))
		return -ENOMEM;
	d->pcie_cur_speed = col_double(s, 12);
	d->pcie_max_speed = col_double(s, 13);
	d->pcie_cur_width = col_int(s, 14);
	d->pcie_max_width = col_int(s, 15);
	for (int i = 0; i < 3; i++)
		d->aer[i] = col_int(s, 16 + i);
	sn->n_devices++;
	return 0;
}

static int read_devices(sqlite3 *db, struct snapshot *sn, char *err,
			size_t errlen)
{
	static const char sql[] =
		"SELECT id, host_id, name, node_guid, sys_image_guid, fw_ver,"
		" hca_type, board_id, node_desc, numa_node, netdevs,"
		" pcie_address, pcie_cur_speed_gts, pcie_max_speed_gts,"
		" pcie_cur_width, pcie_max_width, aer_correctable,"
		" aer_nonfatal, aer_fatal FROM device ORDER BY id";
	sqlite3_stmt *s;
	int rc, ret = 0;

	rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sql_err(db, rc, "device", err, errlen);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
		ret = device_add(sn, s);
	if (!ret && rc != SQLITE_DONE)
		ret = sql_err(db, rc, "device", err, errlen);
	sqlite3_finalize(s);
	return ret;
}

static int port_info(struct buf *b, sqlite3_stmt *s)
{
	int ret;

	ret = expo_label(b, "link_layer", col_text(s, 7));
	if (!ret)
		ret = expo_label(b, "port_guid", col_text(s, 12));
	if (!ret)
		ret = expo_label_int(b, "lid", col_int(s, 8), 0);
	if (!ret)
		ret = expo_label_int(b, "sm_lid", col_int(s, 9), 0);
	if (!ret)
		ret = expo_label_int(b, "lmc", col_int(s, 10), 0);
	if (!ret)
		ret = expo_label_int(b, "cap_mask", col_int(s, 11), 8);
	if (!ret)
		ret = expo_label(b, "netdev", col_text(s, 13));
	return ret;
}

static int port_add(struct snapshot *sn, sqlite3_stmt *s)
{
	struct snapshot_mem *m = sn->mem;
	long d = find_device(sn, sqlite3_column_int64(s, 2));
	struct snap_port *p;
	int ret;

	if (d < 0)
		return 0;
	if (snapshot_grow(&sn->ports, &m->cap_ports, sn->n_ports, sizeof(*p)))
		return -ENOMEM;
	p = &sn->ports[sn->n_ports];
	p->id = sqlite3_column_int64(s, 0);
	p->device = (size_t)d;
	p->host = sn->devices[d].host;
	buf_reset(&m->scratch);
	ret = buf_adds(&m->scratch, sn->devices[d].labels);
	if (!ret)
		ret = expo_label_int(&m->scratch, "port", col_int(s, 3), 0);
	if (ret || !(p->labels = arena_labels(m)))
		return -ENOMEM;
	buf_reset(&m->scratch);
	if (port_info(&m->scratch, s) || !(p->info = arena_labels(m)))
		return -ENOMEM;
	p->state = col_int(s, 4);
	p->phys_state = col_int(s, 5);
	p->rate_bytes = col_int(s, 6);
	sn->n_ports++;
	return 0;
}

static int read_ports(sqlite3 *db, struct snapshot *sn, char *err,
		      size_t errlen)
{
	static const char sql[] =
		"SELECT id, host_id, device_id, port, state, phys_state,"
		" rate_bytes, link_layer, lid, sm_lid, lmc, cap_mask,"
		" port_guid, netdev FROM port ORDER BY id";
	sqlite3_stmt *s;
	int rc, ret = 0;

	rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sql_err(db, rc, "port", err, errlen);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
		ret = port_add(sn, s);
	if (!ret && rc != SQLITE_DONE)
		ret = sql_err(db, rc, "port", err, errlen);
	sqlite3_finalize(s);
	return ret;
}

/* An unset GID table entry reads as all zeros. */
static int gid_is_zero(const char *gid)
{
	for (; *gid; gid++)
		if (*gid != '0' && *gid != ':')
			return 0;
	return 1;
}

static int gid_add(struct snapshot *sn, sqlite3_stmt *s)
{
	struct snapshot_mem *m = sn->mem;
	long p = find_port(sn, sqlite3_column_int64(s, 0));
	const char *gid = col_text(s, 2);
	struct snap_gid *g;
	int ret;

	if (p < 0 || !gid || gid_is_zero(gid))
		return 0;
	if (snapshot_grow(&sn->gids, &m->cap_gids, sn->n_gids, sizeof(*g)))
		return -ENOMEM;
	g = &sn->gids[sn->n_gids];
	g->port = (size_t)p;
	buf_reset(&m->scratch);
	ret = expo_label_int(&m->scratch, "index", col_int(s, 1), 0);
	if (!ret)
		ret = expo_label(&m->scratch, "gid", gid);
	if (!ret)
		ret = expo_label(&m->scratch, "type", col_text(s, 3));
	if (!ret)
		ret = expo_label(&m->scratch, "netdev", col_text(s, 4));
	if (ret || !(g->labels = arena_labels(m)))
		return -ENOMEM;
	sn->n_gids++;
	return 0;
}

static int pkey_add(struct snapshot *sn, sqlite3_stmt *s)
{
	struct snapshot_mem *m = sn->mem;
	long p = find_port(sn, sqlite3_column_int64(s, 0));
	int64_t pkey = sqlite3_column_int64(s, 2);
	struct snap_pkey *k;
	int ret;

	/* base 0 (0x0000, 0x8000) marks an unused table entry */
	if (p < 0 || !(pkey & 0x7fff))
		return 0;
	if (snapshot_grow(&sn->pkeys, &m->cap_pkeys, sn->n_pkeys, sizeof(*k)))
		return -ENOMEM;
	k = &sn->pkeys[sn->n_pkeys];
	k->port = (size_t)p;
	buf_reset(&m->scratch);
	ret = expo_label_int(&m->scratch, "index", col_int(s, 1), 0);
	if (!ret)
		ret = expo_label_int(&m->scratch, "pkey", pkey & 0xffff, 4);
	if (!ret)
		ret = expo_label(&m->scratch, "membership",
				 pkey & 0x8000 ? "full" : "limited");
	if (ret || !(k->labels = arena_labels(m)))
		return -ENOMEM;
	sn->n_pkeys++;
	return 0;
}

static int read_addresses(sqlite3 *db, struct snapshot *sn, char *err,
			  size_t errlen)
{
	static const char gid_sql[] =
		"SELECT port_id, idx, gid, type, netdev FROM port_gid"
		" ORDER BY port_id, idx";
	static const char pkey_sql[] = "SELECT port_id, idx, pkey FROM "
				       "port_pkey ORDER BY port_id, idx";
	const char *sql[2] = {gid_sql, pkey_sql};
	int rc, ret = 0;

	for (int t = 0; t < 2 && !ret; t++) {
		sqlite3_stmt *s;

		rc = sqlite3_prepare_v2(db, sql[t], -1, &s, NULL);
		if (rc != SQLITE_OK)
			return sql_err(db, rc, "port_gid/port_pkey", err,
				       errlen);
		while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
			ret = t ? pkey_add(sn, s) : gid_add(sn, s);
		if (!ret && rc != SQLITE_DONE)
			ret = sql_err(db, rc, "port_gid/port_pkey", err,
				      errlen);
		sqlite3_finalize(s);
	}
	return ret;
}

static uint64_t key_hash(int source, const char *name, size_t len)
{
	return fnv1a_bytes(FNV1A_BASIS ^ (uint64_t)source, name, len);
}

static int key_rehash(struct snapshot *sn, size_t n_slots)
{
	struct snapshot_mem *m = sn->mem;
	uint32_t *slots = calloc(n_slots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < sn->n_keys; i++) {
		const struct snap_key *k = &sn->keys[i];
		size_t j = key_hash(k->source, k->name, strlen(k->name)) &
			   (n_slots - 1);

		while (slots[j])
			j = (j + 1) & (n_slots - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(m->slots);
	m->slots = slots;
	m->n_slots = n_slots;
	return 0;
}

/* A new key: its table entry and its ready-made counter="name" label. */
static int key_new(struct snapshot *sn, int source, const char *name,
		   size_t len)
{
	struct snapshot_mem *m = sn->mem;
	struct snap_key *k;
	const char *label;

	if (snapshot_grow(&sn->keys, &m->cap_keys, sn->n_keys, sizeof(*k)))
		return -ENOMEM;
	k = &sn->keys[sn->n_keys];
	k->source = (enum counter_source)source;
	k->name = arena_str(m, name, len);
	if (!k->name)
		return -ENOMEM;
	k->def = counters_describe(k->source, k->name);
	buf_reset(&m->scratch);
	if (expo_label(&m->scratch, "counter", k->name) ||
	    !(label = arena_labels(m)))
		return -ENOMEM;
	k->extra = k->def && k->def->label ? label : NULL;
	k->sat_extra = k->def && k->def->width ? label : NULL;
	sn->n_keys++;
	return 0;
}

/* The index of key (@source, @name), added on first sight; -1 on ENOMEM. */
static long key_find(struct snapshot *sn, int source, const char *name,
		     size_t len)
{
	struct snapshot_mem *m = sn->mem;
	size_t j;

	if ((sn->n_keys + 1) * 2 > m->n_slots &&
	    key_rehash(sn, m->n_slots ? m->n_slots * 2 : 256))
		return -1;
	j = key_hash(source, name, len) & (m->n_slots - 1);
	while (m->slots[j]) {
		const struct snap_key *k = &sn->keys[m->slots[j] - 1];

		if ((int)k->source == source && !strncmp(k->name, name, len) &&
		    !k->name[len])
			return (long)m->slots[j] - 1;
		j = (j + 1) & (m->n_slots - 1);
	}
	if (key_new(sn, source, name, len))
		return -1;
	m->slots[j] = (uint32_t)sn->n_keys;
	return (long)sn->n_keys - 1;
}

/* Add the row at columns @col.. (source, name, value) for port @port. */
static int row_add(struct snapshot *sn, size_t port, sqlite3_stmt *s, int col)
{
	const char *name = col_text(s, col + 1);
	int source = sqlite3_column_int(s, col);
	struct snap_row *r;
	long k;

	if (!name || source < 0 || source >= CSRC_COUNT)
		return 0;
	k = key_find(sn, source, name,
		     (size_t)sqlite3_column_bytes(s, col + 1));
	if (k < 0 || snapshot_grow(&sn->rows, &sn->mem->cap_rows, sn->n_rows,
				   sizeof(*r)))
		return -ENOMEM;
	r = &sn->rows[sn->n_rows++];
	r->port = (uint32_t)port;
	r->key = (uint32_t)k;
	r->value = (uint64_t)sqlite3_column_int64(s, col + 2);
	return 0;
}

/*
 * Per port, through the (port_id, source, name) index: the counters of
 * ports from *@next on, in one read transaction of about @chunk rows.
 */
static int read_series_ports(sqlite3 *db, sqlite3_stmt *s, struct snapshot *sn,
			     size_t *next, size_t chunk, char *err,
			     size_t errlen)
{
	size_t start = sn->n_rows, p = *next;
	int rc, ret = 0;

	rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return sql_err(db, rc, "series", err, errlen);
	for (; p < sn->n_ports && !ret && sn->n_rows - start < chunk; p++) {
		sqlite3_bind_int64(s, 1, sn->ports[p].id);
		while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
			ret = row_add(sn, p, s, 0);
		if (!ret && rc != SQLITE_DONE)
			ret = sql_err(db, rc, "series", err, errlen);
		sqlite3_reset(s);
	}
	rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (!ret && rc != SQLITE_OK)
		ret = sql_err(db, rc, "series", err, errlen);
	*next = p;
	return ret;
}

/*
 * The whole table in rowid order, @chunk rows per statement (each its own
 * read transaction), resuming after the last rowid seen: no index lookups,
 * for scrapes that serve most ports. Rows of ports not served are skipped.
 */
static int read_series_scan(sqlite3 *db, sqlite3_stmt *s, struct snapshot *sn,
			    int64_t *after, size_t chunk, int *done, char *err,
			    size_t errlen)
{
	int64_t port_id = -1;
	long port = -1;
	size_t n = 0;
	int rc, ret = 0;

	sqlite3_bind_int64(s, 1, *after);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)chunk);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 1);

		*after = sqlite3_column_int64(s, 0);
		n++;
		if (id != port_id) { /* rows of one port mostly come together */
			port_id = id;
			port = find_port(sn, id);
		}
		if (port >= 0)
			ret = row_add(sn, (size_t)port, s, 2);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sql_err(db, rc, "series", err, errlen);
	sqlite3_reset(s);
	*done = n < chunk;
	return ret;
}

static int read_series(sqlite3 *db, struct snapshot *sn, size_t chunk, int scan,
		       char *err, size_t errlen)
{
	static const char port_sql[] =
		"SELECT source, name, value FROM series WHERE port_id = ?";
	static const char scan_sql[] =
		"SELECT id, port_id, source, name, value FROM series"
		" WHERE id > ? ORDER BY id LIMIT ?";
	sqlite3_stmt *s;
	int64_t after = 0;
	size_t next = 0;
	int rc, ret = 0, done = 0;

	rc = sqlite3_prepare_v2(db, scan ? scan_sql : port_sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sql_err(db, rc, "series", err, errlen);
	if (!chunk)
		chunk = 1;
	while (!ret && !done) {
		if (scan) {
			ret = read_series_scan(db, s, sn, &after, chunk, &done,
					       err, errlen);
		} else {
			ret = read_series_ports(db, s, sn, &next, chunk, err,
						errlen);
			done = next >= sn->n_ports;
		}
	}
	sqlite3_finalize(s);
	return ret;
}

/*
 * Scan the whole table when the scrape serves at least half of its ports
 * (an unsharded scrape, typically); look each port up otherwise.
 */
static int read_series_best(sqlite3 *db, struct snapshot *sn, size_t chunk,
			    char *err, size_t errlen)
{
	sqlite3_stmt *s;
	int64_t total = 0;
	int rc;

	rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM port", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sql_err(db, rc, "port", err, errlen);
	if (sqlite3_step(s) == SQLITE_ROW)
		total = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return read_series(db, sn, chunk, (int64_t)sn->n_ports * 2 >= total,
			   err, errlen);
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

const char *snapshot_str(struct snapshot *sn, const char *s, size_t len)
{
	return arena_str(sn->mem, s, len);
}

long snapshot_key(struct snapshot *sn, int source, const char *name, size_t len)
{
	return key_find(sn, source, name, len);
}

int snapshot_add_port(struct snapshot *sn, const struct snap_port *p)
{
	if (snapshot_grow(&sn->ports, &sn->mem->cap_ports, sn->n_ports,
			  sizeof(*p)))
		return -ENOMEM;
	sn->ports[sn->n_ports++] = *p;
	return 0;
}

int snapshot_add_row(struct snapshot *sn, uint32_t port, uint32_t key,
		     uint64_t value)
{
	struct snap_row *r;

	if (snapshot_grow(&sn->rows, &sn->mem->cap_rows, sn->n_rows,
			  sizeof(*r)))
		return -ENOMEM;
	r = &sn->rows[sn->n_rows++];
	r->port = port;
	r->key = key;
	r->value = value;
	return 0;
}

int snapshot_read(sqlite3 *db, const struct snap_opts *o, struct snapshot **out,
		  char *err, size_t errlen)
{
	struct snapshot *sn = calloc(1, sizeof(*sn));
	int ret = -ENOMEM;

	if (!sn)
		return -ENOMEM;
	sn->mem = calloc(1, sizeof(*sn->mem));
	if (!sn->mem)
		goto out;
	buf_init(&sn->mem->scratch, 0);
	ret = read_hosts(db, sn, o, err, errlen);
	if (!ret)
		ret = read_devices(db, sn, err, errlen);
	if (!ret)
		ret = read_ports(db, sn, err, errlen);
	if (!ret)
		ret = read_addresses(db, sn, err, errlen);
	if (!ret)
		ret = read_series_best(db, sn, o->chunk_rows, err, errlen);
	if (!ret)
		ret = read_results(db, sn, o, err, errlen);
	if (!ret)
		ret = read_regress(db, sn, o, err, errlen);
	if (!ret)
		ret = fabric_read(db, o, sn, err, errlen);
out:
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
	struct arena_block *b, *next;

	if (!s)
		return;
	if (s->mem) {
		for (b = s->mem->blocks; b; b = next) {
			next = b->next;
			free(b);
		}
		free(s->mem->slots);
		buf_free(&s->mem->scratch);
		free(s->mem);
	}
	free(s->hosts);
	free(s->devices);
	free(s->ports);
	free(s->gids);
	free(s->pkeys);
	free(s->keys);
	free(s->rows);
	results_free(s->results);
	regress_free(s->regress);
	fabric_snap_free(s->fabric);
	free(s);
}
