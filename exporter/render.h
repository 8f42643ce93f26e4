/* SPDX-License-Identifier: MIT */
/*
 * Rendering a snapshot as a /metrics body (docs/metrics.md lists every
 * family): host liveness, device and PCIe state, port state and
 * addressing (_info), the counters grouped by family, the saturation
 * gauges, and the exporter's own metrics.
 */
#ifndef IBPULSE_RENDER_H
#define IBPULSE_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "expo.h"
#include "snapshot.h"

/* The exporter's own numbers, served with every scrape. */
struct render_self {
	double last_duration; /* seconds the previous scrape took; < 0 none */
	uint64_t database_errors;
	int64_t wal_bytes; /* < 0 unknown */
	const char *version;
};

/*
 * render_metrics() - append the body for @sn in @format to @out (whose
 * ceiling bounds it). *@series gets the number of samples written.
 * Returns 0, -E2BIG past the ceiling, or -ENOMEM.
 */
int render_metrics(const struct snapshot *sn, const struct render_self *self,
		   enum expo_format format, struct buf *out, size_t *series);

#endif
