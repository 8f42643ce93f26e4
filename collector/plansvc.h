/* SPDX-License-Identifier: MIT */
/*
 * The plan service on the writer thread: keeps the current period's plan
 * in memory (and in plan_entry), replans when the period changes, or when
 * registrations or pauses changed and the last plan is older than
 * replan_interval, adds confirmation tests to the current plan when the
 * evidence asks for them (store_evidence.h; at most every replan_interval,
 * at least plan_refresh ahead so the probes see them in time), and answers
 * GET /api/v1/plan and GET /api/v1/coverage as JSON text. With routes
 * (the fabric pollers' forwarding tables), the planner also covers every
 * directed link between switches and confirms the links localization
 * asks about (store_localize.h). Each test in a plan
 * carries the initiator's ticket for it, and each plan the host's own responder
 * keys for this period and the next (common/ticket.h: derived from one master
 * key, so a replan or a restart mints the same). Only the writer thread calls
 * it, inside its transaction.
 */
#ifndef IBPULSE_COLLECTOR_PLANSVC_H
#define IBPULSE_COLLECTOR_PLANSVC_H

#include "planner.h"

struct plansvc;
struct store;

struct plansvc_opts {
	struct planner_opts planner; /* profiles owned by the caller */
	const char *group_label;     /* NULL: no groups */
	const char *rail_label;	     /* NULL: rail = port index */
	double replan_interval;	     /* seconds */
	double plan_refresh;	     /* seconds between a probe's fetches */
	/* Routes to the planner (link coverage, link confirmations), from
	 * the fabric pollers' tables (store_route.h); 0: none. */
	int routes;
	int cover; /* with routes: plan every link between switches */
	/*
	 * The master key of test tickets (common/ticket.h), not owned;
	 * NULL: plans carry no tickets and no responder keys.
	 */
	const uint8_t *ticket_key;
	size_t ticket_key_len;
};

int plansvc_new(const struct plansvc_opts *o, struct plansvc **out);
void plansvc_free(struct plansvc *ps);

/* Registrations or pauses changed: replan when next allowed. */
void plansvc_touch(struct plansvc *ps);
/* The transaction that saved a plan failed: forget it. */
void plansvc_invalidate(struct plansvc *ps);

/*
 * plansvc_plan_json() - @host's plan at @now (replanning first if due) as
 * JSON text in *@out (caller frees). 0 or -errno.
 */
int plansvc_plan_json(struct plansvc *ps, struct store *st, const char *host,
		      double now, char **out);

/*
 * plansvc_plan_fresh() - the same, outside any transaction, when the plan
 * in memory needs nothing first; -EAGAIN when it must be made or added to
 * (then plansvc_plan_json() in the writer's transaction). The writer
 * answers most plan requests so, without waiting for a commit's fsync.
 */
int plansvc_plan_fresh(struct plansvc *ps, struct store *st, const char *host,
		       double now, char **out);

/* plansvc_coverage_json() - the coverage view at @now, as JSON text. */
int plansvc_coverage_json(struct plansvc *ps, struct store *st, double now,
			  char **out);

#endif
