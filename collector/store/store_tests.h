/* SPDX-License-Identifier: MIT */
/*
 * The test tables (schema/002_tests.sql) on the writer's connection:
 * registrations, results stored once per id, pause state, the plan of a
 * period and the coverage view. Each call runs inside the transaction the
 * writer opened (store_begin), except store_tests_prepare/finalize which
 * store_open/store_close call. Not thread-safe, like the store.
 */
#ifndef IBPULSE_COLLECTOR_STORE_TESTS_H
#define IBPULSE_COLLECTOR_STORE_TESTS_H

#include "planner.h"

#include <jansson.h>
#include <stddef.h>

struct store;
struct testapi_reg;
struct testapi_results;

int store_tests_prepare(struct store *st);
void store_tests_finalize(struct store *st);

/* Upsert the probe and replace its labels and ports. */
int store_register(struct store *st, const struct testapi_reg *r, double now);

/*
 * store_results() - insert each result once (ON CONFLICT (result_id) DO
 * NOTHING), update pair_seen for the new ones with a known peer, and the
 * probe's drop counts. *@stored and *@dups get the counts.
 */
int store_results(struct store *st, const struct testapi_results *r, double now,
		  size_t *stored, size_t *dups);

/* Set or clear @host's pause. */
int store_pause(struct store *st, const char *host, int paused, int by_admin,
		double now);
/* 1 paused, 0 not, or -errno. */
int store_paused(struct store *st, const char *host);

/* The registered probes as planner input, with the strings they own. */
struct tprobes {
	struct planner_probe *p;
	size_t n;
	int *paused;   /* per probe */
	void **allocs; /* everything the probes point to */
	size_t n_allocs, cap_allocs;
};

/*
 * store_probes_load() - every registered probe, sorted by host; group and
 * rail from the labels named @group_label and @rail_label (NULL: none).
 * Free with store_probes_free().
 */
int store_probes_load(struct store *st, const char *group_label,
		      const char *rail_label, struct tprobes **out);
void store_probes_free(struct tprobes *t);

/*
 * store_plan_save() - replace period @plan->period's rows of plan_entry
 * (and drop periods older than the previous one). @pr are the probes the
 * plan was made from; @period_start its start time.
 */
int store_plan_save(struct store *st, const struct planner_plan *plan,
		    const struct planner_probe *pr, double period_start);

/*
 * store_plan_add_confirm() - add @plan's confirmation tests that
 * plan_entry lacks (planner_confirm() only appends: the rest is there),
 * without rewriting the period's rows.
 */
int store_plan_add_confirm(struct store *st, const struct planner_plan *plan,
			   const struct planner_probe *pr, double period_start);

/*
 * store_coverage() - the planned pairs of @period with when each was last
 * measured, ports not measured since @cutoff, and group pairs of the plan
 * not measured since @cutoff, as a new JSON object in *@out.
 */
int store_coverage(struct store *st, unsigned long long period, double cutoff,
		   json_t **out);

/*
 * store_prune_results() - delete up to @batch results that started before
 * @cutoff (retention_days, like history). *@deleted gets the count.
 */
int store_prune_results(struct store *st, double cutoff, long long batch,
			size_t *deleted);

/* Delete @host from the test tables; *@changes gets the rows deleted. */
int store_tests_retire(struct store *st, const char *host, size_t *changes);

#endif
