/* SPDX-License-Identifier: MIT */
/*
 * Baselines, expected figures, regressions and suspects in SQLite
 * (schema/003_baselines.sql), on the writer's connection and inside the
 * writer's transaction, like store_tests.h. store_results() hands every
 * newly stored result to store_regress_result() and, once the batch is
 * in, calls store_regress_flush() to redo the suspect inference of the
 * profiles and metrics that changed. With no baseline options
 * (store_opts.baseline NULL) nothing is judged and every call is a no-op.
 * Not thread-safe, like the store.
 */
#ifndef IBPULSE_COLLECTOR_STORE_REGRESS_H
#define IBPULSE_COLLECTOR_STORE_REGRESS_H

#include <stddef.h>

struct baseline_opts;
struct evidence_opts;
struct store;
struct testapi_result;

/* Prepare the statements (store_open); @o NULL: disabled; @eo NULL: no
 * evidence per element (store_evidence.h). */
int store_regress_prepare(struct store *st, const struct baseline_opts *o,
			  const struct evidence_opts *eo,
			  const char *group_label);
void store_regress_finalize(struct store *st);

/*
 * store_regress_result() - judge result @t of initiator @host (stored at
 * @now) against its link's baseline, update the baseline, the K-of-M
 * window, the expected figure and open or close a regression. Results
 * that failed, ran on a busy link, lack a peer, are older than the
 * window or than the link's latest judged result change nothing.
 */
int store_regress_result(struct store *st, const char *host,
			 const struct testapi_result *t, double now);

/* Redo the suspect inference where store_regress_result() changed state:
 * group pairs, then the elements the batch's results touched. */
int store_regress_flush(struct store *st, double now);

/* Forget what store_regress_result() queued (the transaction failed). */
void store_regress_reset(struct store *st);

/* Delete @host's rows (either end); *@changes gets the count. */
int store_regress_retire(struct store *st, const char *host, double now,
			 size_t *changes);

/*
 * store_regress_prune() - close the regressions of links not measured
 * for a window ('stale'), delete those links, closed regressions that
 * ended before @cutoff (retention) and stale port baselines, at most
 * @batch rows of each. *@deleted gets the count.
 */
int store_regress_prune(struct store *st, double now, double cutoff,
			long long batch, size_t *deleted);

/*
 * store_regress_json() - GET /api/v1/regressions at @now: the open
 * regressions, those closed within the window, suspect ports and group
 * pairs and links under their expected figure, as JSON text in *@out
 * (caller frees). -ENOTSUP when disabled.
 */
int store_regress_json(struct store *st, double now, char **out);

#endif
