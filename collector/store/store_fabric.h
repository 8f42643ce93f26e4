/* SPDX-License-Identifier: MIT */
/*
 * The fabric section of reports into schema/004_fabric.sql's tables, keyed
 * by node GUID (two pollers of one subnet share the rows), with a cache
 * like store_put.c's so that an unchanged port or counter costs no SQL,
 * change-only history with keyframes, and retention. Called from the
 * store (store.c, store_put.c) inside its transactions; internal to the
 * collector.
 */
#ifndef IBPULSE_COLLECTOR_STORE_FABRIC_H
#define IBPULSE_COLLECTOR_STORE_FABRIC_H

#include <stddef.h>

struct report;
struct store;
struct store_stats;

/* Prepare the statements and the cache; 0 or a negative errno. */
int store_fabric_open(struct store *st);
void store_fabric_close(struct store *st);
/* Forget the cache (after a rollback or another writer's commit). */
void store_fabric_drop(struct store *st);

/*
 * store_fabric_put() - write @r->fabric (received at @now from @r->host)
 * in the open transaction. 0 or a negative errno; @stats counts rows.
 */
int store_fabric_put(struct store *st, const struct report *r, double now,
		     struct store_stats *stats);

/*
 * store_fabric_prune() - in the open transaction: up to @batch history
 * rows older than @cutoff, and nodes no report held since @cutoff (with
 * their ports and series). *@deleted gets the history rows deleted.
 */
int store_fabric_prune(struct store *st, double cutoff, long long batch,
		       size_t *deleted);

#endif
