// SPDX-License-Identifier: MIT
/*
 * One localization run (store_localize_int.h, lz_run): the window of one
 * profile and metric as localize.h's elements and tests, the host-side
 * elements that are suspects of their own (the evidence's), the counters
 * of the links with bad tests as extra evidence, the run, then what it
 * changes: link and switch suspects opened, kept or closed (a suspect
 * that recovered gets a fresh window and the run is made again), which
 * results of the evidence a fabric suspect explains (those elements are
 * judged again in this flush), and the links that need confirmation
 * tests.
 */
#include "store_localize_int.h"
#include "vec.h"

#include "log.h"
#include "route.h"
#include "store_evidence.h"
#include "store_int.h"
#include "store_route.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Evidence from counters, as gain (localize.h): errors on a link's ends
 * over the window, a width or speed below what is enabled, and its
 * egress end waiting to send. */
#define LZ_BONUS_ERRORS LOC_CORROBORATED /* ln 20 */
#define LZ_BONUS_DEGRADED LOC_CORROBORATED
#define LZ_BONUS_WAIT 0.7 /* ln 2: congestion says little alone */

struct lz_ctx {
	struct store *st;
	struct store_localize *lz;
	struct lz_kind *k;
	double now;
	struct loc_elem *e;
	size_t ne;
	struct loc_test *t;
	struct loc_result r;
	const char **counters; /* per element: what its counters said (the
				* elements' cache) */
	int64_t *ev;	       /* per host-side element: its evidence id, 0
				* not looked up, -1 none */
	const struct route_net *net; /* NULL: no names */
};

struct lz_open;
static int lz_open_list(struct lz_ctx *c, struct lz_open **out, size_t *n);
static int lz_open_named(struct lz_ctx *c);

/* ---- the run's input ---- */

static int lz_from_grow(struct lz_kind *k, size_t n)
{
	double *f;

	if (n <= k->n_from)
		return 0;
	f = realloc(k->from, n * sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (size_t i = k->n_from; i < n; i++)
		f[i] = -INFINITY;
	k->from = f;
	k->n_from = n;
	return 0;
}

/* The host-side elements that are suspects of the evidence's. */
static int lz_named(struct lz_ctx *c)
{
	sqlite3_stmt *s = lz_stmt(c->lz, LSQL_HOST_SUS);
	int rc;

	sql_name_text(s, ":profile", c->k->profile);
	sql_name_text(s, ":metric", baseline_metric_name(c->k->metric));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(s, 0);
		const char *host = (const char *)sqlite3_column_text(s, 1);
		const char *dev = (const char *)sqlite3_column_text(s, 2);
		unsigned port = (unsigned)sqlite3_column_int(s, 3);
		uint32_t x;

		if (!kind || !host || !dev)
			continue;
		x = lz_host_find(c->lz, host, dev,
				 strcmp(kind, "device") ? port : 0);
		if (x < c->ne)
			c->e[x].named = 1;
	}
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : store_err(c->st, rc, "host suspects");
}

/* "leaf003" or the GUID, for names and logs. */
static void lz_name(const struct lz_ctx *c, uint64_t guid, char *buf,
		    size_t len)
{
	struct route_node_info i;
	uint32_t n = c->net ? route_node_find(c->net, guid) : ROUTE_NO_NODE;

	if (n != ROUTE_NO_NODE && !route_node_get(c->net, n, &i) && i.desc &&
	    i.desc[0])
		snprintf(buf, len, "%s", i.desc);
	else
		lz_guid_text(guid, buf, len);
}

/* What one end's counters said over the window, appended to @txt. */
static int lz_end_counters(struct lz_ctx *c, uint64_t guid, unsigned port,
			   int egress, char *txt, size_t len, double *bonus)
{
	sqlite3_stmt *s = lz_stmt(c->lz, LSQL_COUNTERS);
	char g[24], name[80], part[256] = "";
	int rc, errors = 0, degraded = 0, wait = 0;

	lz_guid_text(guid, g, sizeof(g));
	sql_name_text(s, ":guid", g);
	sql_name_int(s, ":port", port);
	sql_name_real(s, ":t0", c->now - c->lz->o.window);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *deg = (const char *)sqlite3_column_text(s, 0);
		const char *cn = (const char *)sqlite3_column_text(s, 1);
		sqlite3_int64 v = sqlite3_column_int64(s, 2),
			      b = sqlite3_column_int64(s, 3);
		size_t at = strlen(part);

		if (deg && !degraded++)
			snprintf(part + at, sizeof(part) - at, "%s%s",
				 at ? ", " : "", deg);
		int is_wait = cn && !strcmp(cn, "port_xmit_wait");
		/* a counter reset in between: what it counted since */
		long long d = (long long)(v >= b ? v - b : v);

		if (!cn || !d || (is_wait && !egress))
			continue; /* waiting to send is the egress end's */
		at = strlen(part);
		snprintf(part + at, sizeof(part) - at, "%s%s +%lld",
			 at ? ", " : "", cn, d);
		wait |= is_wait;
		errors |= !is_wait;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return store_err(c->st, rc, "link counters");
	*bonus += errors * LZ_BONUS_ERRORS +
		  (degraded ? LZ_BONUS_DEGRADED : 0) + wait * LZ_BONUS_WAIT;
	if (part[0]) {
		size_t at = strlen(txt);

		lz_name(c, guid, name, sizeof(name));
		snprintf(txt + at, len - at, "%s%s/%u: %s", at ? "; " : "",
			 name, port, part);
	}
	return 0;
}

/* Counters of the links with bad tests: bonus and text. */
static int lz_counters(struct lz_ctx *c)
{
	unsigned *bad = calloc(c->ne + 1, sizeof(*bad));
	int ret = bad ? 0 : -ENOMEM;

	for (size_t i = 0; !ret && i < c->k->n; i++) {
		const struct lz_obs *o = &c->k->obs[i];

		for (uint32_t j = 0; o->bad && j < o->n_elems; j++)
			bad[o->elems[j]] += o->started > c->e[o->elems[j]].from;
	}
	for (size_t x = 0; !ret && x < c->ne; x++) {
		struct lz_el *l = &c->lz->el[x];
		char txt[640] = "";
		double bonus = 0;

		if (l->kind != LOC_LINK || !bad[x])
			continue;
		/* read again at most every eighth of a window */
		if (l->cnt_at > 0 && c->now - l->cnt_at < c->lz->o.window / 8 &&
		    c->now >= l->cnt_at) {
			c->e[x].bonus = l->cnt_bonus;
			c->counters[x] = l->cnt_text;
			continue;
		}
		ret = lz_end_counters(c, l->guid, l->port, 1, txt, sizeof(txt),
				      &bonus);
		if (!ret)
			ret = lz_end_counters(c, l->peer_guid, l->peer_port, 0,
					      txt, sizeof(txt), &bonus);
		if (ret)
			break;
		free(l->cnt_text);
		l->cnt_text = txt[0] ? strdup(txt) : NULL;
		if (txt[0] && !l->cnt_text)
			ret = -ENOMEM;
		l->cnt_at = c->now;
		l->cnt_bonus = fmin(bonus, 2 * LZ_BONUS_ERRORS);
		c->e[x].bonus = l->cnt_bonus;
		c->counters[x] = l->cnt_text;
	}
	free(bad);
	return ret;
}

static int lz_input(struct lz_ctx *c)
{
	int ret = lz_from_grow(c->k, c->ne);

	c->e = calloc(c->ne + 1, sizeof(*c->e));
	c->t = calloc(c->k->n + 1, sizeof(*c->t));
	c->counters = calloc(c->ne + 1, sizeof(*c->counters));
	c->ev = calloc(c->ne + 1, sizeof(*c->ev));
	if (!ret && (!c->e || !c->t || !c->counters || !c->ev))
		ret = -ENOMEM;
	for (size_t x = 0; !ret && x < c->ne; x++) {
		c->e[x].kind = c->lz->el[x].kind;
		c->e[x].sw[0] = c->lz->el[x].sw[0];
		c->e[x].sw[1] = c->lz->el[x].sw[1];
		c->e[x].from = c->k->from[x];
	}
	for (size_t i = 0; !ret && i < c->k->n; i++) {
		const struct lz_obs *o = &c->k->obs[i];

		c->t[i] = (struct loc_test){
			.started = o->started,
			.bad = o->bad,
			.ends = {o->ends[0], o->ends[1]},
			.elems = o->elems,
			.n_elems = o->n_elems,
		};
	}
	if (!ret)
		ret = lz_named(c);
	if (!ret)
		ret = lz_open_named(c);
	return ret ? ret : lz_counters(c);
}

static void lz_ctx_free(struct lz_ctx *c)
{
	free(c->counters); /* the texts are the elements' */
	free(c->e);
	free(c->t);
	free(c->ev);
	localize_result_free(&c->r);
}

/* ---- suspects ---- */

/* An open fabric suspect of this slot. */
struct lz_open {
	int64_t id;
	uint32_t x; /* its element; LOC_NONE: none in the window */
};

static int lz_open_list(struct lz_ctx *c, struct lz_open **out, size_t *n)
{
	sqlite3_stmt *s = lz_stmt(c->lz, LSQL_OPEN);
	size_t cap = 0;
	int rc, ret = 0;

	*out = NULL;
	*n = 0;
	sql_name_text(s, ":profile", c->k->profile);
	sql_name_text(s, ":metric", baseline_metric_name(c->k->metric));
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(s, 1);
		const char *g = (const char *)sqlite3_column_text(s, 2);

		if (vec_grow(out, &cap, *n, sizeof(**out))) {
			ret = -ENOMEM;
			break;
		}
		(*out)[*n].id = sqlite3_column_int64(s, 0);
		(*out)[(*n)++].x = lz_fabric_find(
			c->lz,
			kind && !strcmp(kind, "switch") ? LOC_SWITCH : LOC_LINK,
			g ? strtoull(g, NULL, 16) : 0,
			(unsigned)sqlite3_column_int(s, 3));
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(c->st, rc, "fabric suspects");
	return ret;
}

/* The open link and switch suspects are named elements of the run. */
static int lz_open_named(struct lz_ctx *c)
{
	struct lz_open *o;
	size_t n;
	int ret = lz_open_list(c, &o, &n);

	for (size_t i = 0; !ret && i < n; i++)
		if (o[i].x < c->ne)
			c->e[o[i].x].named = 1;
	free(o);
	return ret;
}

static int lz_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double lz_median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), lz_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Figures of element @x's tests in its window. */
struct lz_fig {
	double baseline, figure, worst, last, last_at, newest_bad;
};

static int lz_figures(const struct lz_ctx *c, uint32_t x, struct lz_fig *f)
{
	double *v = calloc(c->k->n + 1, sizeof(*v));
	double *b = calloc(c->k->n + 1, sizeof(*b));
	int lower = c->k->metric == BASELINE_BANDWIDTH;
	size_t n = 0;

	*f = (struct lz_fig){NAN, NAN, NAN, NAN, -INFINITY, NAN};
	for (size_t i = 0; v && b && i < c->k->n; i++) {
		const struct lz_obs *o = &c->k->obs[i];
		int has = 0;

		for (uint32_t j = 0; j < o->n_elems && !has; j++)
			has = o->elems[j] == x;
		if (!has || o->started <= c->e[x].from)
			continue;
		if (o->started > f->last_at) {
			f->last_at = o->started;
			f->last = o->value;
		}
		if (!o->bad)
			continue;
		v[n] = o->value;
		b[n++] = o->baseline;
		if (isnan(f->worst) ||
		    (lower ? o->value < f->worst : o->value > f->worst))
			f->worst = o->value;
		if (isnan(f->newest_bad) || o->started > f->newest_bad)
			f->newest_bad = o->started;
	}
	f->figure = lz_median(v, n);
	f->baseline = lz_median(b, n);
	free(v);
	free(b);
	return v && b ? 0 : -ENOMEM;
}

static void lz_bind_ends(struct lz_ctx *c, sqlite3_stmt *s, uint32_t x,
			 char (*buf)[96])
{
	const struct lz_el *l = &c->lz->el[x];

	lz_guid_text(l->guid, buf[0], sizeof(buf[0]));
	lz_name(c, l->guid, buf[1], sizeof(buf[1]));
	sql_name_text(s, ":a_guid", buf[0]);
	sql_name_text(s, ":a_desc", buf[1]);
	if (l->kind != LOC_LINK)
		return;
	sql_name_int(s, ":a_port", l->port);
	lz_guid_text(l->peer_guid, buf[2], sizeof(buf[2]));
	lz_name(c, l->peer_guid, buf[3], sizeof(buf[3]));
	sql_name_text(s, ":b_guid", buf[2]);
	sql_name_text(s, ":b_desc", buf[3]);
	sql_name_int(s, ":b_port", l->peer_port);
}

static int lz_sus_open(struct lz_ctx *c, const struct loc_pick *p)
{
	sqlite3_stmt *s = lz_stmt(c->lz, LSQL_SUS_INS);
	const struct loc_stat *st = &c->e[p->elem].st;
	char names[4][96], what[256];
	struct lz_fig f;
	int ret = lz_figures(c, p->elem, &f);

	if (ret)
		return ret;
	sql_name_text(s, ":kind", localize_kind_name(c->e[p->elem].kind));
	sql_name_text(s, ":profile", c->k->profile);
	sql_name_text(s, ":metric", baseline_metric_name(c->k->metric));
	lz_bind_ends(c, s, p->elem, names);
	sql_name_real(s, ":now", c->now);
	sql_name_real(s, ":first_bad", st->first_bad);
	sql_name_real(s, ":opened", st->last_bad);
	sql_name_int(s, ":bad", st->bad);
	sql_name_int(s, ":good", st->good);
	sql_name_real(s, ":confidence", p->confidence);
	sql_name_real(s, ":gain", p->gain);
	sql_name_text(s, ":counters", c->counters[p->elem]);
	sql_name_real(s, ":baseline", f.baseline);
	sql_name_real(s, ":figure", f.figure);
	sql_name_real(s, ":worst", f.worst);
	sql_name_real(s, ":last", f.last);
	ret = store_done(c->st, s, "fabric suspect");
	if (!ret && c->e[p->elem].kind == LOC_LINK)
		snprintf(what, sizeof(what), "%s/%u -> %s/%u", names[1],
			 c->lz->el[p->elem].port, names[3],
			 c->lz->el[p->elem].peer_port);
	else if (!ret)
		snprintf(what, sizeof(what), "%s", names[1]);
	if (!ret)
		log_info("suspect: %s %s %s %s: %u bad tests of %u, confidence "
			 "%.2f%s%s",
			 localize_kind_name(c->e[p->elem].kind), what,
			 c->k->profile, baseline_metric_name(c->k->metric),
			 st->bad, st->bad + st->good, p->confidence,
			 c->counters[p->elem] ? "; " : "",
			 c->counters[p->elem] ? c->counters[p->elem] : "");
	return ret;
}

static int lz_sus_update(struct lz_ctx *c, int64_t id, uint32_t x,
			 const struct loc_pick *p)
{
	sqlite3_stmt *s = lz_stmt(c->lz, LSQL_SUS_UPD);
	const struct loc_stat *st = &c->e[x].st;
	struct lz_fig f;
	int ret = lz_figures(c, x, &f);

	if (ret)
		return ret;
	sql_name_int(s, ":id", id);
	sql_name_int(s, ":bad", st->bad);
	sql_name_int(s, ":good", st->good);
	sql_name_real(s, ":confidence", p ? p->confidence : NAN);
	sql_name_real(s, ":gain", p ? p->gain : st->gain);
	sql_name_text(s, ":counters", c->counters[x]);
	sql_name_int(s, ":lower", c->k->metric == BASELINE_BANDWIDTH);
	sql_name_real(s, ":worst", isnan(f.worst) ? f.last : f.worst);
	sql_name_real(s, ":last", f.last);
	sql_name_real(s, ":now", c->now);
	if (isnan(f.last))
		return 0; /* nothing crossed it in its window */
	return store_done(c->st, s, "fabric suspect update");
}

static int lz_sus_close(struct lz_ctx *c, int64_t id, uint32_t x,
			const char *reason, double from)
{
	sqlite3_stmt *s = lz_stmt(c->lz, LSQL_SUS_CLOSE);

	sql_name_int(s, ":id", id);
	sql_name_text(s, ":reason", reason);
	sql_name_real(s, ":from", from);
	sql_name_int(s, ":bad", x < c->ne ? c->e[x].st.bad : 0);
	sql_name_int(s, ":good", x < c->ne ? c->e[x].st.good : 0);
	sql_name_real(s, ":now", c->now);
	log_info("suspect: fabric suspect %lld (%s %s) closed: %s",
		 (long long)id, c->k->profile,
		 baseline_metric_name(c->k->metric), reason);
	return store_done(c->st, s, "fabric suspect close");
}

/*
 * Suspects whose last good_tests tests were good recovered: closed, and
 * their window starts after the newest. 1 when any did (run again).
 */
static int lz_recover(struct lz_ctx *c)
{
	struct lz_open *o;
	size_t n;
	int ret = lz_open_list(c, &o, &n), again = 0;

	for (size_t i = 0; !ret && i < n; i++) {
		const struct loc_stat *st;
		struct lz_fig f;

		if (o[i].x >= c->ne)
			continue;
		st = &c->e[o[i].x].st;
		if (st->good_run < c->lz->o.loc.good_tests)
			continue;
		ret = lz_figures(c, o[i].x, &f);
		if (!ret)
			ret = lz_sus_close(c, o[i].id, o[i].x, "recovered",
					   f.last_at);
		c->k->from[o[i].x] = c->e[o[i].x].from = f.last_at;
		c->e[o[i].x].named = 0;
		/* a switch's links start afresh with it: the bad tests it
		 * explained must not name them now */
		for (uint32_t l = 0;
		     c->e[o[i].x].kind == LOC_SWITCH && l < c->ne; l++)
			if (c->e[l].kind == LOC_LINK &&
			    (c->e[l].sw[0] == o[i].x ||
			     c->e[l].sw[1] == o[i].x))
				c->k->from[l] = c->e[l].from =
					fmax(c->e[l].from, f.last_at);
		again = 1;
	}
	free(o);
	return ret ? ret : again;
}

/* Open, keep or close this slot's suspects after the run. */
static int lz_suspects(struct lz_ctx *c)
{
	struct lz_open *o;
	size_t n;
	int ret = lz_open_list(c, &o, &n);

	for (size_t i = 0; !ret && i < n; i++) {
		const struct loc_stat *st =
			o[i].x < c->ne ? &c->e[o[i].x].st : NULL;
		const struct loc_pick *p = st && st->pick != LOC_NONE
						   ? &c->r.picks[st->pick]
						   : NULL;

		if (p && p->named)
			ret = lz_sus_update(c, o[i].id, o[i].x, p);
		else if (st && st->covered != LOC_NONE)
			ret = lz_sus_close(c, o[i].id, o[i].x, "explained",
					   NAN);
		else if (!st || !(st->bad + st->good))
			ret = lz_sus_close(c, o[i].id, o[i].x, "stale", NAN);
		else
			ret = lz_sus_update(c, o[i].id, o[i].x, NULL);
	}
	for (size_t i = 0; !ret && i < c->r.n_picks; i++) {
		const struct loc_pick *p = &c->r.picks[i];
		size_t j;

		if (!p->named || c->e[p->elem].kind < LOC_LINK)
			continue;
		for (j = 0; j < n && o[j].x != p->elem; j++)
			;
		if (j == n)
			ret = lz_sus_open(c, p);
	}
	free(o);
	return ret;
}

/* ---- what the evidence and the planner learn ---- */

/* The evidence's id of host-side element @x in this slot; 0: none. */
static int lz_ev_id(struct lz_ctx *c, uint32_t x, int64_t *id)
{
	const struct lz_el *l = &c->lz->el[x];
	sqlite3_stmt *s;
	int rc;

	if (c->ev[x]) {
		*id = c->ev[x] > 0 ? c->ev[x] : 0;
		return 0;
	}
	s = lz_stmt(c->lz, LSQL_EV_EL);
	sql_name_text(s, ":kind", l->kind == LOC_PORT ? "port" : "device");
	sql_name_text(s, ":host", l->host);
	sql_name_text(s, ":device", l->device);
	sql_name_int(s, ":port", l->hport);
	sql_name_text(s, ":profile", c->k->profile);
	sql_name_text(s, ":metric", baseline_metric_name(c->k->metric));
	rc = sqlite3_step(s);
	c->ev[x] = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	sqlite3_reset(s);
	*id = c->ev[x] > 0 ? c->ev[x] : 0;
	return rc == SQLITE_ROW || rc == SQLITE_DONE
		       ? 0
		       : store_err(c->st, rc, "evidence element");
}

/*
 * The bad results fabric suspects explain, for the evidence: each end's
 * port and device (localize_explained, for good: the cause was found);
 * the elements that gain one are judged again in this flush.
 */
static int lz_explained(struct lz_ctx *c)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < c->k->n; i++) {
		struct lz_obs *o = &c->k->obs[i];
		uint32_t p = c->r.covered[i];
		const uint32_t ends[4] = {o->ends[0], o->devs[0], o->ends[1],
					  o->devs[1]};

		if (!o->bad || o->explained || p == LOC_NONE ||
		    !c->r.picks[p].named ||
		    c->e[c->r.picks[p].elem].kind < LOC_LINK)
			continue;
		o->explained = 1; /* told once: it stays explained */
		for (int k = 0; !ret && k < 4; k++) {
			sqlite3_stmt *s;
			int64_t id;

			ret = lz_ev_id(c, ends[k], &id);
			if (ret || !id)
				continue;
			s = lz_stmt(c->lz, LSQL_EXPL_INS);
			sql_name_int(s, ":el", id);
			sql_name_real(s, ":started", o->started);
			ret = store_done(c->st, s, "localize explained");
			if (!ret && sqlite3_changes(c->st->db))
				ret = store_evidence_touch(c->st, id);
		}
	}
	return ret;
}

int lz_held_cmp(const void *a, const void *b)
{
	const struct lz_held *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->started < y->started ? -1 : x->started > y->started;
}

/* Judge again the elements in @a or @b but not both (sorted, lz_held). */
static int lz_held_touch(struct store *st, const struct lz_held *a, size_t na,
			 const struct lz_held *b, size_t nb)
{
	size_t i = 0, j = 0;
	int ret = 0;

	while (!ret && (i < na || j < nb)) {
		int d = i == na ? 1 : j == nb ? -1 : lz_held_cmp(&a[i], &b[j]);

		if (d)
			ret = store_evidence_touch(st,
						   d < 0 ? a[i].id : b[j].id);
		i += d <= 0;
		j += d >= 0;
	}
	return ret;
}

/*
 * The bad results held from the evidence (store_localize.h): each end's
 * port and device of a bad test localize_run() holds (localize.h,
 * "Held") and no fabric suspect explained. The elements whose results
 * are held or let go are judged again in this flush.
 */
static int lz_hold(struct lz_ctx *c)
{
	struct lz_held *v = calloc(4 * c->k->n + 1, sizeof(*v));
	size_t n = 0;
	int ret = v ? 0 : -ENOMEM;

	for (size_t i = 0; !ret && i < c->k->n; i++) {
		const struct lz_obs *o = &c->k->obs[i];

		for (int a = 0; !ret && !o->explained && a < 2; a++) {
			const uint32_t el[2] = {o->ends[a], o->devs[a]};

			if (!(c->r.held[i] & (1u << a)))
				continue;
			for (int k = 0; !ret && k < 2; k++) {
				int64_t id;

				ret = lz_ev_id(c, el[k], &id);
				if (!ret && id)
					v[n++] = (struct lz_held){id,
								  o->started};
			}
		}
	}
	if (!ret) {
		qsort(v, n, sizeof(*v), lz_held_cmp);
		ret = lz_held_touch(c->st, c->k->held, c->k->n_held, v, n);
	}
	if (ret) {
		free(v);
		return ret;
	}
	free(c->k->held);
	c->k->held = v;
	c->k->n_held = n;
	return 0;
}

/* The elements whose tests may change a verdict: a good test through
 * any other changes none (store_localize.c, lz_append). */
static int lz_interest(struct lz_ctx *c)
{
	uint8_t *v = calloc(c->ne + 1, 1);

	if (!v)
		return -ENOMEM;
	for (uint32_t x = 0; x < c->ne; x++)
		v[x] = c->e[x].st.bad || c->e[x].named || c->e[x].st.confirm;
	free(c->k->interest);
	c->k->interest = v;
	c->k->n_interest = c->ne;
	return 0;
}

/* The links that need confirmation tests; the version moves on change. */
static int lz_confirm(struct lz_ctx *c)
{
	uint32_t *v = calloc(c->ne + 1, sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (uint32_t x = 0; x < c->ne; x++)
		if (c->e[x].st.confirm)
			v[n++] = x;
	if (n != c->k->n_confirm ||
	    (n && memcmp(v, c->k->confirm, n * sizeof(*v))))
		c->lz->version++;
	free(c->k->confirm);
	c->k->confirm = v;
	c->k->n_confirm = n;
	return 0;
}

int lz_run(struct store *st, struct lz_kind *k, double now)
{
	struct lz_ctx c = {.st = st, .lz = st->localize, .k = k, .now = now};
	const double *upd;
	int ret;

	lz_trim(k, k->newest - c.lz->o.window);
	c.ne = c.lz->n_el;
	if (store_route_net(st, &c.net, &upd))
		c.net = NULL;
	ret = lz_input(&c);
	if (!ret)
		ret = localize_run(&c.lz->o.loc, c.e, c.ne, c.t, k->n, &c.r);
	if (!ret && (ret = lz_recover(&c)) == 1) {
		localize_result_free(&c.r);
		ret = localize_run(&c.lz->o.loc, c.e, c.ne, c.t, k->n, &c.r);
	}
	if (!ret)
		ret = lz_suspects(&c);
	if (!ret)
		ret = lz_explained(&c);
	if (!ret)
		ret = lz_hold(&c);
	if (!ret)
		ret = lz_confirm(&c);
	if (!ret)
		ret = lz_interest(&c);
	lz_ctx_free(&c);
	return ret;
}
