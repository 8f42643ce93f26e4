/* SPDX-License-Identifier: MIT */
/*
 * Pure statistics for the verbs tests: latency summaries over ping-pong
 * samples (min, median, mean, p99, p99.9, max and a sample standard
 * deviation, all in seconds) and bandwidth over fixed sub-intervals, so a
 * link that stalls for a moment shows as a low minimum even when its
 * average looks healthy. No verbs, no clocks: tested against known data.
 */
#ifndef IBPULSE_VERBS_STATS_H
#define IBPULSE_VERBS_STATS_H

#include <stddef.h>
#include <stdint.h>

struct vstats_lat {
	size_t n;
	double min_s;
	double median_s;
	double mean_s;
	double p99_s;
	double p999_s;
	double max_s;
	double stdev_s; /* sample standard deviation (n - 1), 0 when n < 2 */
};

/*
 * vstats_lat_compute() - summarise @n latency samples given in nanoseconds.
 * @samples is sorted in place. Percentiles use the nearest-rank method
 * (the smallest sample with at least p% of samples at or below it); the
 * median of an even count is the mean of the two middle samples. Unlike
 * perftest, no sample is dropped and deviations are not truncated.
 * Returns 0, or -EINVAL when @n is 0.
 */
int vstats_lat_compute(uint64_t *samples, size_t n, struct vstats_lat *out);

/*
 * vstats_percentile() - nearest-rank percentile of a sorted array;
 * @p in [0, 1]. @n must be > 0.
 */
uint64_t vstats_percentile(const uint64_t *sorted, size_t n, double p);

/*
 * vstats_lat_window() - which ping-pong rounds of a duration-mode run
 * count: round i runs from timestamp @t[i] to @t[i + 1] (@n rounds, so
 * n + 1 ascending timestamps) and counts when it lies wholly inside
 * [@lo_ns, @hi_ns]. The counted rounds are consecutive: returns how many,
 * with the first in *@first (0 when none).
 */
size_t vstats_lat_window(const uint64_t *t, size_t n, uint64_t lo_ns,
			 uint64_t hi_ns, size_t *first);

/*
 * Bytes completed per fixed-width time bin, grown on demand up to a
 * ceiling. Bins count from @start_ns; completions before it are ignored.
 */
struct vstats_bins {
	uint64_t start_ns;
	uint64_t width_ns;
	uint64_t *bytes;
	size_t nbins; /* bins touched so far */
	size_t cap;
	size_t max_bins;
};

/* Set up empty bins; nothing is allocated until the first add. */
void vstats_bins_init(struct vstats_bins *b, uint64_t start_ns,
		      uint64_t width_ns, size_t max_bins);
void vstats_bins_free(struct vstats_bins *b);
/* Account @bytes completed at @t_ns; -ENOMEM or -E2BIG past max_bins. */
int vstats_bins_add(struct vstats_bins *b, uint64_t t_ns, uint64_t bytes);

/*
 * vstats_bins_minmax() - lowest and highest bandwidth (bytes/s) over the
 * whole bins that ended at or before @end_ns. A final partial bin is left
 * out because its short span would read as a dip. Returns the number of
 * whole bins used; with none, *min and *max are left untouched.
 */
size_t vstats_bins_minmax(const struct vstats_bins *b, uint64_t end_ns,
			  double *min_Bps, double *max_Bps);

#endif
