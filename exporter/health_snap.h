/* SPDX-License-Identifier: MIT */
/*
 * Host health verdicts in a scrape (schema/007_health.sql; the collector
 * computes them, collector/store/store_health.c): ibpulse_host_health{host,
 * verdict} is 1 for the host's current verdict and 0 for the two others,
 * ibpulse_host_health_since_timestamp_seconds when it last changed,
 * ibpulse_host_health_reasons{host, severity} how many reasons hold it.
 * A host is served by its shard. A database without the table (an older
 * collector) gives nothing. docs/metrics.md, "Host health".
 */
#ifndef IBPULSE_EXPORTER_HEALTH_H
#define IBPULSE_EXPORTER_HEALTH_H

#include <stddef.h>

#include "expo.h"

struct sqlite3;
struct health_snap;

/*
 * health_read() - the verdicts of shard @shard of @shards from @db (open,
 * read-only) into a new *@out (health_snap_free()). 0, -ENOMEM, or -EIO
 * with SQLite's message in @err.
 */
int health_read(struct sqlite3 *db, unsigned shard, unsigned shards,
		struct health_snap **out, char *err, size_t errlen);

/* Write the families into @e. Returns e->err. NULL @h writes nothing. */
int health_render(struct expo *e, const struct health_snap *h);

void health_snap_free(struct health_snap *h);

#endif
