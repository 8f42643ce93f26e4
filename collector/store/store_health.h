/* SPDX-License-Identifier: MIT */
/*
 * Host health verdicts in SQLite (schema/007_health.sql), on the
 * writer's connection and inside the writer's transaction, like
 * store_regress.h. The facts come from what the collector already holds:
 * the host's ports, devices and counter history (001), its open
 * regressions (003), the switch ports facing it and their counters
 * (004), its open suspects (005); collector/health.h turns them into
 * reasons and the sticky verdict. With no health options
 * (store_opts.health NULL) every call is a no-op. Not thread-safe, like
 * the store.
 */
#ifndef IBPULSE_COLLECTOR_STORE_HEALTH_H
#define IBPULSE_COLLECTOR_STORE_HEALTH_H

struct health_opts;
struct report;
struct store;

/* Prepare the statements (store_open); @o NULL: disabled. */
int store_health_prepare(struct store *st, const struct health_opts *o);
void store_health_finalize(struct store *st);

/*
 * store_health_host() - recompute and save @host's verdict at @now
 * inside the open transaction. 0 (also for a host that never reported
 * counters: nothing to judge) or a negative errno.
 */
int store_health_host(struct store *st, const char *host, double now);

/*
 * store_health_report() - after @r is stored: @r->host's verdict (its
 * ports missing from @r are noted as such) and, for a fabric section,
 * the verdicts of the hosts behind the switch ports that changed.
 */
int store_health_report(struct store *st, const struct report *r, double now);

/*
 * store_health_json() - GET /api/v1/hosts/NAME/health: recompute @host's
 * verdict at @now and answer it as JSON text in *@out (caller frees).
 * -ENOENT for a host that never reported, -ENOTSUP when disabled,
 * -ECANCELED when judging failed and was undone (the transaction goes
 * on); another -errno: the transaction is lost.
 */
int store_health_json(struct store *st, const char *host, double now,
		      char **out);

/* Delete @host's health rows (store_retire). */
int store_health_retire(struct store *st, const char *host);

#endif
