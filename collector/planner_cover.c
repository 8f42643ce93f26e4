// SPDX-License-Identifier: MIT
/*
 * Link coverage (planner.h, planner_routes): every directed link between
 * two switches should carry a test each period, so that localization
 * (localize.h) has evidence about each. With the routes:
 *   1. the links needing confirmation are crossed by confirm_tests tests
 *      each, first (their bad test is waiting), within confirm_share;
 *   2. after the base plan, each test sends to the one of its responder
 *      port's 2^LMC LIDs whose path crosses the most links not yet
 *      crossed (with LMC 0 there is no choice: its path is counted);
 *   3. each link still uncovered gets a test between a source whose path
 *      crosses it and a destination LID routed over it, found from the
 *      link's own table entry (the LIDs its egress switch sends out of
 *      that port) and short walks from the switches probes sit behind;
 *   4. what is left is counted by why: no room in the duty budget, no
 *      probe port's path crosses it, or no probe behind one of its ends.
 * All tests keep the duty budget and the slots of every other test.
 * Deterministic for a given period, like the rest of the planner.
 */
#include "planner_int.h"
#include "report.h"

#include "map.h"
#include "route.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CV_DESTS 64  /* destination LIDs looked at per link */
#define CV_WALKS 256 /* paths walked per link */
#define CV_TRIES 32  /* placements tried per link */
#define CV_SRCS 8    /* sources tried behind one switch */

#define FLOW_FORWARD 1u /* testapi.h's TESTAPI_FLOW_* */
#define FLOW_REVERSE 2u

struct plink {
	uint32_t node, to; /* egress and ingress switches (net indexes) */
	uint8_t port, to_port;
	uint8_t valid, covered;
	uint8_t why; /* enum planner_why of a link left uncovered */
};

struct pcover {
	const struct planner_routes *r;
	const struct route_net *net;
	uint32_t *off;	  /* per net node: its first link slot */
	struct plink *lk; /* slots: numports + 1 per switch */
	size_t n_slots;
	unsigned *lid; /* per planner node: base LID; 0: unroutable */
	uint8_t *lmc;  /* per planner node */
	uint32_t *sw;  /* per planner node: its switch; ROUTE_NO_NODE */
	uint32_t *sws; /* switches with planner nodes behind them */
	size_t n_sws;
	uint32_t *behind;   /* planner nodes by switch */
	size_t *behind_off; /* per entry of sws: its slice of behind */
	struct route_path path;
	struct route_link links[ROUTE_MAX_HOPS + 1];
};

void planner_cover_free(struct pcover *v)
{
	if (!v)
		return;
	free(v->off);
	free(v->lk);
	free(v->lid);
	free(v->lmc);
	free(v->sw);
	free(v->sws);
	free(v->behind);
	free(v->behind_off);
	free(v);
}

static int cv_is_switch(const struct route_net *n, uint32_t node)
{
	struct route_node_info i;

	return node != ROUTE_NO_NODE && !route_node_get(n, node, &i) &&
	       i.type == ROUTE_SWITCH;
}

/* The link slots: every ACTIVE port of a switch facing another switch. */
static int cv_links(struct pcover *v)
{
	size_t nn = route_net_nodes(v->net), total = 0;

	v->off = calloc(nn + 1, sizeof(*v->off));
	if (!v->off)
		return -ENOMEM;
	for (uint32_t x = 0; x < nn; x++) {
		struct route_node_info i;

		v->off[x] = UINT32_MAX;
		if (route_node_get(v->net, x, &i) || i.type != ROUTE_SWITCH)
			continue;
		v->off[x] = (uint32_t)total;
		total += i.numports + 1;
	}
	v->n_slots = total;
	v->lk = calloc(total + 1, sizeof(*v->lk));
	if (!v->lk)
		return -ENOMEM;
	for (uint32_t x = 0; x < nn; x++) {
		struct route_node_info i;

		if (v->off[x] == UINT32_MAX || route_node_get(v->net, x, &i))
			continue;
		for (unsigned p = 1; p <= i.numports; p++) {
			struct route_port_info pi;
			struct plink *l = &v->lk[v->off[x] + p];

			if (route_port_get(v->net, x, p, &pi) ||
			    !cv_is_switch(v->net, pi.remote.node) ||
			    (pi.state && pi.state != REPORT_PORT_ACTIVE))
				continue;
			*l = (struct plink){.node = x,
					    .to = pi.remote.node,
					    .port = (uint8_t)p,
					    .to_port = (uint8_t)pi.remote.port,
					    .valid = 1};
		}
	}
	return 0;
}

/* Where each planner node sits: its LIDs and its switch. */
static void cv_node(const struct pctx *c, struct pcover *v, uint32_t u)
{
	const struct planner_port *pt =
		&c->pr[c->nodes[u].probe].ports[c->nodes[u].port];
	struct route_port_info pi;
	struct route_end own;

	v->sw[u] = ROUTE_NO_NODE;
	if (!pt->lid || route_lid_owner(v->net, pt->lid, &own) ||
	    route_port_get(v->net, own.node, own.port, &pi) ||
	    pi.lid != pt->lid || cv_is_switch(v->net, own.node))
		return; /* not where the routes put that LID */
	v->lid[u] = pt->lid;
	v->lmc[u] = pi.lmc;
	if (cv_is_switch(v->net, pi.remote.node))
		v->sw[u] = pi.remote.node;
}

static int cv_cmp_sw(const void *a, const void *b, void *arg)
{
	const uint32_t *sw = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (sw[x] != sw[y])
		return sw[x] < sw[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The planner nodes grouped by the switch they sit behind. */
static int cv_group(const struct pctx *c, struct pcover *v)
{
	size_t n = 0;

	v->behind = calloc(c->n_nodes + 1, sizeof(*v->behind));
	v->sws = calloc(c->n_nodes + 1, sizeof(*v->sws));
	v->behind_off = calloc(c->n_nodes + 2, sizeof(*v->behind_off));
	if (!v->behind || !v->sws || !v->behind_off)
		return -ENOMEM;
	for (uint32_t u = 0; u < c->n_nodes; u++)
		if (v->sw[u] != ROUTE_NO_NODE)
			v->behind[n++] = u;
	qsort_r(v->behind, n, sizeof(*v->behind), cv_cmp_sw, v->sw);
	for (size_t i = 0; i < n; i++)
		if (!i || v->sw[v->behind[i]] != v->sw[v->behind[i - 1]]) {
			v->behind_off[v->n_sws] = i;
			v->sws[v->n_sws++] = v->sw[v->behind[i]];
		}
	v->behind_off[v->n_sws] = n;
	return 0;
}

/* The context's routes, made on first use; 0 (none: c->cover NULL). */
static int cv_get(struct pctx *c)
{
	const struct planner_routes *r = c->o->routes;
	struct pcover *v;
	int ret;

	if (c->cover || !r || !r->net || !route_net_nodes(r->net))
		return 0;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->r = r;
	v->net = r->net;
	v->lid = calloc(c->n_nodes + 1, sizeof(*v->lid));
	v->lmc = calloc(c->n_nodes + 1, sizeof(*v->lmc));
	v->sw = calloc(c->n_nodes + 1, sizeof(*v->sw));
	ret = v->lid && v->lmc && v->sw ? cv_links(v) : -ENOMEM;
	for (uint32_t u = 0; !ret && u < c->n_nodes; u++)
		cv_node(c, v, u);
	if (!ret)
		ret = cv_group(c, v);
	if (ret) {
		planner_cover_free(v);
		return ret;
	}
	c->cover = v;
	return 0;
}

/* ---- paths ---- */

/* The flow of profile @name (forward when unknown) and its metric. */
static unsigned cv_flow(const struct pcover *v, const char *name, int *bw)
{
	*bw = 0;
	for (size_t i = 0; i < v->r->n_flows; i++)
		if (!strcmp(v->r->flows[i].profile, name)) {
			*bw = v->r->flows[i].bandwidth;
			return v->r->flows[i].flow ? v->r->flows[i].flow
						   : FLOW_FORWARD;
		}
	return FLOW_FORWARD;
}

/* The slot of the link leaving @node by @port; SIZE_MAX: not a link. */
static size_t cv_slot(const struct pcover *v, uint32_t node, unsigned port)
{
	size_t s;

	if (node == ROUTE_NO_NODE || v->off[node] == UINT32_MAX)
		return SIZE_MAX;
	s = v->off[node] + port;
	return s < v->n_slots && v->lk[s].valid ? s : SIZE_MAX;
}

/*
 * Walk the path (from @node, a CA or switch port @port, to @dst) and,
 * for each link between switches on it, @mark it covered (or count the
 * new ones in *@fresh). -1: no path.
 */
static int cv_walk(struct pcover *v, uint32_t node, unsigned port, unsigned dst,
		   int mark, unsigned *fresh)
{
	size_t n;

	if (route_path_from(v->net, node, port, dst, &v->path, NULL, 0))
		return -1;
	n = route_path_links(&v->path, v->links);
	for (size_t i = 0; i < n; i++) {
		size_t s = cv_slot(v, v->links[i].from.node,
				   v->links[i].from.port);

		if (s == SIZE_MAX)
			continue;
		if (mark)
			v->lk[s].covered = 1;
		else if (fresh)
			*fresh += !v->lk[s].covered;
	}
	return 0;
}

/* Walk from planner node @u's LID to @dst. */
static int cv_walk_lid(struct pcover *v, unsigned src, unsigned dst, int mark,
		       unsigned *fresh)
{
	struct route_end e;

	if (route_lid_owner(v->net, src, &e))
		return -1;
	return cv_walk(v, e.node, e.port, dst, mark, fresh);
}

/* The links test @t crosses when it sends to @dlid: marked or counted. */
static void cv_test(struct pctx *c, const struct planner_test *t, unsigned dlid,
		    int mark, unsigned *fresh)
{
	struct pcover *v = c->cover;
	uint32_t a = planner_node_of(c, t->a, t->a_port);
	uint32_t b = planner_node_of(c, t->b, t->b_port);
	int bw;
	unsigned flow = cv_flow(v, t->profile, &bw);

	if (a == UINT32_MAX || b == UINT32_MAX || !v->lid[a] || !v->lid[b])
		return;
	if (flow & FLOW_FORWARD)
		cv_walk_lid(v, v->lid[a], dlid ? dlid : v->lid[b], mark, fresh);
	if (flow & FLOW_REVERSE)
		cv_walk_lid(v, v->lid[b], v->lid[a], mark, fresh);
}

/* Does the path of test @t (either way its data flows) cross slot @s? */
static int cv_test_crosses(struct pctx *c, const struct planner_test *t,
			   size_t s)
{
	struct pcover *v = c->cover;
	uint32_t a = planner_node_of(c, t->a, t->a_port);
	uint32_t b = planner_node_of(c, t->b, t->b_port);
	int bw;
	unsigned flow = cv_flow(v, t->profile, &bw), src[2], dst[2], n = 0;

	if (a == UINT32_MAX || b == UINT32_MAX || !v->lid[a] || !v->lid[b])
		return 0;
	if (flow & FLOW_FORWARD) {
		src[n] = v->lid[a];
		dst[n++] = t->dlid ? t->dlid : v->lid[b];
	}
	if (flow & FLOW_REVERSE) {
		src[n] = v->lid[b];
		dst[n++] = v->lid[a];
	}
	for (unsigned k = 0; k < n; k++) {
		struct route_end e;
		size_t m;

		if (route_lid_owner(v->net, src[k], &e) ||
		    route_path_from(v->net, e.node, e.port, dst[k], &v->path,
				    NULL, 0))
			continue;
		m = route_path_links(&v->path, v->links);
		for (size_t i = 0; i < m; i++)
			if (cv_slot(v, v->links[i].from.node,
				    v->links[i].from.port) == s)
				return 1;
	}
	return 0;
}

/* Confirmation tests still ahead in the plan that cross slot @s. */
static unsigned cv_pending(struct pctx *c, size_t s)
{
	double from = c->first_round * c->plan->round_seconds - 1e-9;
	unsigned n = 0;

	for (size_t i = 0; i < c->plan->n_tests; i++) {
		const struct planner_test *t = &c->plan->tests[i];

		n += t->confirm && t->not_before >= from &&
		     cv_test_crosses(c, t, s);
	}
	return n;
}

/* Does the path from switch @w to @dst cross link slot @s? */
static int cv_crosses(struct pcover *v, uint32_t w, unsigned dst, size_t s)
{
	size_t n;

	if (route_path_from(v->net, w, 0, dst, &v->path, NULL, 0))
		return 0;
	n = route_path_links(&v->path, v->links);
	for (size_t i = 0; i < n; i++)
		if (cv_slot(v, v->links[i].from.node, v->links[i].from.port) ==
		    s)
			return 1;
	return 0;
}

/* ---- steering the plan's tests ---- */

/* Send test @t to the responder's LID that crosses the most new links. */
static void cv_steer(struct pctx *c, struct planner_test *t)
{
	struct pcover *v = c->cover;
	uint32_t b = planner_node_of(c, t->b, t->b_port);
	unsigned span, best = 0, most = 0;

	if (t->link || b == UINT32_MAX || !v->lid[b])
		return; /* placed for a link: its path is chosen */
	span = 1u << v->lmc[b];
	for (unsigned k = 0; span > 1 && v->r->cover && k < span; k++) {
		unsigned d = v->lid[b] + (unsigned)((t->key + k) % span);
		unsigned fresh = 0;

		cv_test(c, t, d, 0, &fresh);
		if (fresh > most || !best) {
			most = fresh;
			best = d;
		}
	}
	t->dlid = best && best != v->lid[b] ? best : 0;
	c->plan->cover.steered += t->dlid != 0;
	cv_test(c, t, t->dlid, 1, NULL);
}

/* ---- adding tests for links ---- */

/*
 * A profile for a test from probe @a to @b that crosses a link: @want
 * when given (both have it), else one whose data flows forward,
 * bandwidth first. NULL: none. *@secs its length.
 */
static const char *cv_profile(const struct pctx *c,
			      const struct planner_probe *a,
			      const struct planner_probe *b, const char *want,
			      uint64_t h, double *secs)
{
	const char *pick = NULL;
	int pick_bw = -1;

	for (size_t k = 0; k < a->n_profiles; k++) {
		size_t i = (h + k) % a->n_profiles;
		const char *name = a->profiles[i];
		double s = planner_ctx_secs(c, name);
		int bw;
		unsigned flow = cv_flow(c->cover, name, &bw);

		if (!(s > 0) ||
		    !planner_in_list(b->profiles, b->n_profiles, name))
			continue;
		if (want ? strcmp(want, name) != 0 : !(flow & FLOW_FORWARD))
			continue;
		if (bw > pick_bw) {
			pick = name;
			pick_bw = bw;
			*secs = s;
		}
	}
	return pick;
}

/* Why link slot @s has no destination LID of a probe routed over it. */
static enum planner_why cv_why_nodest(struct pcover *v, size_t s)
{
	const struct plink *l = &v->lk[s];
	size_t nn = route_net_nodes(v->net);

	/* a CA port elsewhere routed over it: its end has no probe */
	for (uint32_t x = 0; x < nn; x++) {
		struct route_node_info i;
		struct route_port_info pi;

		if (route_node_get(v->net, x, &i) || i.type == ROUTE_SWITCH)
			continue;
		for (unsigned p = 1; p <= i.numports; p++)
			if (!route_port_get(v->net, x, p, &pi) && pi.lid &&
			    route_lft_get(v->net, l->node, pi.lid) == l->port)
				return PLANNER_NO_PROBE;
	}
	return PLANNER_NO_ROUTE;
}

/* What one search for a link found. */
struct cv_search {
	size_t slot;
	const char *want; /* the profile, for a confirmation */
	int confirm;
	uint64_t h;
	unsigned tries, walks;
	int dest, path; /* a destination LID routed over it; a path */
	int full;	/* such a destination had no room left */
};

/* Try the sources behind switch @w for destination @v_node, LID @d. */
static int cv_try_sources(struct pctx *c, struct cv_search *q, size_t wi,
			  uint32_t bn, unsigned d)
{
	struct pcover *v = c->cover;
	size_t lo = v->behind_off[wi], n = v->behind_off[wi + 1] - lo;
	const struct planner_probe *pb = &c->pr[c->nodes[bn].probe];

	for (size_t k = 0; k < n && k < CV_SRCS && q->tries < CV_TRIES; k++) {
		uint32_t u = v->behind[lo + (q->h + k) % n];
		const struct planner_probe *pa = &c->pr[c->nodes[u].probe];
		struct planner_test *t;
		double secs = 0;
		const char *prof;
		int ret;

		if (c->nodes[u].cls != c->nodes[bn].cls ||
		    !planner_ctx_ok(c, u, bn) || c->used[u] >= c->max_used ||
		    (q->confirm && planner_pset_has(&c->confirm_pairs,
						    planner_pair_key(u, bn))))
			continue;
		prof = cv_profile(c, pa, pb, q->want, q->h + k, &secs);
		if (!prof)
			continue;
		q->tries++;
		ret = planner_ctx_place(c, u, bn, prof, secs,
					planner_hash2(q->h, u), q->confirm);
		if (ret <= 0) {
			if (ret < 0)
				return ret;
			continue;
		}
		t = &c->plan->tests[c->plan->n_tests - 1];
		t->dlid = d != v->lid[bn] ? d : 0;
		t->link = 1;
		t->key = planner_ctx_test_key(c, t);
		cv_test(c, t, d, 1, NULL);
		if (q->confirm && planner_pset_add(&c->confirm_pairs,
						   planner_pair_key(u, bn)) < 0)
			return -ENOMEM;
		return 1;
	}
	return 0;
}

/* A destination LID @d of node @bn routed over the link: find sources. */
static int cv_try_dest(struct pctx *c, struct cv_search *q, uint32_t bn,
		       unsigned d)
{
	struct pcover *v = c->cover;
	const struct plink *l = &v->lk[q->slot];

	for (size_t j = 0; j < v->n_sws && q->tries < CV_TRIES; j++) {
		size_t wi = (q->h + j) % v->n_sws;
		uint32_t w = v->sws[wi];
		int ret;

		if (w != l->node) {
			if (q->walks++ >= CV_WALKS)
				return 0;
			if (!cv_crosses(v, w, d, q->slot))
				continue;
		}
		q->path = 1;
		ret = cv_try_sources(c, q, wi, bn, d);
		if (ret)
			return ret;
	}
	return 0;
}

/* One test crossing link slot @q->slot; 1 placed, 0 not (q says why). */
static int cv_add(struct pctx *c, struct cv_search *q)
{
	struct pcover *v = c->cover;
	const struct plink *l = &v->lk[q->slot];
	unsigned dests = 0;

	for (size_t i = 0; i < c->n_nodes && dests < CV_DESTS; i++) {
		uint32_t bn = (uint32_t)((q->h + i) % c->n_nodes);
		unsigned span = 1u << v->lmc[bn];

		if (!v->lid[bn])
			continue;
		for (unsigned k = 0; k < span && dests < CV_DESTS; k++) {
			unsigned d = v->lid[bn] + (unsigned)((q->h + k) % span);
			int ret;

			if (route_lft_get(v->net, l->node, d) != l->port)
				continue;
			q->dest = 1;
			if (c->used[bn] >= c->max_used) {
				q->full = 1;
				continue;
			}
			dests++;
			ret = cv_try_dest(c, q, bn, d);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static enum planner_why cv_why(struct pcover *v, const struct cv_search *q)
{
	if (!q->dest)
		return cv_why_nodest(v, q->slot);
	return q->path || q->full || q->walks >= CV_WALKS ? PLANNER_DUTY_CYCLE
							  : PLANNER_NO_PROBE;
}

/* ---- the two passes ---- */

int planner_ctx_cover_links(struct pctx *c)
{
	const struct planner_routes *r = c->o->routes;
	struct planner_cover *pc = &c->plan->cover;
	int ret = cv_get(c);

	for (size_t i = 0; !ret && c->cover && i < r->n_confirm; i++) {
		const struct planner_link *k = &r->confirm[i];
		struct cv_search q = {
			.slot = cv_slot(c->cover,
					route_node_find(r->net, k->guid),
					k->port),
			.want = k->profile,
			.confirm = 1,
		};

		if (q.slot == SIZE_MAX || !k->profile)
			continue; /* not a link of these routes any more */
		/* a plan made in the period may hold some still ahead */
		for (unsigned n = cv_pending(c, q.slot);
		     !ret && n < c->o->confirm_tests; n++) {
			if (!planner_ctx_confirm_room(c)) {
				pc->confirm_unplaced++;
				continue;
			}
			q.h = planner_hash2(c->seed ^ 0x11c0f1ULL,
					    k->guid ^ (uint64_t)k->port << 56 ^
						    n);
			q.tries = q.walks = 0;
			ret = cv_add(c, &q);
			if (ret > 0) {
				c->plan->n_confirm++;
				pc->confirm++;
				ret = 0;
			} else if (!ret) {
				pc->confirm_unplaced++;
			}
		}
	}
	return ret < 0 ? ret : 0;
}

static int cv_note_uncovered(struct planner_cover *pc, const struct pcover *v,
			     const struct plink *l)
{
	struct planner_uncovered *u;
	struct route_node_info a, b;

	if (pc->n_uncovered >= PLANNER_MAX_UNCOVERED ||
	    route_node_get(v->net, l->node, &a) ||
	    route_node_get(v->net, l->to, &b))
		return 0;
	if (!pc->uncovered) {
		pc->uncovered =
			calloc(PLANNER_MAX_UNCOVERED, sizeof(*pc->uncovered));
		if (!pc->uncovered)
			return -ENOMEM;
	}
	u = &pc->uncovered[pc->n_uncovered++];
	*u = (struct planner_uncovered){a.guid, b.guid, l->port, l->to_port,
					(enum planner_why)l->why};
	return 0;
}

int planner_ctx_cover(struct pctx *c)
{
	struct planner_cover *pc = &c->plan->cover;
	struct pcover *v;
	size_t base = c->plan->n_tests;
	int ret = cv_get(c);

	if (ret || !(v = c->cover))
		return ret;
	pc->routed = 1;
	for (size_t i = 0; i < base; i++)
		cv_steer(c, &c->plan->tests[i]);
	/* every slot once, from a start drawn from the period */
	for (size_t k = 0; !ret && k < v->n_slots; k++) {
		struct cv_search q = {
			.slot = (k + (size_t)(c->seed % v->n_slots)) %
				v->n_slots,
			.h = planner_hash2(c->seed ^ 0xc0feULL, k),
		};

		if (!v->lk[q.slot].valid || v->lk[q.slot].covered)
			continue;
		if (!v->r->cover) {
			v->lk[q.slot].why = PLANNER_OFF;
			continue;
		}
		ret = cv_add(c, &q);
		if (ret > 0) {
			pc->added++;
			ret = 0;
		} else if (!ret) {
			v->lk[q.slot].why = (uint8_t)cv_why(v, &q);
		}
	}
	for (size_t s = 0; !ret && s < v->n_slots; s++) {
		struct plink *l = &v->lk[s];

		if (!l->valid)
			continue;
		pc->links++;
		pc->n[l->covered ? PLANNER_COVERED : l->why]++;
		if (!l->covered)
			ret = cv_note_uncovered(pc, v, l);
	}
	return ret;
}
