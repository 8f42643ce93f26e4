// SPDX-License-Identifier: MIT
/*
 * Fabric sections to rows (store_fabric.h). Nodes are upserted on every
 * report (their `updated` is the fabric's freshness, and a poller's
 * report holds each node once); ports only when one of their columns
 * changed; counters only when their value changed or their keyframe is
 * due, the same rule as the hosts' counters (store_put.c). The cache maps
 * "GUID/port" to the port's row id, a hash of its columns and its
 * counters (interned name, series id, last value, last history time).
 * A switch's forwarding table, when the report carries one, goes to
 * store_route.c; any port row written tells it the routes may have moved.
 */
#include "store_fabric.h"
#include "vec.h"
#include "store_int.h"
#include "store_route.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "map.h"
#include "report.h"
#include "report_fabric.h"

/* Ports cached before the cache starts over (a runaway of GUIDs). */
#define FABRIC_MAX_PORTS 1000000

enum fsql {
	FSQL_NODE_UPSERT,
	FSQL_PORT_UPSERT,
	FSQL_SERIES_LOAD,
	FSQL_SERIES_INS,
	FSQL_SERIES_UPD,
	FSQL_SAMPLE_INS,
	FSQL_PRUNE_DEL,
	FSQL_NODE_EXPIRE,
	FSQL_COUNT
};

/* clang-format off */
static const char *const fsql_text[FSQL_COUNT] = {
	[FSQL_NODE_UPSERT] =
		"INSERT INTO fabric_node (guid, type, description, lid, numports, "
		"reporter, updated) "
		"VALUES (:guid, :type, :description, :lid, :numports, :reporter, "
		":updated) "
		"ON CONFLICT (guid) DO UPDATE SET type = excluded.type, "
		"description = excluded.description, lid = excluded.lid, "
		"numports = excluded.numports, reporter = excluded.reporter, "
		"updated = excluded.updated",
	[FSQL_PORT_UPSERT] =
		"INSERT INTO fabric_port (node_guid, port, lid, state, phys_state, "
		"width_active, width_enabled, speed_active, rate_bytes, degraded, "
		"remote_guid, remote_port, error, changed, lmc) "
		"VALUES (:node_guid, :port, :lid, :state, :phys_state, :width_active, "
		":width_enabled, :speed_active, :rate_bytes, :degraded, :remote_guid, "
		":remote_port, :error, :changed, :lmc) "
		"ON CONFLICT (node_guid, port) DO UPDATE SET lid = excluded.lid, "
		"lmc = excluded.lmc, state = excluded.state, "
		"phys_state = excluded.phys_state, "
		"width_active = excluded.width_active, "
		"width_enabled = excluded.width_enabled, "
		"speed_active = excluded.speed_active, "
		"rate_bytes = excluded.rate_bytes, degraded = excluded.degraded, "
		"remote_guid = excluded.remote_guid, "
		"remote_port = excluded.remote_port, error = excluded.error, "
		"changed = excluded.changed "
		"RETURNING id",
	[FSQL_SERIES_LOAD] =
		"SELECT id, name, value FROM fabric_series "
		"WHERE port_id = :port_id",
	[FSQL_SERIES_INS] =
		"INSERT INTO fabric_series (port_id, name, value, changed) "
		"VALUES (:port_id, :name, :value, :changed)",
	[FSQL_SERIES_UPD] =
		"UPDATE fabric_series SET value = :value, changed = :changed "
		"WHERE id = :id",
	[FSQL_SAMPLE_INS] =
		"INSERT INTO fabric_sample (series_id, ts, value) "
		"VALUES (:series_id, :ts, :value)",
	[FSQL_PRUNE_DEL] =
		"DELETE FROM fabric_sample "
		"WHERE rowid IN (SELECT rowid FROM fabric_sample ORDER BY rowid "
		"LIMIT :batch) "
		"AND ts < :cutoff",
	[FSQL_NODE_EXPIRE] = "DELETE FROM fabric_node WHERE updated < :cutoff",
};
/* clang-format on */

struct fseries {
	const char *name; /* interned */
	int64_t id;
	uint64_t value;
	double hist_ts;
};

struct fport {
	int64_t id;
	uint64_t hash;
	struct fseries *s;
	size_t n, cap;
};

struct store_fabric {
	sqlite3_stmt *sql[FSQL_COUNT];
	struct map *ports; /* "GUID/port" -> struct fport */
	struct map *names; /* interned counter names */
};

static void fport_free(void *v)
{
	struct fport *p = v;

	free(p->s);
	free(p);
}

int store_fabric_open(struct store *st)
{
	struct store_fabric *f = calloc(1, sizeof(*f));
	int ret;

	if (!f)
		return -ENOMEM;
	st->fabric = f;
	if (map_new(fport_free, &f->ports) || map_new(NULL, &f->names))
		return -ENOMEM;
	ret = store_route_open(st);
	if (ret)
		return ret;
	for (int i = 0; i < FSQL_COUNT; i++) {
		int rc = sql_prepare(st->db, fsql_text[i],
				     SQLITE_PREPARE_PERSISTENT, &f->sql[i]);

		if (rc != SQLITE_OK)
			return store_err(st, rc, fsql_text[i]);
	}
	return 0;
}

void store_fabric_close(struct store *st)
{
	struct store_fabric *f = st->fabric;

	store_route_close(st);
	if (!f)
		return;
	for (int i = 0; i < FSQL_COUNT; i++)
		sqlite3_finalize(f->sql[i]);
	map_free(f->ports);
	map_free(f->names);
	free(f);
	st->fabric = NULL;
}

void store_fabric_drop(struct store *st)
{
	store_route_dirty(st);
	if (!st->fabric)
		return;
	map_clear(st->fabric->ports);
	map_clear(st->fabric->names);
}

static sqlite3_stmt *fstmt(struct store *st, enum fsql w)
{
	sqlite3_stmt *s = st->fabric->sql[w];

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return s;
}

static int put_node(struct store *st, const struct report_fnode *n,
		    const char *guid, const char *host, double now)
{
	sqlite3_stmt *s = fstmt(st, FSQL_NODE_UPSERT);

	sql_name_text(s, ":guid", guid);
	sql_name_int(s, ":type", n->type);
	sql_name_text(s, ":description", n->desc ? n->desc : "");
	sql_name_known(s, ":lid", n->lid);
	sql_name_int(s, ":numports", (int)n->numports);
	sql_name_text(s, ":reporter", host);
	sql_name_real(s, ":updated", now);
	return store_done(st, s, "fabric node");
}

static uint64_t hs(uint64_t h, const char *s)
{
	h = map_hash(s ? "s" : "n", 1, h);
	return s ? map_hash(s, strlen(s) + 1, h) : h;
}

static uint64_t hn(uint64_t h, int64_t v)
{
	return map_hash(&v, sizeof(v), h);
}

static uint64_t port_hash(const struct report_fport *p)
{
	uint64_t h = hn(0, p->lid);

	h = hn(h, p->lmc);
	h = hn(h, p->state);
	h = hn(h, p->phys_state);
	h = hn(h, p->width_active);
	h = hn(h, p->width_enabled);
	h = hs(h, p->speed_active);
	h = hn(h, (int64_t)p->rate_bytes);
	h = hs(h, p->degraded);
	h = hn(h, (int64_t)p->remote_guid);
	h = hn(h, p->remote_port);
	return hs(h, p->error);
}

static int upsert_port(struct store *st, const struct report_fport *p,
		       const char *guid, double now, int64_t *id)
{
	sqlite3_stmt *s = fstmt(st, FSQL_PORT_UPSERT);
	char rg[24];
	int rc;

	report_guid_str(p->remote_guid, rg, sizeof(rg));
	sql_name_text(s, ":node_guid", guid);
	sql_name_int(s, ":port", (int)p->port);
	sql_name_known(s, ":lid", p->lid);
	sql_name_known(s, ":state", p->state);
	sql_name_known(s, ":phys_state", p->phys_state);
	sql_name_known(s, ":width_active", p->width_active);
	sql_name_known(s, ":width_enabled", p->width_enabled);
	sql_name_text(s, ":speed_active", p->speed_active);
	sql_name_known(s, ":rate_bytes",
		       p->rate_bytes == REPORT_UNKNOWN ||
				       p->rate_bytes > INT64_MAX
			       ? -1
			       : (int64_t)p->rate_bytes);
	sql_name_text(s, ":degraded", p->degraded);
	sql_name_text(s, ":remote_guid", p->remote_guid ? rg : NULL);
	sql_name_known(s, ":remote_port", p->remote_port);
	sql_name_text(s, ":error", p->error);
	sql_name_real(s, ":changed", now);
	sql_name_known(s, ":lmc", p->lmc);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(s);
		return store_err(st, rc, "fabric port");
	}
	*id = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return 0;
}

static int fport_add(struct fport *p, const char *name, int64_t id,
		     uint64_t value, double hist_ts)
{
	if (vec_grow(&p->s, &p->cap, p->n, sizeof(*p->s)))
		return -ENOMEM;
	p->s[p->n++] = (struct fseries){name, id, value, hist_ts};
	return 0;
}

/* A port seen for the first time since the cache started: its series. */
static int load_series(struct store *st, struct fport *p)
{
	sqlite3_stmt *s = fstmt(st, FSQL_SERIES_LOAD);
	int rc, ret = 0;

	sql_name_int(s, ":port_id", p->id);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name =
			map_intern(st->fabric->names,
				   (const char *)sqlite3_column_text(s, 1));

		ret = name ? fport_add(p, name, sqlite3_column_int64(s, 0),
				       (uint64_t)sqlite3_column_int64(s, 2), 0)
			   : -ENOMEM;
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(st, rc, "fabric series");
	return ret;
}

static int get_port(struct store *st, const struct report_fport *rp,
		    const char *guid, double now, struct fport **out,
		    struct store_stats *stats)
{
	struct map *m = st->fabric->ports;
	uint64_t h = port_hash(rp);
	char key[48];
	struct fport *p;
	int ret;

	snprintf(key, sizeof(key), "%s/%u", guid, rp->port);
	p = map_get(m, key);
	if (p && p->hash == h) {
		*out = p;
		return 0;
	}
	if (!p) {
		if (map_count(m) > FABRIC_MAX_PORTS)
			map_clear(m);
		p = calloc(1, sizeof(*p));
		if (!p || map_put(m, key, p)) {
			free(p);
			return -ENOMEM;
		}
		p->hash = h ^ 1; /* the row may be stale: write it */
	}
	ret = upsert_port(st, rp, guid, now, &p->id);
	store_route_dirty(st); /* a link, LID or state may have changed */
	if (!ret && !p->n)
		ret = load_series(st, p);
	if (!ret) {
		p->hash = h;
		stats->series_written++;
	} else {
		map_del(m, key);
	}
	*out = p;
	return ret;
}

static int put_counter(struct store *st, struct fport *p,
		       const struct report_counter *c, double now,
		       struct store_stats *stats)
{
	double keyframe = st->opts.keyframe_interval;
	struct fseries *s = NULL;
	sqlite3_stmt *q;
	int ret;

	for (size_t i = 0; i < p->n && !s; i++)
		if (!strcmp(p->s[i].name, c->name))
			s = &p->s[i];
	stats->samples++;
	if (s && s->value == c->value && now - s->hist_ts < keyframe)
		return 0;
	if (!s) {
		const char *name = map_intern(st->fabric->names, c->name);

		q = fstmt(st, FSQL_SERIES_INS);
		sql_name_int(q, ":port_id", p->id);
		sql_name_text(q, ":name", c->name);
		sql_name_int(q, ":value", (int64_t)c->value);
		sql_name_real(q, ":changed", now);
		ret = name ? store_done(st, q, "fabric series") : -ENOMEM;
		if (!ret)
			ret = fport_add(p, name,
					sqlite3_last_insert_rowid(st->db),
					c->value, 0);
		if (ret)
			return ret;
		s = &p->s[p->n - 1];
		stats->series_written++;
	} else if (s->value != c->value) {
		q = fstmt(st, FSQL_SERIES_UPD);
		sql_name_int(q, ":id", s->id);
		sql_name_int(q, ":value", (int64_t)c->value);
		sql_name_real(q, ":changed", now);
		ret = store_done(st, q, "fabric series");
		if (ret)
			return ret;
		s->value = c->value;
		stats->series_written++;
	}
	q = fstmt(st, FSQL_SAMPLE_INS);
	sql_name_int(q, ":series_id", s->id);
	sql_name_real(q, ":ts", now);
	sql_name_int(q, ":value", (int64_t)c->value);
	ret = store_done(st, q, "fabric sample");
	if (!ret) {
		s->hist_ts = now;
		stats->history_written++;
	}
	return ret;
}

int store_fabric_put(struct store *st, const struct report *r, double now,
		     struct store_stats *stats)
{
	const struct report_fabric *f = r->fabric;
	int ret = 0;

	for (size_t i = 0; !ret && i < f->n_nodes; i++) {
		const struct report_fnode *n = &f->nodes[i];
		char guid[24];

		report_guid_str(n->guid, guid, sizeof(guid));
		ret = put_node(st, n, guid, r->host, now);
		if (!ret && (n->has_lft || n->lft_error))
			ret = store_route_put_lft(
				st, n, guid, f->routed > 0 ? f->routed : now,
				r->host, now);
		for (size_t j = 0; !ret && j < n->n_ports; j++) {
			const struct report_fport *p = &n->ports[j];
			struct fport *fp;

			ret = get_port(st, p, guid, now, &fp, stats);
			for (size_t k = 0; !ret && k < p->n_counters; k++)
				ret = put_counter(st, fp, &p->counters[k], now,
						  stats);
		}
	}
	return ret;
}

int store_fabric_prune(struct store *st, double cutoff, long long batch,
		       size_t *deleted)
{
	sqlite3_stmt *s = fstmt(st, FSQL_PRUNE_DEL);
	int ret;

	sql_name_int(s, ":batch", batch);
	sql_name_real(s, ":cutoff", cutoff);
	ret = store_done(st, s, "fabric prune");
	*deleted = ret ? 0 : (size_t)sqlite3_changes(st->db);
	if (ret)
		return ret;
	s = fstmt(st, FSQL_NODE_EXPIRE);
	sql_name_real(s, ":cutoff", cutoff);
	ret = store_done(st, s, "fabric expire");
	if (!ret && sqlite3_changes(st->db)) {
		log_info("store: %d fabric nodes unreported since the "
			 "retention cutoff: removed",
			 sqlite3_changes(st->db));
		store_fabric_drop(st);
	}
	return ret;
}
