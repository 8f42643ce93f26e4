/* SPDX-License-Identifier: MIT */
/*
 * Where in the fabric, in SQLite (schema/009_localize.sql), on the
 * writer's connection and inside its transaction, like store_evidence.h:
 * every judged result between two registered ports whose LIDs the route
 * net knows (store_route.h) becomes a test with the directed links and
 * switches its data crossed (write and send: initiator to responder, to
 * the DLID the plan chose; read: back; round trips and bidirectional
 * tests: both; testapi.h's classifier); once a batch is in,
 * store_localize_flush() runs localization (localize.h) over the window
 * of each (profile, metric) it touched, opens and closes link and switch
 * suspects, tells the evidence which host-side bad results a fabric
 * suspect explains (so that a bad uplink does not make the ports behind
 * it suspects) and lists the links that need confirmation tests (the
 * planner's). The window is kept in memory, read back from the table
 * after a start or a rollback. Not thread-safe, like the store.
 */
#ifndef IBPULSE_COLLECTOR_STORE_LOCALIZE_H
#define IBPULSE_COLLECTOR_STORE_LOCALIZE_H

#include "baseline.h"
#include "localize.h"
#include "planner.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct testapi_result;

/* The [localize] settings (collector.ini) the store needs. */
struct store_localize_opts {
	int enabled; /* 0: no attribution, no fabric suspects */
	struct loc_opts loc;
	double window; /* seconds of tests localization looks at */
};

/* Prepare (store_open); @o is copied. A NULL @o: off. */
int store_localize_open(struct store *st, const struct store_localize_opts *o);
void store_localize_close(struct store *st);

/* The transaction failed: forget the window (read back on next use). */
void store_localize_drop(struct store *st);

/*
 * store_localize_add() - result @t of initiator @host, judged on metric
 * @m (@value against @baseline, @bad 0 or 1), becomes a test of the
 * window when both ends are registered ports with LIDs and the routes
 * give its paths; else it is counted as unrouted (the coverage view says
 * why). 0 or a negative errno (a storage failure).
 */
int store_localize_add(struct store *st, const char *host,
		       const struct testapi_result *t, enum baseline_metric m,
		       double value, double baseline, int bad, double now);

/* Localize what the batch touched (before store_evidence_flush()). */
int store_localize_flush(struct store *st, double now);

/*
 * store_localize_explains() - 1 when a link or switch suspect lay on the
 * path of the bad result that evidence element @element (its id in
 * schema/005_evidence.sql's element) took at @started, while it was
 * named: the result is explained and counts neither for nor against
 * that element, also after the suspect closed (the cause was found).
 *
 * Also 1 while the result is held (localize.h, "Held"): no
 * named suspect explains it, but a link or switch on its path has bad
 * tests of other hosts too, and the fabric may be at fault as well as
 * the element.
 */
int store_localize_explains(struct store *st, int64_t element, double started);

/*
 * store_localize_confirms() - the links that need confirmation tests
 * (localize.h: a bad test no suspect explains, too few good ones since),
 * in *@out (free()); their profile strings live until the next flush.
 */
int store_localize_confirms(struct store *st, struct planner_link **out,
			    size_t *n);

/*
 * store_localize_flows() - where each profile's data flows, as its
 * results said (testapi.h's classifier of their test), in *@out
 * (free()); the strings live as long as the store.
 */
int store_localize_flows(struct store *st, struct planner_flow **out,
			 size_t *n);

/* Changes whenever the links needing confirmation may have changed. */
uint64_t store_localize_version(struct store *st);

/* What the coverage view says of attribution. */
struct store_localize_status {
	int enabled;
	unsigned long long attributed; /* tests since start */
	unsigned long long unrouted;   /* judged results without a path */
	char why[192];		       /* the last reason one had none */
};
void store_localize_status(struct store *st, struct store_localize_status *s);

/* "covered", "duty_cycle", "no_route", "no_probe", "off". */
const char *store_localize_why_name(enum planner_why w);

/*
 * store_localize_cover_save() - the link coverage of planned period
 * @period (fabric_link_cover, fabric_link_uncovered; the two newest
 * periods kept). Nothing without routes. 0 or a negative errno.
 */
int store_localize_cover_save(struct store *st, unsigned long long period,
			      const struct planner_cover *pc);

/*
 * store_localize_cover_json() - the coverage view's "fabric_links": the
 * routes (known or why not), the plan's link coverage @pc (may be NULL),
 * and how many judged tests were attributed to their paths, as a new
 * object in *@out. 0 or -ENOMEM.
 */
int store_localize_cover_json(struct store *st, const struct planner_cover *pc,
			      json_t **out);

/* Delete @host's tests (and forget the window). */
int store_localize_retire(struct store *st, const char *host, size_t *changes);

/*
 * Forget the explanations of results that started before @stale (the
 * evidence no longer judges them) and delete fabric suspects that closed
 * before @cutoff, at most @batch each; *@n the rows. 1 when a batch was
 * full.
 */
int store_localize_prune(struct store *st, double stale, double cutoff,
			 long long batch, size_t *n);

#endif
