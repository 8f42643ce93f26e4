// SPDX-License-Identifier: MIT
/*
 * Reading fabric test results for one scrape: see results.h. The probe
 * registry (probe, probe_label, probe_port, host_pause, probe_dropped) is
 * read with one statement per table; the results of the period in chunks
 * of chunk_rows, each its own read transaction, walking the
 * result_started index by (started, id). Ports come from probe_port only:
 * a result names them, it does not make them. Nothing is rendered here.
 */
#include "results_int.h"
#include "vec.h"
#include "dbread.h"
#include "fnv.h"
#include "shard.h"
#include "snapshot.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RES_ARENA_BLOCK (64 * 1024)

struct res_arena {
	struct res_arena *next;
	size_t used, size;
	char data[];
};

static const char *res_strdup(struct results *r, const char *s, size_t len)
{
	struct res_arena *a = r->arena;
	char *p;

	if (!a || a->size - a->used < len + 1) {
		size_t size =
			len + 1 > RES_ARENA_BLOCK ? len + 1 : RES_ARENA_BLOCK;

		a = malloc(sizeof(*a) + size);
		if (!a)
			return NULL;
		a->size = size;
		a->used = 0;
		a->next = r->arena;
		r->arena = a;
	}
	p = a->data + a->used;
	memcpy(p, s, len);
	p[len] = '\0';
	a->used += len + 1;
	return p;
}

static uint64_t res_hash(char kind, const char *s)
{
	return fnv1a_str(FNV1A_BASIS ^ (unsigned char)kind, s);
}

/* What res_eq() compares an index entry with. */
struct res_look {
	char kind;
	const char *key;
};

static int res_eq(const void *ent, const void *key)
{
	const struct res_slot *e = ent;
	const struct res_look *l = key;

	return e->kind == l->kind && !strcmp(e->key, l->key);
}

/* The index of (@kind, @key), or RES_NONE. */
uint32_t res_lookup(const struct results *r, char kind, const char *key)
{
	struct res_look l = {kind, key};
	const struct res_slot *e =
		hmap_find(&r->index, res_hash(kind, key), res_eq, &l);

	return e ? e->index : RES_NONE;
}

/* Index (@kind, @key), which res_lookup() did not find, as @index. */
static int res_claim(struct results *r, char kind, const char *key,
		     size_t index)
{
	const char *copy = res_strdup(r, key, strlen(key));
	struct res_slot *e =
		copy ? hmap_add(&r->index, res_hash(kind, key)) : NULL;

	if (!e)
		return -ENOMEM;
	e->key = copy;
	e->index = (uint32_t)index;
	e->kind = kind;
	return 0;
}

/* The label list in the scratch buffer, copied into the arena. */
static const char *res_labels(struct results *r)
{
	return res_strdup(r, r->scratch.data ? r->scratch.data : "",
			  r->scratch.len);
}

/* The index of host @name, added on first sight; RES_NONE on ENOMEM. */
static uint32_t res_host(struct results *r, const char *name)
{
	uint32_t i = res_lookup(r, 'h', name);
	struct res_host *h;

	if (i != RES_NONE)
		return i;
	if (vec_grow(&r->hosts, &r->cap_hosts, r->n_hosts, sizeof(*h)))
		return RES_NONE;
	h = &r->hosts[r->n_hosts];
	memset(h, 0, sizeof(*h));
	h->up = -1;
	h->group = RES_NONE;
	h->dropped[0] = h->dropped[1] = -1;
	h->served = shard_of(name, r->o.shards) == r->o.shard;
	h->key = fnv1a_str(FNV1A_BASIS, name) | 1;
	buf_reset(&r->scratch);
	if (expo_label(&r->scratch, "host", name) ||
	    !(h->labels = res_labels(r)) || res_claim(r, 'h', name, r->n_hosts))
		return RES_NONE;
	return (uint32_t)r->n_hosts++;
}

/* The index of port @host/@device/@port, added on first sight. */
static uint32_t res_port(struct results *r, const char *host,
			 const char *device, int64_t port)
{
	char key[512], num[24];
	struct res_port *p;
	uint32_t h, i;
	int ret;

	if (!host || !device)
		return RES_NONE;
	snprintf(key, sizeof(key), "%s\x1f%s\x1f%" PRId64, host, device, port);
	h = res_host(r, host);
	if (h == RES_NONE)
		return RES_NONE;
	i = res_lookup(r, 'p', key);
	if (i != RES_NONE)
		return i;
	if (vec_grow(&r->ports, &r->cap_ports, r->n_ports, sizeof(*p)))
		return RES_NONE;
	p = &r->ports[r->n_ports];
	memset(p, 0, sizeof(*p));
	p->host = h;
	snprintf(num, sizeof(num), "%" PRId64, port);
	for (int peer = 0; peer < 2; peer++) {
		buf_reset(&r->scratch);
		ret = expo_label(&r->scratch, peer ? "peer_host" : "host",
				 host);
		if (!ret)
			ret = expo_label(&r->scratch,
					 peer ? "peer_device" : "device",
					 device);
		if (!ret)
			ret = expo_label(&r->scratch,
					 peer ? "peer_port" : "port", num);
		if (ret)
			return RES_NONE;
		if (!(*(peer ? &p->peer_labels : &p->labels) = res_labels(r)))
			return RES_NONE;
	}
	if (res_claim(r, 'p', key, r->n_ports))
		return RES_NONE;
	p->fp = fnv1a_str(FNV1A_BASIS, p->labels);
	return (uint32_t)r->n_ports++;
}

/*
 * The index of registered port @host/@device/@port (probe_port, read
 * before the results), or RES_NONE: results do not add ports.
 */
static uint32_t res_port_find(struct results *r, const char *host,
			      const char *device, int64_t port)
{
	char key[512];

	if (!host || !device)
		return RES_NONE;
	snprintf(key, sizeof(key), "%s\x1f%s\x1f%" PRId64, host, device, port);
	return res_lookup(r, 'p', key);
}

/* The index of label list @label of @kind (below) in @list, added on
 * first sight; RES_NONE on ENOMEM. */
uint32_t res_intern_label(struct results *r, char kind, const char *label,
			  const char ***list, size_t *n, size_t *cap)
{
	uint32_t i = res_lookup(r, kind, label);
	const char *str;

	if (i != RES_NONE)
		return i;
	if (vec_grow(list, cap, *n, sizeof(**list)) ||
	    !(str = res_strdup(r, label, strlen(label))))
		return RES_NONE;
	(*list)[*n] = str;
	if (res_claim(r, kind, str, *n))
		return RES_NONE;
	return (uint32_t)(*n)++;
}

/*
 * The index of name @value of @kind in the string list @list: 'f' a
 * profile (profile="x"), 'o' an outcome (outcome="x", with wc_status="y"
 * when @extra is set), 'g' a group (raw).
 */
static uint32_t res_intern(struct results *r, char kind, const char *value,
			   const char *extra, const char ***list, size_t *n,
			   size_t *cap)
{
	int ret = 0;

	buf_reset(&r->scratch);
	if (kind == 'f')
		ret = expo_label(&r->scratch, "profile", value);
	else if (kind == 'o')
		ret = expo_label(&r->scratch, "outcome", value);
	else
		ret = buf_adds(&r->scratch, value);
	if (!ret && kind == 'o' && extra && *extra)
		ret = expo_label(&r->scratch, "wc_status", extra);
	if (ret)
		return RES_NONE;
	return res_intern_label(r, kind, r->scratch.data, list, n, cap);
}

static int host_row(void *ctx, sqlite3_stmt *s)
{
	struct results *r = ctx;
	uint32_t h = res_host(r, dbread_text(s, 0));

	if (h == RES_NONE)
		return -ENOMEM;
	r->hosts[h].up =
		r->o.now - sqlite3_column_double(s, 1) <= r->o.stale_after;
	return 0;
}

static int probe_row(void *ctx, sqlite3_stmt *s)
{
	struct results *r = ctx;
	const char *group = dbread_text(s, 2);
	uint32_t h = res_host(r, dbread_text(s, 0));

	if (h == RES_NONE)
		return -ENOMEM;
	r->hosts[h].probe = 1;
	r->hosts[h].registered = sqlite3_column_double(s, 1);
	if (group) {
		r->hosts[h].group = res_intern(r, 'g', group, NULL, &r->groups,
					       &r->n_groups, &r->cap_groups);
		if (r->hosts[h].group == RES_NONE)
			return -ENOMEM;
	}
	return 0;
}

static int pause_row(void *ctx, sqlite3_stmt *s)
{
	struct results *r = ctx;
	uint32_t h = res_host(r, dbread_text(s, 0));

	if (h == RES_NONE)
		return -ENOMEM;
	r->hosts[h].paused = sqlite3_column_int(s, 1) != 0;
	return 0;
}

static int dropped_row(void *ctx, sqlite3_stmt *s)
{
	struct results *r = ctx;
	uint32_t h = res_host(r, dbread_text(s, 0));

	if (h == RES_NONE)
		return -ENOMEM;
	r->hosts[h].dropped[0] = sqlite3_column_int64(s, 1);
	r->hosts[h].dropped[1] = sqlite3_column_int64(s, 2);
	return 0;
}

static int probe_port_row(void *ctx, sqlite3_stmt *s)
{
	struct results *r = ctx;
	uint32_t p = res_port(r, dbread_text(s, 0), dbread_text(s, 1),
			      sqlite3_column_int64(s, 2));

	if (p == RES_NONE)
		return -ENOMEM;
	r->ports[p].expected = sqlite3_column_int(s, 3) == 4;
	return 0;
}

static int read_registry(sqlite3 *db, struct results *r, char *err,
			 size_t errlen)
{
	/* clang-format off */
	static const char host_sql[] =
		"SELECT name, last_report "
		"FROM host";
	static const char probe_sql[] =
		"SELECT p.host, p.registered, l.value "
		"FROM probe p "
		"LEFT JOIN probe_label l ON l.probe_id = p.id AND l.key = :group";
	static const char pause_sql[] =
		"SELECT host, paused "
		"FROM host_pause";
	static const char dropped_sql[] =
		"SELECT host, spool_full, expired "
		"FROM probe_dropped";
	static const char port_sql[] =
		"SELECT p.host, pp.device, pp.port, pp.state "
		"FROM probe_port pp "
		"JOIN probe p ON p.id = pp.probe_id "
		"ORDER BY pp.probe_id, pp.device, pp.port";
	/* clang-format on */
	struct dbread_arg group = {.name = ":group", .text = r->o.group_label};
	int ret;

	ret = dbread_each(db, host_sql, host_sql, NULL, host_row, r, err,
			  errlen);
	if (!ret)
		ret = dbread_each(db, probe_sql, probe_sql,
				  r->o.group_label ? &group : NULL, probe_row,
				  r, err, errlen);
	if (!ret)
		ret = dbread_each(db, pause_sql, pause_sql, NULL, pause_row, r,
				  err, errlen);
	if (!ret)
		ret = dbread_each(db, dropped_sql, dropped_sql, NULL,
				  dropped_row, r, err, errlen);
	if (!ret)
		ret = dbread_each(db, port_sql, port_sql, NULL, probe_port_row,
				  r, err, errlen);
	return ret;
}

/*
 * @v to 9 significant digits. Measurement noise is far above that, and a
 * 9-digit number is integral (bandwidth, rates) or prints exactly in
 * %.15g: one snprintf per sample instead of up to three, the bulk of the
 * cost of these families otherwise. n / 10^k with both exact is the
 * double nearest the decimal, so it reads back exactly.
 */
double results_round(double v)
{
	static const double p10[] = {1e0,  1e1,	 1e2,  1e3,  1e4,  1e5,
				     1e6,  1e7,	 1e8,  1e9,  1e10, 1e11,
				     1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
				     1e18, 1e19, 1e20, 1e21, 1e22};
	int k;

	if (v == 0 || !isfinite(v))
		return v;
	k = (int)floor(log10(fabs(v))) - 8;
	if (k >= 0 && k <= 22)
		return round(v / p10[k]) * p10[k];
	if (k < 0 && k >= -22)
		return round(v * p10[-k]) / p10[-k];
	return v;
}

static uint64_t fp_str(uint64_t h, const char *s)
{
	return fnv1a_mix(fnv1a_str(h, s ? s : ""), s ? 1 : 2);
}

/* What a result family can show of a row, hashed (its ports apart). */
static uint64_t row_fp(const struct res_row *w, const char *profile,
		       const char *outcome, const char *wc_status)
{
	uint64_t h = fp_str(FNV1A_BASIS, profile), v;

	h = fp_str(h, outcome);
	h = fp_str(h, wc_status);
	h = fnv1a_u64(h, (uint64_t)w->busy);
	memcpy(&v, &w->started, sizeof(v));
	h = fnv1a_u64(h, v);
	for (int f = 0; f < TESTAPI_FIG_COUNT; f++) {
		memcpy(&v, &w->fig[f], sizeof(v));
		h = fnv1a_u64(h, v);
	}
	return h;
}

/* Columns: id, started, host, local_device, local_port, peer_host,
 * peer_device, peer_port, profile, outcome, wc_status, busy, figures...
 * A local port that is not registered: the row is left out; a peer port
 * that is not: the row counts at its local port only. */
int res_result_row(void *ctx, sqlite3_stmt *s)
{
	struct results *r = ctx;
	const char *outcome = dbread_text(s, 9);
	struct res_row *w;

	r->rows_seen++;
	if (sqlite3_column_int64(s, 0) > r->id_max)
		return 0; /* added since the read began (results_keep.c) */
	if (vec_grow(&r->rows, &r->cap_rows, r->n_rows, sizeof(*w)))
		return -ENOMEM;
	w = &r->rows[r->n_rows];
	w->id = sqlite3_column_int64(s, 0);
	w->at = sqlite3_column_double(s, 1);
	w->a = res_port_find(r, dbread_text(s, 2), dbread_text(s, 3),
			     sqlite3_column_int64(s, 4));
	w->b = res_port_find(r, dbread_text(s, 5), dbread_text(s, 6),
			     sqlite3_column_int64(s, 7));
	if (w->a == RES_NONE)
		return 0;
	w->profile = res_intern(r, 'f', dbread_text(s, 8), NULL, &r->profiles,
				&r->n_profiles, &r->cap_profiles);
	w->outcome = res_intern(r, 'o', outcome ? outcome : "unknown",
				dbread_text(s, 10), &r->outcomes,
				&r->n_outcomes, &r->cap_outcomes);
	if (w->profile == RES_NONE || w->outcome == RES_NONE)
		return -ENOMEM;
	w->ok = outcome && !strcmp(outcome, testapi_outcome_name(TESTAPI_OK));
	w->busy = sqlite3_column_int(s, 11) != 0;
	/* to the millisecond: 13 digits print exactly in %.15g */
	w->started = round(sqlite3_column_double(s, 1) * 1e3) / 1e3;
	for (int f = 0; f < TESTAPI_FIG_COUNT; f++)
		w->fig[f] = results_round(dbread_nan(s, 12 + f));
	w->fp = row_fp(w, dbread_text(s, 8), outcome, dbread_text(s, 10));
	r->n_rows++;
	return 0;
}

/*
 * The results started within the period, @chunk rows per statement (each
 * its own read transaction), in (started, id) order through the
 * result_started index, resuming after the last row read.
 */
int res_read_period(sqlite3 *db, struct results *r, char *err, size_t errlen)
{
	/* clang-format off */
	static const char sql[] =
		RESULT_COLUMNS
		" WHERE (started, id) > (:after_time, :after_id)"
		" AND started <= :ahead"
		" ORDER BY started, id"
		" LIMIT :limit";
	/* clang-format on */
	struct dbread_arg ahead = {.name = ":ahead",
				   .real = r->o.now + r->o.max_ahead};
	struct dbread_pages q = {
		.sql = sql,
		.what = "result",
		.after = r->o.now - r->o.period,
		.after_id = -1,
		.time_col = 1,
		.chunk = r->o.chunk_rows,
		.args = &ahead,
		.n_args = 1,
	};

	return dbread_pages(db, &q, res_result_row, r, err, errlen);
}

static int cmp_name(const void *a, const void *b, void *arg)
{
	const char *const *list = arg;

	return strcmp(list[*(const uint32_t *)a], list[*(const uint32_t *)b]);
}

/*
 * Number the @n names of @list in name order (they were numbered as rows
 * named them); *@map gets old -> new (free()). 0 or -ENOMEM.
 */
static int res_sort_names(const char **list, size_t n, uint32_t **map)
{
	uint32_t *order = malloc((n + 1) * sizeof(*order));
	const char **copy = malloc((n + 1) * sizeof(*copy));

	*map = malloc((n + 1) * sizeof(**map));
	if (!order || !copy || !*map) {
		free(order);
		free(copy);
		free(*map);
		*map = NULL;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp_name, list);
	if (n) /* @list is NULL when no row named one */
		memcpy(copy, list, n * sizeof(*copy));
	for (uint32_t i = 0; i < n; i++) {
		list[i] = copy[order[i]];
		(*map)[order[i]] = i;
	}
	free(order);
	free(copy);
	return 0;
}

/*
 * Profiles and outcomes in name order, not in the order the period's
 * oldest rows named them: that order moves as the period slides, and
 * with it the order of a port's aggregates and counts, which would
 * change every segment's fingerprint (and the block cache would render
 * them all again) while their text stays the same.
 */
static int res_canonical(struct results *r)
{
	uint32_t *pm = NULL, *om = NULL;
	struct res_slot *sl;
	int ret = res_sort_names(r->profiles, r->n_profiles, &pm);

	if (!ret)
		ret = res_sort_names(r->outcomes, r->n_outcomes, &om);
	for (size_t i = 0; !ret && i < r->n_rows; i++) {
		r->rows[i].profile = pm[r->rows[i].profile];
		r->rows[i].outcome = om[r->rows[i].outcome];
	}
	for (size_t i = 0; !ret && (sl = hmap_next(&r->index, &i));) {
		if (sl->kind == 'f')
			sl->index = pm[sl->index];
		else if (sl->kind == 'o')
			sl->index = om[sl->index];
	}
	free(pm);
	free(om);
	return ret;
}

int results_read(sqlite3 *db, const struct results_opts *o,
		 struct results **out, char *err, size_t errlen)
{
	struct results *r = calloc(1, sizeof(*r));
	int ret = 0;

	if (!r)
		return -ENOMEM;
	r->o = *o;
	r->id_max = INT64_MAX;
	if (!r->o.shards)
		r->o.shards = 1;
	buf_init(&r->scratch, 0);
	hmap_init(&r->index, sizeof(struct res_slot));
	r->enabled = dbread_version(db) >= 2;
	if (r->enabled)
		ret = read_registry(db, r, err, errlen);
	if (r->enabled && !ret)
		ret = o->keep ? res_read_kept(db, r, o->keep, err, errlen)
			      : res_read_period(db, r, err, errlen);
	if (r->enabled && !ret)
		ret = res_canonical(r);
	if (o->keep && r->enabled && !ret)
		ret = res_keep_names(o->keep, r);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory reading test results");
	if (o->keep && (ret || !r->enabled))
		res_keep_drop(o->keep);
	if (ret) {
		results_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

int results_enabled(const struct results *r)
{
	return r && r->enabled;
}

void results_set_totals(struct results *r, struct tally_count *v, size_t n)
{
	free(r->totals);
	r->totals = v;
	r->n_totals = n;
}

void results_free(struct results *r)
{
	struct res_arena *a, *next;

	if (!r)
		return;
	for (a = r->arena; a; a = next) {
		next = a->next;
		free(a);
	}
	buf_free(&r->scratch);
	free(r->hosts);
	free(r->ports);
	if (!r->rows_kept)
		free(r->rows);
	free(r->profiles);
	free(r->outcomes);
	free(r->groups);
	hmap_free(&r->index);
	free(r->totals);
	free(r);
}
