/* SPDX-License-Identifier: MIT */
/*
 * Evidence per element in SQLite (schema/005_evidence.sql), on the
 * writer's connection and inside its transaction, like store_regress.h,
 * which calls it: every judged result is added to the windows of the four
 * elements it crossed (each end's port and device); once the batch is in,
 * store_evidence_flush() judges the elements it touched (evidence.h: the
 * rules), opens and closes suspects and sets which elements need
 * confirmation tests. Not thread-safe, like the store.
 */
#ifndef IBPULSE_COLLECTOR_STORE_EVIDENCE_H
#define IBPULSE_COLLECTOR_STORE_EVIDENCE_H

#include "baseline.h"
#include "evidence.h"

#include <stddef.h>
#include <stdint.h>

struct store;
struct store_evidence;
struct testapi_result;

/*
 * Prepare (store_open, with baselines on); @o is copied. @group_label (may
 * be NULL) names the probe label whose suspect group pairs explain bad
 * results between their groups.
 */
int store_evidence_prepare(struct store *st, const struct evidence_opts *o,
			   const char *group_label,
			   struct store_evidence **out);
void store_evidence_finalize(struct store_evidence *ev);

/*
 * store_evidence_add() - result @t of initiator @host, judged on metric
 * @m against @baseline (@bad 0 or 1), joins the windows of the ports and
 * devices of both ends. Loopback self-tests are left out (they name their
 * port already).
 */
int store_evidence_add(struct store *st, const char *host,
		       const struct testapi_result *t, enum baseline_metric m,
		       double value, double baseline, int bad, double now);

/*
 * store_evidence_touch() - judge element @element (an id of table element)
 * again at the next flush: what explains its results changed (a link or
 * switch suspect opened or closed on their paths, store_localize.h).
 */
int store_evidence_touch(struct store *st, int64_t element);

/* Judge what store_evidence_add() touched; open and close suspects. */
int store_evidence_flush(struct store *st, double now);

/* Forget what was touched (the transaction failed). */
void store_evidence_reset(struct store *st);

/*
 * A counter the planner reads: it changes whenever the set of elements
 * needing confirmation may have changed.
 */
uint64_t store_evidence_version(struct store *st);

/* A port (or a device: port 0) and profile, for the planner. */
struct evidence_port {
	char *host, *device, *profile;
	unsigned port;
};

/* What the planner needs to know of the evidence. */
struct evidence_lists {
	struct evidence_port *confirm; /* elements needing confirmation */
	struct evidence_port *good;    /* ports judged good since @since:
					* newest result good, not needing
					* confirmation, not suspect */
	struct evidence_port *suspect; /* ports and devices that are */
	size_t n_confirm, n_good, n_suspect;
};

/* store_evidence_lists() - fill @l (store_evidence_lists_free()). */
int store_evidence_lists(struct store *st, double since,
			 struct evidence_lists *l);
void store_evidence_lists_free(struct evidence_lists *l);

/* Delete @host's elements and suspects. */
int store_evidence_retire(struct store *st, const char *host, double now,
			  size_t *changes);

/*
 * Close suspects of elements not judged since @stale ('stale'), delete
 * such elements, and closed suspects that ended before @cutoff; at most
 * @batch rows each. *@n gets the rows deleted; returns 1 when a batch
 * was full (more to do).
 */
int store_evidence_prune(struct store *st, double now, double stale,
			 double cutoff, long long batch, size_t *n);

#endif
