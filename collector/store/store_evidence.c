// SPDX-License-Identifier: MIT
/*
 * Evidence per element in SQLite (store_evidence.h; the rules in
 * evidence.h, the tables in schema/005_evidence.sql): adding a judged
 * result to the windows of its four elements, and judging the elements a
 * batch touched. Adding a result costs a few indexed statements per
 * element; the judgement runs once per batch over the elements the batch
 * touched and those whose bad results point at them (a peer's new result
 * can exonerate them), so a healthy fabric costs one window read per
 * element judged.
 */
#include "log.h"
#include "vec.h"
#include "report.h"
#include "store_evidence_int.h"
#include "store_health.h"
#include "store_int.h"
#include "store_localize.h"
#include "store_regress_int.h"
#include "testapi.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- adding a result ---- */

static int ev_touch(struct store_evidence *ev, int64_t id)
{
	if (vec_grow(&ev->touched, &ev->cap_touched, ev->n_touched,
		     sizeof(*ev->touched)))
		return -ENOMEM;
	ev->touched[ev->n_touched++] = id;
	return 0;
}

int store_evidence_touch(struct store *st, int64_t element)
{
	struct store_evidence *ev = store_regress_evidence(st);

	return ev ? ev_touch(ev, element) : 0;
}

/* One end of a result as an element: port (@port > 0) or device (0). */
struct ev_end {
	const char *host, *device;
	unsigned port, via;
	int64_t id, suspect;
};

static int ev_upsert(struct store *st, struct store_evidence *ev,
		     struct ev_end *e, const char *profile, const char *metric,
		     double now)
{
	sqlite3_stmt *s = evidence_stmt(ev, ESQL_EL_UPSERT);
	int rc;

	sql_name_text(s, ":kind", e->port ? "port" : "device");
	sql_name_text(s, ":host", e->host);
	sql_name_text(s, ":device", e->device);
	sql_name_int(s, ":port", e->port);
	sql_name_text(s, ":profile", profile);
	sql_name_text(s, ":metric", metric);
	sql_name_real(s, ":now", now);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		e->id = sqlite3_column_int64(s, 0);
		e->suspect = sqlite3_column_int64(s, 1);
	}
	sqlite3_reset(s);
	return rc == SQLITE_ROW ? 0 : store_err(st, rc, "element");
}

/* What one result says, for each element it joins. */
struct ev_judged {
	double started, value, baseline, now;
	int bad, lower_is_worse;
};

static int ev_row(struct store *st, struct store_evidence *ev,
		  const struct ev_end *e, const struct ev_end *peer,
		  const struct ev_judged *j)
{
	sqlite3_stmt *s = evidence_stmt(ev, ESQL_REC_INS);
	int ret;

	sql_name_int(s, ":el", e->id);
	sql_name_real(s, ":started", j->started);
	sql_name_int(s, ":peer", peer->id);
	sql_name_int(s, ":via", e->via);
	sql_name_real(s, ":value", j->value);
	sql_name_real(s, ":baseline", j->baseline);
	sql_name_int(s, ":bad", j->bad);
	ret = store_done(st, s, "element_recent");
	if (ret)
		return ret;
	s = evidence_stmt(ev, ESQL_REC_TRIM);
	sql_name_int(s, ":el", e->id);
	sql_name_int(s, ":keep", ev->o.judged_results);
	ret = store_done(st, s, "element_recent trim");
	if (!ret && e->suspect) {
		s = evidence_stmt(ev, ESQL_SUS_TICK);
		sql_name_int(s, ":sus", e->suspect);
		sql_name_int(s, ":bad", j->bad);
		sql_name_int(s, ":lower", j->lower_is_worse);
		sql_name_real(s, ":value", j->value);
		sql_name_real(s, ":now", j->now);
		ret = store_done(st, s, "suspect");
	}
	return ret ? ret : ev_touch(ev, e->id);
}

int store_evidence_add(struct store *st, const char *host,
		       const struct testapi_result *t, enum baseline_metric m,
		       double value, double baseline, int bad, double now)
{
	struct store_evidence *ev = store_regress_evidence(st);
	const char *metric = baseline_metric_name(m);
	struct ev_end e[4] = {
		{host, t->local_device, t->local_port, t->local_port, 0, 0},
		{t->peer_host, t->peer_device, t->peer_port, t->peer_port, 0,
		 0},
		{host, t->local_device, 0, t->local_port, 0, 0},
		{t->peer_host, t->peer_device, 0, t->peer_port, 0, 0},
	};
	struct ev_judged j = {t->started, value, baseline,
			      now,	  bad,	 m == BASELINE_BANDWIDTH};
	int same_dev = !strcmp(host, t->peer_host) &&
		       !strcmp(t->local_device, t->peer_device);
	int ret = 0;

	if (!ev || (same_dev && t->local_port == t->peer_port))
		return 0; /* loopback: names its port already */
	/* Two ports of one device: that device is no peer of itself. */
	for (int i = 0; !ret && i < (same_dev ? 2 : 4); i++)
		ret = ev_upsert(st, ev, &e[i], t->profile, metric, now);
	for (int i = 0; !ret && i < (same_dev ? 2 : 4); i++)
		ret = ev_row(st, ev, &e[i], &e[i ^ 1], &j);
	return ret;
}

/* ---- judging an element ---- */

struct ev_el {
	int64_t id, suspect;
	char kind[8], *host, *device, *profile, *metric;
	unsigned port;
	double window_from;
	int confirm;
};

static void ev_el_free(struct ev_el *e)
{
	free(e->host);
	free(e->device);
	free(e->profile);
	free(e->metric);
	memset(e, 0, sizeof(*e));
}

/* Element @id's row into @e; -ENOENT when gone. */
static int ev_load(struct store *st, struct store_evidence *ev, int64_t id,
		   struct ev_el *e)
{
	sqlite3_stmt *s = evidence_stmt(ev, ESQL_EL_GET);
	int rc, ret = 0;

	memset(e, 0, sizeof(*e));
	sql_name_int(s, ":el", id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		e->id = id;
		snprintf(e->kind, sizeof(e->kind), "%s",
			 evidence_col_text(s, 0));
		e->host = strdup(evidence_col_text(s, 1));
		e->device = strdup(evidence_col_text(s, 2));
		e->port = (unsigned)sqlite3_column_int(s, 3);
		e->profile = strdup(evidence_col_text(s, 4));
		e->metric = strdup(evidence_col_text(s, 5));
		e->window_from = sqlite3_column_double(s, 6);
		e->suspect = sqlite3_column_int64(s, 7);
		e->confirm = sqlite3_column_int(s, 8);
		if (!e->host || !e->device || !e->profile || !e->metric)
			ret = -ENOMEM;
	} else {
		ret = rc == SQLITE_DONE ? -ENOENT
					: store_err(st, rc, "element");
	}
	sqlite3_reset(s);
	if (ret)
		ev_el_free(e);
	return ret;
}

/* The window of element @id after @from, newest first. */
static int ev_window(struct store *st, struct store_evidence *ev, int64_t id,
		     double from, struct evidence_row *r, size_t *n)
{
	sqlite3_stmt *s = evidence_stmt(ev, ESQL_WINDOW);
	int rc;

	sql_name_int(s, ":el", id);
	sql_name_real(s, ":from", from);
	sql_name_int(s, ":keep", ev->o.judged_results);
	for (*n = 0;
	     *n < EVIDENCE_MAX_WINDOW && (rc = sqlite3_step(s)) == SQLITE_ROW;
	     (*n)++) {
		struct evidence_row *x = &r[*n];

		memset(x, 0, sizeof(*x));
		x->started = sqlite3_column_double(s, 0);
		x->peer = sqlite3_column_int64(s, 1);
		x->via_port = (unsigned)sqlite3_column_int(s, 2);
		x->value = sqlite3_column_double(s, 3);
		x->baseline = sqlite3_column_double(s, 4);
		x->bad = sqlite3_column_int(s, 5) != 0;
	}
	sqlite3_reset(s);
	if (*n < EVIDENCE_MAX_WINDOW && rc != SQLITE_DONE)
		return store_err(st, rc, "element window");
	return 0;
}

/* 1 when a suspect group pair holds @self's host and @peer_host. */
static int ev_group_explains(struct store *st, struct store_evidence *ev,
			     const struct ev_el *self, const char *peer_host)
{
	sqlite3_stmt *s;
	int rc;

	if (!ev->group_label)
		return 0;
	s = evidence_stmt(ev, ESQL_GP_EXPLAINS);
	sql_name_text(s, ":label", ev->group_label);
	sql_name_text(s, ":host", self->host);
	sql_name_text(s, ":peer", peer_host);
	sql_name_text(s, ":profile", self->profile);
	sql_name_text(s, ":metric", self->metric);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_err(st, rc, "group pair");
	return rc == SQLITE_ROW;
}

/* Fill peer_fine and explained of the bad rows of @self's window. */
static int ev_peers(struct store *st, struct store_evidence *ev,
		    const struct ev_el *self, struct evidence_row *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct evidence_row pr[EVIDENCE_MAX_WINDOW];
		struct ev_el p;
		size_t np, j;
		int ret;

		if (!r[i].bad)
			continue;
		for (j = 0; j < i && !(r[j].bad && r[j].peer == r[i].peer); j++)
			;
		if (j < i) { /* that peer was looked at already */
			r[i].peer_fine = r[j].peer_fine;
			r[i].explained = r[j].explained;
			continue;
		}
		ret = ev_load(st, ev, r[i].peer, &p);
		if (ret == -ENOENT)
			continue; /* retired: exonerates nothing */
		if (!ret)
			ret = ev_window(st, ev, p.id, p.window_from, pr, &np);
		if (!ret) {
			r[i].peer_fine = !p.suspect &&
					 evidence_peer_fine(pr, np, self->id);
			r[i].explained = p.suspect != 0;
		}
		if (!ret && !r[i].explained) {
			ret = ev_group_explains(st, ev, self, p.host);
			r[i].explained = ret > 0;
			ret = ret < 0 ? ret : 0;
		}
		ev_el_free(&p);
		if (ret)
			return ret;
	}
	/* a link or switch suspect on its path (store_localize.h) */
	for (size_t i = 0; i < n; i++)
		if (r[i].bad && !r[i].explained)
			r[i].explained = store_localize_explains(st, self->id,
								 r[i].started);
	return 0;
}

/* The open suspect of @e's device (0: none), for a port. */
static int ev_device_suspect(struct store *st, struct store_evidence *ev,
			     const struct ev_el *e, int64_t *sus)
{
	sqlite3_stmt *s = evidence_stmt(ev, ESQL_DEV_EL);
	int rc;

	*sus = 0;
	sql_name_text(s, ":host", e->host);
	sql_name_text(s, ":device", e->device);
	sql_name_text(s, ":profile", e->profile);
	sql_name_text(s, ":metric", e->metric);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*sus = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE
		       ? 0
		       : store_err(st, rc, "device element");
}

/* 1 when the counter reports say @e's PCIe link runs below its maximum. */
static int ev_pcie_degraded(struct store *st, struct store_evidence *ev,
			    const struct ev_el *e)
{
	sqlite3_stmt *s = evidence_stmt(ev, ESQL_PCIE);
	struct report_pcie p = {.cur_speed_gts = -1,
				.max_speed_gts = -1,
				.cur_width = -1,
				.max_width = -1};
	int rc;

	sql_name_text(s, ":host", e->host);
	sql_name_text(s, ":device", e->device);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		double v[4];

		for (int i = 0; i < 4; i++)
			v[i] = evidence_col_real(s, i);
		p.cur_speed_gts = isnan(v[0]) ? -1 : v[0];
		p.max_speed_gts = isnan(v[1]) ? -1 : v[1];
		p.cur_width = isnan(v[2]) ? -1 : (int)v[2];
		p.max_width = isnan(v[3]) ? -1 : (int)v[3];
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_err(st, rc, "device PCIe");
	return report_pcie_degraded(&p) == 1;
}

static int ev_close(struct store *st, struct store_evidence *ev, int64_t sus,
		    const char *reason, double now)
{
	sqlite3_stmt *s = evidence_stmt(ev, ESQL_SUS_CLOSE);

	sql_name_int(s, ":sus", sus);
	sql_name_text(s, ":reason", reason);
	sql_name_real(s, ":now", now);
	return store_done(st, s, "suspect close");
}

static int ev_open(struct store *st, struct store_evidence *ev,
		   const struct ev_el *e, const struct evidence_verdict *v,
		   const struct evidence_row *newest, double now, int64_t *id)
{
	sqlite3_stmt *s = evidence_stmt(ev, ESQL_SUS_INS);
	int rc;

	sql_name_text(s, ":kind", e->kind);
	sql_name_text(s, ":host", e->host);
	sql_name_text(s, ":device", e->device);
	sql_name_int(s, ":port", e->port);
	sql_name_text(s, ":profile", e->profile);
	sql_name_text(s, ":metric", e->metric);
	sql_name_real(s, ":now", now);
	sql_name_real(s, ":first_bad", v->first_bad);
	sql_name_real(s, ":opened", newest->started);
	sql_name_int(s, ":judged", v->judged);
	sql_name_int(s, ":bad", v->bad);
	sql_name_int(s, ":good", v->judged - v->bad);
	sql_name_int(s, ":peers_bad", v->peers_bad);
	sql_name_int(s, ":peers_ex", v->peers_exonerating);
	sql_name_real(s, ":baseline", v->baseline);
	sql_name_real(s, ":figure", v->figure);
	sql_name_real(s, ":worst", v->worst);
	sql_name_real(s, ":last", newest->value);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return store_err(st, rc, "suspect");
	log_info("suspect: %s %s %s%s%.0u %s %s: %u of %u results bad, %u "
		 "peers exonerating, %.4g against a baseline of %.4g",
		 e->kind, e->host, e->device, e->port ? "/" : "", e->port,
		 e->profile, e->metric, v->bad, v->judged, v->peers_exonerating,
		 v->figure, v->baseline);
	return 0;
}

/* A growable list of element ids (a queue of judgements). */
struct ev_ids {
	int64_t *v;
	size_t n, cap;
};

static int ev_ids_push(struct ev_ids *q, int64_t id)
{
	if (vec_grow(&q->v, &q->cap, q->n, sizeof(*q->v)))
		return -ENOMEM;
	q->v[q->n++] = id;
	return 0;
}

static int ev_cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Sort @q and drop its repeats. */
static void ev_ids_unique(struct ev_ids *q)
{
	size_t k = 0;

	if (q->n)
		qsort(q->v, q->n, sizeof(*q->v), ev_cmp_id);
	for (size_t i = 0; i < q->n; i++)
		if (!k || q->v[i] != q->v[k - 1])
			q->v[k++] = q->v[i];
	q->n = k;
}

/* The port suspects of device @e close: the device explains them. */
static int ev_close_ports(struct store *st, struct store_evidence *ev,
			  const struct ev_el *e, double now,
			  struct ev_ids *redo)
{
	sqlite3_stmt *s = evidence_stmt(ev, ESQL_DEV_PORTS_OPEN);
	int64_t ids[64], sus[64];
	size_t n = 0;
	int rc, ret = 0;

	sql_name_text(s, ":host", e->host);
	sql_name_text(s, ":device", e->device);
	sql_name_text(s, ":profile", e->profile);
	sql_name_text(s, ":metric", e->metric);
	while (n < 64 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		ids[n] = sqlite3_column_int64(s, 0);
		sus[n++] = sqlite3_column_int64(s, 1);
	}
	sqlite3_reset(s);
	if (n < 64 && rc != SQLITE_DONE)
		return store_err(st, rc, "device ports");
	/* each port is judged again, seeing its device's suspect */
	for (size_t i = 0; !ret && i < n; i++) {
		ret = ev_close(st, ev, sus[i], "device", now);
		if (!ret && redo)
			ret = ev_ids_push(redo, ids[i]);
	}
	return ret;
}

/* The windows of device @e's ports start after @from (judged again). */
static int ev_fresh_ports(struct store *st, struct store_evidence *ev,
			  const struct ev_el *e, double from,
			  struct ev_ids *redo)
{
	sqlite3_stmt *s = evidence_stmt(ev, ESQL_DEV_PORTS_FRESH);
	int rc, ret = 0;

	sql_name_text(s, ":host", e->host);
	sql_name_text(s, ":device", e->device);
	sql_name_text(s, ":profile", e->profile);
	sql_name_text(s, ":metric", e->metric);
	sql_name_real(s, ":from", from);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
		ret = redo ? ev_ids_push(redo, sqlite3_column_int64(s, 0)) : 0;
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(st, rc, "device ports");
	return ret;
}

/* What one judgement changed, for the caller's queue. */
struct ev_change {
	int suspect; /* opened or closed a suspect */
	int confirm; /* the confirm flag changed */
};

/* Open, keep or close @e's suspect after verdict @v. */
static int ev_decide(struct store *st, struct store_evidence *ev,
		     struct ev_el *e, const struct evidence_verdict *v,
		     const struct evidence_row *r, size_t n, double now,
		     struct ev_ids *redo, struct ev_change *ch)
{
	int port = !strcmp(e->kind, "port");
	int64_t dev = 0;
	int ret = port ? ev_device_suspect(st, ev, e, &dev) : 0;

	if (ret)
		return ret;
	if (e->suspect) {
		const char *why =
			v->good_run >= (unsigned)ev->o.good_results
				? "recovered"
			: port && dev ? "device"
			: v->explained && v->bad < (unsigned)ev->o.bad_results
				? "explained"
				: NULL;

		if (!why)
			return 0;
		ret = ev_close(st, ev, e->suspect, why, now);
		/* a fresh window: old bad results cannot reopen it; a
		 * device's ports start afresh too (it explained theirs) */
		if (!strcmp(why, "recovered") && n) {
			e->window_from = r[0].started;
			if (!ret && !port)
				ret = ev_fresh_ports(st, ev, e, r[0].started,
						     redo);
		}
		e->suspect = 0;
		ch->suspect = 1;
		return ret;
	}
	if (!v->suspect || !n || (port && dev))
		return 0;
	/* A device: every port it was judged through mostly bad, two at
	 * least, or its PCIe link degraded; else a port is the suspect. */
	if (!port && (v->ports_bad < 2 || v->ports_good)) {
		ret = ev_pcie_degraded(st, ev, e);
		if (ret <= 0)
			return ret;
	}
	ret = ev_open(st, ev, e, v, &r[0], now, &e->suspect);
	if (!ret && !port)
		ret = ev_close_ports(st, ev, e, now, redo);
	ch->suspect = 1;
	return ret;
}

static int ev_save(struct store *st, struct store_evidence *ev,
		   const struct ev_el *e, const struct evidence_verdict *v,
		   const struct evidence_row *r, size_t n, int confirm,
		   double now)
{
	sqlite3_stmt *s = evidence_stmt(ev, ESQL_EL_UPD);

	sql_name_int(s, ":el", e->id);
	sql_name_text(s, ":status",
		      e->suspect ? "suspect"
		      : v->bad	 ? "watch"
				 : "ok");
	sql_name_int(s, ":confirm", confirm);
	sql_name_int(s, ":judged", v->judged);
	sql_name_int(s, ":bad", v->bad);
	sql_name_int(s, ":peers_bad", v->peers_bad);
	sql_name_int(s, ":peers_ex", v->peers_exonerating);
	sql_name_int(s, ":good_run", v->good_run);
	sql_name_real(s, ":last", n ? r[0].started : NAN);
	sql_name_real(s, ":from", e->window_from);
	if (e->suspect)
		sql_name_int(s, ":sus", e->suspect);
	sql_name_real(s, ":now", now);
	return store_done(st, s, "element update");
}

/*
 * Judge element @id: its window, its peers' exoneration, the verdict,
 * suspects opened or closed, its row. Elements whose judgement must be
 * redone in this flush are added to @redo.
 */
static int ev_judge_one(struct store *st, struct store_evidence *ev, int64_t id,
			double now, struct ev_ids *redo, struct ev_change *ch)
{
	struct evidence_row r[EVIDENCE_MAX_WINDOW];
	struct evidence_verdict v;
	struct ev_el e;
	size_t n = 0;
	int confirm, ret = ev_load(st, ev, id, &e);

	memset(ch, 0, sizeof(*ch));
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	ret = ev_window(st, ev, id, e.window_from, r, &n);
	if (!ret)
		ret = ev_peers(st, ev, &e, r, n);
	evidence_judge(&ev->o, r, n,
		       baseline_metric_of(e.metric) == BASELINE_BANDWIDTH, &v);
	if (!ret)
		ret = ev_decide(st, ev, &e, &v, r, n, now, redo, ch);
	if (!ret && ch->suspect && !e.suspect) {
		/* closed: judge the fresh window it starts with */
		ret = ev_window(st, ev, id, e.window_from, r, &n);
		if (!ret)
			ret = ev_peers(st, ev, &e, r, n);
		evidence_judge(
			&ev->o, r, n,
			baseline_metric_of(e.metric) == BASELINE_BANDWIDTH, &v);
	}
	confirm = !e.suspect && v.confirm;
	/* A device's confirmation tests its other ports (the planner knows
	 * them), once its bad results through one port are enough, until
	 * another port was judged good or bad since. */
	if (!strcmp(e.kind, "device"))
		confirm = !e.suspect && v.bad >= (unsigned)ev->o.bad_results &&
			  v.ports_bad < 2 && !v.ports_clear;
	ch->confirm = confirm != e.confirm;
	if (!ret)
		ret = ev_save(st, ev, &e, &v, r, n, confirm, now);
	/* the host's verdict names its open suspects (store_health.h) */
	if (!ret && ch->suspect)
		ret = store_health_host(st, e.host, now);
	ev_el_free(&e);
	return ret;
}

/* ---- the flush: what the batch touched, and who points at it ---- */

/* Queue the elements whose bad results name @id as their peer. */
static int ev_referrers(struct store *st, struct store_evidence *ev, int64_t id,
			struct ev_ids *q)
{
	sqlite3_stmt *s = evidence_stmt(ev, ESQL_REFERRERS);
	int rc, ret = 0;

	sql_name_int(s, ":el", id);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
		ret = ev_ids_push(q, sqlite3_column_int64(s, 0));
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(st, rc, "element referrers");
	return ret;
}

/*
 * Judge every element of @q once. Those whose judgement depends on what
 * this round changed (the ports of a device that became the suspect, the
 * elements a new or closed suspect explains) go to @redo.
 */
static int ev_round(struct store *st, struct store_evidence *ev,
		    struct ev_ids *q, struct ev_ids *redo, double now)
{
	int ret = 0;

	ev_ids_unique(q);
	for (size_t i = 0; !ret && i < q->n; i++) {
		struct ev_change ch;

		ret = ev_judge_one(st, ev, q->v[i], now, redo, &ch);
		if (!ret && (ch.confirm || ch.suspect))
			ev->version++;
		if (!ret && ch.suspect && redo)
			ret = ev_referrers(st, ev, q->v[i], redo);
	}
	return ret;
}

int store_evidence_flush(struct store *st, double now)
{
	struct store_evidence *ev = store_regress_evidence(st);
	struct ev_ids q = {0}, redo = {0};
	int ret = 0;

	if (!ev || !ev->n_touched)
		return 0;
	for (size_t i = 0; !ret && i < ev->n_touched; i++)
		ret = ev_ids_push(&q, ev->touched[i]);
	ev_ids_unique(&q);
	/* a new result of a peer may exonerate an element (or not) */
	for (size_t i = 0, n = q.n; !ret && i < n; i++)
		ret = ev_referrers(st, ev, q.v[i], &q);
	if (!ret)
		ret = ev_round(st, ev, &q, &redo, now);
	/* once more for what the first round changed; what a second round
	 * would change waits for the next batch */
	if (!ret && redo.n)
		ret = ev_round(st, ev, &redo, NULL, now);
	free(q.v);
	free(redo.v);
	ev->n_touched = 0;
	return ret;
}
