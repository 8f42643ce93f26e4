// SPDX-License-Identifier: MIT
/*
 * The group-pair inference of one (profile, metric) on the writer's
 * connection: load the links in regression, every judged link at either
 * end of them and the judged totals of the group pairs they cross, hand
 * them to suspect_infer() (suspect.h: the rules), and replace the rows of
 * group_pair_suspect, keeping "since" for pairs that stay. The work is
 * proportional to the regressions and their ports' links, not to the
 * fabric. Ports and devices are judged by evidence (store_evidence.c).
 */
#include "map.h"
#include "vec.h"
#include "store_int.h"
#include "store_regress_int.h"
#include "suspect.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sport {
	char *host, *device;
	unsigned port;
};

struct sctx {
	struct store *st;
	const char *profile, *metric;
	double cutoff;			  /* judged links measured since */
	struct map *ports, *groups, *ids; /* name -> index + 1 */
	struct sport *p;
	size_t n_p, cap_p;
	char **g;
	size_t n_g, cap_g;
	struct suspect_link *l;
	size_t n_l, cap_l;
	struct suspect_gtotal *gt;
	size_t n_gt;
};

static uint32_t port_index(struct sctx *c, const char *host, const char *device,
			   unsigned port)
{
	char key[512];
	uintptr_t v;
	struct sport *p;

	snprintf(key, sizeof(key), "%s\x1f%s\x1f%u", host, device, port);
	v = (uintptr_t)map_get(c->ports, key);
	if (v)
		return (uint32_t)(v - 1);
	if (vec_grow(&c->p, &c->cap_p, c->n_p, sizeof(*c->p)))
		return SUSPECT_NONE;
	p = &c->p[c->n_p];
	p->host = strdup(host);
	p->device = strdup(device);
	p->port = port;
	if (!p->host || !p->device ||
	    map_put(c->ports, key, (void *)(uintptr_t)(c->n_p + 1))) {
		free(p->host);
		free(p->device);
		return SUSPECT_NONE;
	}
	return (uint32_t)c->n_p++;
}

/* The index of group @name (NULL: SUSPECT_NONE); *@err on -ENOMEM. */
static uint32_t group_index(struct sctx *c, const char *name, int *err)
{
	uintptr_t v;

	if (!name)
		return SUSPECT_NONE;
	v = (uintptr_t)map_get(c->groups, name);
	if (v)
		return (uint32_t)(v - 1);
	if (vec_grow(&c->g, &c->cap_g, c->n_g, sizeof(*c->g)) ||
	    !(c->g[c->n_g] = strdup(name))) {
		*err = -ENOMEM;
		return SUSPECT_NONE;
	}
	if (map_put(c->groups, name, (void *)(uintptr_t)(c->n_g + 1))) {
		free(c->g[c->n_g]);
		*err = -ENOMEM;
		return SUSPECT_NONE;
	}
	return (uint32_t)c->n_g++;
}

static const char *col(sqlite3_stmt *s, int i)
{
	const char *v = (const char *)sqlite3_column_text(s, i);

	return v ? v : "";
}

/*
 * A link row (id, 8 link columns, a_group, b_group[, regressed,
 * healthy]) into c->l, once per id.
 */
static int add_link(struct sctx *c, sqlite3_stmt *s, int regressed_only)
{
	char id[32];
	struct suspect_link *l;
	int err = 0;

	snprintf(id, sizeof(id), "%" PRId64,
		 (int64_t)sqlite3_column_int64(s, 0));
	if (map_get(c->ids, id))
		return 0;
	if (map_put(c->ids, id, (void *)1) ||
	    vec_grow(&c->l, &c->cap_l, c->n_l, sizeof(*c->l)))
		return -ENOMEM;
	l = &c->l[c->n_l];
	memset(l, 0, sizeof(*l));
	l->a = port_index(c, col(s, 1), col(s, 2),
			  (unsigned)sqlite3_column_int(s, 3));
	l->b = port_index(c, col(s, 4), col(s, 5),
			  (unsigned)sqlite3_column_int(s, 6));
	l->ga = group_index(c, (const char *)sqlite3_column_text(s, 9), &err);
	l->gb = group_index(c, (const char *)sqlite3_column_text(s, 10), &err);
	if (l->a == SUSPECT_NONE || l->b == SUSPECT_NONE || err)
		return -ENOMEM;
	l->judged = 1;
	l->regressed = regressed_only ? 1 : sqlite3_column_int(s, 11) != 0;
	l->healthy = regressed_only ? 0 : sqlite3_column_int(s, 12) != 0;
	c->n_l++;
	return 0;
}

static int load_open(struct sctx *c)
{
	sqlite3_stmt *s =
		regress_stmt(store_regress_of(c->st), RSQL_OPEN_LINKS);
	int rc, ret = 0;

	sql_name_text(s, ":profile", c->profile);
	sql_name_text(s, ":metric", c->metric);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
		ret = add_link(c, s, 1);
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(c->st, rc, "open links");
	return ret;
}

/* Every judged link of port @p (an end of a regression). */
static int load_port(struct sctx *c, uint32_t p)
{
	sqlite3_stmt *s =
		regress_stmt(store_regress_of(c->st), RSQL_PORT_LINKS);
	int rc, ret = 0;

	sql_name_text(s, ":host", c->p[p].host);
	sql_name_text(s, ":device", c->p[p].device);
	sql_name_int(s, ":port", c->p[p].port);
	sql_name_text(s, ":profile", c->profile);
	sql_name_text(s, ":metric", c->metric);
	sql_name_real(s, ":since", c->cutoff);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
		ret = add_link(c, s, 0);
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(c->st, rc, "port links");
	return ret;
}

/* Judged totals of the group pairs crossed by 2 regressed links or more. */
static int load_totals(struct sctx *c)
{
	struct store_regress *rg = store_regress_of(c->st);

	c->gt = calloc(c->n_l + 1, sizeof(*c->gt));
	if (!c->gt)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_l; i++) {
		uint32_t ga, gb;
		unsigned crossing = 0;
		sqlite3_stmt *s;
		size_t k;
		int rc;

		if (!c->l[i].regressed ||
		    !suspect_link_pair(&c->l[i], &ga, &gb))
			continue;
		for (k = 0; k < c->n_gt; k++)
			if (c->gt[k].ga == ga && c->gt[k].gb == gb)
				break;
		if (k < c->n_gt)
			continue;
		for (size_t j = i; j < c->n_l; j++) {
			uint32_t xa, xb;

			crossing += c->l[j].regressed &&
				    suspect_link_pair(&c->l[j], &xa, &xb) &&
				    xa == ga && xb == gb;
		}
		if (crossing < 2)
			continue;
		s = regress_stmt(rg, RSQL_GROUP_TOTAL);
		sql_name_text(s, ":profile", c->profile);
		sql_name_text(s, ":metric", c->metric);
		sql_name_text(s, ":group_a", c->g[ga]);
		sql_name_text(s, ":group_b", c->g[gb]);
		sql_name_real(s, ":since", c->cutoff);
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW)
			c->gt[c->n_gt++] = (struct suspect_gtotal){
				ga, gb, (unsigned)sqlite3_column_int64(s, 0)};
		sqlite3_reset(s);
		if (rc != SQLITE_ROW)
			return store_err(c->st, rc, "group totals");
	}
	return 0;
}

/* "since" of the group pairs that stay suspect, keyed like new ones. */
static int load_since(struct sctx *c, struct map *since)
{
	sqlite3_stmt *s =
		regress_stmt(store_regress_of(c->st), RSQL_GSUS_SINCE);
	int rc, ret = 0;

	sql_name_text(s, ":profile", c->profile);
	sql_name_text(s, ":metric", c->metric);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		char key[512];
		double *v = malloc(sizeof(*v));

		snprintf(key, sizeof(key), "%s\x1f%s", col(s, 0), col(s, 1));
		if (!v || map_put(since, key, v)) {
			free(v);
			ret = -ENOMEM;
			break;
		}
		*v = sqlite3_column_double(s, 2);
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(c->st, rc, "suspect since");
	return ret;
}

static double since_of(struct map *since, const char *key, double now)
{
	const double *v = map_get(since, key);

	return v ? *v : now;
}

static int save_groups(struct sctx *c, const struct suspect_out *o,
		       struct map *since, double now)
{
	struct store_regress *rg = store_regress_of(c->st);
	sqlite3_stmt *s = regress_stmt(rg, RSQL_GSUS_DEL);
	int ret;

	sql_name_text(s, ":profile", c->profile);
	sql_name_text(s, ":metric", c->metric);
	ret = store_done(c->st, s, "group_pair_suspect");
	for (size_t i = 0; !ret && i < o->n_groups; i++) {
		const struct suspect_group *sg = &o->groups[i];
		char key[512];

		snprintf(key, sizeof(key), "%s\x1f%s", c->g[sg->ga],
			 c->g[sg->gb]);
		s = regress_stmt(rg, RSQL_GSUS_INS);
		sql_name_text(s, ":group_a", c->g[sg->ga]);
		sql_name_text(s, ":group_b", c->g[sg->gb]);
		sql_name_text(s, ":profile", c->profile);
		sql_name_text(s, ":metric", c->metric);
		sql_name_real(s, ":since", since_of(since, key, now));
		sql_name_int(s, ":regressed", sg->regressed);
		sql_name_int(s, ":judged", sg->judged);
		ret = store_done(c->st, s, "group_pair_suspect");
	}
	return ret;
}

/* Suspect group pairs are named smaller name first, like the exporter's. */
static void order_groups(struct sctx *c, struct suspect_out *o)
{
	for (size_t i = 0; i < o->n_groups; i++)
		if (strcmp(c->g[o->groups[i].ga], c->g[o->groups[i].gb]) > 0) {
			uint32_t t = o->groups[i].ga;

			o->groups[i].ga = o->groups[i].gb;
			o->groups[i].gb = t;
		}
}

static int infer_save(struct sctx *c, double now)
{
	struct suspect_out o = {0};
	struct map *gs = NULL;
	int ret = suspect_infer(c->l, c->n_l, c->n_p, c->gt, c->n_gt, &o);

	if (!ret)
		ret = map_new(free, &gs);
	if (!ret)
		ret = load_since(c, gs);
	order_groups(c, &o);
	if (!ret)
		ret = save_groups(c, &o, gs, now);
	map_free(gs);
	suspect_out_free(&o);
	return ret;
}

static void sctx_free(struct sctx *c)
{
	for (size_t i = 0; i < c->n_p; i++) {
		free(c->p[i].host);
		free(c->p[i].device);
	}
	for (size_t i = 0; i < c->n_g; i++)
		free(c->g[i]);
	free(c->p);
	free(c->g);
	free(c->l);
	free(c->gt);
	map_free(c->ports);
	map_free(c->groups);
	map_free(c->ids);
}

int regress_suspects(struct store *st, const char *profile,
		     enum baseline_metric metric, double now)
{
	struct store_regress *rg = store_regress_of(st);
	struct sctx c = {
		.st = st,
		.profile = profile,
		.metric = baseline_metric_name(metric),
		.cutoff = now - rg->window,
	};
	size_t ends;
	int ret = map_new(NULL, &c.ports);

	if (!ret)
		ret = map_new(NULL, &c.groups);
	if (!ret)
		ret = map_new(NULL, &c.ids);
	if (!ret)
		ret = load_open(&c);
	/* the ports known so far are the ends of the regressions */
	ends = c.n_p;
	for (uint32_t p = 0; !ret && p < ends; p++)
		ret = load_port(&c, p);
	if (!ret)
		ret = load_totals(&c);
	if (!ret)
		ret = infer_save(&c, now);
	sctx_free(&c);
	return ret;
}
