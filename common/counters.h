/* SPDX-License-Identifier: MIT */
/*
 * What the counters mean: one table maps a counter as the kernel names it
 * (its source directory and sysfs file name) to how ibpulse presents it:
 * the metric name, its help, the scale to base units (port_xmit_data and
 * port_rcv_data count 4-octet words), the bit width of the narrow IB
 * error counters that saturate at 2^width - 1 instead of wrapping, and
 * whether the entry is a counter at all (hw_counters/lifespan is a
 * setting in milliseconds, bnxt_re's active_* are current resource counts).
 *
 * Names mirror node_exporter's InfiniBand collector with our prefix
 * (node_infiniband_port_data_transmitted_bytes_total becomes
 * ibpulse_port_data_transmitted_bytes_total, node_infiniband_
 * out_of_buffer_drops_total becomes ibpulse_port_out_of_buffer_drops_total)
 * so dashboards and alerts users already have keep their meaning. Every
 * other counter goes into one family per source with a "counter" label
 * holding the kernel's name (counters_generic()).
 *
 * The table is static and read-only; nothing returned is freed.
 */
#ifndef IBPULSE_COUNTERS_H
#define IBPULSE_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

enum counter_kind {
	COUNTER_KIND_COUNTER, /* monotonic (until reset): a _total counter */
	COUNTER_KIND_GAUGE,   /* a value or setting: a gauge, never rate() */
};

struct counter_def {
	enum counter_source source;
	const char *sysfs;  /* file name under counters/, hw_counters/... */
	const char *metric; /* exposition name, e.g. ibpulse_port_..._total */
	const char *help;
	enum counter_kind kind;
	unsigned mul; /* value in base units = raw * mul / div */
	unsigned div;
	unsigned width;	   /* saturating width in bits; 0: not narrow */
	const char *label; /* NULL; or the generic family's counter label */
};

/*
 * counters_lookup() - the table's entry for counter @name from @source, or
 * NULL when the counter has no name of its own (see counters_generic()).
 */
const struct counter_def *counters_lookup(enum counter_source source,
					  const char *name);

/*
 * counters_generic() - the family for a counter without an entry: for
 * @source and @name, the description of "ibpulse_port_hw_counters_total"
 * (say), with ->label naming the label ("counter") that carries @name.
 * Names that are not counters (hw_counters active_*, watermark_*) get a
 * gauge family. Never NULL for a valid @source.
 */
const struct counter_def *counters_generic(enum counter_source source,
					   const char *name);

/* Like counters_lookup(), falling back to counters_generic(). */
const struct counter_def *counters_describe(enum counter_source source,
					    const char *name);

/*
 * counters_is_counter() - 0 for entries that are settings or gauges and
 * must not be exported or rated as counters (hw_counters/lifespan...).
 */
int counters_is_counter(enum counter_source source, const char *name);

/* The largest value of a @width-bit counter (UINT64_MAX for 0 or 64). */
uint64_t counters_max(unsigned width);

/* 1 when a narrow counter sits at its maximum: it has saturated. */
int counters_saturated(const struct counter_def *d, uint64_t raw);

/*
 * counters_scale_u64() - @raw in base units as an exact integer in *@out:
 * 0, or -ERANGE when it does not fit (or the scale divides), in which
 * case counters_scale() gives the value as a double.
 */
int counters_scale_u64(const struct counter_def *d, uint64_t raw,
		       uint64_t *out);
double counters_scale(const struct counter_def *d, uint64_t raw);

/* The whole table, for documentation and tests; @n gets its length. */
const struct counter_def *counters_table(size_t *n);

/* The generic families (one per source plus the hw gauge family). */
const struct counter_def *counters_generic_table(size_t *n);

/* "ib", "hw", "net": the name of a source, as in the report's JSON. */
const char *counters_source_name(enum counter_source source);

#endif
