// SPDX-License-Identifier: MIT
/*
 * Confirmation tests (planner.h): a port with a bad result that nobody
 * confirmed or cleared is tested against ports of its class with good
 * recent history (a pair the base plan holds may be tested once more: it
 * may have run already, and the test has its own id), in the first free rounds
 * from a pseudo-random start, under the same duty budget as every test; a
 * device whose bad results all came through one port has its other ports
 * tested. At most confirm_share of the period's tests (and at least
 * confirm_tests) are confirmations; what finds no peer or no room is counted,
 * not dropped in silence. At the turn of a period they are placed before the
 * base plan; in the middle of one they are added around the tests already
 * planned.
 */
#include "map.h"
#include "planner_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CF_TRIES 32 /* peers tried for a slot, per confirmation request */

/* @name as @list[0..n) holds it, or NULL. */
static const char *cf_find(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] && !strcmp(list[i], name))
			return list[i];
	return NULL;
}

int planner_in_list(const char *const *list, size_t n, const char *name)
{
	return cf_find(list, n, name) != NULL;
}

uint32_t planner_node_of(const struct pctx *c, uint32_t probe, uint32_t port)
{
	if (probe >= c->n_probes || port >= c->pr[probe].n_ports)
		return UINT32_MAX;
	return c->node_of[c->port_off[probe] + port];
}

static const struct planner_port *cf_port_of(const struct pctx *c, uint32_t u)
{
	return &c->pr[c->nodes[u].probe].ports[c->nodes[u].port];
}

double planner_ctx_secs(const struct pctx *c, const char *name)
{
	for (size_t k = 0; k < c->o->n_profiles; k++)
		if (!strcmp(c->o->profiles[k].name, name))
			return c->o->profiles[k].seconds;
	return c->o->n_profiles ? -1 : c->o->slot_seconds;
}

size_t planner_ctx_confirm_room(const struct pctx *c)
{
	const struct planner_plan *p = c->plan;
	size_t base = p->n_tests - p->n_confirm, cap;

	if (!(c->o->confirm_share > 0))
		return 0;
	if (base < c->n_nodes / 2)
		base = c->n_nodes / 2; /* before the base plan: its size */
	cap = (size_t)ceil(c->o->confirm_share * (double)base - 1e-9);
	if (cap < c->o->confirm_tests)
		cap = c->o->confirm_tests;
	return cap > p->n_confirm ? cap - p->n_confirm : 0;
}

/* May node @v confirm a result of profile @prof with node @u? */
static int cf_peer_ok(const struct pctx *c, uint32_t u, uint32_t v,
		      const char *prof)
{
	const struct planner_port *pv = cf_port_of(c, v);
	const struct planner_probe *a = &c->pr[c->nodes[u].probe];
	const struct planner_probe *b = &c->pr[c->nodes[v].probe];

	return v != u && planner_ctx_ok(c, u, v) &&
	       planner_in_list(pv->good, pv->n_good, prof) &&
	       !planner_in_list(pv->suspect, pv->n_suspect, prof) &&
	       planner_in_list(a->profiles, a->n_profiles, prof) &&
	       planner_in_list(b->profiles, b->n_profiles, prof) &&
	       !planner_pset_has(&c->confirm_pairs, planner_pair_key(u, v));
}

/* Rounds a test of @secs takes. */
static unsigned cf_rounds(const struct pctx *c, double secs)
{
	unsigned k = (unsigned)ceil(secs / c->plan->round_seconds - 1e-9);

	return k ? k : 1;
}

/*
 * Up to @k tests of node @u with good peers of its class, in @prof. The
 * scan is bounded: PLANNER_FALLBACK candidates looked at, CF_TRIES of
 * them tried for a slot (a port whose duty budget is spent is passed
 * over before that).
 */
static int cf_node(struct pctx *c, uint32_t u, const char *prof, unsigned k)
{
	const uint32_t *m = c->members + c->class_off[c->nodes[u].cls];
	size_t n = c->class_off[c->nodes[u].cls + 1] -
		   c->class_off[c->nodes[u].cls];
	uint64_t h = planner_hash2(c->seed ^ 0xc0f1a5ULL,
				   map_hash(prof, strlen(prof), u));
	double secs = planner_ctx_secs(c, prof);
	const struct planner_probe *pu = &c->pr[c->nodes[u].probe];
	unsigned placed = 0, tries = 0, len;

	/* the plan keeps the probe's own copy of the name */
	prof = cf_find(pu->profiles, pu->n_profiles, prof);
	len = cf_rounds(c, secs);
	if (!prof || !(secs > 0) || c->used[u] + len > c->max_used)
		n = 0; /* no such profile here, or no budget left */
	for (size_t t = 0;
	     placed < k && tries < CF_TRIES && planner_ctx_confirm_room(c) &&
	     t < n && t < PLANNER_FALLBACK;
	     t++) {
		uint32_t v = m[(h + t) % n];
		uint64_t hv = planner_hash2(h, v);
		int ret;

		if (c->used[v] + len > c->max_used ||
		    !cf_peer_ok(c, u, v, prof))
			continue;
		tries++;
		/* either end initiates: a bad port's sends and receives */
		ret = (hv & 1) ? planner_ctx_place(c, v, u, prof, secs, hv, 1)
			       : planner_ctx_place(c, u, v, prof, secs, hv, 1);
		if (ret < 0)
			return ret;
		if (!ret)
			continue; /* no common free slot: another peer */
		if (planner_pset_add(&c->confirm_pairs,
				     planner_pair_key(u, v)) < 0)
			return -ENOMEM;
		c->plan->n_confirm++;
		placed++;
	}
	c->plan->confirm_unplaced += k - placed;
	return 0;
}

/* The other ports of a device, one test each. */
static int cf_device(struct pctx *c, const struct planner_confirm *r)
{
	const struct planner_probe *p;
	int ret = 0;

	if (r->probe >= c->n_probes || !r->device)
		return 0;
	p = &c->pr[r->probe];
	for (uint32_t j = 0; !ret && j < p->n_ports; j++) {
		const struct planner_port *pt = &p->ports[j];
		uint32_t u = planner_node_of(c, r->probe, j);

		if (u == UINT32_MAX || strcmp(pt->device, r->device) ||
		    planner_in_list(pt->suspect, pt->n_suspect, r->profile))
			continue;
		ret = cf_node(c, u, r->profile, 1);
	}
	return ret;
}

int planner_ctx_confirm(struct pctx *c, const struct planner_confirm *cf,
			size_t n)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < n; i++) {
		uint32_t u;

		if (!cf[i].profile)
			continue;
		if (cf[i].port == PLANNER_DEVICE) {
			ret = cf_device(c, &cf[i]);
			continue;
		}
		u = planner_node_of(c, cf[i].probe, cf[i].port);
		if (u == UINT32_MAX) /* not ACTIVE, or unknown: no test */
			c->plan->confirm_unplaced += c->o->confirm_tests;
		else
			ret = cf_node(c, u, cf[i].profile, c->o->confirm_tests);
	}
	return ret;
}

/* Mark test @t of the plan as the scheduler would have. */
static int cf_mark(struct pctx *c, const struct planner_test *t)
{
	uint32_t u = planner_node_of(c, t->a, t->a_port);
	uint32_t v = planner_node_of(c, t->b, t->b_port);
	double rs = c->plan->round_seconds;
	unsigned s = (unsigned)floor(t->not_before / rs + 1e-9);
	unsigned e = (unsigned)lround(t->deadline / rs);
	uint32_t res[4];

	if (u == UINT32_MAX || v == UINT32_MAX || e > c->rounds)
		return 0; /* the probes changed under the plan */
	res[0] = u;
	res[1] = v;
	res[2] = (uint32_t)c->n_nodes + t->a;
	res[3] = (uint32_t)c->n_nodes + t->b;
	for (size_t r = 0; r < (c->o->host_exclusive ? 4u : 2u); r++)
		for (unsigned x = s; x < e; x++)
			c->busy[(size_t)res[r] * c->words + x / 64] |=
				1ULL << (x % 64);
	c->used[u] += e - s;
	c->used[v] += e - s;
	if (planner_pset_add(&c->pairs, planner_pair_key(u, v)) < 0 ||
	    (t->confirm &&
	     planner_pset_add(&c->confirm_pairs, planner_pair_key(u, v)) < 0))
		return -ENOMEM;
	return 0;
}

int planner_confirm(const struct planner_opts *o,
		    const struct planner_probe *probes, size_t n,
		    struct planner_plan *plan, unsigned first_round,
		    const struct planner_confirm *cf, size_t ncf)
{
	struct pctx c = {.o = o,
			 .pr = probes,
			 .n_probes = n,
			 .first_round = first_round,
			 .plan = plan};
	int ret = planner_check(o);

	if (ret)
		return ret;
	c.seed = planner_mix64(plan->period ^ 0x1b9a5e11ULL);
	c.cap_tests = plan->n_tests;
	ret = planner_ctx_nodes(&c);
	if (!ret)
		ret = planner_ctx_sched(&c);
	for (size_t i = 0; !ret && i < plan->n_tests; i++)
		ret = cf_mark(&c, &plan->tests[i]);
	if (!ret)
		ret = planner_ctx_confirm(&c, cf, ncf);
	if (!ret)
		ret = planner_ctx_cover_links(&c);
	if (!ret)
		ret = planner_ctx_unique_keys(&c);
	if (!ret && plan->n_tests > 1)
		qsort(plan->tests, plan->n_tests, sizeof(*plan->tests),
		      planner_cmp_test);
	planner_ctx_free(&c);
	return ret;
}
