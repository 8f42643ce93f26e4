/* SPDX-License-Identifier: MIT */
/*
 * Inside the planner: the context one plan is made in, shared by
 * planner.c (the base plan) and planner_confirm.c (confirmation tests, at
 * the turn of a period or added to a plan in the middle of one). Not for
 * other files.
 */
#ifndef IBPULSE_COLLECTOR_PLANNER_INT_H
#define IBPULSE_COLLECTOR_PLANNER_INT_H

#include "planner.h"
#include "hmap.h"

#define PLANNER_SCAN 8	      /* look-ahead for an unmatched partner */
#define PLANNER_FALLBACK 4096 /* partners tried for a leftover port */
#define PLANNER_TRIES 4	      /* members tried per side of a group pair */
#define PLANNER_MAX_CANDS 64  /* profiles common to one pair */
#define PLANNER_MAX_MATCH 4   /* goal 1's matchings: one per profile */

struct pcover;

/* An ACTIVE port planned: the planner's node. */
struct pnode {
	uint32_t probe, port, cls, grp;
	uint64_t order; /* this period's random rank in its class */
};

struct pedge {
	uint32_t u, v; /* node indexes */
	int pref;      /* goal 1's matching k: its k-th common profile;
			* -1: one drawn from the pair */
};

struct pctx {
	const struct planner_opts *o;
	const struct planner_probe *pr;
	size_t n_probes;
	uint64_t seed;
	struct pnode *nodes;
	size_t n_nodes, n_classes, n_groups;
	uint32_t *members; /* node indexes sorted by (class, order) */
	size_t *class_off; /* n_classes + 1 offsets into members */
	uint32_t *node_of; /* (probe, port) -> node; see planner_node_of() */
	size_t *port_off;  /* n_probes + 1 offsets into node_of */
	struct pedge *edges;
	size_t n_edges, cap_edges;
	uint32_t *deg;
	/* sets of non-zero 64-bit keys (planner_pset_add); zeroed: empty */
	struct hmap pairs, gp_possible, gp_covered, gp_placed;
	struct hmap confirm_pairs; /* pairs with a confirmation test */
	/* scheduling */
	unsigned rounds, first_round, words, max_used;
	uint64_t *busy; /* per resource, words each */
	unsigned *used; /* rounds per node */
	struct planner_plan *plan;
	size_t cap_tests;
	struct pcover *cover; /* routes (planner_cover.c); NULL: none */
};

uint64_t planner_mix64(uint64_t x);
uint64_t planner_hash2(uint64_t a, uint64_t b);
/* 1 added, 0 present, -ENOMEM. */
int planner_pset_add(struct hmap *s, uint64_t key);
int planner_pset_has(const struct hmap *s, uint64_t key);
/* The key of an unordered pair of nodes (or groups). */
uint64_t planner_pair_key(uint32_t u, uint32_t v);
uint64_t planner_gp_key(uint32_t g, uint32_t h);

/* The nodes (ACTIVE ports), their classes and groups, in this period's
 * order; also node_of. 0 or -ENOMEM. */
int planner_ctx_nodes(struct pctx *c);
/* The node of port @port of probe @probe; UINT32_MAX: not planned. */
uint32_t planner_node_of(const struct pctx *c, uint32_t probe, uint32_t port);
/* May nodes @u and @v test each other (other probe, P_Keys)? */
int planner_ctx_ok(const struct pctx *c, uint32_t u, uint32_t v);
/* The rounds, busy maps and duty budgets of c->plan. */
int planner_ctx_sched(struct pctx *c);
/*
 * planner_ctx_place() - a test of @prof (@secs long) between nodes @u
 * (initiator) and @v in the first free run of rounds from a start drawn
 * from @h, within both ports' duty budget. 1 placed, 0 no room, -ENOMEM.
 */
int planner_ctx_place(struct pctx *c, uint32_t u, uint32_t v, const char *prof,
		      double secs, uint64_t h, int confirm);
/* The confirmation tests of @cf[0..n-1] (planner_confirm.c). */
int planner_ctx_confirm(struct pctx *c, const struct planner_confirm *cf,
			size_t n);
/* Seconds a test of profile @name takes; -1: not planned. */
double planner_ctx_secs(const struct pctx *c, const char *name);
/* The confirmation tests this plan may still take (confirm_share). */
size_t planner_ctx_confirm_room(const struct pctx *c);
/*
 * Routes (planner_cover.c): planner_ctx_cover_links() places the link
 * confirmation tests; planner_ctx_cover() steers the plan's tests to
 * their DLIDs, adds tests for the links left uncovered and counts the
 * coverage. Both do nothing without routes; 0, -ENOMEM.
 */
int planner_ctx_cover_links(struct pctx *c);
int planner_ctx_cover(struct pctx *c);
void planner_cover_free(struct pcover *v);
uint64_t planner_ctx_test_key(const struct pctx *c,
			      const struct planner_test *t);
int planner_cmp_test(const void *x, const void *y);
/* Every test's key (its id) unique in the plan; 0 or -ENOMEM. */
int planner_ctx_unique_keys(struct pctx *c);
int planner_check(const struct planner_opts *o);
void planner_ctx_free(struct pctx *c);

#endif
