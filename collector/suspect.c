// SPDX-License-Identifier: MIT
/*
 * Group-pair inference over the links around the regressions: see
 * suspect.h. The links are indexed by port (compressed adjacency lists);
 * the regressed links between groups are sorted by pair and each pair's
 * run is judged.
 */
#include "suspect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct adj {
	size_t *start; /* n_ports + 1 offsets into idx */
	uint32_t *idx; /* link indexes */
};

static uint32_t other_end(const struct suspect_link *l, uint32_t p)
{
	return l->a == p ? l->b : l->a;
}

int suspect_link_pair(const struct suspect_link *l, uint32_t *ga, uint32_t *gb)
{
	if (l->ga == SUSPECT_NONE || l->gb == SUSPECT_NONE || l->ga == l->gb)
		return 0;
	*ga = l->ga < l->gb ? l->ga : l->gb;
	*gb = l->ga < l->gb ? l->gb : l->ga;
	return 1;
}

static int adj_build(const struct suspect_link *l, size_t n, size_t n_ports,
		     struct adj *g)
{
	size_t *pos;

	g->start = calloc(n_ports + 2, sizeof(*g->start));
	g->idx = malloc((2 * n + 1) * sizeof(*g->idx));
	pos = calloc(n_ports + 1, sizeof(*pos));
	if (!g->start || !g->idx || !pos) {
		free(pos);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (l[i].a == l[i].b || l[i].a >= n_ports || l[i].b >= n_ports)
			continue; /* loopback: names its port already */
		g->start[l[i].a + 1]++;
		g->start[l[i].b + 1]++;
	}
	for (size_t p = 0; p < n_ports; p++) {
		g->start[p + 1] += g->start[p];
		pos[p] = g->start[p];
	}
	for (size_t i = 0; i < n; i++) {
		if (l[i].a == l[i].b || l[i].a >= n_ports || l[i].b >= n_ports)
			continue;
		g->idx[pos[l[i].a]++] = (uint32_t)i;
		g->idx[pos[l[i].b]++] = (uint32_t)i;
	}
	free(pos);
	return 0;
}

static void adj_free(struct adj *g)
{
	free(g->start);
	free(g->idx);
}

/* 1 when port @q has a healthy link to a port other than @not_p, and
 * (with @ga set) not between groups @ga and @gb. */
static int fine_elsewhere(const struct suspect_link *l, const struct adj *g,
			  uint32_t q, uint32_t not_p, uint32_t ga, uint32_t gb)
{
	for (size_t k = g->start[q]; k < g->start[q + 1]; k++) {
		const struct suspect_link *x = &l[g->idx[k]];
		uint32_t xa, xb;

		if (!x->healthy || other_end(x, q) == not_p)
			continue;
		if (ga != SUSPECT_NONE && suspect_link_pair(x, &xa, &xb) &&
		    xa == ga && xb == gb)
			continue;
		return 1;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Distinct values of @v[0..n-1] (sorted in place). */
static size_t distinct(uint32_t *v, size_t n)
{
	size_t m = 0;

	qsort(v, n, sizeof(*v), cmp_u32);
	for (size_t i = 0; i < n; i++)
		if (!m || v[i] != v[m - 1])
			v[m++] = v[i];
	return m;
}

struct pair_run {
	const struct suspect_link *l;
	const uint32_t *run; /* regressed inter-link indexes of one pair */
	size_t n;
	uint32_t ga, gb;
};

/* Judged links between the pair's groups: from @gt, else those given. */
static unsigned pair_judged(const struct suspect_link *l, size_t n,
			    const struct suspect_gtotal *gt, size_t n_gt,
			    uint32_t ga, uint32_t gb)
{
	unsigned c = 0;

	for (size_t i = 0; i < n_gt; i++)
		if (gt[i].ga == ga && gt[i].gb == gb)
			return gt[i].judged;
	for (size_t i = 0; i < n; i++) {
		uint32_t xa, xb;

		if (l[i].judged && suspect_link_pair(&l[i], &xa, &xb) &&
		    xa == ga && xb == gb)
			c++;
	}
	return c;
}

/* The ports of side @ga of the run: distinct count and fine-outside. */
static void pair_side(const struct pair_run *r, const struct adj *g,
		      uint32_t side, uint32_t *tmp, size_t *n_ports,
		      size_t *n_fine)
{
	size_t k = 0;

	for (size_t i = 0; i < r->n; i++) {
		const struct suspect_link *x = &r->l[r->run[i]];

		tmp[k++] = x->ga == side ? x->a : x->b;
	}
	*n_ports = distinct(tmp, k);
	*n_fine = 0;
	for (size_t i = 0; i < *n_ports; i++)
		*n_fine += (size_t)fine_elsewhere(r->l, g, tmp[i], SUSPECT_NONE,
						  r->ga, r->gb);
}

struct keyed {
	uint32_t ga, gb, i;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->ga != y->ga)
		return x->ga < y->ga ? -1 : 1;
	if (x->gb != y->gb)
		return x->gb < y->gb ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* Judge the run of one group pair. */
static void infer_pair(const struct pair_run *r, const struct adj *g,
		       unsigned judged, uint32_t *tmp, struct suspect_out *out)
{
	size_t pa, fa, pb, fb;

	if (r->n < 2 || 2 * r->n <= judged)
		return;
	pair_side(r, g, r->ga, tmp, &pa, &fa);
	pair_side(r, g, r->gb, tmp, &pb, &fb);
	if (pa < 2 || pb < 2 || !fa || !fb)
		return;
	out->groups[out->n_groups++] =
		(struct suspect_group){r->ga, r->gb, (unsigned)r->n, judged};
}

/* The regressed inter-links sorted by group pair, each pair's run judged. */
static int infer_groups(const struct suspect_link *l, size_t n,
			const struct adj *g, const struct suspect_gtotal *gt,
			size_t n_gt, struct suspect_out *out)
{
	struct keyed *kv = malloc((n + 1) * sizeof(*kv));
	uint32_t *run = malloc((n + 1) * sizeof(*run));
	uint32_t *tmp = malloc((n + 1) * sizeof(*tmp));
	size_t k = 0;
	int ret = kv && run && tmp ? 0 : -ENOMEM;

	for (size_t i = 0; !ret && i < n; i++) {
		uint32_t ga, gb;

		if (l[i].regressed && l[i].a != l[i].b &&
		    suspect_link_pair(&l[i], &ga, &gb))
			kv[k++] = (struct keyed){ga, gb, (uint32_t)i};
	}
	if (!ret)
		qsort(kv, k, sizeof(*kv), cmp_keyed);
	for (size_t i = 0; !ret && i < k; i++)
		run[i] = kv[i].i;
	for (size_t i = 0, j; !ret && i < k; i = j) {
		struct pair_run r = {
			.l = l, .run = run + i, .ga = kv[i].ga, .gb = kv[i].gb};

		for (j = i + 1; j < k && kv[j].ga == r.ga && kv[j].gb == r.gb;
		     j++)
			;
		r.n = j - i;
		infer_pair(&r, g, pair_judged(l, n, gt, n_gt, r.ga, r.gb), tmp,
			   out);
	}
	free(kv);
	free(run);
	free(tmp);
	return ret;
}

int suspect_infer(const struct suspect_link *l, size_t n, size_t n_ports,
		  const struct suspect_gtotal *gt, size_t n_gt,
		  struct suspect_out *out)
{
	struct adj g = {0};
	int ret;

	memset(out, 0, sizeof(*out));
	out->groups = malloc((n + 1) * sizeof(*out->groups));
	ret = out->groups ? adj_build(l, n, n_ports, &g) : -ENOMEM;
	if (!ret)
		ret = infer_groups(l, n, &g, gt, n_gt, out);
	adj_free(&g);
	if (ret)
		suspect_out_free(out);
	return ret;
}

void suspect_out_free(struct suspect_out *out)
{
	if (!out)
		return;
	free(out->groups);
	memset(out, 0, sizeof(*out));
}
