/* SPDX-License-Identifier: MIT */
/*
 * The routes in the collector's database (schema/006_routes.sql): each
 * switch's linear forwarding table as the fabric pollers report it, keyed
 * by switch GUID and replaced whole by a newer read, and the route net
 * (common/route.h) built from the fabric tables on first use after the
 * picture changed, kept until the next change. Callers on the writer
 * thread then walk paths on it at the cost of a few look-ups each:
 * GET /api/v1/route (route_api.h), and whatever attributes results to the
 * links they crossed. Internal to the collector.
 */
#ifndef IBPULSE_COLLECTOR_STORE_ROUTE_H
#define IBPULSE_COLLECTOR_STORE_ROUTE_H

#include <stddef.h>

struct report_fnode;
struct route_net;
struct store;

/* Prepare the statements; 0 or a negative errno. */
int store_route_open(struct store *st);
void store_route_close(struct store *st);

/*
 * store_route_dirty() - the picture changed (a fabric port or table
 * written, nodes expired, a rollback): the next store_route_net()
 * rebuilds.
 */
void store_route_dirty(struct store *st);

/*
 * store_route_put_lft() - switch @n's table (or the reason it has none)
 * into fabric_lft, in the open transaction: read at @routed (the poller's
 * clock) by @host, received at @now. A table already stored from the same
 * poller and read later is kept. 0 or a negative errno.
 */
int store_route_put_lft(struct store *st, const struct report_fnode *n,
			const char *guid, double routed, const char *host,
			double now);

/*
 * store_route_net() - the route net of what the database holds now:
 * every fabric node (the most recently reported first, so that a LID a
 * departed node held goes to its new owner), port and table. *@net and
 * *@lft_updated (by node index: when the collector stored that switch's
 * table, 0 none) stay valid until the next write through @st. 0 or a
 * negative errno.
 */
int store_route_net(struct store *st, const struct route_net **net,
		    const double **lft_updated);

#endif
