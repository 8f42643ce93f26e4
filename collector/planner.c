// SPDX-License-Identifier: MIT
/*
 * The test planner (planner.h). Three passes make a list of candidate
 * pairs (a rotating matching per class, one pair per uncovered group pair,
 * the full mesh of small fabrics), then a list scheduler gives each pair
 * a profile and the first free run of rounds, from a pseudo-random start
 * so tests spread over the period, under the per-port duty budget. All
 * randomness comes from the period number: the plan is deterministic.
 */
#include "planner_int.h"
#include "report.h"
#include "map.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t planner_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint64_t planner_hash2(uint64_t a, uint64_t b)
{
	return planner_mix64(a ^ planner_mix64(b));
}

static uint64_t hstr(const char *s, uint64_t h)
{
	return map_hash(s ? s : "", s ? strlen(s) : 0, h);
}

static int pset_eq(const void *ent, const void *key)
{
	return *(const uint64_t *)ent == *(const uint64_t *)key;
}

/* 1 added, 0 present, -ENOMEM. */
int planner_pset_add(struct hmap *s, uint64_t key)
{
	uint64_t *e;
	int added;

	key = key ? key : 1;
	if (!s->elem) /* zeroed: empty */
		hmap_init(s, sizeof(key));
	e = hmap_put(s, planner_mix64(key), pset_eq, &key, &added);
	if (!e)
		return -ENOMEM;
	*e = key;
	return added;
}

int planner_pset_has(const struct hmap *s, uint64_t key)
{
	key = key ? key : 1;
	return hmap_find(s, planner_mix64(key), pset_eq, &key) != NULL;
}

uint64_t planner_pair_key(uint32_t u, uint32_t v)
{
	return u < v ? ((uint64_t)u << 32 | v) + 1
		     : ((uint64_t)v << 32 | u) + 1;
}

int planner_pkeys_ok(const uint16_t *a, size_t na, const uint16_t *b, size_t nb)
{
	if (!na || !nb)
		return 1;
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			if ((a[i] & 0x7fff) == (b[j] & 0x7fff) &&
			    (a[i] & 0x7fff) && ((a[i] | b[j]) & 0x8000))
				return 1;
	return 0;
}

const char *planner_port_rail(const struct planner_probe *p, size_t idx,
			      char *buf, size_t len)
{
	if (p->rail)
		return p->rail;
	snprintf(buf, len, "%zu", idx);
	return buf;
}

/* ---- nodes, classes, groups ---- */

static int pc_intern(struct map *m, const char *key, size_t *n, uint32_t *id)
{
	void *v = map_get(m, key);

	if (!v) {
		v = (void *)(uintptr_t)(++*n);
		if (map_put(m, key, v))
			return -ENOMEM;
	}
	*id = (uint32_t)((uintptr_t)v - 1);
	return 0;
}

static int pc_node(struct pctx *c, struct map *cls, struct map *grp, uint32_t i,
		   uint32_t j)
{
	const struct planner_probe *p = &c->pr[i];
	const struct planner_port *pt = &p->ports[j];
	struct pnode *nd = &c->nodes[c->n_nodes];
	/* Subnets partition InfiniBand; RoCE GID prefixes say nothing. */
	int ib = pt->link_layer && !strcmp(pt->link_layer, "InfiniBand");
	char key[512], rb[24];
	int ret;

	snprintf(key, sizeof(key), "%s\x1f%s\x1f%s",
		 c->o->cross_rail ? ""
				  : planner_port_rail(p, j, rb, sizeof(rb)),
		 pt->link_layer ? pt->link_layer : "",
		 ib && pt->subnet_prefix ? pt->subnet_prefix : "");
	nd->probe = i;
	nd->port = j;
	ret = pc_intern(cls, key, &c->n_classes, &nd->cls);
	if (!ret)
		ret = pc_intern(grp, p->group ? p->group : "", &c->n_groups,
				&nd->grp);
	nd->order = hstr(pt->device,
			 planner_hash2(c->seed, hstr(p->host, pt->port)));
	c->n_nodes++;
	return ret;
}

static int pc_cmp_member(const void *x, const void *y, void *arg)
{
	const struct pnode *n = arg;
	const struct pnode *a = &n[*(const uint32_t *)x],
			   *b = &n[*(const uint32_t *)y];

	if (a->cls != b->cls)
		return a->cls < b->cls ? -1 : 1;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

int planner_ctx_nodes(struct pctx *c)
{
	struct map *cls = NULL, *grp = NULL;
	size_t total = 0;
	int ret = map_new(NULL, &cls);

	if (!ret)
		ret = map_new(NULL, &grp);
	for (size_t i = 0; i < c->n_probes; i++)
		total += c->pr[i].n_ports;
	c->nodes = calloc(total + 1, sizeof(*c->nodes));
	c->members = calloc(total + 1, sizeof(*c->members));
	c->deg = calloc(total + 1, sizeof(*c->deg));
	c->node_of = calloc(total + 1, sizeof(*c->node_of));
	c->port_off = calloc(c->n_probes + 1, sizeof(*c->port_off));
	if (!ret && (!c->nodes || !c->members || !c->deg || !c->node_of ||
		     !c->port_off))
		ret = -ENOMEM;
	for (uint32_t i = 0, k = 0; !ret && i < c->n_probes; i++) {
		c->port_off[i] = k;
		for (uint32_t j = 0; !ret && j < c->pr[i].n_ports; j++, k++) {
			c->node_of[k] = UINT32_MAX;
			if (c->pr[i].ports[j].state != REPORT_PORT_ACTIVE)
				continue;
			c->node_of[k] = (uint32_t)c->n_nodes;
			ret = pc_node(c, cls, grp, i, j);
		}
		c->port_off[i + 1] = k;
	}
	map_free(cls);
	map_free(grp);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < c->n_nodes; i++)
		c->members[i] = i;
	qsort_r(c->members, c->n_nodes, sizeof(*c->members), pc_cmp_member,
		c->nodes);
	c->class_off = calloc(c->n_classes + 1, sizeof(*c->class_off));
	if (!c->class_off)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_nodes; i++)
		c->class_off[c->nodes[i].cls + 1]++;
	for (size_t k = 0; k < c->n_classes; k++)
		c->class_off[k + 1] += c->class_off[k];
	return 0;
}

/* ---- candidate pairs ---- */

int planner_ctx_ok(const struct pctx *c, uint32_t u, uint32_t v)
{
	const struct pnode *a = &c->nodes[u], *b = &c->nodes[v];
	const struct planner_port *pa = &c->pr[a->probe].ports[a->port];
	const struct planner_port *pb = &c->pr[b->probe].ports[b->port];

	return a->probe != b->probe &&
	       planner_pkeys_ok(pa->pkeys, pa->n_pkeys, pb->pkeys, pb->n_pkeys);
}

uint64_t planner_gp_key(uint32_t g, uint32_t h)
{
	return planner_pair_key(g, h);
}

/* Add the pair (u, v) unless known; 1 added, 0 known, -ENOMEM. */
static int pc_edge(struct pctx *c, uint32_t u, uint32_t v, int pref)
{
	int ret = planner_pset_add(&c->pairs, planner_pair_key(u, v));

	if (ret <= 0)
		return ret;
	if (c->n_edges == c->cap_edges) {
		size_t cap = c->cap_edges ? c->cap_edges * 2 : 1024;
		struct pedge *e = realloc(c->edges, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		c->edges = e;
		c->cap_edges = cap;
	}
	c->edges[c->n_edges++] = (struct pedge){u, v, pref};
	c->deg[u]++;
	c->deg[v]++;
	if (c->nodes[u].grp != c->nodes[v].grp &&
	    planner_pset_add(&c->gp_covered,
			     planner_gp_key(c->nodes[u].grp, c->nodes[v].grp)) <
		    0)
		return -ENOMEM;
	return 1;
}

/*
 * Goal 1: matching @pref of class members @m[0..n) in this period's
 * random order for that matching (c->deg counts this matching's edges).
 */
static int pc_match(struct pctx *c, const uint32_t *m, size_t n, int pref)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t u = m[i];
		int ret = 0;

		if (c->deg[u])
			continue;
		for (size_t j = i + 1; !ret && j < n && j <= i + PLANNER_SCAN;
		     j++)
			if (!c->deg[m[j]] && planner_ctx_ok(c, u, m[j]))
				ret = pc_edge(c, u, m[j], pref);
		/* Nobody free nearby: a second test for someone. */
		for (size_t t = 1; !ret && t < n && t <= PLANNER_FALLBACK; t++)
			if (planner_ctx_ok(c, u, m[(i + t) % n]))
				ret = pc_edge(c, u, m[(i + t) % n], pref);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Matching k's order within a class: a rank drawn from the period. */
static int pc_cmp_rank(const void *x, const void *y, void *arg)
{
	const uint64_t *rank = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	if (rank[a] != rank[b])
		return rank[a] < rank[b] ? -1 : 1;
	return (a > b) - (a < b);
}

/*
 * How many matchings goal 1 makes: one per profile planned (each port is
 * tested in each profile every period), as the duty budget allows.
 */
static unsigned pc_matchings(const struct pctx *c)
{
	unsigned n = (unsigned)c->o->n_profiles, budget;

	for (size_t i = 0; !c->o->n_profiles && i < c->n_probes; i++)
		if (c->pr[i].n_profiles > n)
			n = (unsigned)c->pr[i].n_profiles;
	budget =
		(unsigned)floor(c->o->duty_cycle * planner_rounds(c->o) + 1e-9);
	if (n > PLANNER_MAX_MATCH)
		n = PLANNER_MAX_MATCH;
	if (n > budget)
		n = budget;
	return n ? n : 1;
}

/* Goal 1, every matching of every class; @tmp holds a class's members. */
static int pc_matchings_all(struct pctx *c, uint32_t *tmp, uint64_t *rank)
{
	unsigned nm = pc_matchings(c);
	int ret = 0;

	for (unsigned k = 0; !ret && k < nm; k++) {
		memset(c->deg, 0, (c->n_nodes + 1) * sizeof(*c->deg));
		for (size_t i = 0; k && i < c->n_nodes; i++)
			rank[i] = planner_hash2(c->seed + k, i);
		for (size_t cl = 0; !ret && cl < c->n_classes; cl++) {
			const uint32_t *m = c->members + c->class_off[cl];
			size_t n = c->class_off[cl + 1] - c->class_off[cl];

			if (k) { /* another order, so other partners */
				memcpy(tmp, m, n * sizeof(*tmp));
				qsort_r(tmp, n, sizeof(*tmp), pc_cmp_rank,
					rank);
				m = tmp;
			}
			ret = pc_match(c, m, n, (int)k);
		}
	}
	return ret;
}

static int pc_cmp_grp(const void *x, const void *y, void *arg)
{
	const struct pnode *n = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	if (n[a].grp != n[b].grp)
		return n[a].grp < n[b].grp ? -1 : 1;
	return n[a].order < n[b].order ? -1 : n[a].order > n[b].order;
}

/* One test for the group pair (g: @ga[0..na), h: @gb[0..nb)). */
static int pc_group_pair(struct pctx *c, const uint32_t *ga, size_t na,
			 size_t *cura, const uint32_t *gb, size_t nb,
			 size_t *curb)
{
	for (size_t s = 0; s < PLANNER_TRIES * PLANNER_TRIES; s++) {
		uint32_t u = ga[(*cura + s / PLANNER_TRIES) % na];
		uint32_t v = gb[(*curb + s % PLANNER_TRIES) % nb];

		if (planner_ctx_ok(c, u, v)) {
			(*cura)++;
			(*curb)++;
			return pc_edge(c, u, v, -1) < 0 ? -ENOMEM : 0;
		}
	}
	return 0;
}

/*
 * Goal 2's room in a class this period: about what the duty budget leaves
 * its @members after the matchings.
 */
static size_t pc_groups_room(const struct pctx *c, size_t members)
{
	size_t budget =
		(size_t)floor(c->o->duty_cycle * planner_rounds(c->o) + 1e-9);
	size_t matchings = pc_matchings(c);
	size_t left = budget > matchings ? budget - matchings : 0;

	return members * left / 2;
}

/*
 * Pair @i of round @r of a round robin of @n teams (@n even; the circle
 * method: team n - 1 stays, the others turn), into *@g < *@h.
 */
static void pc_round_pair(size_t n, size_t r, size_t i, size_t *g, size_t *h)
{
	size_t a, b;

	if (!i) {
		a = r;
		b = n - 1;
	} else {
		a = (r + i) % (n - 1);
		b = (r + n - 1 - i) % (n - 1);
	}
	*g = a < b ? a : b;
	*h = a < b ? b : a;
}

struct pc_gctx {
	uint32_t *tmp;
	size_t *start, *cur;
	size_t ng, room, made;
};

/* Group pair (g, h) of goal 2: an edge while the room lasts, else
 * counted as unplaced. */
static int pc_group_one(struct pctx *c, struct pc_gctx *x, size_t g, size_t h)
{
	const size_t *st = x->start;
	uint64_t k = planner_gp_key(c->nodes[x->tmp[st[g]]].grp,
				    c->nodes[x->tmp[st[h]]].grp);

	if (planner_pset_add(&c->gp_possible, k) < 0)
		return -ENOMEM;
	if (planner_pset_has(&c->gp_covered, k))
		return 0;
	if (x->made++ >= x->room) {
		c->plan->unplaced++;
		return 0;
	}
	return pc_group_pair(c, x->tmp + st[g], st[g + 1] - st[g], &x->cur[g],
			     x->tmp + st[h], st[h + 1] - st[h], &x->cur[h]);
}

/*
 * Goal 2 within one class: its members, sorted by group, in @tmp. The
 * pairs of groups come as the rounds of a round robin, each group once a
 * round, so the budget spreads over every group; a period starts at the
 * round after the last period's room ran out, so a few periods cover
 * every pair of a large fabric, not the same pairs never. Pairs past the
 * room are counted as unplaced, as they were when each was tried (and
 * only competed for the same ports, leaving a random set placed).
 */
static int pc_groups(struct pctx *c, uint32_t *tmp, size_t n)
{
	size_t start[PLANNER_MAX_GROUPS + 1], cur[PLANNER_MAX_GROUPS];
	struct pc_gctx x = {tmp, start, cur, 0, pc_groups_room(c, n), 0};
	size_t teams, rounds, per, r0;
	int ret = 0;

	qsort_r(tmp, n, sizeof(*tmp), pc_cmp_grp, c->nodes);
	for (size_t i = 0; i < n; i++)
		if (!i || c->nodes[tmp[i]].grp != c->nodes[tmp[i - 1]].grp) {
			if (x.ng == PLANNER_MAX_GROUPS)
				return 0; /* too many groups: goal 1 only */
			start[x.ng++] = i;
		}
	start[x.ng] = n;
	if (x.ng < 2)
		return 0;
	for (size_t g = 0; g < x.ng; g++)
		cur[g] = planner_hash2(c->seed, c->nodes[tmp[start[g]]].grp) %
			 (start[g + 1] - start[g]);
	teams = x.ng + x.ng % 2; /* an odd count gets a bye */
	rounds = teams - 1;
	per = (x.room + teams / 2 - 1) / (teams / 2); /* rounds with room */
	r0 = (size_t)(c->plan->period % rounds * (per % rounds) % rounds);
	for (size_t k = 0; !ret && k < rounds; k++)
		for (size_t i = 0; !ret && i < teams / 2; i++) {
			size_t g, h;

			pc_round_pair(teams, (r0 + k) % rounds, i, &g, &h);
			if (h < x.ng) /* not the bye */
				ret = pc_group_one(c, &x, g, h);
		}
	return ret;
}

/* Goal 3: every pair of the class. */
static int pc_mesh(struct pctx *c, const uint32_t *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (planner_ctx_ok(c, m[i], m[j]) &&
			    pc_edge(c, m[i], m[j], -1) < 0)
				return -ENOMEM;
	return 0;
}

static int pc_candidates(struct pctx *c)
{
	uint32_t *tmp = calloc(c->n_nodes + 1, sizeof(*tmp));
	uint64_t *rank = calloc(c->n_nodes + 1, sizeof(*rank));
	int mesh = c->n_probes < c->o->full_mesh_below;
	int ret = tmp && rank ? pc_matchings_all(c, tmp, rank) : -ENOMEM;

	free(rank);
	for (size_t k = 0; !ret && k < c->n_classes; k++) {
		size_t n = c->class_off[k + 1] - c->class_off[k];

		memcpy(tmp, c->members + c->class_off[k], n * sizeof(*tmp));
		ret = pc_groups(c, tmp, n);
	}
	for (size_t k = 0; !ret && mesh && k < c->n_classes; k++)
		ret = pc_mesh(c, c->members + c->class_off[k],
			      c->class_off[k + 1] - c->class_off[k]);
	free(tmp);
	return ret;
}

/* ---- scheduling ---- */

/* The common profile number @pick (mod their count) of (a, b) and its
 * length; NULL: none in common. */
static const char *pc_profile(struct pctx *c, const struct planner_probe *a,
			      const struct planner_probe *b, uint64_t pick,
			      double *secs)
{
	const char *cand[PLANNER_MAX_CANDS];
	double len[PLANNER_MAX_CANDS];
	size_t n = 0;

	for (size_t i = 0; i < a->n_profiles && n < PLANNER_MAX_CANDS; i++) {
		const char *name = a->profiles[i];
		double s = c->o->slot_seconds;
		int ok = !c->o->n_profiles, has = 0;

		for (size_t k = 0; k < c->o->n_profiles; k++)
			if (!strcmp(c->o->profiles[k].name, name)) {
				ok = 1;
				s = c->o->profiles[k].seconds;
			}
		for (size_t j = 0; ok && !has && j < b->n_profiles; j++)
			has = !strcmp(b->profiles[j], name);
		if (ok && has) {
			cand[n] = name;
			len[n++] = s;
		}
	}
	if (!n)
		return NULL;
	*secs = len[pick % n];
	return cand[pick % n];
}

static int pc_free(const struct pctx *c, const uint32_t *res, size_t nres,
		   unsigned s, unsigned k)
{
	for (size_t r = 0; r < nres; r++) {
		const uint64_t *b = c->busy + (size_t)res[r] * c->words;

		for (unsigned x = s; x < s + k; x++)
			if (b[x / 64] & (1ULL << (x % 64)))
				return 0;
	}
	return 1;
}

/* The first run of @k free rounds from a start drawn from @h; -1: none. */
static int pc_slot(const struct pctx *c, const uint32_t *res, size_t nres,
		   unsigned k, uint64_t h)
{
	unsigned span;

	if (c->first_round + k > c->rounds)
		return -1;
	span = c->rounds - c->first_round - k + 1;
	for (unsigned t = 0; t < span; t++) {
		unsigned s = c->first_round + (unsigned)((h + t) % span);

		if (pc_free(c, res, nres, s, k))
			return (int)s;
	}
	return -1;
}

int planner_ctx_place(struct pctx *c, uint32_t u, uint32_t v, const char *prof,
		      double secs, uint64_t h, int confirm)
{
	const struct pnode *a = &c->nodes[u], *b = &c->nodes[v];
	uint32_t res[4] = {u, v, (uint32_t)c->n_nodes + a->probe,
			   (uint32_t)c->n_nodes + b->probe};
	struct planner_test *t;
	double rs = c->plan->round_seconds;
	unsigned k = (unsigned)ceil(secs / rs - 1e-9);
	int s;

	k = k ? k : 1;
	s = c->used[u] + k > c->max_used || c->used[v] + k > c->max_used
		    ? -1
		    : pc_slot(c, res, c->o->host_exclusive ? 4 : 2, k, h >> 8);
	if (s < 0)
		return 0;
	if (c->plan->n_tests == c->cap_tests) {
		size_t cap = c->cap_tests ? c->cap_tests * 2 : 64;

		t = realloc(c->plan->tests, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		c->plan->tests = t;
		c->cap_tests = cap;
	}
	for (size_t r = 0; r < (c->o->host_exclusive ? 4u : 2u); r++)
		for (unsigned x = (unsigned)s; x < (unsigned)s + k; x++)
			c->busy[(size_t)res[r] * c->words + x / 64] |=
				1ULL << (x % 64);
	c->used[u] += k;
	c->used[v] += k;
	if (a->grp != b->grp &&
	    planner_pset_add(&c->gp_placed, planner_gp_key(a->grp, b->grp)) < 0)
		return -ENOMEM;
	t = &c->plan->tests[c->plan->n_tests++];
	memset(t, 0, sizeof(*t));
	t->a = a->probe;
	t->b = b->probe;
	t->a_port = a->port;
	t->b_port = b->port;
	t->profile = prof;
	t->confirm = confirm;
	t->deadline = (s + k) * rs;
	/* Jitter inside the slack of the slot, so starts do not align. */
	t->not_before =
		s * rs +
		(double)(h >> 40) / (double)(1ULL << 24) *
			fmin(0.25 * rs, k * rs - secs > 0 ? k * rs - secs : 0);
	t->key = planner_ctx_test_key(c, t);
	return 1;
}

/* A candidate pair of the base plan: a profile and a slot, or unplaced. */
static int pc_place(struct pctx *c, const struct pedge *e)
{
	uint64_t h = planner_hash2(c->seed, planner_pair_key(e->u, e->v));
	uint32_t u = (h & 1) ? e->v : e->u, v = (h & 1) ? e->u : e->v;
	const struct pnode *a = &c->nodes[u], *b = &c->nodes[v];
	double secs = 0;
	const char *prof =
		pc_profile(c, &c->pr[a->probe], &c->pr[b->probe],
			   e->pref >= 0 ? (uint64_t)e->pref : h >> 1, &secs);
	int ret;

	if (!prof) { /* no profile in common: visible, not silent */
		c->plan->unplaced++;
		return 0;
	}
	ret = planner_ctx_place(c, u, v, prof, secs, h, 0);
	if (!ret)
		c->plan->unplaced++;
	return ret < 0 ? ret : 0;
}

int planner_cmp_test(const void *x, const void *y)
{
	const struct planner_test *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->not_before != b->not_before)
		return a->not_before < b->not_before ? -1 : 1;
	return a->a_port < b->a_port ? -1 : a->a_port > b->a_port;
}

uint64_t planner_ctx_test_key(const struct pctx *c,
			      const struct planner_test *t)
{
	const struct planner_probe *a = &c->pr[t->a], *b = &c->pr[t->b];
	uint64_t h = hstr(a->host, 1);

	h = hstr(a->ports[t->a_port].device, h ^ a->ports[t->a_port].port);
	h = hstr(b->host, h);
	h = hstr(b->ports[t->b_port].device, h ^ b->ports[t->b_port].port);
	/* a confirmation test may repeat a planned pair: its own id; so may
	 * a test placed to cross a link, to its own DLID */
	h = hstr(t->profile, h) ^ (t->confirm ? 0x636f6e6669726dULL : 0);
	return t->link ? planner_hash2(h ^ 0x6c696e6bULL, t->dlid) : h;
}

int planner_ctx_unique_keys(struct pctx *c)
{
	struct hmap seen = HMAP_INIT(uint64_t);
	int ret = 0;

	for (size_t i = 0; !ret && i < c->plan->n_tests; i++) {
		struct planner_test *t = &c->plan->tests[i];

		/* the same pair, profile and path twice: a new id */
		while ((ret = planner_pset_add(&seen, t->key)) == 0)
			t->key = planner_mix64(t->key + 1);
		ret = ret < 0 ? ret : 0;
	}
	hmap_free(&seen);
	return ret;
}

unsigned planner_rounds(const struct planner_opts *o)
{
	double r = floor(o->period / o->slot_seconds + 1e-9);

	return r < 1			? 1
	       : r > PLANNER_MAX_ROUNDS ? PLANNER_MAX_ROUNDS
					: (unsigned)r;
}

int planner_ctx_sched(struct pctx *c)
{
	struct planner_plan *p = c->plan;
	size_t nres = c->n_nodes + c->n_probes;

	p->rounds = planner_rounds(c->o);
	p->round_seconds = c->o->period / p->rounds;
	c->rounds = p->rounds;
	c->words = (c->rounds + 63) / 64;
	c->max_used = (unsigned)floor(c->o->duty_cycle * c->rounds + 1e-9);
	c->busy = calloc(nres * c->words + 1, sizeof(*c->busy));
	c->used = calloc(c->n_nodes + 1, sizeof(*c->used));
	return c->busy && c->used ? 0 : -ENOMEM;
}

/*
 * The period's confirmation tests first (they have waited since a bad
 * result), then the candidate pairs, each given a profile and a slot.
 */
static int pc_schedule(struct pctx *c, const struct planner_confirm *cf,
		       size_t ncf)
{
	struct planner_plan *p = c->plan;
	int ret = planner_ctx_sched(c);

	if (!ret && ncf)
		ret = planner_ctx_confirm(c, cf, ncf);
	if (!ret)
		ret = planner_ctx_cover_links(c);
	for (size_t i = 0; !ret && i < c->n_edges; i++)
		ret = pc_place(c, &c->edges[i]);
	if (!ret)
		ret = planner_ctx_cover(c);
	if (!ret)
		ret = planner_ctx_unique_keys(c);
	if (ret)
		return ret;
	if (p->n_tests > 1)
		qsort(p->tests, p->n_tests, sizeof(*p->tests),
		      planner_cmp_test);
	return 0;
}

int planner_check(const struct planner_opts *o)
{
	if (!(o->period >= 1) || !(o->slot_seconds > 0) ||
	    !(o->duty_cycle > 0 && o->duty_cycle <= 1) ||
	    !(o->confirm_share >= 0 && o->confirm_share <= 1))
		return -EINVAL;
	for (size_t i = 0; i < o->n_profiles; i++)
		if (!(o->profiles[i].seconds > 0) || !o->profiles[i].name)
			return -EINVAL;
	return 0;
}

void planner_ctx_free(struct pctx *c)
{
	free(c->nodes);
	free(c->members);
	free(c->class_off);
	free(c->node_of);
	free(c->port_off);
	free(c->edges);
	free(c->deg);
	hmap_free(&c->pairs);
	hmap_free(&c->gp_possible);
	hmap_free(&c->gp_covered);
	hmap_free(&c->gp_placed);
	hmap_free(&c->confirm_pairs);
	free(c->busy);
	free(c->used);
	planner_cover_free(c->cover);
	c->cover = NULL;
}

int planner_run_confirm(const struct planner_opts *o,
			const struct planner_probe *probes, size_t n,
			uint64_t period, unsigned first_round,
			const struct planner_confirm *cf, size_t ncf,
			struct planner_plan **out)
{
	struct pctx c = {.o = o,
			 .pr = probes,
			 .n_probes = n,
			 .first_round = first_round};
	int ret = planner_check(o);

	*out = NULL;
	if (ret)
		return ret;
	c.seed = planner_mix64(period ^ 0x1b9a5e11ULL);
	c.plan = calloc(1, sizeof(*c.plan));
	if (!c.plan)
		return -ENOMEM;
	c.plan->period = period;
	ret = planner_ctx_nodes(&c);
	if (!ret)
		ret = pc_candidates(&c);
	if (!ret)
		ret = pc_schedule(&c, cf, ncf);
	c.plan->ports = c.n_nodes;
	c.plan->group_pairs = c.gp_possible.n;
	c.plan->group_pairs_planned = c.gp_placed.n;
	planner_ctx_free(&c);
	if (ret) {
		planner_plan_free(c.plan);
		return ret;
	}
	*out = c.plan;
	return 0;
}

int planner_run(const struct planner_opts *o,
		const struct planner_probe *probes, size_t n, uint64_t period,
		unsigned first_round, struct planner_plan **out)
{
	return planner_run_confirm(o, probes, n, period, first_round, NULL, 0,
				   out);
}

void planner_plan_free(struct planner_plan *p)
{
	if (!p)
		return;
	free(p->tests);
	free(p->cover.uncovered);
	free(p);
}
