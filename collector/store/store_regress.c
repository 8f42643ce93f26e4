// SPDX-License-Identifier: MIT
/*
 * Judging each stored result against its link's baseline, in the
 * writer's transaction (store_regress.h; the statistics in baseline.h,
 * the hardware's figure in expected.h). For one result and metric:
 *   1. the link's row (created on first sight) and its accepted results
 *      within the window;
 *   2. what judges it: the frozen baseline of an open regression, else
 *      the link's own once it has min_results, else its ports' pooled
 *      baselines (the lower bandwidth, the higher latency), else nothing;
 *   3. the K-of-M window (link_recent) opens or closes a regression, and
 *      the efficiency against the expected figure the under-expected
 *      state, in the same way;
 *   4. a result that is neither bad nor taken while a regression is open
 *      feeds the link's baseline and its two ports' pools;
 *   5. a judged result is evidence about the ports and devices of both
 *      ends (store_evidence.h), whatever this link's history, and a
 *      test of the links and switches its data crossed
 *      (store_localize.h).
 */
#include "store_regress_int.h"
#include "vec.h"
#include "report.h"
#include "expected.h"
#include "store_evidence.h"
#include "store_int.h"
#include "store_localize.h"
#include "testapi.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct store_regress *store_regress_of(struct store *st)
{
	return st->regress;
}

struct store_evidence *store_regress_evidence(struct store *st)
{
	return st->regress ? st->regress->ev : NULL;
}

sqlite3_stmt *regress_stmt(struct store_regress *rg, enum store_rsql which)
{
	sqlite3_stmt *s = rg->s[which];

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return s;
}

double regress_col_real(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL
		       ? NAN
		       : sqlite3_column_double(s, i);
}

int store_regress_prepare(struct store *st, const struct baseline_opts *o,
			  const struct evidence_opts *eo,
			  const char *group_label)
{
	struct store_regress *rg;

	if (!o)
		return 0;
	rg = calloc(1, sizeof(*rg));
	if (!rg)
		return -ENOMEM;
	st->regress = rg;
	rg->o = *o;
	rg->window = o->window_days * 86400.0;
	if (group_label && !(rg->group_label = strdup(group_label)))
		return -ENOMEM;
	for (int i = 0; i < RSQL_COUNT; i++) {
		const char *sql = regress_sql((enum store_rsql)i);
		int rc = sql_prepare(st->db, sql, SQLITE_PREPARE_PERSISTENT,
				     &rg->s[i]);

		if (rc != SQLITE_OK)
			return store_err(st, rc, sql);
	}
	return eo ? store_evidence_prepare(st, eo, group_label, &rg->ev) : 0;
}

void store_regress_finalize(struct store *st)
{
	struct store_regress *rg = st->regress;

	if (!rg)
		return;
	for (int i = 0; i < RSQL_COUNT; i++)
		sqlite3_finalize(rg->s[i]);
	store_regress_reset(st);
	store_evidence_finalize(rg->ev);
	free(rg->dirty);
	free(rg->group_label);
	free(rg);
	st->regress = NULL;
}

void store_regress_reset(struct store *st)
{
	struct store_regress *rg = st->regress;

	if (!rg)
		return;
	for (size_t i = 0; i < rg->n_dirty; i++)
		free(rg->dirty[i].profile);
	rg->n_dirty = 0;
	store_evidence_reset(st);
}

int regress_mark(struct store_regress *rg, const char *profile,
		 enum baseline_metric metric)
{
	struct regress_kind *d;

	for (size_t i = 0; i < rg->n_dirty; i++)
		if (rg->dirty[i].metric == metric &&
		    !strcmp(rg->dirty[i].profile, profile))
			return 0;
	if (vec_grow(&rg->dirty, &rg->cap_dirty, rg->n_dirty, sizeof(*d)))
		return -ENOMEM;
	d = &rg->dirty[rg->n_dirty];
	d->profile = strdup(profile);
	if (!d->profile)
		return -ENOMEM;
	d->metric = metric;
	rg->n_dirty++;
	return 0;
}

int store_regress_flush(struct store *st, double now)
{
	struct store_regress *rg = st->regress;
	int ret = 0;

	if (!rg)
		return 0;
	for (size_t i = 0; !ret && i < rg->n_dirty; i++)
		ret = regress_suspects(st, rg->dirty[i].profile,
				       rg->dirty[i].metric, now);
	/* after the group pairs, and the link and switch suspects
	 * (store_localize.h): they explain bad results of the elements */
	if (!ret)
		ret = store_localize_flush(st, now);
	if (!ret)
		ret = store_evidence_flush(st, now);
	store_regress_reset(st);
	return ret;
}

/* ---- one result ---- */

/* The link of one result and metric, as its row holds it. */
struct rlink {
	int64_t id;
	const char *host;
	const struct testapi_result *t;
	enum baseline_metric metric;
	double value;
	double last_started, window_from, under_since, under_from;
	int64_t reg; /* the open regression; 0: none */
	int last_bad;
};

/* What judges a result. */
struct rbase {
	int have;
	struct baseline_stat b;
	double threshold;
	const char *source; /* "link", "port" */
};

/* An open regression, as its row holds it. */
struct rreg {
	double started, worst;
	struct rbase base;
	char source[8];
};

/* One judgement of the window (bad, under: -1 not judged). */
struct rrow {
	double started, value;
	int bad, under;
};

static void bind_link(sqlite3_stmt *s, const struct rlink *l)
{
	sql_name_text(s, ":a_host", l->host);
	sql_name_text(s, ":a_device", l->t->local_device);
	sql_name_int(s, ":a_port", l->t->local_port);
	sql_name_text(s, ":b_host", l->t->peer_host);
	sql_name_text(s, ":b_device", l->t->peer_device);
	sql_name_int(s, ":b_port", l->t->peer_port);
	sql_name_text(s, ":profile", l->t->profile);
	sql_name_text(s, ":metric", baseline_metric_name(l->metric));
}

static int link_load(struct store *st, struct rlink *l, double now)
{
	struct store_regress *rg = st->regress;
	sqlite3_stmt *s = regress_stmt(rg, RSQL_LINK_UPSERT);
	int rc;

	bind_link(s, l);
	sql_name_text(s, ":group_label", rg->group_label);
	sql_name_real(s, ":now", now);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		l->id = sqlite3_column_int64(s, 0);
		l->last_started = regress_col_real(s, 1);
		l->reg = sqlite3_column_int64(s, 2);
		l->window_from = sqlite3_column_double(s, 3);
		l->under_since = regress_col_real(s, 4);
		l->under_from = sqlite3_column_double(s, 5);
		l->last_bad = sqlite3_column_int(s, 6);
	}
	sqlite3_reset(s);
	return rc == SQLITE_ROW ? 0 : store_err(st, rc, "link_state");
}

/* The link's accepted results since @from, newest first, into @v. */
static int samples_load(struct store *st, const struct rlink *l, double from,
			double *v, size_t cap, size_t *n)
{
	sqlite3_stmt *s = regress_stmt(st->regress, RSQL_SAMPLES);
	int rc;

	sql_name_int(s, ":link_id", l->id);
	sql_name_real(s, ":from", from);
	sql_name_int(s, ":cap", (sqlite3_int64)cap);
	for (*n = 0; (rc = sqlite3_step(s)) == SQLITE_ROW && *n < cap;)
		v[(*n)++] = sqlite3_column_double(s, 0);
	sqlite3_reset(s);
	return rc == SQLITE_DONE || rc == SQLITE_ROW
		       ? 0
		       : store_err(st, rc, "baseline_sample");
}

static int reg_load(struct store *st, int64_t id, struct rreg *r)
{
	sqlite3_stmt *s = regress_stmt(st->regress, RSQL_REG_GET);
	int rc;

	sql_name_int(s, ":id", id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const char *src = (const char *)sqlite3_column_text(s, 3);

		r->started = sqlite3_column_double(s, 0);
		r->base.have = 1;
		r->base.b.median = sqlite3_column_double(s, 1);
		r->base.threshold = sqlite3_column_double(s, 2);
		snprintf(r->source, sizeof(r->source), "%s", src ? src : "");
		r->base.source = r->source;
		r->worst = sqlite3_column_double(s, 4);
	}
	sqlite3_reset(s);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? -ENOENT : store_err(st, rc, "regression");
}

/* Port @end's (0 initiator, 1 responder) pooled baseline, if it has one. */
static int port_base(struct store *st, const struct rlink *l, int end,
		     double now, struct baseline_stat *b)
{
	struct store_regress *rg = st->regress;
	sqlite3_stmt *s = regress_stmt(rg, RSQL_PORT_BL_GET);
	int rc, have = 0;

	sql_name_text(s, ":host", end ? l->t->peer_host : l->host);
	sql_name_text(s, ":device",
		      end ? l->t->peer_device : l->t->local_device);
	sql_name_int(s, ":port", end ? l->t->peer_port : l->t->local_port);
	sql_name_text(s, ":profile", l->t->profile);
	sql_name_text(s, ":metric", baseline_metric_name(l->metric));
	sql_name_real(s, ":since", now - rg->window);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		b->median = sqlite3_column_double(s, 0);
		b->spread = regress_col_real(s, 1);
		b->n = (size_t)sqlite3_column_int64(s, 2);
		if (isnan(b->spread))
			b->spread = 0;
		have = 1;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_err(st, rc, "port_baseline");
	return have;
}

/*
 * The baseline of the link's own results @v (reordered), else the worse
 * of its ports' pooled ones; b->have 0 when neither is known.
 */
static int base_of(struct store *st, const struct rlink *l, double *v, size_t n,
		   double now, struct rbase *b)
{
	const struct baseline_opts *o = &st->regress->o;
	struct baseline_stat p[2];
	int have[2];

	memset(b, 0, sizeof(*b));
	if (n >= (size_t)o->min_results && !baseline_compute(v, n, &b->b)) {
		b->source = "link";
	} else {
		for (int e = 0; e < 2; e++) {
			have[e] = port_base(st, l, e, now, &p[e]);
			if (have[e] < 0)
				return have[e];
		}
		if (!have[0] && !have[1])
			return 0;
		/* the weaker end: lower bandwidth, higher latency */
		if (!have[0] ||
		    (have[1] && (l->metric == BASELINE_BANDWIDTH
					 ? p[1].median < p[0].median
					 : p[1].median > p[0].median)))
			p[0] = p[1];
		b->b = p[0];
		b->source = "port";
	}
	b->have = 1;
	b->threshold = baseline_threshold(o, l->metric, &b->b);
	return 0;
}

/* One end's inputs to the expected figure; -ENODATA when unknown. */
static int expected_end_of(struct store *st, const char *host,
			   const char *device, unsigned port,
			   struct expected_end *e)
{
	sqlite3_stmt *s = regress_stmt(st->regress, RSQL_PORT_INFO);
	int rc, ret = -ENODATA;

	sql_name_text(s, ":host", host);
	sql_name_text(s, ":device", device);
	sql_name_int(s, ":port", port);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const char *ll = (const char *)sqlite3_column_text(s, 1);

		e->rate_bytes = regress_col_real(s, 0);
		e->ethernet = ll && !strcmp(ll, "Ethernet");
		e->pcie_gts = regress_col_real(s, 2);
		e->pcie_width = sqlite3_column_type(s, 3) == SQLITE_NULL
					? -1
					: sqlite3_column_int64(s, 3);
		/* a port that is not ACTIVE has no meaningful rate */
		if (sqlite3_column_int(s, 4) == REPORT_PORT_ACTIVE)
			ret = 0;
	} else if (rc != SQLITE_DONE) {
		ret = store_err(st, rc, "port rate");
	}
	sqlite3_reset(s);
	return ret;
}

static int expected_of(struct store *st, const struct rlink *l,
		       struct expected_figure *f)
{
	const struct testapi_result *t = l->t;
	struct expected_end a, b;
	struct expected_test et;
	int ret;

	if (l->metric != BASELINE_BANDWIDTH ||
	    expected_test_parse(t->test, t->params, &et))
		return -ENODATA;
	if (!strcmp(l->host, t->peer_host) &&
	    !strcmp(t->local_device, t->peer_device) &&
	    t->local_port == t->peer_port)
		return -ENODATA; /* loopback: no wire crossed */
	ret = expected_end_of(st, l->host, t->local_device, t->local_port, &a);
	if (!ret)
		ret = expected_end_of(st, t->peer_host, t->peer_device,
				      t->peer_port, &b);
	if (!ret)
		ret = expected_compute(&a, &b, &et, f);
	return ret;
}

/* ---- the window and its events ---- */

/* Everything one result's judgement needs. */
struct rjob {
	struct rlink l;
	double *v;	 /* the link's accepted results, newest first */
	double *tmp;	 /* scratch of the same size */
	size_t n, cap;	 /* loaded, at most results */
	struct rbase b;	 /* what judges this result */
	struct rreg reg; /* the open regression (when l.reg) */
	struct expected_figure f;
	int have_f, was_open, fed;
	int bad, under; /* -1: not judged */
	struct rrow r[BASELINE_MAX_WINDOW];
	size_t nr;
};

static int recent_load(struct store *st, struct rjob *j, size_t keep)
{
	sqlite3_stmt *s = regress_stmt(st->regress, RSQL_RECENT);
	int rc;

	sql_name_int(s, ":link_id", j->l.id);
	sql_name_int(s, ":keep", (sqlite3_int64)keep);
	for (j->nr = 0; j->nr < keep && (rc = sqlite3_step(s)) == SQLITE_ROW;
	     j->nr++) {
		struct rrow *r = &j->r[j->nr];

		r->started = sqlite3_column_double(s, 0);
		r->value = sqlite3_column_double(s, 1);
		r->bad = sqlite3_column_type(s, 2) == SQLITE_NULL
				 ? -1
				 : sqlite3_column_int(s, 2);
		r->under = sqlite3_column_type(s, 3) == SQLITE_NULL
				   ? -1
				   : sqlite3_column_int(s, 3);
	}
	if (j->nr < keep && rc != SQLITE_DONE) {
		sqlite3_reset(s);
		return store_err(st, rc, "link_recent");
	}
	sqlite3_reset(s);
	return 0;
}

/* Flag @which (0 bad, 1 under) of row @r; -1 outside its window. */
static int row_flag(const struct rlink *l, const struct rrow *r, int which)
{
	if (which)
		return r->started > l->under_from ? r->under : -1;
	return r->started > l->window_from ? r->bad : -1;
}

/* The windows before this result: bit 0 the newest row. */
static void windows_of(const struct rjob *j, struct baseline_window *w)
{
	memset(w, 0, 2 * sizeof(*w));
	for (int k = 0; k < 2; k++) {
		for (size_t i = j->nr; i-- > 0;) {
			int f = row_flag(&j->l, &j->r[i], k);

			if (f < 0)
				continue;
			w[k].bits = (w[k].bits << 1) | (uint64_t)f;
			if (w[k].n < BASELINE_MAX_WINDOW)
				w[k].n++;
		}
	}
	w[0].open = j->l.reg != 0;
	w[1].open = !isnan(j->l.under_since);
}

/* The bad (@which 0) or under (1) results of the newest M of a window
 * that just opened, this one included: their values and the first;
 * *@seen (may be NULL) gets the results of the window. */
static size_t window_bad(const struct rjob *j, int which, unsigned m, double *v,
			 double *first, unsigned *n_seen)
{
	size_t k = 0;
	unsigned seen = 1;

	v[k++] = j->l.value;
	*first = j->l.t->started;
	for (size_t i = 0; i < j->nr && seen < m; i++) {
		int f = row_flag(&j->l, &j->r[i], which);

		if (f < 0)
			continue;
		seen++;
		if (!f)
			continue;
		v[k++] = j->r[i].value;
		*first = fmin(*first, j->r[i].started);
	}
	if (n_seen)
		*n_seen = seen;
	return k;
}

static int reg_open(struct store *st, struct rjob *j, double now)
{
	struct store_regress *rg = st->regress;
	double v[BASELINE_MAX_WINDOW], first, worst;
	struct baseline_stat fig;
	unsigned seen;
	size_t k = window_bad(j, 0, (unsigned)rg->o.judged_results, v, &first,
			      &seen);
	sqlite3_stmt *s;
	int rc;

	worst = v[0];
	for (size_t i = 1; i < k; i++)
		worst = j->l.metric == BASELINE_BANDWIDTH ? fmin(worst, v[i])
							  : fmax(worst, v[i]);
	baseline_compute(v, k, &fig);
	s = regress_stmt(rg, RSQL_REG_INS);
	bind_link(s, &j->l);
	sql_name_real(s, ":started", first);
	sql_name_real(s, ":opened", j->l.t->started);
	sql_name_real(s, ":baseline", j->b.b.median);
	sql_name_real(s, ":threshold", j->b.threshold);
	sql_name_text(s, ":baseline_source", j->b.source);
	sql_name_real(s, ":figure", fig.median);
	sql_name_real(s, ":worst", worst);
	sql_name_real(s, ":last", j->l.value);
	sql_name_int(s, ":bad_results", (sqlite3_int64)k);
	sql_name_int(s, ":results", seen);
	sql_name_real(s, ":now", now);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		j->l.reg = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return store_err(st, rc, "regression");
	s = regress_stmt(rg, RSQL_COUNT_BUMP);
	sql_name_text(s, ":profile", j->l.t->profile);
	sql_name_text(s, ":metric", baseline_metric_name(j->l.metric));
	return store_done(st, s, "regression_count");
}

static int reg_close(struct store *st, struct rjob *j, const char *reason,
		     double now)
{
	sqlite3_stmt *s = regress_stmt(st->regress, RSQL_REG_CLOSE);

	sql_name_int(s, ":id", j->l.reg);
	sql_name_real(s, ":closed", j->l.t->started);
	sql_name_text(s, ":reason", reason);
	sql_name_real(s, ":now", now);
	j->l.reg = 0;
	j->l.window_from = j->l.t->started;
	return store_done(st, s, "regression close");
}

static int reg_progress(struct store *st, struct rjob *j, double now)
{
	sqlite3_stmt *s = regress_stmt(st->regress, RSQL_REG_UPD);
	double v = j->l.value, w = j->reg.worst;

	sql_name_int(s, ":id", j->l.reg);
	sql_name_real(s, ":worst",
		      j->l.metric == BASELINE_BANDWIDTH ? fmin(w, v)
							: fmax(w, v));
	sql_name_real(s, ":last", v);
	sql_name_int(s, ":bad", j->bad == 1);
	sql_name_real(s, ":now", now);
	return store_done(st, s, "regression update");
}

static int recent_save(struct store *st, const struct rjob *j, size_t keep)
{
	struct store_regress *rg = st->regress;
	sqlite3_stmt *s;
	int ret;

	if (j->bad < 0 && j->under < 0)
		return 0;
	s = regress_stmt(rg, RSQL_RECENT_INS);
	sql_name_int(s, ":link_id", j->l.id);
	sql_name_real(s, ":started", j->l.t->started);
	sql_name_real(s, ":value", j->l.value);
	if (j->bad >= 0)
		sql_name_int(s, ":bad", j->bad);
	if (j->under >= 0)
		sql_name_int(s, ":under", j->under);
	ret = store_done(st, s, "link_recent");
	if (ret)
		return ret;
	s = regress_stmt(rg, RSQL_RECENT_TRIM);
	sql_name_int(s, ":link_id", j->l.id);
	sql_name_int(s, ":keep", (sqlite3_int64)keep);
	return store_done(st, s, "link_recent trim");
}

/* Step both windows with this result; open, progress or close. */
static int judge(struct store *st, struct rjob *j, double now)
{
	struct store_regress *rg = st->regress;
	size_t keep = (size_t)(rg->o.judged_results > rg->o.good_results
				       ? rg->o.judged_results
				       : rg->o.good_results);
	struct baseline_window w[2];
	enum baseline_event ev = BASELINE_NONE, uev = BASELINE_NONE;
	int ret = recent_load(st, j, keep);
	double v[BASELINE_MAX_WINDOW];

	windows_of(j, w);
	if (j->bad >= 0)
		ev = baseline_step(&w[0], &rg->o, j->bad);
	if (j->under >= 0)
		uev = baseline_step(&w[1], &rg->o, j->under);
	if (!ret && ev == BASELINE_OPEN)
		ret = reg_open(st, j, now);
	else if (!ret && j->was_open)
		ret = reg_progress(st, j, now);
	if (!ret && ev == BASELINE_CLOSE)
		ret = reg_close(st, j, "recovered", now);
	if (uev == BASELINE_OPEN) {
		window_bad(j, 1, (unsigned)rg->o.judged_results, v,
			   &j->l.under_since, NULL);
	} else if (uev == BASELINE_CLOSE) {
		j->l.under_since = NAN;
		j->l.under_from = j->l.t->started;
	}
	if (!ret &&
	    (ev != BASELINE_NONE || (j->bad >= 0 && j->bad != j->l.last_bad)))
		ret = regress_mark(rg, j->l.t->profile, j->l.metric);
	if (!ret)
		ret = recent_save(st, j, keep);
	return ret;
}

/* ---- baselines ---- */

/* Recompute port @end's pooled baseline from its links' samples. */
static int port_pool(struct store *st, const struct rlink *l, int end,
		     double from, double *v, size_t cap, double now)
{
	struct store_regress *rg = st->regress;
	sqlite3_stmt *s = regress_stmt(rg, RSQL_POOL);
	const char *host = end ? l->t->peer_host : l->host;
	const char *dev = end ? l->t->peer_device : l->t->local_device;
	unsigned port = end ? l->t->peer_port : l->t->local_port;
	const char *metric = baseline_metric_name(l->metric);
	struct baseline_stat b = {NAN, NAN, 0};
	size_t n = 0;
	int rc;

	sql_name_text(s, ":host", host);
	sql_name_text(s, ":device", dev);
	sql_name_int(s, ":port", port);
	sql_name_text(s, ":profile", l->t->profile);
	sql_name_text(s, ":metric", metric);
	sql_name_real(s, ":from", from);
	sql_name_int(s, ":cap", (sqlite3_int64)cap);
	while (n < cap && (rc = sqlite3_step(s)) == SQLITE_ROW)
		v[n++] = sqlite3_column_double(s, 0);
	if (n < cap && rc != SQLITE_DONE) {
		sqlite3_reset(s);
		return store_err(st, rc, "port pool");
	}
	sqlite3_reset(s);
	if (n < (size_t)rg->o.min_results || baseline_compute(v, n, &b))
		b.median = b.spread = NAN;
	s = regress_stmt(rg, RSQL_PORT_BL_UPSERT);
	sql_name_text(s, ":host", host);
	sql_name_text(s, ":device", dev);
	sql_name_int(s, ":port", port);
	sql_name_text(s, ":profile", l->t->profile);
	sql_name_text(s, ":metric", metric);
	sql_name_real(s, ":baseline", b.median);
	sql_name_real(s, ":spread", b.spread);
	sql_name_int(s, ":samples", (sqlite3_int64)n);
	sql_name_real(s, ":now", now);
	return store_done(st, s, "port_baseline");
}

/* The result joins the link's baseline and both ports' pools. */
static int feed(struct store *st, struct rjob *j, double from, double now)
{
	struct store_regress *rg = st->regress;
	const struct rlink *l = &j->l;
	int loop = !strcmp(l->host, l->t->peer_host) &&
		   !strcmp(l->t->local_device, l->t->peer_device) &&
		   l->t->local_port == l->t->peer_port;
	sqlite3_stmt *s = regress_stmt(rg, RSQL_SAMPLE_INS);
	int ret;

	sql_name_int(s, ":link_id", l->id);
	sql_name_real(s, ":started", l->t->started);
	sql_name_real(s, ":value", l->value);
	ret = store_done(st, s, "baseline_sample");
	if (ret)
		return ret;
	s = regress_stmt(rg, RSQL_SAMPLE_TRIM);
	sql_name_int(s, ":link_id", l->id);
	sql_name_real(s, ":from", from);
	sql_name_int(s, ":cap", (sqlite3_int64)j->cap);
	ret = store_done(st, s, "baseline_sample trim");
	for (int e = 0; !ret && e < (loop ? 1 : 2); e++)
		ret = port_pool(st, l, e, from, j->tmp, j->cap, now);
	/* the newest cap - 1 stay, with this one first */
	if (j->n == j->cap)
		j->n--;
	memmove(j->v + 1, j->v, j->n * sizeof(*j->v));
	j->v[0] = l->value;
	j->n++;
	j->fed = 1;
	return ret;
}

/* What the next result will be judged by, for the row (and /metrics). */
static int shown_base(struct store *st, struct rjob *j, double now,
		      struct rbase *b, const char **source)
{
	int ret = 0;

	if (j->l.reg) {
		*b = j->was_open ? j->reg.base : j->b;
		b->b.spread = NAN;
		*source = "frozen";
		return 0;
	}
	memcpy(j->tmp, j->v, j->n * sizeof(*j->v));
	ret = base_of(st, &j->l, j->tmp, j->n, now, b);
	*source = b->source;
	return ret;
}

static int link_save(struct store *st, struct rjob *j, double now)
{
	sqlite3_stmt *s;
	const char *source = NULL;
	struct rbase b;
	int ret = shown_base(st, j, now, &b, &source);

	if (ret)
		return ret;
	s = regress_stmt(st->regress, RSQL_LINK_UPD);
	sql_name_int(s, ":id", j->l.id);
	if (b.have) {
		sql_name_real(s, ":baseline", b.b.median);
		sql_name_real(s, ":spread", b.b.spread);
		sql_name_real(s, ":threshold", b.threshold);
		sql_name_text(s, ":baseline_source", source);
	}
	sql_name_int(s, ":samples", (sqlite3_int64)j->n);
	sql_name_int(s, ":judged", j->bad >= 0);
	sql_name_real(s, ":last_value", j->l.value);
	sql_name_real(s, ":last_started", j->l.t->started);
	sql_name_int(s, ":last_bad", j->bad == 1);
	if (j->l.reg)
		sql_name_int(s, ":regression_id", j->l.reg);
	sql_name_real(s, ":window_from", j->l.window_from);
	if (j->have_f) {
		sql_name_real(s, ":expected", j->f.value);
		sql_name_text(s, ":expected_limit", j->f.limit);
		sql_name_real(s, ":efficiency", j->l.value / j->f.value);
	}
	sql_name_real(s, ":under_since", j->l.under_since);
	sql_name_real(s, ":under_from", j->l.under_from);
	sql_name_real(s, ":now", now);
	return store_done(st, s, "link_state update");
}

/* A regression open for a whole window: the link has a new level. */
static int reg_expire(struct store *st, struct rjob *j, double now)
{
	sqlite3_stmt *s;
	int ret = reg_close(st, j, "expired", now);

	if (ret)
		return ret;
	s = regress_stmt(st->regress, RSQL_SAMPLE_CLEAR);
	sql_name_int(s, ":link_id", j->l.id);
	j->n = 0;
	ret = store_done(st, s, "baseline_sample clear");
	return ret ? ret
		   : regress_mark(st->regress, j->l.t->profile, j->l.metric);
}

/* Load the link and decide what judges this result. 1: skip it. */
static int job_load(struct store *st, struct rjob *j, double from, double now)
{
	struct store_regress *rg = st->regress;
	struct expected_figure f;
	int ret = link_load(st, &j->l, now);

	if (!ret && !isnan(j->l.last_started) &&
	    j->l.t->started <= j->l.last_started)
		return 1; /* older than what was judged: a replay */
	if (!ret)
		ret = samples_load(st, &j->l, from, j->v, j->cap, &j->n);
	if (!ret && j->l.reg) {
		ret = reg_load(st, j->l.reg, &j->reg);
		if (ret == -ENOENT) { /* pruned under it: start over */
			j->l.reg = 0;
			ret = 0;
		}
	}
	if (!ret && j->l.reg && j->l.t->started - j->reg.started > rg->window)
		ret = reg_expire(st, j, now);
	j->was_open = j->l.reg != 0;
	if (!ret && j->was_open) {
		j->b = j->reg.base;
	} else if (!ret) {
		memcpy(j->tmp, j->v, j->n * sizeof(*j->v));
		ret = base_of(st, &j->l, j->tmp, j->n, now, &j->b);
	}
	j->bad = j->b.have
			 ? baseline_bad(j->l.metric, j->b.threshold, j->l.value)
			 : -1;
	if (!ret && !(ret = expected_of(st, &j->l, &f))) {
		j->have_f = 1;
		j->f = f;
	} else if (ret == -ENODATA) {
		ret = 0;
	}
	if (j->have_f && rg->o.efficiency_floor > 0) {
		j->under = j->l.value / j->f.value < rg->o.efficiency_floor;
	} else if (!isnan(j->l.under_since)) {
		/* no figure (or no floor) any more: nothing is under it */
		j->l.under_since = NAN;
		j->l.under_from = j->l.t->started;
	}
	return ret;
}

static int regress_one(struct store *st, struct rlink *l, double now)
{
	struct store_regress *rg = st->regress;
	double from = l->t->started - rg->window;
	struct rjob *j = calloc(1, sizeof(*j));
	int ret;

	if (!j)
		return -ENOMEM;
	j->l = *l;
	j->cap = (size_t)rg->o.results;
	j->bad = j->under = -1;
	j->v = malloc((j->cap + 1) * sizeof(*j->v));
	j->tmp = malloc((j->cap + 1) * sizeof(*j->tmp));
	ret = j->v && j->tmp ? job_load(st, j, from, now) : -ENOMEM;
	if (!ret)
		ret = judge(st, j, now);
	if (!ret && j->bad >= 0)
		ret = store_evidence_add(st, l->host, l->t, l->metric, l->value,
					 j->b.b.median, j->bad, now);
	if (!ret && j->bad >= 0)
		ret = store_localize_add(st, l->host, l->t, l->metric, l->value,
					 j->b.b.median, j->bad, now);
	if (!ret && !j->was_open && j->bad != 1)
		ret = feed(st, j, from, now);
	if (!ret)
		ret = link_save(st, j, now);
	free(j->v);
	free(j->tmp);
	free(j);
	return ret > 0 ? 0 : ret;
}

/*
 * Does @test measure @metric? Probes of 0.1.0 before this check sent a
 * bandwidth of 0 with every latency test (the probe now sends none), which
 * would give the link a bandwidth baseline of 0 and series for it; the
 * test's kind (the test API's one classifier) says which figure is the
 * link's. A test it does not know is judged by whatever figures it
 * carries.
 */
static int regress_measures(const char *test, enum baseline_metric metric)
{
	return testapi_test_measures(test, metric == BASELINE_BANDWIDTH
						   ? TESTAPI_METRIC_BANDWIDTH
						   : TESTAPI_METRIC_LATENCY);
}

int store_regress_result(struct store *st, const char *host,
			 const struct testapi_result *t, double now)
{
	static const enum testapi_fig figs[BASELINE_METRICS] = {
		[BASELINE_BANDWIDTH] = TESTAPI_FIG_BW_AVG,
		[BASELINE_LATENCY] = TESTAPI_FIG_LAT_MEDIAN,
	};
	struct store_regress *rg = st->regress;
	int ret = 0;

	if (!rg || t->outcome != TESTAPI_OK || t->busy || !t->local_device ||
	    !t->local_port || !t->peer_host || !t->peer_device ||
	    !t->peer_port || !t->profile)
		return 0;
	if (t->started < now - rg->window)
		return 0;
	for (int m = 0; !ret && m < BASELINE_METRICS; m++) {
		struct rlink l = {.host = host, .t = t};
		double v = t->fig[figs[m]];

		if (isnan(v) || v < 0 || (m == BASELINE_LATENCY && v == 0) ||
		    !regress_measures(t->test, (enum baseline_metric)m))
			continue;
		l.metric = (enum baseline_metric)m;
		l.value = v;
		ret = regress_one(st, &l, now);
	}
	return ret;
}
