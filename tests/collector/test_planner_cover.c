// SPDX-License-Identifier: MIT
/*
 * Unit tests of link coverage in the planner (collector/planner_cover.c)
 * on a two-level fat tree built with common/route.h and routed
 * destination-mod-k: with LMC 2 every directed link between switches is
 * crossed by some test's path (checked by walking each planned test to
 * the DLID it names), each DLID one of its responder port's; with LMC 0
 * the planner adds pairs for what the base plan misses; the duty budget
 * holds and what does not fit is counted as duty_cycle; links behind a
 * leaf without probes are no_probe; a link needing confirmation gets
 * confirm_tests tests across it, not twice when the plan is topped up in
 * the middle of a period; a read profile (data the other way) is not used
 * to cover; no routes, no coverage; the same input gives the same plan.
 */
#include "planner.h"
#include "route.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define LEAVES 6
#define PER 4
#define SPINES 3
#define HOSTS (LEAVES * PER)
#define LINKS (2 * LEAVES * SPINES)

#define HOST_GUID(h) (0x100000ULL + (h))
#define LEAF_GUID(l) (0x200000ULL + (l))
#define SPINE_GUID(s) (0x300000ULL + (s))
#define LEAF_LID(l) (1u + (l))
#define SPINE_LID(s) (1u + LEAVES + (s))

struct world {
	unsigned lmc, top;
	struct route_net *net;
	struct planner_probe p[HOSTS];
	struct planner_port ports[HOSTS];
	char names[HOSTS][16];
	int absent[LEAVES]; /* leaves without probes */
};

static unsigned host_lid(const struct world *w, unsigned h)
{
	return (h + 16) << w->lmc;
}

static const char *const bw_only[] = {"bw"};
static const struct planner_flow flows[] = {{"bw", 1, 1}, {"rd", 2, 1}};

static void add_node(struct route_net *n, uint64_t guid, enum route_node_type t,
		     const char *desc, unsigned np, unsigned lid)
{
	struct route_node_in in = {guid, t, desc, np, (uint16_t)lid, 0};

	assert_int_equal(route_add_node(n, &in), 0);
}

static void add_port(struct route_net *n, uint64_t guid, unsigned num,
		     unsigned lid, unsigned lmc, uint64_t rg, unsigned rp)
{
	struct route_port_in in = {.num = num,
				   .lid = (uint16_t)lid,
				   .lmc = (uint8_t)lmc,
				   .state = 4,
				   .remote_guid = rg,
				   .remote_port = rp};

	assert_int_equal(route_add_port(n, guid, &in), 0);
}

/* The net: leaves send other leaves' hosts up to spine LID % SPINES. */
static void build(struct world *w)
{
	uint8_t *lft = calloc(w->top + 1, 1);
	char desc[16];

	assert_int_equal(route_net_new(&w->net), 0);
	for (unsigned l = 0; l < LEAVES; l++) {
		snprintf(desc, sizeof(desc), "leaf%u", l);
		add_node(w->net, LEAF_GUID(l), ROUTE_SWITCH, desc, PER + SPINES,
			 LEAF_LID(l));
		for (unsigned h = 0; h < PER; h++)
			add_port(w->net, LEAF_GUID(l), h + 1, LEAF_LID(l), 0,
				 HOST_GUID(l * PER + h), 1);
		for (unsigned s = 0; s < SPINES; s++)
			add_port(w->net, LEAF_GUID(l), PER + 1 + s, LEAF_LID(l),
				 0, SPINE_GUID(s), l + 1);
		memset(lft, ROUTE_PORT_NONE, w->top + 1);
		for (unsigned h = 0; h < HOSTS; h++)
			for (unsigned k = 0; k < 1u << w->lmc; k++) {
				unsigned d = host_lid(w, h) + k;

				lft[d] = h / PER == l ? h % PER + 1
						      : PER + 1 + d % SPINES;
			}
		for (unsigned m = 0; m < LEAVES; m++)
			lft[LEAF_LID(m)] =
				m == l ? 0 : PER + 1 + LEAF_LID(m) % SPINES;
		for (unsigned s = 0; s < SPINES; s++)
			lft[SPINE_LID(s)] = PER + 1 + s;
		assert_int_equal(
			route_add_lft_table(w->net, LEAF_GUID(l), w->top, lft),
			0);
	}
	for (unsigned s = 0; s < SPINES; s++) {
		snprintf(desc, sizeof(desc), "spine%u", s);
		add_node(w->net, SPINE_GUID(s), ROUTE_SWITCH, desc, LEAVES,
			 SPINE_LID(s));
		memset(lft, ROUTE_PORT_NONE, w->top + 1);
		for (unsigned l = 0; l < LEAVES; l++) {
			add_port(w->net, SPINE_GUID(s), l + 1, SPINE_LID(s), 0,
				 LEAF_GUID(l), PER + 1 + s);
			lft[LEAF_LID(l)] = (uint8_t)(l + 1);
		}
		for (unsigned h = 0; h < HOSTS; h++)
			for (unsigned k = 0; k < 1u << w->lmc; k++)
				lft[host_lid(w, h) + k] =
					(uint8_t)(h / PER + 1);
		lft[SPINE_LID(s)] = 0;
		assert_int_equal(
			route_add_lft_table(w->net, SPINE_GUID(s), w->top, lft),
			0);
	}
	for (unsigned h = 0; h < HOSTS; h++) {
		snprintf(desc, sizeof(desc), "h%u", h);
		add_node(w->net, HOST_GUID(h), ROUTE_CA, desc, 1, 0);
		add_port(w->net, HOST_GUID(h), 1, host_lid(w, h), w->lmc,
			 LEAF_GUID(h / PER), h % PER + 1);
	}
	free(lft);
	assert_int_equal(route_net_finish(w->net, NULL, 0), 0);
}

/* A world with LMC @lmc; leaf @skip (-1: none) has no probes. */
static struct world *world_new(unsigned lmc, int skip)
{
	struct world *w = calloc(1, sizeof(*w));
	size_t k = 0;

	assert_non_null(w);
	w->lmc = lmc;
	if (skip >= 0)
		w->absent[skip] = 1;
	w->top = host_lid(w, HOSTS) + 8;
	build(w);
	for (unsigned h = 0; h < HOSTS; h++) {
		if (w->absent[h / PER])
			continue;
		snprintf(w->names[k], sizeof(w->names[k]), "h%02u", h);
		w->ports[k] = (struct planner_port){
			.device = "mlx5_0",
			.port = 1,
			.state = 4,
			.link_layer = "InfiniBand",
			.subnet_prefix = "fe80:0000:0000:0000",
			.lid = host_lid(w, h),
		};
		w->p[k] = (struct planner_probe){
			.host = w->names[k],
			.address = w->names[k],
			.resp_port = 18515,
			.profiles = bw_only,
			.n_profiles = 1,
			.ports = &w->ports[k],
			.n_ports = 1,
		};
		k++;
	}
	return w;
}

static size_t world_probes(const struct world *w)
{
	size_t n = 0;

	for (unsigned l = 0; l < LEAVES; l++)
		n += w->absent[l] ? 0 : PER;
	return n;
}

static void world_free(struct world *w)
{
	route_net_free(w->net);
	free(w);
}

static struct planner_opts opts(const struct planner_routes *r, double duty)
{
	return (struct planner_opts){.period = 300,
				     .duty_cycle = duty,
				     .slot_seconds = 5,
				     .confirm_tests = 2,
				     .confirm_share = 0.5,
				     .routes = r};
}

/* The links between switches test @t's data crosses, into @seen. */
static void walk(const struct world *w, const struct planner_test *t,
		 int seen[LEAVES][SPINES][2], unsigned flow)
{
	const struct planner_port *a = &w->p[t->a].ports[t->a_port];
	const struct planner_port *b = &w->p[t->b].ports[t->b_port];
	struct route_path p;
	struct route_link l[ROUTE_MAX_HOPS + 1];
	unsigned src[2] = {a->lid, b->lid},
		 dst[2] = {t->dlid ? t->dlid : b->lid, a->lid};

	if (t->dlid) { /* one of the responder's own LIDs */
		assert_true(t->dlid > b->lid);
		assert_true(t->dlid < b->lid + (1u << w->lmc));
	}
	for (int k = 0; k < 2; k++) {
		if (!(flow & (1u << k)))
			continue;
		assert_int_equal(
			route_path(w->net, src[k], dst[k], &p, NULL, 0), 0);
		for (size_t i = 0, n = route_path_links(&p, l); i < n; i++) {
			uint64_t g = l[i].from.guid;

			if (g >= LEAF_GUID(0) && g < LEAF_GUID(LEAVES) &&
			    l[i].to.guid >= SPINE_GUID(0))
				seen[g - LEAF_GUID(0)][l[i].from.port - PER - 1]
				    [0] = 1;
			else if (g >= SPINE_GUID(0))
				seen[l[i].to.guid - LEAF_GUID(0)]
				    [g - SPINE_GUID(0)][1] = 1;
		}
	}
}

static size_t count_seen(int seen[LEAVES][SPINES][2])
{
	size_t n = 0;

	for (int l = 0; l < LEAVES; l++)
		for (int s = 0; s < SPINES; s++)
			n += seen[l][s][0] + seen[l][s][1];
	return n;
}

/* No port over its duty budget: rounds used per port. */
static void check_duty(const struct planner_plan *p, size_t n, double duty)
{
	unsigned *used = calloc(n, sizeof(*used));

	for (size_t i = 0; i < p->n_tests; i++) {
		const struct planner_test *t = &p->tests[i];
		unsigned k = (unsigned)((t->deadline - t->not_before) /
						p->round_seconds +
					0.5);

		used[t->a] += k;
		used[t->b] += k;
	}
	for (size_t i = 0; i < n; i++)
		assert_true(used[i] <= (unsigned)(duty * p->rounds + 1e-9));
	free(used);
}

static void test_lmc2_covers_every_link(void **state)
{
	struct world *w = world_new(2, -1);
	struct planner_routes r = {
		.net = w->net, .cover = 1, .flows = flows, .n_flows = 2};
	struct planner_opts o = opts(&r, 0.2);
	struct planner_plan *p;
	int seen[LEAVES][SPINES][2] = {{{0}}};

	(void)state;
	assert_int_equal(planner_run(&o, w->p, HOSTS, 7, 0, &p), 0);
	assert_true(p->cover.routed);
	assert_int_equal(p->cover.links, LINKS);
	assert_int_equal(p->cover.n[PLANNER_COVERED], LINKS);
	assert_int_equal(p->cover.n_uncovered, 0);
	assert_true(p->cover.steered > 0);
	for (size_t i = 0; i < p->n_tests; i++)
		walk(w, &p->tests[i], seen, 1);
	assert_int_equal(count_seen(seen), LINKS);
	check_duty(p, HOSTS, 0.2);
	planner_plan_free(p);
	world_free(w);
}

static void test_lmc0_adds_pairs(void **state)
{
	struct world *w = world_new(0, -1);
	struct planner_routes r = {
		.net = w->net, .cover = 1, .flows = flows, .n_flows = 2};
	struct planner_opts o = opts(&r, 0.2), bare = opts(NULL, 0.2);
	struct planner_plan *p, *q;
	int seen[LEAVES][SPINES][2] = {{{0}}};

	(void)state;
	assert_int_equal(planner_run(&o, w->p, HOSTS, 7, 0, &p), 0);
	assert_int_equal(p->cover.n[PLANNER_COVERED], LINKS);
	assert_int_equal(p->cover.steered, 0);
	for (size_t i = 0; i < p->n_tests; i++) {
		assert_int_equal(p->tests[i].dlid, 0);
		walk(w, &p->tests[i], seen, 1);
	}
	assert_int_equal(count_seen(seen), LINKS);
	/* the same input, the same plan */
	assert_int_equal(planner_run(&o, w->p, HOSTS, 7, 0, &q), 0);
	assert_int_equal(q->n_tests, p->n_tests);
	for (size_t i = 0; i < p->n_tests; i++)
		assert_true(q->tests[i].key == p->tests[i].key &&
			    q->tests[i].dlid == p->tests[i].dlid);
	planner_plan_free(q);
	/* without routes: the base plan, no coverage */
	assert_int_equal(planner_run(&bare, w->p, HOSTS, 7, 0, &q), 0);
	assert_false(q->cover.routed);
	assert_int_equal(q->cover.links, 0);
	assert_true(q->n_tests < p->n_tests);
	assert_int_equal(p->cover.added, p->n_tests - q->n_tests);
	planner_plan_free(q);
	planner_plan_free(p);
	world_free(w);
}

static void test_duty_cycle_counted(void **state)
{
	struct world *w = world_new(0, -1);
	struct planner_routes r = {
		.net = w->net, .cover = 1, .flows = flows, .n_flows = 2};
	/* one slot a period per port: the base matching alone */
	struct planner_opts o = opts(&r, 1.0 / 60);
	struct planner_plan *p;

	(void)state;
	assert_int_equal(planner_run(&o, w->p, HOSTS, 3, 0, &p), 0);
	check_duty(p, HOSTS, 1.0 / 60);
	assert_true(p->cover.n[PLANNER_DUTY_CYCLE] > 0);
	assert_int_equal(p->cover.n[PLANNER_COVERED] +
				 p->cover.n[PLANNER_DUTY_CYCLE],
			 LINKS);
	assert_int_equal(p->cover.n_uncovered, p->cover.n[PLANNER_DUTY_CYCLE]);
	assert_int_equal(p->cover.uncovered[0].why, PLANNER_DUTY_CYCLE);
	planner_plan_free(p);
	world_free(w);
}

static void test_no_probe_behind_a_leaf(void **state)
{
	struct world *w = world_new(1, 2); /* leaf 2 without probes */
	struct planner_routes r = {
		.net = w->net, .cover = 1, .flows = flows, .n_flows = 2};
	struct planner_opts o = opts(&r, 0.5);
	struct planner_plan *p;

	(void)state;
	assert_int_equal(planner_run(&o, w->p, world_probes(w), 5, 0, &p), 0);
	/* leaf 2's uplinks have no source, its downlinks no destination */
	assert_int_equal(p->cover.n[PLANNER_NO_PROBE], 2 * SPINES);
	assert_int_equal(p->cover.n[PLANNER_COVERED], LINKS - 2 * SPINES);
	for (size_t i = 0; i < p->cover.n_uncovered; i++) {
		const struct planner_uncovered *u = &p->cover.uncovered[i];

		assert_int_equal(u->why, PLANNER_NO_PROBE);
		assert_true(u->guid == LEAF_GUID(2) ||
			    u->peer_guid == LEAF_GUID(2));
	}
	planner_plan_free(p);
	world_free(w);
}

static void test_link_confirm(void **state)
{
	struct world *w = world_new(2, -1);
	/* spine1 -> leaf4 needs confirmation in profile bw */
	struct planner_link lk = {SPINE_GUID(1), 5, "bw"};
	struct planner_routes r = {.net = w->net,
				   .cover = 0,
				   .flows = flows,
				   .n_flows = 2,
				   .confirm = &lk,
				   .n_confirm = 1};
	struct planner_opts o = opts(&r, 0.2);
	struct planner_plan *p;
	size_t n = 0, before;

	(void)state;
	assert_int_equal(planner_run(&o, w->p, HOSTS, 9, 0, &p), 0);
	assert_int_equal(p->cover.confirm, 2);
	for (size_t i = 0; i < p->n_tests; i++) {
		int seen[LEAVES][SPINES][2] = {{{0}}};

		if (!p->tests[i].link)
			continue;
		assert_true(p->tests[i].confirm);
		walk(w, &p->tests[i], seen, 1);
		assert_true(seen[4][1][1]);
		n++;
	}
	assert_int_equal(n, 2);
	assert_int_equal(p->n_confirm, 2);
	/* topped up in the period: both still ahead, none added */
	before = p->n_tests;
	assert_int_equal(planner_confirm(&o, w->p, HOSTS, p, 0, NULL, 0), 0);
	assert_int_equal(p->n_tests, before);
	/* from a round after them: two more */
	assert_int_equal(
		planner_confirm(&o, w->p, HOSTS, p, p->rounds - 10, NULL, 0),
		0);
	assert_true(p->n_tests > before);
	/* coverage off: links are not counted as covered by chance */
	assert_true(p->cover.n[PLANNER_OFF] > 0);
	planner_plan_free(p);
	world_free(w);
}

static void test_read_profile_not_for_coverage(void **state)
{
	static const char *const rd_only[] = {"rd"};
	struct world *w = world_new(0, -1);
	struct planner_routes r = {
		.net = w->net, .cover = 1, .flows = flows, .n_flows = 2};
	struct planner_opts o = opts(&r, 0.5);
	struct planner_plan *p;
	int seen[LEAVES][SPINES][2] = {{{0}}};

	(void)state;
	for (unsigned h = 0; h < HOSTS; h++) {
		w->p[h].profiles = rd_only;
	}
	assert_int_equal(planner_run(&o, w->p, HOSTS, 1, 0, &p), 0);
	assert_int_equal(p->cover.added, 0);
	/* its data comes back: the reverse paths are what it covers */
	for (size_t i = 0; i < p->n_tests; i++)
		walk(w, &p->tests[i], seen, 2);
	assert_int_equal(p->cover.n[PLANNER_COVERED], count_seen(seen));
	assert_true(p->cover.n[PLANNER_COVERED] < LINKS);
	planner_plan_free(p);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lmc2_covers_every_link),
		cmocka_unit_test(test_lmc0_adds_pairs),
		cmocka_unit_test(test_duty_cycle_counted),
		cmocka_unit_test(test_no_probe_behind_a_leaf),
		cmocka_unit_test(test_link_confirm),
		cmocka_unit_test(test_read_profile_not_for_coverage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
