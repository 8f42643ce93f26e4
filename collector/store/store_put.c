// SPDX-License-Identifier: MIT
/*
 * Reports to rows (see store.h): host, device and port rows are upserted
 * only when a hash of their attributes changed since the cached one;
 * counters go through a per-port table keyed by (source, interned name)
 * holding series id, last value and last history time, so a counter that
 * did not change costs a hash lookup and no SQL until its keyframe is due.
 */
#include "store_int.h"
#include "store_change.h"
#include "store_fabric.h"
#include "store_health.h"
#include "log.h"
#include "map.h"
#include "report.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Distinct counter names interned before the cache starts over. */
#define STORE_MAX_NAMES 1000000

static void cache_port_free(struct cache_port *p)
{
	if (!p)
		return;
	hmap_free(&p->series);
	free(p);
}

static void cache_device_free(void *v)
{
	struct cache_device *d = v;

	for (size_t i = 0; i < d->n_ports; i++)
		cache_port_free(d->ports[i]);
	free(d->ports);
	free(d);
}

static void cache_host_free(void *v)
{
	struct cache_host *h = v;

	map_free(h->devices);
	free(h);
}

int store_cache_new(struct store *st)
{
	if (map_new(cache_host_free, &st->hosts) || map_new(NULL, &st->names))
		return -ENOMEM;
	return 0;
}

void store_cache_drop(struct store *st)
{
	store_fabric_drop(st);
	if (st->hosts)
		map_clear(st->hosts);
	if (st->names)
		map_clear(st->names);
	st->n_series = 0;
}

void store_cache_free(struct store *st)
{
	map_free(st->hosts);
	map_free(st->names);
	st->hosts = st->names = NULL;
}

size_t store_cached_series(const struct store *st)
{
	return st->n_series;
}

/* ---- attribute hashes ---- */

static uint64_t hash_str(uint64_t h, const char *s)
{
	/* NULL and "" differ: the marker byte goes in first. */
	h = map_hash(s ? "s" : "n", 1, h);
	return s ? map_hash(s, strlen(s) + 1, h) : h;
}

static uint64_t hash_num(uint64_t h, int64_t v)
{
	return map_hash(&v, sizeof(v), h);
}

static uint64_t hash_dbl(uint64_t h, double v)
{
	return map_hash(&v, sizeof(v), h);
}

static uint64_t device_hash(const struct report_device *d)
{
	const struct report_pcie *p = &d->pcie;
	uint64_t h = 0;

	h = hash_str(h, d->node_guid);
	h = hash_str(h, d->sys_image_guid);
	h = hash_str(h, d->fw_ver);
	h = hash_str(h, d->hca_type);
	h = hash_str(h, d->board_id);
	h = hash_str(h, d->node_desc);
	h = hash_num(h, d->numa_node);
	for (size_t i = 0; i < d->n_netdevs; i++)
		h = hash_str(h, d->netdevs[i]);
	h = hash_str(h, p->address);
	h = hash_dbl(h, p->cur_speed_gts);
	h = hash_dbl(h, p->max_speed_gts);
	h = hash_num(h, p->cur_width);
	h = hash_num(h, p->max_width);
	h = hash_num(h, p->aer_correctable);
	h = hash_num(h, p->aer_nonfatal);
	return hash_num(h, p->aer_fatal);
}

static uint64_t port_hash(const struct report_port *p)
{
	uint64_t h = 0;

	h = hash_num(h, p->state);
	h = hash_num(h, p->phys_state);
	h = hash_num(h, (int64_t)p->rate_bytes);
	h = hash_str(h, p->link_layer);
	h = hash_num(h, p->lid);
	h = hash_num(h, p->sm_lid);
	h = hash_num(h, p->lmc);
	h = hash_num(h, p->cap_mask);
	h = hash_str(h, p->port_guid);
	h = hash_str(h, p->netdev);
	for (size_t i = 0; i < p->n_gids; i++) {
		h = hash_num(h, p->gids[i].index);
		h = hash_str(h, p->gids[i].gid);
		h = hash_str(h, p->gids[i].type);
		h = hash_str(h, p->gids[i].netdev);
	}
	for (size_t i = 0; i < p->n_pkeys; i++)
		h = hash_num(h, ((int64_t)p->pkeys[i].index << 16) |
					p->pkeys[i].pkey);
	return h;
}

/* ---- binding helpers: unknown values become NULL ---- */

static void bind_speed(sqlite3_stmt *s, const char *name, double v)
{
	if (v >= 0)
		sql_name_real(s, name, v);
	else
		sql_name_null(s, name);
}

/* Step an upsert ... RETURNING id. */
static int store_returning(struct store *st, sqlite3_stmt *s, const char *what,
			   int64_t *id)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return store_err(st, rc, what);
	return 0;
}

/* ---- host, device, port ---- */

static int put_host(struct store *st, const struct report *r, double now,
		    struct cache_host **out)
{
	sqlite3_stmt *s = store_stmt(st, SQL_HOST_UPSERT);
	struct cache_host *h;
	int64_t id = 0;
	int ret;

	sql_name_text(s, ":name", r->host);
	sql_name_real(s, ":now", now);
	sql_name_real(s, ":probe_timestamp", r->timestamp);
	sql_name_text(s, ":probe_version", r->probe_version);
	ret = store_returning(st, s, "host", &id);
	if (ret)
		return ret;
	h = map_get(st->hosts, r->host);
	if (h && h->id == id) {
		*out = h;
		return 0;
	}
	/* New, or retired and back under a new id: start its cache over. */
	h = calloc(1, sizeof(*h));
	if (!h || map_new(cache_device_free, &h->devices)) {
		free(h);
		return -ENOMEM;
	}
	h->id = id;
	if (map_put(st->hosts, r->host, h)) {
		cache_host_free(h);
		return -ENOMEM;
	}
	*out = h;
	return 0;
}

static int put_device_row(struct store *st, int64_t host_id,
			  const struct report_device *d, double now,
			  int64_t *id)
{
	sqlite3_stmt *s = store_stmt(st, SQL_DEVICE_UPSERT);
	const struct report_pcie *p = &d->pcie;
	char netdevs[REPORT_MAX_NETDEVS * (REPORT_MAX_NAME + 1) + 1] = "";
	size_t off = 0;

	for (size_t i = 0; i < d->n_netdevs && off < sizeof(netdevs); i++)
		off += (size_t)snprintf(netdevs + off, sizeof(netdevs) - off,
					"%s%s", i ? "," : "", d->netdevs[i]);
	sql_name_int(s, ":host_id", host_id);
	sql_name_text(s, ":name", d->name);
	sql_name_text(s, ":node_guid", d->node_guid);
	sql_name_text(s, ":sys_image_guid", d->sys_image_guid);
	sql_name_text(s, ":fw_ver", d->fw_ver);
	sql_name_text(s, ":hca_type", d->hca_type);
	sql_name_text(s, ":board_id", d->board_id);
	sql_name_text(s, ":node_desc", d->node_desc);
	sql_name_known(s, ":numa_node", d->numa_node);
	sql_name_text(s, ":netdevs", d->n_netdevs ? netdevs : NULL);
	sql_name_text(s, ":pcie_address", p->address);
	bind_speed(s, ":pcie_cur_speed_gts", p->cur_speed_gts);
	bind_speed(s, ":pcie_max_speed_gts", p->max_speed_gts);
	sql_name_known(s, ":pcie_cur_width", p->cur_width);
	sql_name_known(s, ":pcie_max_width", p->max_width);
	sql_name_known(s, ":aer_correctable", p->aer_correctable);
	sql_name_known(s, ":aer_nonfatal", p->aer_nonfatal);
	sql_name_known(s, ":aer_fatal", p->aer_fatal);
	sql_name_real(s, ":updated", now);
	return store_returning(st, s, "device", id);
}

static int put_device(struct store *st, struct cache_host *h,
		      const struct report_device *d, double now,
		      struct cache_device **out)
{
	struct cache_device *c = map_get(h->devices, d->name);
	uint64_t hash = device_hash(d);
	int64_t id = 0;
	int ret;

	if (c && c->hash == hash) {
		*out = c;
		return 0;
	}
	ret = put_device_row(st, h->id, d, now, &id);
	if (ret)
		return ret;
	st->put_rows++;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c || map_put(h->devices, d->name, c)) {
			free(c);
			return -ENOMEM;
		}
	}
	c->id = id;
	c->hash = hash;
	*out = c;
	return 0;
}

static int put_port_row(struct store *st, int64_t host_id, int64_t dev_id,
			const struct report_port *p, double now, int64_t *id)
{
	sqlite3_stmt *s = store_stmt(st, SQL_PORT_UPSERT);

	sql_name_int(s, ":host_id", host_id);
	sql_name_int(s, ":device_id", dev_id);
	sql_name_int(s, ":port", p->port);
	sql_name_known(s, ":state", p->state);
	sql_name_known(s, ":phys_state", p->phys_state);
	if (p->rate_bytes != REPORT_UNKNOWN)
		sql_name_int(s, ":rate_bytes", (int64_t)p->rate_bytes);
	sql_name_text(s, ":link_layer", p->link_layer);
	sql_name_known(s, ":lid", p->lid);
	sql_name_known(s, ":sm_lid", p->sm_lid);
	sql_name_known(s, ":lmc", p->lmc);
	sql_name_known(s, ":cap_mask", p->cap_mask);
	sql_name_text(s, ":port_guid", p->port_guid);
	sql_name_text(s, ":netdev", p->netdev);
	sql_name_real(s, ":updated", now);
	return store_returning(st, s, "port", id);
}

/* Replace the port's GID and P_Key rows. */
static int put_port_tables(struct store *st, int64_t id,
			   const struct report_port *p)
{
	sqlite3_stmt *s = store_stmt(st, SQL_GID_DEL);
	int ret;

	sql_name_int(s, ":port_id", id);
	ret = store_done(st, s, "gid");
	s = store_stmt(st, SQL_PKEY_DEL);
	sql_name_int(s, ":port_id", id);
	if (!ret)
		ret = store_done(st, s, "pkey");
	for (size_t i = 0; !ret && i < p->n_gids; i++) {
		s = store_stmt(st, SQL_GID_INS);
		sql_name_int(s, ":port_id", id);
		sql_name_int(s, ":idx", p->gids[i].index);
		sql_name_text(s, ":gid", p->gids[i].gid);
		sql_name_text(s, ":type", p->gids[i].type);
		sql_name_text(s, ":netdev", p->gids[i].netdev);
		ret = store_done(st, s, "gid");
	}
	for (size_t i = 0; !ret && i < p->n_pkeys; i++) {
		s = store_stmt(st, SQL_PKEY_INS);
		sql_name_int(s, ":port_id", id);
		sql_name_int(s, ":idx", p->pkeys[i].index);
		sql_name_int(s, ":pkey", p->pkeys[i].pkey);
		ret = store_done(st, s, "pkey");
	}
	return ret;
}

static struct cache_port *cache_port_find(struct cache_device *d, unsigned num)
{
	for (size_t i = 0; i < d->n_ports; i++)
		if (d->ports[i]->num == num)
			return d->ports[i];
	return NULL;
}

static struct cache_port *cache_port_add(struct cache_device *d, unsigned num)
{
	struct cache_port **ports, *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	ports = realloc(d->ports, (d->n_ports + 1) * sizeof(*ports));
	if (!ports) {
		free(p);
		return NULL;
	}
	p->num = num;
	hmap_init(&p->series, sizeof(struct cache_series));
	d->ports = ports;
	d->ports[d->n_ports++] = p;
	return p;
}

/* ---- the per-port series table ---- */

/* The key of a series: its source and its interned name's address. */
static uint64_t series_hash(int source, const char *name)
{
	uint64_t k =
		((uint64_t)(uintptr_t)name >> 3) ^ ((uint64_t)source << 58);

	return (k * 0x9e3779b97f4a7c15ULL) >> 20;
}

static int series_eq(const void *ent, const void *key)
{
	const struct cache_series *e = ent, *k = key;

	return e->name == k->name && e->source == k->source;
}

static struct cache_series *series_find(struct cache_port *p, int source,
					const char *name)
{
	struct cache_series k = {.name = name, .source = source};

	return hmap_find(&p->series, series_hash(source, name), series_eq, &k);
}

/* Cache one series; @name must be interned. */
static int series_add(struct store *st, struct cache_port *p, int source,
		      const char *name, int64_t id, uint64_t value,
		      double hist_ts)
{
	struct cache_series k = {.name = name, .source = source};
	struct cache_series *e;
	int added;

	e = hmap_put(&p->series, series_hash(source, name), series_eq, &k,
		     &added);
	if (!e)
		return -ENOMEM;
	st->n_series += (size_t)added;
	e->name = name;
	e->source = source;
	e->id = id;
	e->value = value;
	e->hist_ts = hist_ts;
	return 0;
}

/* Fill a newly cached port from the series rows the database has. */
static int series_load(struct store *st, struct cache_port *p)
{
	sqlite3_stmt *s = store_stmt(st, SQL_SERIES_LOAD);
	int rc, ret = 0;

	sql_name_int(s, ":port_id", p->id);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = map_intern(
			st->names, (const char *)sqlite3_column_text(s, 2));

		if (!name) {
			ret = -ENOMEM;
			break;
		}
		/* hist_ts unknown: the next report writes a keyframe. */
		ret = series_add(st, p, sqlite3_column_int(s, 1), name,
				 sqlite3_column_int64(s, 0),
				 (uint64_t)sqlite3_column_int64(s, 3), 0);
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(st, rc, "series load");
	return ret;
}

static int put_port(struct store *st, struct cache_host *h,
		    struct cache_device *d, const struct report_port *p,
		    double now, struct cache_port **out)
{
	struct cache_port *c = cache_port_find(d, p->port);
	uint64_t hash = port_hash(p);
	int64_t id = 0;
	int ret;

	if (c && c->hash == hash) {
		*out = c;
		return 0;
	}
	ret = put_port_row(st, h->id, d->id, p, now, &id);
	if (!ret)
		ret = put_port_tables(st, id, p);
	if (ret)
		return ret;
	st->put_rows++;
	if (!c) {
		c = cache_port_add(d, p->port);
		if (!c)
			return -ENOMEM;
		c->id = id;
		ret = series_load(st, c);
		if (ret)
			return ret;
	}
	c->hash = hash;
	*out = c;
	return 0;
}

/* ---- counters ---- */

/*
 * The statements run per counter bind at indexes looked up by name once,
 * at open: sqlite3_bind_parameter_index() is a scan of the names, and these
 * run up to 280,000 times a second.
 */
int store_put_params(struct store *st)
{
	struct store_put_ix *x = &st->put_ix;
	sqlite3_stmt *sample = st->sql[SQL_SAMPLE_INS];
	sqlite3_stmt *upd = st->sql[SQL_SERIES_UPD];

	x->sample_series = sql_param(sample, ":series_id");
	x->sample_ts = sql_param(sample, ":ts");
	x->sample_value = sql_param(sample, ":value");
	x->upd_id = sql_param(upd, ":id");
	x->upd_value = sql_param(upd, ":value");
	x->upd_changed = sql_param(upd, ":changed");
	if (!x->sample_series || !x->sample_ts || !x->sample_value ||
	    !x->upd_id || !x->upd_value || !x->upd_changed)
		return -EINVAL;
	return 0;
}

static int put_sample(struct store *st, int64_t series_id, double now,
		      uint64_t value)
{
	sqlite3_stmt *s = store_stmt(st, SQL_SAMPLE_INS);

	sqlite3_bind_int64(s, st->put_ix.sample_series, series_id);
	sqlite3_bind_double(s, st->put_ix.sample_ts, now);
	sqlite3_bind_int64(s, st->put_ix.sample_value, (int64_t)value);
	return store_done(st, s, "sample");
}

static int put_new_series(struct store *st, struct cache_port *p, int source,
			  const char *name, const struct report_counter *c,
			  double now, struct store_stats *stats)
{
	sqlite3_stmt *s = store_stmt(st, SQL_SERIES_INS);
	int64_t id;
	int ret;

	sql_name_int(s, ":port_id", p->id);
	sql_name_int(s, ":source", source);
	sql_name_text(s, ":name", c->name);
	sql_name_int(s, ":value", (int64_t)c->value);
	sql_name_real(s, ":changed", now);
	ret = store_done(st, s, "series");
	if (ret)
		return ret;
	id = sqlite3_last_insert_rowid(st->db);
	ret = put_sample(st, id, now, c->value);
	if (ret)
		return ret;
	stats->series_written++;
	stats->history_written++;
	return series_add(st, p, source, name, id, c->value, now);
}

static int put_counter(struct store *st, struct cache_port *p, int source,
		       const struct report_counter *c, double now,
		       struct store_stats *stats)
{
	const char *name = map_intern(st->names, c->name);
	struct cache_series *e;
	sqlite3_stmt *s;
	int ret;

	if (!name)
		return -ENOMEM;
	e = series_find(p, source, name);
	if (!e)
		return put_new_series(st, p, source, name, c, now, stats);
	if (e->value != c->value) {
		s = store_stmt(st, SQL_SERIES_UPD);
		sqlite3_bind_int64(s, st->put_ix.upd_id, e->id);
		sqlite3_bind_int64(s, st->put_ix.upd_value, (int64_t)c->value);
		sqlite3_bind_double(s, st->put_ix.upd_changed, now);
		ret = store_done(st, s, "series");
		if (ret)
			return ret;
		stats->series_written++;
	} else if (now - e->hist_ts < st->opts.keyframe_interval) {
		return 0;
	}
	ret = put_sample(st, e->id, now, c->value);
	if (ret)
		return ret;
	stats->history_written++;
	e->value = c->value;
	e->hist_ts = now;
	return 0;
}

static int put_port_counters(struct store *st, struct cache_port *cp,
			     const struct report_port *p, double now,
			     struct store_stats *stats)
{
	for (int src = 0; src < CSRC_COUNT; src++) {
		for (size_t i = 0; i < p->n_counters[src]; i++) {
			int ret = put_counter(st, cp, src, &p->counters[src][i],
					      now, stats);

			if (ret)
				return ret;
			stats->samples++;
		}
	}
	return 0;
}

int store_put_report(struct store *st, const struct report *r, double now,
		     struct store_stats *stats)
{
	struct store_stats dummy;
	struct cache_host *h;
	int ret;

	if (!stats)
		stats = &dummy;
	memset(stats, 0, sizeof(*stats));
	st->put_rows = 0;
	if (map_count(st->names) > STORE_MAX_NAMES) {
		log_warn(
			"store: more than %d counter names: dropping the cache",
			STORE_MAX_NAMES);
		store_cache_drop(st);
	}
	ret = put_host(st, r, now, &h);
	for (size_t i = 0; !ret && i < r->n_devices; i++) {
		const struct report_device *d = &r->devices[i];
		struct cache_device *cd;

		ret = put_device(st, h, d, now, &cd);
		for (size_t j = 0; !ret && j < d->n_ports; j++) {
			struct cache_port *cp;

			ret = put_port(st, h, cd, &d->ports[j], now, &cp);
			if (!ret)
				ret = put_port_counters(st, cp, &d->ports[j],
							now, stats);
		}
	}
	stats->rows_written = st->put_rows;
	/* what the exporter renders of this host changed: mark it */
	if (!ret && (stats->rows_written || stats->series_written))
		ret = store_change_host(st, h->id);
	if (!ret && r->fabric)
		ret = store_fabric_put(st, r, now, stats);
	if (!ret)
		ret = store_health_report(st, r, now);
	return ret;
}
