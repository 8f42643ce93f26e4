/* SPDX-License-Identifier: MIT */
/*
 * The test planner: which port tests which, with what profile, when, in
 * one period. Pure logic (no SQL, no clock): the same input and period
 * number give the same plan. Goals, in priority order:
 *   1. every ACTIVE port is tested against some peer in each profile (a
 *      random matching within each class per profile, as many as the duty
 *      budget holds, re-drawn every period: rotation);
 *   2. every pair of groups (values of an operator label, e.g. the leaf
 *      switch) is exercised by at least one test;
 *   3. below full_mesh_below hosts, every pair of ports in a class.
 * A class is the ports that may test each other: same rail (the probe's
 * rail label, else the port's index on its host) unless cross_rail, same
 * link layer and (InfiniBand only) subnet prefix. Two ports whose only common
 * P_Keys are limited memberships on both ends cannot talk and are never paired.
 * Time: the period is cut into rounds; a test takes whole rounds; a port
 * (and, with host_exclusive, a whole probe) is in at most one test per
 * round, and in at most duty_cycle of the rounds. Tests that do not fit
 * are counted in plan.unplaced, not silently dropped.
 * Confirmation tests: a port (or a device) with a bad result nobody has
 * confirmed or cleared yet (evidence.h) is tested against ports with good
 * recent history, first thing in a period or added to the current plan
 * in the rounds still ahead, at most confirm_share of the period's tests,
 * within the same duty budget; so is a link between switches with a bad
 * test nobody explained (localize.h), by pairs whose path crosses it.
 * Link coverage (planner_routes, planner_cover.c): with routes, the tests
 * choose their DLID and more are added so that every directed link
 * between switches carries one; what stays uncovered is counted by why.
 */
#ifndef IBPULSE_COLLECTOR_PLANNER_H
#define IBPULSE_COLLECTOR_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#define PLANNER_MAX_ROUNDS 1024
#define PLANNER_MAX_GROUPS 2048 /* per class, for group pairs */

struct planner_port {
	const char *device;
	unsigned port;
	int state;				/* only 4 (ACTIVE) is planned */
	const char *link_layer, *subnet_prefix; /* NULL: unknown */
	const uint16_t *pkeys; /* none: unknown, assumed compatible */
	size_t n_pkeys;
	/* Evidence (evidence.h), per profile name in the lists below:
	 * good: its newest results were good (a confirmation peer);
	 * suspect: it is a suspect (no device-level tests for it). */
	const char *const *good, *const *suspect;
	size_t n_good, n_suspect;
	unsigned lid; /* InfiniBand: its base LID (routes); 0: none */
};

struct planner_probe {
	const char *host, *address;
	unsigned resp_port;
	const char *group; /* group_label value; NULL: unlabelled */
	const char *rail;  /* rail_label value; NULL: by port index */
	const char *const *profiles;
	size_t n_profiles;
	const struct planner_port *ports;
	size_t n_ports;
};

struct planner_profile {
	const char *name;
	double seconds; /* slot a test of this profile needs */
};

/* Where a profile's data flows, for link coverage. */
struct planner_flow {
	const char *profile;
	unsigned flow; /* testapi.h's TESTAPI_FLOW_*; 0: unknown (forward) */
	int bandwidth; /* judged on bandwidth: preferred for coverage */
};

/* A directed link between switches, named by its egress end. */
struct planner_link {
	uint64_t guid;
	unsigned port;
	const char *profile; /* a confirmation's: its bad tests' profile */
};

/*
 * Routes (common/route.h), for link coverage: every directed link between
 * two switches should carry a test each period. The planner chooses, for
 * each test, which of the responder port's 2^LMC LIDs it sends to (the
 * path), and adds tests for the links the plan left uncovered (pairs
 * whose path crosses them) and for the links needing confirmation tests
 * (localize.h), within the same duty budget.
 */
struct planner_routes {
	const struct route_net *net; /* finished; NULL: no routes */
	int cover;		     /* steer and add tests for coverage */
	const struct planner_flow *flows;
	size_t n_flows;
	const struct planner_link *confirm; /* links to confirm */
	size_t n_confirm;
};

/* Why a link is left uncovered (or that it is not). */
enum planner_why {
	PLANNER_COVERED = 0,
	PLANNER_DUTY_CYCLE, /* ports that could cross it had no room */
	PLANNER_NO_ROUTE,   /* no probe port's path crosses it */
	PLANNER_NO_PROBE,   /* no probe behind one of its ends */
	PLANNER_OFF,	    /* coverage is not planned (routes->cover 0) */
	PLANNER_WHYS
};

#define PLANNER_MAX_UNCOVERED 1000 /* listed per plan, at most */

struct planner_uncovered {
	uint64_t guid, peer_guid; /* egress and ingress nodes */
	unsigned port, peer_port;
	enum planner_why why;
};

/* What the plan does for the links between switches. */
struct planner_cover {
	int routed;			  /* routes were given */
	size_t links;			  /* directed links between switches */
	size_t n[PLANNER_WHYS];		  /* covered, and uncovered by why */
	size_t added;			  /* tests added for coverage */
	size_t steered;			  /* tests sent to another DLID */
	size_t confirm, confirm_unplaced; /* link confirmation tests */
	struct planner_uncovered *uncovered;
	size_t n_uncovered;
};

struct planner_opts {
	double period;		  /* seconds */
	unsigned full_mesh_below; /* hosts; 0: never */
	double duty_cycle;	  /* (0, 1]: share of rounds a port may test */
	double slot_seconds;	  /* round length (before capping rounds) */
	/* Profiles planned, with their lengths; none: every profile the
	 * probes registered, slot_seconds each. */
	const struct planner_profile *profiles;
	size_t n_profiles;
	int cross_rail;	    /* pair ports of different rails too */
	int host_exclusive; /* a probe is in one test at a time */
	/* Confirmation tests: per element, and their share of the plan. */
	unsigned confirm_tests;
	double confirm_share;
	/* Routes for link coverage; NULL: none (not owned). */
	const struct planner_routes *routes;
};

#define PLANNER_DEVICE UINT32_MAX

/* A port, or every port of a device, needing confirmation tests. */
struct planner_confirm {
	uint32_t probe;	     /* index into the probes */
	uint32_t port;	     /* index into its ports; PLANNER_DEVICE: the
			      * device's other ports (those not suspect) */
	const char *device;  /* with PLANNER_DEVICE */
	const char *profile; /* the tests' profile */
};

struct planner_test {
	uint32_t a, b;		     /* probe indexes: a initiates */
	uint32_t a_port, b_port;     /* indexes into the probes' ports */
	const char *profile;	     /* points into the input */
	double not_before, deadline; /* offsets from the period start */
	uint64_t key;		     /* stable id of (a, b, profile) */
	int confirm;		     /* a confirmation test */
	unsigned dlid; /* the responder's LID it sends to; 0: its base */
	int link;      /* placed to cross a link: its DLID is the path */
};

struct planner_plan {
	uint64_t period;
	struct planner_test *tests; /* sorted by a, then not_before */
	size_t n_tests;
	unsigned rounds;
	double round_seconds;
	size_t ports;	    /* ACTIVE ports planned */
	size_t unplaced;    /* no room (duty, rounds) or no common profile */
	size_t group_pairs; /* distinct group pairs with possible tests */
	size_t group_pairs_planned;
	size_t n_confirm;	    /* confirmation tests in the plan */
	size_t confirm_unplaced;    /* asked for, without a peer or room */
	struct planner_cover cover; /* with routes */
};

/*
 * planner_run() - plan period number @period for @n probes. Rounds before
 * @first_round are not used (a replan in the middle of a period). The plan
 * points into @probes and @o (keep them alive); free it with
 * planner_plan_free(). Returns 0, -EINVAL for bad options, -ENOMEM.
 */
int planner_run(const struct planner_opts *o,
		const struct planner_probe *probes, size_t n, uint64_t period,
		unsigned first_round, struct planner_plan **out);
void planner_plan_free(struct planner_plan *p);

/*
 * planner_run_confirm() - planner_run() that places the confirmation
 * tests of @cf[0..ncf) first.
 */
int planner_run_confirm(const struct planner_opts *o,
			const struct planner_probe *probes, size_t n,
			uint64_t period, unsigned first_round,
			const struct planner_confirm *cf, size_t ncf,
			struct planner_plan **out);

/*
 * planner_confirm() - add the confirmation tests of @cf[0..ncf) to @plan
 * (made by planner_run from the same @probes and @o) in its rounds from
 * @first_round on, around the tests already there. A pair gets one
 * confirmation test per plan at most. 0, -EINVAL, -ENOMEM.
 */
int planner_confirm(const struct planner_opts *o,
		    const struct planner_probe *probes, size_t n,
		    struct planner_plan *plan, unsigned first_round,
		    const struct planner_confirm *cf, size_t ncf);

/* 1 when @name is in @list[0..n). */
int planner_in_list(const char *const *list, size_t n, const char *name);

/* The number of rounds a period is cut into with these options. */
unsigned planner_rounds(const struct planner_opts *o);

/* The rail of port @idx of @p as the planner sees it ("0", or the label). */
const char *planner_port_rail(const struct planner_probe *p, size_t idx,
			      char *buf, size_t len);

/* 1 when two P_Key tables share a key that at least one holds in full. */
int planner_pkeys_ok(const uint16_t *a, size_t na, const uint16_t *b,
		     size_t nb);

#endif
