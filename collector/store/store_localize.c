// SPDX-License-Identifier: MIT
/*
 * The localization store (store_localize.h): judged results become tests
 * of the window with the links and switches their data crossed, in
 * memory (per profile and metric, elements interned once) and in
 * localize_test (schema/009_localize.sql), read back after a start or a
 * rollback; the flush localizes what a batch touched (the run itself is
 * store_localize_run.c); what the evidence, the planner and the coverage
 * view ask; retire and prune.
 */
#include "store_localize_int.h"
#include "vec.h"

#include "log.h"
#include "map.h"
#include "route.h"
#include "store_int.h"
#include "store_route.h"
#include "testapi.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- life ---- */

int store_localize_open(struct store *st, const struct store_localize_opts *o)
{
	struct store_localize *lz;
	int ret;

	if (!o)
		return 0;
	lz = calloc(1, sizeof(*lz));
	if (!lz)
		return -ENOMEM;
	st->localize = lz;
	lz->o = *o;
	lz->status.enabled = o->enabled;
	ret = map_new(NULL, &lz->keys);
	for (int i = 0; !ret && i < LSQL_COUNT; i++) {
		int rc = sql_prepare(st->db, lz_sql((enum lsql)i),
				     SQLITE_PREPARE_PERSISTENT, &lz->s[i]);

		if (rc != SQLITE_OK)
			ret = store_err(st, rc, lz_sql((enum lsql)i));
	}
	return ret;
}

static void lz_kind_clear(struct lz_kind *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->obs[i].elems);
	free(k->obs);
	free(k->from);
	free(k->confirm);
	free(k->interest);
	free(k->held);
	free(k->profile);
	memset(k, 0, sizeof(*k));
}

void store_localize_drop(struct store *st)
{
	struct store_localize *lz = st->localize;

	if (!lz)
		return;
	for (size_t i = 0; i < lz->n_kinds; i++)
		lz_kind_clear(&lz->kinds[i]);
	free(lz->kinds);
	lz->kinds = NULL;
	lz->n_kinds = 0;
	lz->loaded = 0;
	lz->version++;
}

void store_localize_close(struct store *st)
{
	struct store_localize *lz = st->localize;

	if (!lz)
		return;
	store_localize_drop(st);
	for (int i = 0; i < LSQL_COUNT; i++)
		sqlite3_finalize(lz->s[i]);
	for (size_t i = 0; i < lz->n_el; i++) {
		free(lz->el[i].host);
		free(lz->el[i].device);
		free(lz->el[i].cnt_text);
	}
	free(lz->el);
	for (size_t i = 0; i < lz->n_flows; i++)
		free(lz->flows[i].profile);
	free(lz->flows);
	map_free(lz->keys);
	free(lz);
	st->localize = NULL;
}

/* ---- elements ---- */

static uint32_t lz_find(const struct store_localize *lz, const char *key)
{
	void *v = map_get(lz->keys, key);

	return v ? (uint32_t)((uintptr_t)v - 1) : LOC_NONE;
}

uint32_t lz_host_find(const struct store_localize *lz, const char *host,
		      const char *device, unsigned port)
{
	char key[320];

	snprintf(key, sizeof(key), "%c\x1f%s\x1f%s\x1f%u", port ? 'p' : 'd',
		 host, device, port);
	return lz_find(lz, key);
}

uint32_t lz_fabric_find(const struct store_localize *lz, enum loc_kind k,
			uint64_t guid, unsigned port)
{
	char key[64];

	snprintf(key, sizeof(key), "%c\x1f%016" PRIx64 "\x1f%u",
		 k == LOC_LINK ? 'l' : 's', guid, k == LOC_LINK ? port : 0);
	return lz_find(lz, key);
}

/* A new element under @key; its index in *@out. */
static int lz_new_el(struct store_localize *lz, const char *key,
		     const struct lz_el *e, uint32_t *out)
{
	if (vec_grow(&lz->el, &lz->cap_el, lz->n_el, sizeof(*lz->el)))
		return -ENOMEM;
	if (map_put(lz->keys, key, (void *)(uintptr_t)(lz->n_el + 1)))
		return -ENOMEM;
	lz->el[lz->n_el] = *e;
	*out = (uint32_t)lz->n_el++;
	return 0;
}

static int lz_host_el(struct store_localize *lz, const char *host,
		      const char *device, unsigned port, uint32_t *out)
{
	struct lz_el e = {.kind = port ? LOC_PORT : LOC_DEVICE,
			  .hport = port,
			  .sw = {LOC_NONE, LOC_NONE}};
	char key[320];
	int ret;

	*out = lz_host_find(lz, host, device, port);
	if (*out != LOC_NONE)
		return 0;
	snprintf(key, sizeof(key), "%c\x1f%s\x1f%s\x1f%u", port ? 'p' : 'd',
		 host, device, port);
	e.host = strdup(host);
	e.device = strdup(device);
	ret = e.host && e.device ? lz_new_el(lz, key, &e, out) : -ENOMEM;
	if (ret) {
		free(e.host);
		free(e.device);
	}
	return ret;
}

static int lz_switch_el(struct store_localize *lz, uint64_t guid, uint32_t *out)
{
	struct lz_el e = {
		.kind = LOC_SWITCH, .guid = guid, .sw = {LOC_NONE, LOC_NONE}};
	char key[64];

	*out = lz_fabric_find(lz, LOC_SWITCH, guid, 0);
	if (*out != LOC_NONE)
		return 0;
	snprintf(key, sizeof(key),
		 "s\x1f%016" PRIx64 "\x1f"
		 "0",
		 guid);
	return lz_new_el(lz, key, &e, out);
}

/* The link (@g, @p) -> (@pg, @pp) between two switches. */
static int lz_link_el(struct store_localize *lz, uint64_t g, unsigned p,
		      uint64_t pg, unsigned pp, uint32_t *out)
{
	struct lz_el e = {.kind = LOC_LINK,
			  .guid = g,
			  .port = p,
			  .peer_guid = pg,
			  .peer_port = pp};
	char key[64];
	int ret;

	*out = lz_fabric_find(lz, LOC_LINK, g, p);
	if (*out != LOC_NONE)
		return 0;
	ret = lz_switch_el(lz, g, &e.sw[0]);
	if (!ret)
		ret = lz_switch_el(lz, pg, &e.sw[1]);
	snprintf(key, sizeof(key), "l\x1f%016" PRIx64 "\x1f%u", g, p);
	return ret ? ret : lz_new_el(lz, key, &e, out);
}

/* ---- the window ---- */

struct lz_kind *lz_kind_of(struct store_localize *lz, const char *profile,
			   enum baseline_metric m)
{
	struct lz_kind *k;

	for (size_t i = 0; i < lz->n_kinds; i++)
		if (lz->kinds[i].metric == m &&
		    !strcmp(lz->kinds[i].profile, profile))
			return &lz->kinds[i];
	k = realloc(lz->kinds, (lz->n_kinds + 1) * sizeof(*k));
	if (!k)
		return NULL;
	lz->kinds = k;
	k = &k[lz->n_kinds];
	memset(k, 0, sizeof(*k));
	k->profile = strdup(profile);
	if (!k->profile)
		return NULL;
	k->metric = m;
	k->newest = -INFINITY;
	lz->n_kinds++;
	return k;
}

void lz_trim(struct lz_kind *k, double cutoff)
{
	size_t j = 0;

	for (size_t i = 0; i < k->n; i++) {
		if (k->obs[i].started < cutoff) {
			free(k->obs[i].elems);
			continue;
		}
		k->obs[j++] = k->obs[i];
	}
	k->n = j;
}

/* One test as its links and switches say (the table's BLOB form). */
struct lz_path {
	const uint8_t *links;
	size_t n_links;
	const uint8_t *switches;
	size_t n_switches;
};

static uint64_t lz_get64(const uint8_t *b)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static void lz_put64(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static int lz_push_unique(uint32_t *v, uint32_t *n, uint32_t x)
{
	for (uint32_t i = 0; i < *n; i++)
		if (v[i] == x)
			return 0;
	v[(*n)++] = x;
	return 1;
}

/* Append test @o (its ends filled) crossing @p to slot @k. */
static int lz_append(struct store_localize *lz, struct lz_kind *k,
		     struct lz_obs *o, const struct lz_path *p)
{
	uint32_t *v = malloc((4 + p->n_links + p->n_switches) * sizeof(*v));
	int ret = v ? 0 : -ENOMEM;

	o->n_elems = 0;
	o->elems = v;
	for (int i = 0; v && i < 2; i++) {
		lz_push_unique(v, &o->n_elems, o->ends[i]);
		lz_push_unique(v, &o->n_elems, o->devs[i]);
	}
	for (size_t i = 0; !ret && i < p->n_links; i++) {
		const uint8_t *b = p->links + i * LZ_LINK_BYTES;
		uint32_t x;

		ret = lz_link_el(lz, lz_get64(b), b[8], lz_get64(b + 9), b[17],
				 &x);
		if (!ret)
			lz_push_unique(v, &o->n_elems, x);
	}
	for (size_t i = 0; !ret && i < p->n_switches; i++) {
		uint32_t x;

		ret = lz_switch_el(lz, lz_get64(p->switches + 8 * i), &x);
		if (!ret)
			lz_push_unique(v, &o->n_elems, x);
	}
	if (!ret && vec_grow(&k->obs, &k->cap, k->n, sizeof(*k->obs)))
		ret = -ENOMEM;
	if (ret) {
		free(v);
		return ret;
	}
	k->obs[k->n++] = *o;
	k->newest = fmax(k->newest, o->started);
	/* a good test through elements with nothing against them changes
	 * no verdict: the next run waits for one that may */
	k->dirty |= o->bad;
	for (uint32_t i = 0; !k->dirty && i < o->n_elems; i++)
		k->dirty =
			o->elems[i] < k->n_interest && k->interest[o->elems[i]];
	return 0;
}

/* Both ends' port and device elements of a test into @o. */
static int lz_ends(struct store_localize *lz, const char *const host[2],
		   const char *const dev[2], const unsigned port[2],
		   struct lz_obs *o)
{
	int ret = 0;

	for (int i = 0; !ret && i < 2; i++) {
		ret = lz_host_el(lz, host[i], dev[i], port[i], &o->ends[i]);
		if (!ret)
			ret = lz_host_el(lz, host[i], dev[i], 0, &o->devs[i]);
	}
	return ret;
}

static const char *lz_col(sqlite3_stmt *s, int i)
{
	const char *v = (const char *)sqlite3_column_text(s, i);

	return v ? v : "";
}

/* Each element's window start, from the suspects that recovered. */
static int lz_load_froms(struct store *st)
{
	struct store_localize *lz = st->localize;
	sqlite3_stmt *s = lz_stmt(lz, LSQL_FROMS);
	int rc, ret = 0;

	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *metric = lz_col(s, 2), *g = lz_col(s, 3);
		enum loc_kind kd =
			strcmp(lz_col(s, 0), "switch") ? LOC_LINK : LOC_SWITCH;
		uint32_t x = lz_fabric_find(lz, kd, strtoull(g, NULL, 16),
					    (unsigned)sqlite3_column_int(s, 4));
		struct lz_kind *k;

		if (x == LOC_NONE)
			continue; /* no test crosses it any more */
		k = lz_kind_of(lz, lz_col(s, 1), baseline_metric_row(metric));
		if (!k) {
			ret = -ENOMEM;
			break;
		}
		if (x >= k->n_from) {
			double *f = realloc(k->from, (x + 1) * sizeof(*f));

			if (!f) {
				ret = -ENOMEM;
				break;
			}
			for (size_t i = k->n_from; i <= x; i++)
				f[i] = -INFINITY;
			k->from = f;
			k->n_from = x + 1;
		}
		k->from[x] = sqlite3_column_double(s, 5);
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(st, rc, "localize windows");
	return ret;
}

/* One row of localize_test into the window. */
static int lz_load_row(struct store_localize *lz, sqlite3_stmt *s)
{
	const char *metric = lz_col(s, 2);
	const char *host[2] = {lz_col(s, 6), lz_col(s, 9)};
	const char *dev[2] = {lz_col(s, 7), lz_col(s, 10)};
	const unsigned port[2] = {(unsigned)sqlite3_column_int(s, 8),
				  (unsigned)sqlite3_column_int(s, 11)};
	struct lz_path p = {
		.links = sqlite3_column_blob(s, 12),
		.n_links = (size_t)sqlite3_column_bytes(s, 12) / LZ_LINK_BYTES,
		.switches = sqlite3_column_blob(s, 13),
		.n_switches = (size_t)sqlite3_column_bytes(s, 13) / 8,
	};
	struct lz_obs o = {.started = sqlite3_column_double(s, 0),
			   .bad = sqlite3_column_int(s, 3) != 0,
			   .value = sqlite3_column_double(s, 4),
			   .baseline = sqlite3_column_double(s, 5)};
	struct lz_kind *k =
		lz_kind_of(lz, lz_col(s, 1), baseline_metric_row(metric));
	int ret = k ? lz_ends(lz, host, dev, port, &o) : -ENOMEM;

	return ret ? ret : lz_append(lz, k, &o, &p);
}

int lz_load(struct store *st)
{
	struct store_localize *lz = st->localize;
	sqlite3_stmt *s;
	int rc, ret = 0;

	if (lz->loaded)
		return 0;
	s = lz_stmt(lz, LSQL_TESTS);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
		ret = lz_load_row(lz, s);
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(st, rc, "localize tests");
	if (!ret)
		ret = lz_load_froms(st);
	if (ret) {
		store_localize_drop(st);
		return ret;
	}
	for (size_t i = 0; i < lz->n_kinds; i++)
		lz->kinds[i].dirty = 1; /* judge what was read back */
	lz->loaded = 1;
	return 0;
}

/* ---- a result in ---- */

/* Remember where @profile's data flows (the planner's coverage). */
static int lz_learn_flow(struct store_localize *lz, const char *profile,
			 const struct testapi_kind *k)
{
	struct lz_flow *f;

	for (size_t i = 0; i < lz->n_flows; i++)
		if (!strcmp(lz->flows[i].profile, profile)) {
			lz->flows[i].flow = k->flow;
			lz->flows[i].bandwidth =
				k->metric == TESTAPI_METRIC_BANDWIDTH;
			return 0;
		}
	f = realloc(lz->flows, (lz->n_flows + 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	lz->flows = f;
	f = &f[lz->n_flows];
	f->profile = strdup(profile);
	if (!f->profile)
		return -ENOMEM;
	f->flow = k->flow;
	f->bandwidth = k->metric == TESTAPI_METRIC_BANDWIDTH;
	lz->n_flows++;
	return 0;
}

/* Not attributed: counted, and the reason kept for the coverage view. */
static int lz_unrouted(struct store_localize *lz, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int lz_unrouted(struct store_localize *lz, const char *fmt, ...)
{
	va_list ap;

	lz->status.unrouted++;
	va_start(ap, fmt);
	vsnprintf(lz->status.why, sizeof(lz->status.why), fmt, ap);
	va_end(ap);
	return 0;
}

/* The LID @host registered for @device port @port; 0 none, or -errno. */
static int lz_lid(struct store *st, const char *host, const char *device,
		  unsigned port, unsigned *lid)
{
	sqlite3_stmt *s = lz_stmt(st->localize, LSQL_LID);
	int rc;

	*lid = 0;
	sql_name_text(s, ":host", host);
	sql_name_text(s, ":device", device);
	sql_name_int(s, ":port", port);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_type(s, 0) == SQLITE_INTEGER) {
		sqlite3_int64 v = sqlite3_column_int64(s, 0);

		*lid = v > 0 && v <= ROUTE_LID_MAX ? (unsigned)v : 0;
	}
	sqlite3_reset(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE
		       ? 0
		       : store_err(st, rc, "probe port LID");
}

/* Both paths of a test, as links and switches. */
struct lz_walk {
	uint8_t links[2 * (ROUTE_MAX_HOPS + 1) * LZ_LINK_BYTES];
	uint8_t switches[2 * ROUTE_MAX_HOPS * 8];
	size_t n_links, n_switches;
	struct route_path path;
	struct route_link l[ROUTE_MAX_HOPS + 1];
};

static int lz_is_switch(const struct route_net *n, uint32_t node)
{
	struct route_node_info i;

	return node != ROUTE_NO_NODE && !route_node_get(n, node, &i) &&
	       i.type == ROUTE_SWITCH;
}

/* Add the path from @src to @dst to @w; 0, or -errno with @why. */
static int lz_walk_one(const struct route_net *n, unsigned src, unsigned dst,
		       struct lz_walk *w, char *why, size_t len)
{
	int ret = route_path(n, src, dst, &w->path, why, len);
	size_t nl;

	if (ret)
		return ret;
	nl = route_path_links(&w->path, w->l);
	for (size_t i = 0; i < nl; i++) {
		uint8_t *b = w->links + w->n_links * LZ_LINK_BYTES;
		int seen = 0;

		if (!lz_is_switch(n, w->l[i].from.node) ||
		    !lz_is_switch(n, w->l[i].to.node))
			continue;
		lz_put64(b, w->l[i].from.guid);
		b[8] = (uint8_t)w->l[i].from.port;
		lz_put64(b + 9, w->l[i].to.guid);
		b[17] = (uint8_t)w->l[i].to.port;
		for (size_t j = 0; j < w->n_links && !seen; j++)
			seen = !memcmp(w->links + j * LZ_LINK_BYTES, b,
				       LZ_LINK_BYTES);
		w->n_links += !seen;
	}
	for (size_t i = 0; i < w->path.n_hops; i++) {
		uint8_t *b = w->switches + w->n_switches * 8;
		int seen = 0;

		lz_put64(b, w->path.hops[i].guid);
		for (size_t j = 0; j < w->n_switches && !seen; j++)
			seen = !memcmp(w->switches + j * 8, b, 8);
		w->n_switches += !seen;
	}
	return 0;
}

/*
 * The paths of a test from LID @a to @b in the directions @flow says,
 * the forward one to @dlid when the plan chose one: that DLID must be
 * the responder's port's. 0, 1 (no path: @why), or -errno.
 */
static int lz_walk(struct store *st, unsigned a, unsigned b, unsigned dlid,
		   unsigned flow, struct lz_walk *w, char *why, size_t len)
{
	const struct route_net *n;
	const double *upd;
	struct route_end ob, od;
	int ret = store_route_net(st, &n, &upd);

	if (ret == -ENOMEM)
		return ret;
	if (ret || !route_net_nodes(n)) {
		snprintf(why, len,
			 "no fabric poller has reported the forwarding "
			 "tables");
		return 1;
	}
	if (dlid &&
	    (route_lid_owner(n, b, &ob) || route_lid_owner(n, dlid, &od) ||
	     ob.node != od.node || ob.port != od.port)) {
		snprintf(why, len, "DLID %u is not a LID of the port of LID %u",
			 dlid, b);
		return 1;
	}
	ret = flow & TESTAPI_FLOW_FORWARD
		      ? lz_walk_one(n, a, dlid ? dlid : b, w, why, len)
		      : 0;
	if (!ret && flow & TESTAPI_FLOW_REVERSE)
		ret = lz_walk_one(n, b, a, w, why, len);
	return ret ? 1 : 0;
}

static int lz_insert(struct store *st, const char *host,
		     const struct testapi_result *t, enum baseline_metric m,
		     const struct lz_obs *o, unsigned dlid,
		     const struct lz_walk *w)
{
	sqlite3_stmt *s = lz_stmt(st->localize, LSQL_TEST_INS);

	sql_name_real(s, ":started", o->started);
	sql_name_text(s, ":profile", t->profile);
	sql_name_text(s, ":metric", baseline_metric_name(m));
	sql_name_int(s, ":bad", o->bad);
	sql_name_real(s, ":value", o->value);
	sql_name_real(s, ":baseline", o->baseline);
	sql_name_text(s, ":a_host", host);
	sql_name_text(s, ":a_device", t->local_device);
	sql_name_int(s, ":a_port", t->local_port);
	sql_name_text(s, ":b_host", t->peer_host);
	sql_name_text(s, ":b_device", t->peer_device);
	sql_name_int(s, ":b_port", t->peer_port);
	if (dlid)
		sql_name_int(s, ":dlid", dlid);
	sqlite3_bind_blob(s, sql_param(s, ":links"), w->links,
			  (int)(w->n_links * LZ_LINK_BYTES), SQLITE_STATIC);
	sqlite3_bind_blob(s, sql_param(s, ":switches"), w->switches,
			  (int)(w->n_switches * 8), SQLITE_STATIC);
	return store_done(st, s, "localize test");
}

int store_localize_add(struct store *st, const char *host,
		       const struct testapi_result *t, enum baseline_metric m,
		       double value, double baseline, int bad, double now)
{
	struct store_localize *lz = st->localize;
	const char *hosts[2] = {host, t->peer_host};
	const char *devs[2] = {t->local_device, t->peer_device};
	const unsigned ports[2] = {t->local_port, t->peer_port};
	struct lz_obs o = {.started = t->started,
			   .value = value,
			   .baseline = baseline,
			   .bad = bad};
	struct testapi_params tp;
	struct testapi_kind kd;
	struct lz_walk *w;
	struct lz_kind *k;
	unsigned lid[2];
	int ret;

	(void)now;
	if (!lz || !lz->o.enabled)
		return 0;
	if (!strcmp(host, t->peer_host) &&
	    !strcmp(t->local_device, t->peer_device) &&
	    t->local_port == t->peer_port)
		return 0; /* loopback: no wire */
	ret = lz_load(st);
	for (int i = 0; !ret && i < 2; i++)
		ret = lz_lid(st, hosts[i], devs[i], ports[i], &lid[i]);
	if (ret)
		return ret;
	for (int i = 0; i < 2; i++)
		if (!lid[i])
			return lz_unrouted(lz,
					   "%s %s port %u registered no LID "
					   "(RoCE, or not InfiniBand)",
					   hosts[i], devs[i], ports[i]);
	testapi_params_decode(t->params, &tp);
	testapi_test_kind(t->test, tp.bidirectional, &kd);
	ret = lz_learn_flow(lz, t->profile, &kd);
	if (ret)
		return ret;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	ret = lz_walk(st, lid[0], lid[1], tp.dlid, kd.flow, w, lz->status.why,
		      sizeof(lz->status.why));
	if (ret == 1) {
		lz->status.unrouted++;
		ret = 0;
	} else if (!ret) {
		k = lz_kind_of(lz, t->profile, m);
		ret = k ? lz_ends(lz, hosts, devs, ports, &o) : -ENOMEM;
		if (!ret)
			ret = lz_insert(st, host, t, m, &o, tp.dlid, w);
		if (!ret)
			ret = lz_append(lz, k, &o,
					&(struct lz_path){w->links, w->n_links,
							  w->switches,
							  w->n_switches});
		lz->status.attributed += !ret;
	}
	free(w);
	return ret;
}

/* ---- the flush and what others ask ---- */

int store_localize_flush(struct store *st, double now)
{
	struct store_localize *lz = st->localize;
	double newest = -INFINITY;
	sqlite3_stmt *s;
	int ret;

	if (!lz || !lz->o.enabled)
		return 0;
	ret = lz_load(st);
	for (size_t i = 0; !ret && i < lz->n_kinds; i++) {
		struct lz_kind *k = &lz->kinds[i];

		newest = fmax(newest, k->newest);
		/* now and then anyway: tests leave the window */
		if (k->dirty ||
		    (k->n && now - k->last_run > lz->o.window / 4)) {
			ret = lz_run(st, k, now);
			k->last_run = now;
		}
		k->dirty = 0;
	}
	if (ret || !isfinite(newest))
		return ret;
	s = lz_stmt(lz, LSQL_TEST_TRIM);
	sql_name_real(s, ":cutoff", newest - lz->o.window);
	return store_done(st, s, "localize window");
}

int store_localize_explains(struct store *st, int64_t element, double started)
{
	struct store_localize *lz = st->localize;
	sqlite3_stmt *s;
	int rc;

	if (!lz || !lz->o.enabled)
		return 0;
	s = lz_stmt(lz, LSQL_EXPL_GET);
	sql_name_int(s, ":el", element);
	sql_name_real(s, ":started", started);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		store_err(st, rc, "localize explained");
	if (rc == SQLITE_ROW)
		return 1;
	for (size_t i = 0; i < lz->n_kinds; i++)
		if (bsearch(&(struct lz_held){element, started},
			    lz->kinds[i].held, lz->kinds[i].n_held,
			    sizeof(struct lz_held), lz_held_cmp))
			return 1;
	return 0;
}

int store_localize_confirms(struct store *st, struct planner_link **out,
			    size_t *n)
{
	struct store_localize *lz = st->localize;
	size_t total = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; lz && i < lz->n_kinds; i++)
		total += lz->kinds[i].n_confirm;
	if (!total)
		return 0;
	*out = calloc(total, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < lz->n_kinds; i++)
		for (size_t j = 0; j < lz->kinds[i].n_confirm; j++) {
			const struct lz_el *e =
				&lz->el[lz->kinds[i].confirm[j]];

			(*out)[(*n)++] = (struct planner_link){
				e->guid, e->port, lz->kinds[i].profile};
		}
	return 0;
}

int store_localize_flows(struct store *st, struct planner_flow **out, size_t *n)
{
	struct store_localize *lz = st->localize;

	*out = NULL;
	*n = 0;
	if (!lz || !lz->n_flows)
		return 0;
	*out = calloc(lz->n_flows, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < lz->n_flows; i++)
		(*out)[i] = (struct planner_flow){lz->flows[i].profile,
						  lz->flows[i].flow,
						  lz->flows[i].bandwidth};
	*n = lz->n_flows;
	return 0;
}

uint64_t store_localize_version(struct store *st)
{
	return st->localize ? st->localize->version : 0;
}

void store_localize_status(struct store *st, struct store_localize_status *s)
{
	if (st->localize)
		*s = st->localize->status;
	else
		memset(s, 0, sizeof(*s));
}

int store_localize_retire(struct store *st, const char *host, size_t *changes)
{
	struct store_localize *lz = st->localize;
	sqlite3_stmt *s;
	int ret;

	*changes = 0;
	if (!lz)
		return 0;
	s = lz_stmt(lz, LSQL_RETIRE);
	sql_name_text(s, ":host", host);
	ret = store_done(st, s, "localize retire");
	if (!ret)
		*changes = (size_t)sqlite3_changes(st->db);
	store_localize_drop(st);
	return ret;
}

/* Run prune statement @w (:cutoff, :batch); its changes in *@n. */
static int lz_prune_one(struct store *st, enum lsql w, double cutoff,
			long long batch, size_t *n)
{
	sqlite3_stmt *s = lz_stmt(st->localize, w);
	int ret;

	sql_name_real(s, ":cutoff", cutoff);
	sql_name_int(s, ":batch", batch);
	ret = store_done(st, s, "prune localization");
	*n = ret ? 0 : (size_t)sqlite3_changes(st->db);
	return ret;
}

int store_localize_prune(struct store *st, double stale, double cutoff,
			 long long batch, size_t *n)
{
	struct store_localize *lz = st->localize;
	size_t k[2] = {0};
	int ret;

	*n = 0;
	if (!lz)
		return 0;
	ret = lz_prune_one(st, LSQL_EXPL_PRUNE, stale, batch, &k[0]);
	if (!ret && isfinite(cutoff))
		ret = lz_prune_one(st, LSQL_PRUNE, cutoff, batch, &k[1]);
	if (ret)
		return ret;
	*n = k[0] + k[1];
	return k[0] >= (size_t)batch || k[1] >= (size_t)batch;
}
