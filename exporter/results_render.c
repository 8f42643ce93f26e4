// SPDX-License-Identifier: MIT
/*
 * The result families (docs/metrics.md, "Fabric tests"): aggregates per
 * port and per group pair (worst and median of the ok, not-busy results
 * of the period), the latest result per pair (the newest max_pairs
 * pairs), outcome and busy counts per port, overdue ports and group
 * pairs, paused probes and what their spools dropped. Aggregates are made
 * by sorting (entity, profile, row) triples and reading each run.
 *
 * Each family is written host by host (a group pair family group by
 * group), one segment each (expo_segment()), fingerprinted by what its
 * samples show: the ports' labels, profiles, outcomes and the rows behind
 * them. The block cache keeps a host's segment while that stays the same.
 */
#include "results_int.h"
#include "fnv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* Worst and median of each figure over one run of atts. */
struct agg {
	uint32_t ent, profile;
	uint64_t fp; /* of the rows of the run */
	double worst[TESTAPI_FIG_COUNT], median[TESTAPI_FIG_COUNT];
};

struct aggs {
	struct agg *v;
	size_t n;
};

static const struct stat_def bw_pair[] = {
	{TESTAPI_FIG_BW_AVG, "stat=\"avg\""},
	{TESTAPI_FIG_BW_PEAK, "stat=\"peak\""},
	{TESTAPI_FIG_BW_MIN, "stat=\"min\""},
};
static const struct stat_def bw_agg[] = {
	{TESTAPI_FIG_BW_AVG, "stat=\"avg\""},
	{TESTAPI_FIG_BW_MIN, "stat=\"min\""},
};
static const struct stat_def rate_stats[] = {{TESTAPI_FIG_MSG_RATE, NULL}};
/* group pairs are many (G(G+1)/2): the headline figures only */
static const struct stat_def bw_grp[] = {{TESTAPI_FIG_BW_AVG, "stat=\"avg\""}};
static const struct stat_def lat_grp[] = {
	{TESTAPI_FIG_LAT_P99, "stat=\"p99\""}};
static const struct stat_def lat_pair[] = {
	{TESTAPI_FIG_LAT_MIN, "stat=\"min\""},
	{TESTAPI_FIG_LAT_MEDIAN, "stat=\"median\""},
	{TESTAPI_FIG_LAT_MEAN, "stat=\"mean\""},
	{TESTAPI_FIG_LAT_P99, "stat=\"p99\""},
	{TESTAPI_FIG_LAT_P999, "stat=\"p999\""},
	{TESTAPI_FIG_LAT_MAX, "stat=\"max\""},
	{TESTAPI_FIG_LAT_STDEV, "stat=\"stdev\""},
};
static const struct stat_def lat_agg[] = {
	{TESTAPI_FIG_LAT_MIN, "stat=\"min\""},
	{TESTAPI_FIG_LAT_MEDIAN, "stat=\"median\""},
	{TESTAPI_FIG_LAT_P99, "stat=\"p99\""},
	{TESTAPI_FIG_LAT_MAX, "stat=\"max\""},
};

const struct fig_family res_fig_families[RES_FIG_FAMILIES] = {
	{"bandwidth_bytes_per_second",
	 "Bandwidth of fabric tests in bytes per second: stat avg over the "
	 "test, peak and min of its sub-intervals (min catches unstable "
	 "links).",
	 0, bw_pair, bw_agg, bw_grp, N_ELEMS(bw_pair), N_ELEMS(bw_agg),
	 N_ELEMS(bw_grp)},
	{"message_rate_per_second", "Messages per second of fabric tests.", 0,
	 rate_stats, rate_stats, NULL, 1, 1, 0},
	{"latency_seconds",
	 "Latency statistics of fabric tests in seconds (stat: min, median, "
	 "mean, p99, p999, max, stdev of the test's samples).",
	 1, lat_pair, lat_agg, lat_grp, N_ELEMS(lat_pair), N_ELEMS(lat_agg),
	 N_ELEMS(lat_grp)},
};

void res_segs_free(struct segs *sg)
{
	free(sg->start);
	free(sg->key);
	free(sg->fp);
	memset(sg, 0, sizeof(*sg));
}

int res_segs_make(struct segs *sg, const struct results *r, const void *items,
		  size_t n, seg_item_fn fn)
{
	uint64_t key, fp;

	memset(sg, 0, sizeof(*sg));
	sg->start = malloc((n + 1) * sizeof(*sg->start));
	sg->key = malloc((n + 1) * sizeof(*sg->key));
	sg->fp = malloc((n + 1) * sizeof(*sg->fp));
	if (!sg->start || !sg->key || !sg->fp) {
		res_segs_free(sg);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		fn(r, items, i, &key, &fp);
		if (!sg->n || sg->key[sg->n - 1] != key) {
			sg->start[sg->n] = i;
			sg->key[sg->n] = key;
			sg->fp[sg->n++] = FNV1A_BASIS;
		}
		sg->fp[sg->n - 1] = fnv1a_u64(sg->fp[sg->n - 1], fp);
	}
	sg->start[sg->n] = n;
	for (size_t k = 0; k < sg->n; k++)
		sg->fp[k] |= 1;
	return 0;
}

uint64_t res_str_fp(const char *s)
{
	return fnv1a_str(FNV1A_BASIS, s ? s : "");
}

uint64_t res_host_key(const struct results *r, uint32_t port)
{
	return r->hosts[r->ports[port].host].key;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double results_median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	if (n % 2)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int cmp_att(const void *a, const void *b)
{
	const struct att *x = a, *y = b;

	if (x->ent != y->ent)
		return x->ent < y->ent ? -1 : 1;
	if (x->profile != y->profile)
		return x->profile < y->profile ? -1 : 1;
	return (x->row > y->row) - (x->row < y->row);
}

/*
 * Worst and median of every figure over the rows of @at[0..n-1], each row
 * read once; @tmp has room for n values of each figure.
 */
static void agg_run(const struct results *r, const struct att *at, size_t n,
		    double *tmp, struct agg *g)
{
	size_t k[TESTAPI_FIG_COUNT] = {0};

	g->ent = at[0].ent;
	g->profile = at[0].profile;
	g->fp = FNV1A_BASIS;
	for (size_t i = 0; i < n; i++) {
		const struct res_row *w = &r->rows[at[i].row];

		g->fp = fnv1a_u64(g->fp, w->fp);
		for (int f = 0; f < TESTAPI_FIG_COUNT; f++)
			if (!isnan(w->fig[f]))
				tmp[f * n + k[f]++] = w->fig[f];
	}
	for (int f = 0; f < TESTAPI_FIG_COUNT; f++) {
		double *v = tmp + f * n;

		g->median[f] = results_round(results_median(v, k[f]));
		g->worst[f] = !k[f]				? NAN
			      : testapi_figs[f].larger_is_worse ? v[k[f] - 1]
								: v[0];
	}
}

int res_att_sort(struct att **at, size_t n, size_t keys, size_t n_prof)
{
	size_t *at_key;
	struct att *out;

	if (keys > 4 * n + 1024) {
		qsort(*at, n, sizeof(**at), cmp_att);
		return 0;
	}
	at_key = calloc(keys + 1, sizeof(*at_key));
	out = malloc((n + 1) * sizeof(*out));
	if (!at_key || !out) {
		free(at_key);
		free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		at_key[(*at)[i].ent * n_prof + (*at)[i].profile + 1]++;
	for (size_t x = 0; x < keys; x++)
		at_key[x + 1] += at_key[x];
	for (size_t i = 0; i < n; i++)
		out[at_key[(*at)[i].ent * n_prof + (*at)[i].profile]++] =
			(*at)[i];
	free(at_key);
	free(*at);
	*at = out;
	return 0;
}

/* Sort @at (res_att_sort()) and turn each (entity, profile) run into an agg. */
static int aggs_make(const struct results *r, struct att **at, size_t n,
		     size_t n_ent, struct aggs *out)
{
	size_t run = 1, prof = r->n_profiles ? r->n_profiles : 1;
	double *tmp;
	struct att *v;
	int ret = res_att_sort(at, n, n_ent * prof, prof);

	if (ret)
		return ret;
	v = *at;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j].ent == v[i].ent &&
				v[j].profile == v[i].profile;
		     j++)
			;
		run = j - i > run ? j - i : run;
	}
	tmp = malloc(run * TESTAPI_FIG_COUNT * sizeof(*tmp));
	out->v = malloc((n + 1) * sizeof(*out->v));
	out->n = 0;
	if (!tmp || !out->v) {
		free(tmp);
		return -ENOMEM;
	}
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j].ent == v[i].ent &&
				v[j].profile == v[i].profile;
		     j++)
			;
		agg_run(r, v + i, j - i, tmp, &out->v[out->n++]);
	}
	free(tmp);
	return 0;
}

/*
 * A group pair as one entity: the smaller group first. Past 65,535 groups
 * the index would not fit 32 bits: no group pairs then (a group_label
 * with that many values is no grouping).
 */
static uint32_t group_pair(const struct results *r, uint32_t ga, uint32_t gb)
{
	if (ga == RES_NONE || gb == RES_NONE || r->n_groups > 65535)
		return RES_NONE;
	if (ga > gb) {
		uint32_t t = ga;

		ga = gb;
		gb = t;
	}
	return ga * (uint32_t)r->n_groups + gb;
}

static uint32_t row_group_pair(const struct results *r, const struct res_row *w)
{
	if (w->b == RES_NONE)
		return RES_NONE;
	return group_pair(r, r->hosts[r->ports[w->a].host].group,
			  r->hosts[r->ports[w->b].host].group);
}

/*
 * Aggregates of the ok, not-busy rows: per served port (@groups 0, both
 * ends of a test) or per group pair (@groups 1).
 */
static int aggs_collect(const struct results *r, int groups, struct aggs *out)
{
	struct att *at = malloc((2 * r->n_rows + 1) * sizeof(*at));
	size_t n = 0;
	int ret;

	if (!at)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct res_row *w = &r->rows[i];
		uint32_t ends[2] = {w->a, w->b};

		if (!w->ok || w->busy)
			continue;
		if (groups) {
			ends[0] = row_group_pair(r, w);
			ends[1] = RES_NONE;
		} else if (ends[1] == ends[0]) {
			ends[1] = RES_NONE; /* a loopback test counts once */
		}
		for (int e = 0; e < 2; e++) {
			if (ends[e] == RES_NONE ||
			    (!groups &&
			     !r->hosts[r->ports[ends[e]].host].served))
				continue;
			at[n++] =
				(struct att){ends[e], w->profile, (uint32_t)i};
		}
	}
	ret = aggs_make(r, &at, n,
			groups ? r->n_groups * r->n_groups : r->n_ports, out);
	free(at);
	return ret;
}

/* @labels of entity @ent: a port's, or group_a="..",group_b=".." */
static int ent_labels(const struct results *r, int groups, uint32_t ent,
		      struct buf *b)
{
	int ret;

	buf_reset(b);
	if (!groups)
		return buf_adds(b, r->ports[ent].labels);
	ret = expo_label(b, "group_a", r->groups[ent / r->n_groups]);
	if (!ret)
		ret = expo_label(b, "group_b", r->groups[ent % r->n_groups]);
	return ret;
}

/* An aggregate's segment: its port's host, or its group pair's first group. */
static void agg_item(const struct results *r, const void *items, size_t i,
		     uint64_t *key, uint64_t *fp, int groups)
{
	const struct agg *g = (const struct agg *)items + i;
	uint64_t ent;

	if (groups) {
		*key = res_str_fp(r->groups[g->ent / r->n_groups]);
		ent = fnv1a_u64(*key,
				res_str_fp(r->groups[g->ent % r->n_groups]));
	} else {
		*key = res_host_key(r, g->ent);
		ent = r->ports[g->ent].fp;
	}
	*fp = fnv1a_u64(fnv1a_u64(ent, res_str_fp(r->profiles[g->profile])),
			g->fp);
}

static void agg_port_item(const struct results *r, const void *items, size_t i,
			  uint64_t *key, uint64_t *fp)
{
	agg_item(r, items, i, key, fp, 0);
}

static void agg_group_item(const struct results *r, const void *items, size_t i,
			   uint64_t *key, uint64_t *fp)
{
	agg_item(r, items, i, key, fp, 1);
}

/* The samples of aggregate @g for the stats @st[0..n_st). */
static int render_agg(struct expo *e, const struct results *r,
		      const struct agg *g, int groups,
		      const struct stat_def *st, size_t n_st, struct buf *lb,
		      struct buf *xb)
{
	static const char *const agg_label[2] = {"aggregate=\"worst\"",
						 "aggregate=\"median\""};

	if (ent_labels(r, groups, g->ent, lb))
		return e->err = -ENOMEM;
	for (size_t s = 0; s < n_st; s++) {
		enum testapi_fig fig = st[s].fig;

		if (isnan(g->worst[fig]))
			continue;
		for (int k = 0; k < 2; k++) {
			buf_reset(xb);
			if (buf_adds(xb, r->profiles[g->profile]) ||
			    (st[s].stat &&
			     (buf_addc(xb, ',') || buf_adds(xb, st[s].stat))) ||
			    buf_addc(xb, ',') || buf_adds(xb, agg_label[k]))
				return e->err = -ENOMEM;
			expo_sample(e, lb->data, xb->data,
				    k ? g->median[fig] : g->worst[fig]);
		}
	}
	return e->err;
}

static int render_aggs(struct expo *e, const struct results *r,
		       const struct aggs *a, int groups, struct buf *lb,
		       struct buf *xb)
{
	char name[128];
	struct segs sg;

	if (res_segs_make(&sg, r, a->v, a->n,
			  groups ? agg_group_item : agg_port_item))
		return e->err = -ENOMEM;
	for (size_t f = 0; f < RES_FIG_FAMILIES && !e->err; f++) {
		const struct fig_family *ff = &res_fig_families[f];
		const struct stat_def *st = groups ? ff->grp : ff->agg;
		size_t n_st = groups ? ff->n_grp : ff->n_agg;

		if (!n_st)
			continue;
		snprintf(name, sizeof(name), "ibpulse_test_%s_%s",
			 groups ? "group_pair" : "port", ff->suffix);
		expo_family(e, name, EXPO_GAUGE, ff->help);
		for (size_t k = 0; k < sg.n && !e->err; k++) {
			if (expo_segment(e, sg.key[k], sg.fp[k]))
				continue;
			for (size_t i = sg.start[k]; i < sg.start[k + 1]; i++)
				render_agg(e, r, &a->v[i], groups, st, n_st, lb,
					   xb);
		}
	}
	res_segs_free(&sg);
	return e->err;
}

/* The latest result of one (port, peer port, profile). */
struct count {
	uint32_t port, profile, outcome;
	uint64_t n;
};

static void count_item(const struct results *r, const void *items, size_t i,
		       uint64_t *key, uint64_t *fp)
{
	const struct count *c = (const struct count *)items + i;

	*key = res_host_key(r, c->port);
	*fp = fnv1a_u64(fnv1a_u64(r->ports[c->port].fp,
				  res_str_fp(r->profiles[c->profile])),
			fnv1a_u64(c->outcome == RES_NONE
					  ? 0
					  : res_str_fp(r->outcomes[c->outcome]),
				  c->n));
}

/*
 * Sort the (port, profile, outcome) atts of port_counts() as cmp_att()
 * does: by a counting sort over the three (res_att_sort(), with profile
 * and outcome as one), as the outcomes are few. 0 or -ENOMEM.
 */
static int port_counts_sort(const struct results *r, struct att **at, size_t n,
			    int busy)
{
	size_t n_prof = r->n_profiles ? r->n_profiles : 1;
	size_t n_out = busy || !r->n_outcomes ? 1 : r->n_outcomes;
	struct att *v = *at;
	int ret;

	for (size_t i = 0; i < n; i++)
		v[i].profile = (uint32_t)(v[i].profile * n_out + v[i].row);
	ret = res_att_sort(at, n, r->n_ports * n_prof * n_out, n_prof * n_out);
	v = *at;
	for (size_t i = 0; i < n; i++) {
		v[i].row = (uint32_t)(v[i].profile % n_out);
		v[i].profile = (uint32_t)(v[i].profile / n_out);
	}
	return ret;
}

/*
 * The counts per served port and profile: results of the period by
 * outcome (@busy 0), or the busy ones (@busy 1, outcome RES_NONE),
 * counting both ends of each test. NULL on ENOMEM.
 */
static struct count *port_counts(const struct results *r, int busy, size_t *n)
{
	struct att *at = malloc((2 * r->n_rows + 1) * sizeof(*at));
	struct count *c = malloc((2 * r->n_rows + 1) * sizeof(*c));
	size_t k = 0;

	*n = 0;
	if (!at || !c) {
		free(at);
		free(c);
		return NULL;
	}
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct res_row *w = &r->rows[i];
		uint32_t ends[2] = {w->a, w->b == w->a ? RES_NONE : w->b};

		if (busy && !w->busy)
			continue;
		for (int e = 0; e < 2; e++)
			if (ends[e] != RES_NONE &&
			    r->hosts[r->ports[ends[e]].host].served)
				at[k++] = (struct att){ends[e], w->profile,
						       busy ? 0 : w->outcome};
	}
	if (port_counts_sort(r, &at, k, busy)) {
		free(at);
		free(c);
		return NULL;
	}
	for (size_t i = 0, j; i < k; i = j) {
		for (j = i + 1; j < k && !cmp_att(&at[i], &at[j]); j++)
			;
		c[(*n)++] = (struct count){at[i].ent, at[i].profile,
					   busy ? RES_NONE : at[i].row,
					   (uint64_t)(j - i)};
	}
	free(at);
	return c;
}

static int render_port_counts(struct expo *e, const struct results *r, int busy,
			      struct buf *xb)
{
	size_t n;
	struct count *c = port_counts(r, busy, &n);
	struct segs sg;

	if (!c || res_segs_make(&sg, r, c, n, count_item)) {
		free(c);
		return e->err = -ENOMEM;
	}
	if (busy)
		expo_family(e, "ibpulse_test_port_busy_results", EXPO_GAUGE,
			    "Tests of the period at this port (either end) "
			    "taken on a busy link; left out of the port's "
			    "aggregates.");
	else
		expo_family(e, "ibpulse_test_port_results", EXPO_GAUGE,
			    "Tests of the period at this port (either end), by "
			    "outcome (verbs_error also by wc_status).");
	for (size_t k = 0; k < sg.n && !e->err; k++) {
		if (expo_segment(e, sg.key[k], sg.fp[k]))
			continue;
		for (size_t i = sg.start[k]; i < sg.start[k + 1]; i++) {
			buf_reset(xb);
			if (buf_adds(xb, r->profiles[c[i].profile]) ||
			    (!busy &&
			     (buf_addc(xb, ',') ||
			      buf_adds(xb, r->outcomes[c[i].outcome]))))
				return e->err = -ENOMEM;
			expo_sample_u64(e, r->ports[c[i].port].labels, xb->data,
					c[i].n);
		}
	}
	res_segs_free(&sg);
	free(c);
	return e->err;
}

/* Mark in @measured the ports with an ok result in the period. */
static void mark_measured(const struct results *r, char *measured)
{
	for (size_t i = 0; i < r->n_rows; i++) {
		if (!r->rows[i].ok)
			continue;
		measured[r->rows[i].a] = 1;
		if (r->rows[i].b != RES_NONE)
			measured[r->rows[i].b] = 1;
	}
}

/*
 * 1 when port @p is overdue: registered ACTIVE on a probe that is not
 * paused, and either its host stopped reporting (it can neither run nor
 * answer a test) or it had no ok result in the period although its probe
 * registered more than a period ago. -1 for a port not planned at all.
 */
static int port_overdue(const struct results *r, size_t p, const char *measured)
{
	const struct res_host *h = &r->hosts[r->ports[p].host];

	if (!r->ports[p].expected || !h->probe || h->paused)
		return -1;
	if (h->up == 0)
		return 1;
	return !measured[p] && h->registered <= r->o.now - r->o.period;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 * Group pairs planned (every two distinct groups with a planned port) and
 * how many of them had no ok test between them in the period.
 */
static int group_pairs_overdue(const struct results *r, uint64_t *planned,
			       uint64_t *overdue)
{
	char *live = calloc(r->n_groups + 1, 1);
	uint32_t *seen = malloc((r->n_rows + 1) * sizeof(*seen));
	uint64_t groups = 0, met = 0;
	size_t n = 0;

	if (!live || !seen) {
		free(live);
		free(seen);
		return -ENOMEM;
	}
	for (size_t p = 0; p < r->n_ports; p++) {
		const struct res_host *h = &r->hosts[r->ports[p].host];

		if (r->ports[p].expected && h->probe && !h->paused &&
		    h->group != RES_NONE)
			live[h->group] = 1;
	}
	for (size_t g = 0; g < r->n_groups; g++)
		groups += live[g] ? 1 : 0;
	for (size_t i = 0; i < r->n_rows; i++) {
		uint32_t gp = row_group_pair(r, &r->rows[i]);
		uint32_t ga = gp / (uint32_t)(r->n_groups ? r->n_groups : 1);
		uint32_t gb = gp % (uint32_t)(r->n_groups ? r->n_groups : 1);

		if (r->rows[i].ok && gp != RES_NONE && ga != gb && live[ga] &&
		    live[gb])
			seen[n++] = gp;
	}
	qsort(seen, n, sizeof(*seen), cmp_u32);
	for (size_t i = 0; i < n; i++)
		met += !i || seen[i] != seen[i - 1];
	*planned = groups * (groups ? groups - 1 : 0) / 2;
	*overdue = *planned - met;
	free(live);
	free(seen);
	return 0;
}

/* Host @h's segment in a family of one sample per host (fp of its values). */
static int host_seg(struct expo *e, const struct results *r, size_t h,
		    uint64_t v0, uint64_t v1)
{
	return expo_segment(e, r->hosts[h].key,
			    fnv1a_u64(fnv1a_u64(FNV1A_BASIS, v0), v1) | 1);
}

/*
 * The overdue flag of each served, planned port, host by host (the flag
 * depends on the time: it is worked out at every scrape); *@planned and
 * *@overdue get the counts.
 */
static int render_overdue_ports(struct expo *e, const struct results *r,
				const char *measured, uint64_t *planned,
				uint64_t *overdue)
{
	int8_t *od = malloc(r->n_ports + 1);

	if (!od)
		return e->err = -ENOMEM;
	for (size_t p = 0; p < r->n_ports; p++) {
		od[p] = r->hosts[r->ports[p].host].served
				? (int8_t)port_overdue(r, p, measured)
				: -1;
		*planned += od[p] >= 0;
		*overdue += od[p] > 0;
	}
	expo_family(e, "ibpulse_test_port_overdue", EXPO_GAUGE,
		    "1 when a planned port had no successful test within the "
		    "period, or its probe stopped reporting; 0 when it is "
		    "covered. Only ports a probe registered ACTIVE, not "
		    "paused.");
	for (size_t p = 0, q; p < r->n_ports && !e->err; p = q) {
		uint64_t fp = FNV1A_BASIS;

		for (q = p;
		     q < r->n_ports && r->ports[q].host == r->ports[p].host;
		     q++)
			if (od[q] >= 0)
				fp = fnv1a_u64(fnv1a_u64(fp, r->ports[q].fp),
					       (uint64_t)od[q]);
		if (fp == FNV1A_BASIS ||
		    expo_segment(e, res_host_key(r, (uint32_t)p), fp | 1))
			continue;
		for (size_t k = p; k < q; k++)
			if (od[k] >= 0)
				expo_sample_u64(e, r->ports[k].labels, NULL,
						(uint64_t)od[k]);
	}
	free(od);
	return e->err;
}

static int render_overdue(struct expo *e, const struct results *r)
{
	char *measured = calloc(r->n_ports + 1, 1);
	uint64_t planned = 0, overdue = 0, gp_planned, gp_overdue;

	if (!measured)
		return e->err = -ENOMEM;
	mark_measured(r, measured);
	render_overdue_ports(e, r, measured, &planned, &overdue);
	free(measured);
	expo_family(e, "ibpulse_test_planned_ports", EXPO_GAUGE,
		    "Ports of this scrape's hosts that the plan must cover.");
	expo_sample_u64(e, NULL, NULL, planned);
	expo_family(e, "ibpulse_test_overdue_ports", EXPO_GAUGE,
		    "Planned ports of this scrape's hosts that are overdue.");
	expo_sample_u64(e, NULL, NULL, overdue);
	if (r->o.shard != 0) /* fabric-wide: served by shard 0 only */
		return e->err;
	if (group_pairs_overdue(r, &gp_planned, &gp_overdue))
		return e->err = -ENOMEM;
	expo_family(e, "ibpulse_test_planned_group_pairs", EXPO_GAUGE,
		    "Pairs of distinct groups (the group_label) with planned "
		    "ports.");
	expo_sample_u64(e, NULL, NULL, gp_planned);
	expo_family(e, "ibpulse_test_overdue_group_pairs", EXPO_GAUGE,
		    "Pairs of groups with no successful test between them "
		    "within the period.");
	expo_sample_u64(e, NULL, NULL, gp_overdue);
	return e->err;
}

/*
 * Each probe's group, so that Prometheus can aggregate per-host and
 * per-link series by group (a dashboard's group-by-group share of
 * baseline): the per-link families name hosts only, and a host-by-host
 * view is 10^8 cells at 10,000 hosts.
 */
static int render_groups(struct expo *e, const struct results *r,
			 struct buf *xb)
{
	expo_family(e, "ibpulse_test_host_group_info", EXPO_INFO,
		    "The probe's group: the value of its group_label label, "
		    "as the group pair families use it.");
	for (size_t h = 0; h < r->n_hosts && !e->err; h++) {
		const struct res_host *hh = &r->hosts[h];
		int ret;

		if (!hh->served || !hh->probe || hh->group == RES_NONE ||
		    host_seg(e, r, h, res_str_fp(r->groups[hh->group]), 0))
			continue;
		buf_reset(xb);
		ret = expo_label(xb, "group", r->groups[hh->group]);
		if (ret)
			return e->err = ret;
		expo_sample_u64(e, hh->labels, xb->data, 1);
	}
	return e->err;
}

static int render_probes(struct expo *e, const struct results *r)
{
	static const char *const reason[2] = {"reason=\"spool_full\"",
					      "reason=\"expired\""};

	expo_family(e, "ibpulse_test_host_paused", EXPO_GAUGE,
		    "1 while the host is paused (pause endpoint or "
		    "ibpulse-probe pause): no tests, counters still flow.");
	for (size_t h = 0; h < r->n_hosts; h++)
		if (r->hosts[h].served && r->hosts[h].probe &&
		    !host_seg(e, r, h, (uint64_t)r->hosts[h].paused, 0))
			expo_sample_u64(e, r->hosts[h].labels, NULL,
					(uint64_t)r->hosts[h].paused);
	expo_family(e, "ibpulse_probe_results_dropped_total", EXPO_COUNTER,
		    "Test results the probe's spool dropped before they were "
		    "delivered (spool_full: over its size bound; expired: "
		    "older than its age bound).");
	for (size_t h = 0; h < r->n_hosts; h++) {
		const int64_t *d = r->hosts[h].dropped;

		if (!r->hosts[h].served || (d[0] < 0 && d[1] < 0) ||
		    host_seg(e, r, h, (uint64_t)d[0], (uint64_t)d[1]))
			continue;
		for (int k = 0; k < 2; k++)
			if (d[k] >= 0)
				expo_sample_u64(e, r->hosts[h].labels,
						reason[k], (uint64_t)d[k]);
	}
	return e->err;
}

static int cmp_total(const void *a, const void *b)
{
	return strcmp(((const struct tally_count *)a)->labels,
		      ((const struct tally_count *)b)->labels);
}

/* A count's host: the hash of its labels up to the first comma. */
static void total_item(const struct results *r, const void *items, size_t i,
		       uint64_t *key, uint64_t *fp)
{
	const struct tally_count *t = (const struct tally_count *)items + i;
	const char *comma = strchr(t->labels, ',');

	(void)r;
	*key = fnv1a_bytes(FNV1A_BASIS, t->labels,
			   comma ? (size_t)(comma - t->labels)
				 : strlen(t->labels)) |
	       1;
	*fp = fnv1a_u64(res_str_fp(t->labels), t->n);
}

/* The counters host by host (sorted by labels: host first). */
static int render_totals(struct expo *e, const struct results *r)
{
	struct tally_count *v = malloc((r->n_totals + 1) * sizeof(*v));
	struct segs sg;

	if (!v)
		return e->err = -ENOMEM;
	if (r->n_totals)
		memcpy(v, r->totals, r->n_totals * sizeof(*v));
	qsort(v, r->n_totals, sizeof(*v), cmp_total);
	if (res_segs_make(&sg, r, v, r->n_totals, total_item)) {
		free(v);
		return e->err = -ENOMEM;
	}
	expo_family(e, "ibpulse_test_results_total", EXPO_COUNTER,
		    "Test results stored, by initiating host, profile and "
		    "outcome (verbs_error also by wc_status); the exporter "
		    "counts the table at start-up, then the new rows.");
	for (size_t k = 0; k < sg.n && !e->err; k++) {
		if (expo_segment(e, sg.key[k], sg.fp[k]))
			continue;
		for (size_t i = sg.start[k]; i < sg.start[k + 1]; i++)
			expo_sample_u64(e, v[i].labels, NULL, v[i].n);
	}
	res_segs_free(&sg);
	free(v);
	return e->err;
}

int results_render(struct expo *e, const struct results *r)
{
	struct aggs ports = {0}, groups = {0};
	struct buf lb, xb;

	if (!r || !r->enabled)
		return e->err;
	buf_init(&lb, 0);
	buf_init(&xb, 0);
	if (aggs_collect(r, 0, &ports) ||
	    (r->o.shard == 0 && aggs_collect(r, 1, &groups)))
		e->err = e->err ? e->err : -ENOMEM;
	if (!e->err)
		render_aggs(e, r, &ports, 0, &lb, &xb);
	if (!e->err)
		render_aggs(e, r, &groups, 1, &lb, &xb);
	if (!e->err)
		render_port_counts(e, r, 0, &xb);
	if (!e->err)
		render_port_counts(e, r, 1, &xb);
	if (!e->err)
		render_totals(e, r);
	if (!e->err)
		res_render_pairs(e, r, &xb);
	if (!e->err)
		render_overdue(e, r);
	if (!e->err)
		render_probes(e, r);
	if (!e->err)
		render_groups(e, r, &xb);
	free(ports.v);
	free(groups.v);
	buf_free(&lb);
	buf_free(&xb);
	return e->err;
}
