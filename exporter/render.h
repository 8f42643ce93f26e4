/* SPDX-License-Identifier: MIT */
/*
 * Rendering a snapshot as a /metrics body (docs/metrics.md lists every
 * family): host liveness, device and PCIe state, port state and
 * addressing (_info), the counters grouped by family, the saturation
 * gauges, and the exporter's own metrics.
 */
#ifndef IBPULSE_RENDER_H
#define IBPULSE_RENDER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "expo.h"
#include "snapshot.h"

/*
 * Series the per-family cap (max_family_series) left out, by family,
 * cumulative since start: ibpulse_exporter_series_dropped_total. Shared by
 * the worker threads (its own lock).
 */
struct render_drops {
	pthread_mutex_t lock;
	struct expo_drop *v;
	size_t n, cap;
};

void render_drops_init(struct render_drops *d);
void render_drops_destroy(struct render_drops *d);

/* The exporter's own numbers, served with every scrape. */
struct render_self {
	double last_duration; /* seconds the previous scrape took; < 0 none */
	uint64_t database_errors;
	int64_t wal_bytes; /* < 0 unknown */
	const char *version;
	size_t family_cap;	    /* samples per family at most; 0: no cap */
	struct render_drops *drops; /* NULL: drops are not counted */
	int64_t cache_bytes;	    /* the block cache's; < 0: no cache */
};

/*
 * render_metrics() - append the body for @sn in @format to @out (whose
 * ceiling bounds it), at most @self->family_cap samples per family (what
 * the cap leaves out is added to @self->drops and logged once).
 * *@series gets the number of samples written. Returns 0, -E2BIG past the
 * ceiling, or -ENOMEM.
 */
int render_metrics(const struct snapshot *sn, const struct render_self *self,
		   enum expo_format format, struct buf *out, size_t *series);

/*
 * render_families() - the same families into @e, set up by the caller
 * (expo_init(), perhaps hooks: exporter/bcache.h), without expo_finish().
 * Returns e->err.
 */
int render_families(const struct snapshot *sn, const struct render_self *self,
		    struct expo *e);

#endif
