// SPDX-License-Identifier: MIT
/*
 * Baselines, regressions and suspects for one scrape: see regress.h. The
 * links measured within the period are read in chunks through the
 * link_state_last index (each chunk its own read transaction), those in
 * regression or under their expected figure through their partial
 * indexes; the small tables in one statement each. Label lists are
 * escaped once into one text buffer (NUL-separated, by offset).
 */
#include "regress.h"
#include "vec.h"
#include "dbread.h"
#include "msnap.h"
#include "results.h"
#include "shard.h"
#include "testapi.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

enum { RG_BW, RG_LAT };

struct rg_link {
	size_t labels; /* host..peer_port, profile */
	size_t seq;    /* read order, for a stable output order */
	int metric;
	int regressed, under, judged;
	double value, baseline, threshold, expected, efficiency, started;
};

/* A labelled value: a port baseline, a suspect, a counter. */
struct rg_item {
	size_t labels;
	int metric;
	double v;
};

struct rg_items {
	struct rg_item *v;
	size_t n, cap;
};

struct regress {
	int enabled;
	struct regress_opts o;
	struct buf text;    /* label lists, NUL-separated */
	struct buf scratch; /* one label list being made */
	struct rg_link *links;
	size_t n_links, cap_links;
	struct rg_items port_bl, port_sus, group_sus, opened;
	struct rg_items sus, sus_ratio; /* schema 5: suspects by kind */
};

static const char *const metric_label[2] = {"metric=\"bandwidth\"",
					    "metric=\"latency\""};

static const char *col(sqlite3_stmt *s, int i)
{
	const char *v = dbread_text(s, i);

	return v ? v : "";
}

static double col_real(sqlite3_stmt *s, int i)
{
	return results_round(dbread_nan(s, i));
}

/* RG_BW or RG_LAT; -1 for a metric no family serves (a row left out). */
static int col_metric(sqlite3_stmt *s, int i)
{
	enum testapi_metric m;

	if (testapi_metric_parse(col(s, i), &m))
		return -1;
	return m == TESTAPI_METRIC_LATENCY ? RG_LAT : RG_BW;
}

/* Append the scratch label list to r->text; its offset in *@off. */
static int keep_labels(struct regress *r, size_t *off)
{
	*off = r->text.len;
	if (buf_add(&r->text, r->scratch.data ? r->scratch.data : "",
		    r->scratch.len) ||
	    buf_addc(&r->text, '\0'))
		return -ENOMEM;
	return 0;
}

/* name="text" pairs for columns @first.. of @s, per @names; a name
 * starting with '#' marks an integer column. */
static int labels_of(struct regress *r, sqlite3_stmt *s, int first,
		     const char *const *names, size_t n)
{
	int ret = 0;

	buf_reset(&r->scratch);
	for (size_t i = 0; !ret && i < n; i++) {
		const char *name = names[i];

		if (*name == '#')
			ret = expo_label_int(
				&r->scratch, name + 1,
				sqlite3_column_int64(s, first + (int)i), 0);
		else
			ret = expo_label(&r->scratch, name,
					 col(s, first + (int)i));
	}
	return ret ? -ENOMEM : 0;
}

/* ---- links ---- */

/* clang-format off */
#define LINK_SELECT							\
	"SELECT id, a_host, a_device, a_port, b_host, b_device, b_port, " \
	"profile, metric, baseline, threshold, last_value, last_started, " \
	"regression_id IS NOT NULL, expected, efficiency, "		\
	"under_since IS NOT NULL, judged "				\
	"FROM link_state "
/* clang-format on */

static const char *const link_names[] = {
	"host",	       "device",     "#port",	"peer_host",
	"peer_device", "#peer_port", "profile",
};

static int link_row(struct regress *r, sqlite3_stmt *s)
{
	struct rg_link *l;

	if (shard_of(col(s, 1), r->o.shards) != r->o.shard ||
	    col_metric(s, 8) < 0)
		return 0;
	if (vec_grow(&r->links, &r->cap_links, r->n_links, sizeof(*l)))
		return -ENOMEM;
	l = &r->links[r->n_links];
	if (labels_of(r, s, 1, link_names, N_ELEMS(link_names)) ||
	    keep_labels(r, &l->labels))
		return -ENOMEM;
	l->seq = r->n_links;
	l->metric = col_metric(s, 8);
	l->baseline = col_real(s, 9);
	l->threshold = col_real(s, 10);
	l->value = col_real(s, 11);
	l->started = sqlite3_column_double(s, 12);
	l->regressed = sqlite3_column_int(s, 13);
	l->expected = col_real(s, 14);
	l->efficiency = col_real(s, 15);
	l->under = sqlite3_column_int(s, 16);
	l->judged = sqlite3_column_int64(s, 17) > 0;
	r->n_links++;
	return 0;
}

static int link_cb(void *ctx, sqlite3_stmt *s)
{
	return link_row(ctx, s);
}

/* The links measured since now - period, in chunks by (started, id). */
static int read_recent(sqlite3 *db, struct regress *r, char *err, size_t errlen)
{
	/* clang-format off */
	static const char sql[] = LINK_SELECT
		"WHERE (last_started, id) > (:after_time, :after_id) "
		"ORDER BY last_started, id "
		"LIMIT :limit";
	/* clang-format on */
	struct dbread_pages q = {
		.sql = sql,
		.what = "link_state",
		.after = r->o.now - r->o.period,
		.after_id = -1,
		.time_col = 12,
		.chunk = r->o.chunk_rows,
	};

	return dbread_pages(db, &q, link_cb, r, err, errlen);
}

static int cmp_priority(const void *a, const void *b)
{
	const struct rg_link *x = a, *y = b;
	int px = x->regressed || x->under, py = y->regressed || y->under;

	if (px != py)
		return py - px;
	if (x->started != y->started)
		return x->started < y->started ? 1 : -1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_seq(const void *a, const void *b)
{
	const struct rg_link *x = a, *y = b;

	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int read_links(sqlite3 *db, struct regress *r, char *err, size_t errlen)
{
	/* clang-format off */
	static const char old_open[] = LINK_SELECT
		"WHERE regression_id IS NOT NULL AND last_started <= :since";
	static const char old_under[] = LINK_SELECT
		"WHERE under_since IS NOT NULL AND regression_id IS NULL "
		"AND last_started <= :since";
	/* clang-format on */
	struct dbread_arg since = {.name = ":since",
				   .real = r->o.now - r->o.period};
	int ret = read_recent(db, r, err, errlen);

	if (!ret)
		ret = dbread_each(db, old_open, old_open, &since, link_cb, r,
				  err, errlen);
	if (!ret)
		ret = dbread_each(db, old_under, old_under, &since, link_cb, r,
				  err, errlen);
	if (!ret && r->n_links > r->o.max_links) {
		qsort(r->links, r->n_links, sizeof(*r->links), cmp_priority);
		r->n_links = r->o.max_links;
		qsort(r->links, r->n_links, sizeof(*r->links), cmp_seq);
	}
	return ret;
}

/* ---- ports, groups, counters ---- */

struct item_spec {
	struct regress *r;
	struct rg_items *to;
	const char *const *names; /* label columns from 0 */
	size_t n_names;
	int host_shard; /* column 0 is a host: its shard serves the row */
};

/* Columns: the labels, then metric, then the value. */
static int item_cb(void *ctx, sqlite3_stmt *s)
{
	const struct item_spec *sp = ctx;
	struct regress *r = sp->r;
	struct rg_item *it;
	int k = (int)sp->n_names;

	if ((sp->host_shard &&
	     shard_of(col(s, 0), r->o.shards) != r->o.shard) ||
	    col_metric(s, k) < 0)
		return 0;
	if (vec_grow(&sp->to->v, &sp->to->cap, sp->to->n, sizeof(*it)))
		return -ENOMEM;
	it = &sp->to->v[sp->to->n];
	if (labels_of(r, s, 0, sp->names, sp->n_names) ||
	    keep_labels(r, &it->labels))
		return -ENOMEM;
	it->metric = col_metric(s, k);
	it->v = col_real(s, k + 1);
	sp->to->n++;
	return 0;
}

static int read_items(sqlite3 *db, struct regress *r, char *err, size_t errlen)
{
	static const char *const port_names[] = {"host", "device", "#port",
						 "profile"};
	static const char *const group_names[] = {"group_a", "group_b",
						  "profile"};
	static const char *const count_names[] = {"profile"};
	/* clang-format off */
	static const struct {
		const char *sql;
		int fabric; /* shard 0 only */
	} q[] = {
		{"SELECT host, device, port, profile, metric, baseline "
		 "FROM port_baseline "
		 "WHERE baseline IS NOT NULL "
		 "ORDER BY host, device, port, profile, metric",
		 0},
		{"SELECT host, device, port, profile, metric, max(s) "
		 "FROM ("
		 "SELECT a_host AS host, a_device AS device, a_port AS port, "
		 "profile, metric, 0 AS s "
		 "FROM link_state "
		 "WHERE regression_id IS NOT NULL "
		 "UNION ALL "
		 "SELECT b_host, b_device, b_port, profile, metric, 0 "
		 "FROM link_state "
		 "WHERE regression_id IS NOT NULL "
		 "UNION ALL "
		 "SELECT host, device, port, profile, metric, 1 "
		 "FROM port_suspect) "
		 "GROUP BY host, device, port, profile, metric",
		 0},
		{"SELECT group_a, group_b, profile, metric, 1 "
		 "FROM group_pair_suspect "
		 "ORDER BY group_a, group_b, profile, metric",
		 1},
		{"SELECT profile, metric, opened "
		 "FROM regression_count "
		 "ORDER BY profile, metric",
		 1},
	};
	/* clang-format on */
	struct item_spec sp[] = {
		{r, &r->port_bl, port_names, N_ELEMS(port_names), 1},
		{r, &r->port_sus, port_names, N_ELEMS(port_names), 1},
		{r, &r->group_sus, group_names, N_ELEMS(group_names), 0},
		{r, &r->opened, count_names, N_ELEMS(count_names), 0},
	};
	int ret = 0;

	for (size_t i = 0; !ret && i < N_ELEMS(q); i++)
		if (!q[i].fabric || r->o.shard == 0)
			ret = dbread_each(db, q[i].sql, q[i].sql, NULL, item_cb,
					  &sp[i], err, errlen);
	return ret;
}

/* The open suspects (schema 5): a device's port label is empty. */
static int read_suspects(sqlite3 *db, struct regress *r, char *err,
			 size_t errlen)
{
	static const char *const names[] = {"host", "device", "port", "kind",
					    "profile"};
	/* clang-format off */
#define SUS_SELECT(v)							\
	"SELECT host, device, CASE kind WHEN 'device' THEN '' ELSE port END, " \
	"kind, profile, metric, " v " "					\
	"FROM suspect "							\
	"WHERE closed IS NULL "						\
	"ORDER BY host, device, port, kind, profile, metric"
	/* clang-format on */
	static const char *const q[] = {SUS_SELECT("1"),
					SUS_SELECT("figure / baseline")};
#undef SUS_SELECT
	struct item_spec sp[] = {
		{r, &r->sus, names, N_ELEMS(names), 1},
		{r, &r->sus_ratio, names, N_ELEMS(names), 1},
	};
	int ret = 0;

	for (size_t i = 0; !ret && i < N_ELEMS(q); i++)
		ret = dbread_each(db, q[i], q[i], NULL, item_cb, &sp[i], err,
				  errlen);
	return ret;
}

int regress_read(sqlite3 *db, const struct regress_opts *o,
		 struct regress **out, char *err, size_t errlen)
{
	struct regress *r = calloc(1, sizeof(*r));
	int ret = 0;

	if (!r)
		return -ENOMEM;
	r->o = *o;
	if (!r->o.shards)
		r->o.shards = 1;
	buf_init(&r->text, 0);
	buf_init(&r->scratch, 0);
	r->enabled = dbread_version(db) >= 3;
	if (r->enabled)
		ret = read_links(db, r, err, errlen);
	if (r->enabled && !ret)
		ret = read_items(db, r, err, errlen);
	if (r->enabled && !ret && dbread_version(db) >= 5)
		ret = read_suspects(db, r, err, errlen);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory reading baselines");
	if (ret) {
		regress_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void regress_free(struct regress *r)
{
	if (!r)
		return;
	buf_free(&r->text);
	buf_free(&r->scratch);
	free(r->links);
	free(r->port_bl.v);
	free(r->port_sus.v);
	free(r->sus.v);
	free(r->sus_ratio.v);
	free(r->group_sus.v);
	free(r->opened.v);
	free(r);
}

/* ---- rendering ---- */

enum link_value {
	LV_VALUE,
	LV_BASELINE,
	LV_THRESHOLD,
	LV_EXPECTED,
	LV_EFFICIENCY,
	LV_UNDER,
};

static const struct {
	const char *name, *help;
	int metric;
	enum link_value what;
} link_families[] = {
	{"ibpulse_link_bandwidth_bytes_per_second",
	 "The link's latest bandwidth (ok test, not on a busy link) from host, "
	 "device, port to peer_host, peer_device, peer_port, in bytes per "
	 "second.",
	 RG_BW, LV_VALUE},
	{"ibpulse_link_bandwidth_baseline_bytes_per_second",
	 "The link's learned bandwidth: the median of its newest accepted "
	 "results (its ports' pooled baselines until it has enough of its "
	 "own), frozen while a regression is open.",
	 RG_BW, LV_BASELINE},
	{"ibpulse_link_bandwidth_threshold_bytes_per_second",
	 "Bandwidth below which a result of the link counts as bad "
	 "(baseline less its margin or spread).",
	 RG_BW, LV_THRESHOLD},
	{"ibpulse_link_bandwidth_expected_bytes_per_second",
	 "What the hardware promises for the link's test: the lower of both "
	 "ports' data rates (at the test's message size and MTU) and both "
	 "PCIe links. Absent where a device has no PCIe link (Soft-RoCE).",
	 RG_BW, LV_EXPECTED},
	{"ibpulse_link_bandwidth_efficiency_ratio",
	 "The link's latest bandwidth as a share of its expected figure.",
	 RG_BW, LV_EFFICIENCY},
	{"ibpulse_link_under_expected",
	 "1 while the link's efficiency stays below the collector's "
	 "efficiency_floor (K of the last M results), else 0.",
	 RG_BW, LV_UNDER},
	{"ibpulse_link_latency_seconds",
	 "The link's latest median latency (ok test, not on a busy link), in "
	 "seconds.",
	 RG_LAT, LV_VALUE},
	{"ibpulse_link_latency_baseline_seconds",
	 "The link's learned median latency, frozen while a regression is "
	 "open.",
	 RG_LAT, LV_BASELINE},
	{"ibpulse_link_latency_threshold_seconds",
	 "Latency above which a result of the link counts as bad (baseline "
	 "plus its margin, spread or absolute floor).",
	 RG_LAT, LV_THRESHOLD},
};

static double link_value(const struct rg_link *l, enum link_value what)
{
	switch (what) {
	case LV_VALUE:
		return l->value;
	case LV_BASELINE:
		return l->baseline;
	case LV_THRESHOLD:
		return l->threshold;
	case LV_EXPECTED:
		return l->expected;
	case LV_EFFICIENCY:
		return l->efficiency;
	case LV_UNDER:
		return isnan(l->expected) ? NAN : l->under;
	}
	return NAN;
}

static int render_links(struct expo *e, const struct regress *r)
{
	const char *text = r->text.data;

	for (size_t f = 0; f < N_ELEMS(link_families) && !e->err; f++) {
		expo_family(e, link_families[f].name, EXPO_GAUGE,
			    link_families[f].help);
		for (size_t i = 0; i < r->n_links; i++) {
			const struct rg_link *l = &r->links[i];
			double v = link_value(l, link_families[f].what);

			if (l->metric == link_families[f].metric && !isnan(v))
				expo_sample(e, text + l->labels, NULL, v);
		}
	}
	expo_family(e, "ibpulse_link_regression", EXPO_GAUGE,
		    "1 while a regression of the link is open (K of its last M "
		    "results beyond the threshold; closed after good_results "
		    "good ones in a row), 0 when it is judged and fine; metric "
		    "is bandwidth or latency.");
	for (size_t i = 0; i < r->n_links; i++) {
		const struct rg_link *l = &r->links[i];

		if (l->judged || l->regressed)
			expo_sample_u64(e, text + l->labels,
					metric_label[l->metric],
					(uint64_t)l->regressed);
	}
	return e->err;
}

/* Items of @metric (-1: all, with a metric label) of @it. */
static void render_items(struct expo *e, const struct regress *r,
			 const struct rg_items *it, int metric)
{
	for (size_t i = 0; i < it->n && !e->err; i++) {
		const struct rg_item *x = &it->v[i];

		if (metric >= 0 && x->metric != metric)
			continue;
		if (isnan(x->v))
			continue;
		expo_sample(e, r->text.data + x->labels,
			    metric < 0 ? metric_label[x->metric] : NULL, x->v);
	}
}

int regress_render(struct expo *e, const struct regress *r)
{
	if (!r || !r->enabled)
		return e->err;
	render_links(e, r);
	expo_family(e, "ibpulse_port_bandwidth_baseline_bytes_per_second",
		    EXPO_GAUGE,
		    "A port's bandwidth baseline, pooling the accepted results "
		    "of every link it is an end of, per profile.");
	render_items(e, r, &r->port_bl, RG_BW);
	expo_family(e, "ibpulse_port_latency_baseline_seconds", EXPO_GAUGE,
		    "A port's median latency baseline, pooling its links.");
	render_items(e, r, &r->port_bl, RG_LAT);
	expo_family(e, "ibpulse_port_suspect", EXPO_GAUGE,
		    "1 when the port is a suspect (kind port of "
		    "ibpulse_suspect); 0 for the other ends of regressed "
		    "links.");
	render_items(e, r, &r->port_sus, -1);
	expo_family(e, "ibpulse_suspect", EXPO_GAUGE,
		    "1 for each open suspect: a port (kind port) or a device, "
		    "its HCA and PCIe link (kind device, port empty), whose "
		    "last results were bad against several peers that are fine "
		    "with others, whatever the pairs.");
	render_items(e, r, &r->sus, -1);
	expo_family(e, "ibpulse_suspect_ratio", EXPO_GAUGE,
		    "An open suspect's figure (the median of its bad results) "
		    "as a share of its baseline: below 1 for bandwidth, above "
		    "1 for latency.");
	render_items(e, r, &r->sus_ratio, -1);
	expo_family(e, "ibpulse_group_pair_suspect", EXPO_GAUGE,
		    "1 when the links between two groups (group_label) regress "
		    "across several ports on each side while those ports are "
		    "fine elsewhere: the path between the groups.");
	render_items(e, r, &r->group_sus, -1);
	expo_family(e, "ibpulse_regressions_opened_total", EXPO_COUNTER,
		    "Link regressions the collector opened, ever, by profile "
		    "and metric.");
	render_items(e, r, &r->opened, -1);
	return e->err;
}
