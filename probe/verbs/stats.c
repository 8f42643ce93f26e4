// SPDX-License-Identifier: MIT
/*
 * Latency summaries and sub-interval bandwidth for the verbs tests. The
 * math is kept apart from the verbs loops so it can be checked against
 * hand-computed data and reused by the daemon's scheduled runs.
 */
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

uint64_t vstats_percentile(const uint64_t *sorted, size_t n, double p)
{
	double rank = ceil(p * (double)n);
	size_t idx;

	if (rank < 1)
		rank = 1;
	idx = (size_t)rank - 1;
	if (idx >= n)
		idx = n - 1;
	return sorted[idx];
}

int vstats_lat_compute(uint64_t *samples, size_t n, struct vstats_lat *out)
{
	double mean = 0, m2 = 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!n)
		return -EINVAL;
	qsort(samples, n, sizeof(*samples), cmp_u64);
	/* Welford: stable for millions of samples of similar size. */
	for (i = 0; i < n; i++) {
		double x = (double)samples[i];
		double d = x - mean;

		mean += d / (double)(i + 1);
		m2 += d * (x - mean);
	}
	out->n = n;
	out->min_s = (double)samples[0] / 1e9;
	out->max_s = (double)samples[n - 1] / 1e9;
	if (n % 2)
		out->median_s = (double)samples[n / 2] / 1e9;
	else
		out->median_s =
			((double)samples[n / 2 - 1] + (double)samples[n / 2]) /
			2e9;
	out->mean_s = mean / 1e9;
	out->p99_s = (double)vstats_percentile(samples, n, 0.99) / 1e9;
	out->p999_s = (double)vstats_percentile(samples, n, 0.999) / 1e9;
	out->stdev_s = n > 1 ? sqrt(m2 / (double)(n - 1)) / 1e9 : 0;
	return 0;
}

size_t vstats_lat_window(const uint64_t *t, size_t n, uint64_t lo_ns,
			 uint64_t hi_ns, size_t *first)
{
	size_t a = 0, b;

	*first = 0;
	while (a < n && t[a] < lo_ns)
		a++;
	b = a;
	while (b < n && t[b + 1] <= hi_ns)
		b++;
	if (b > a)
		*first = a;
	return b - a;
}

void vstats_bins_init(struct vstats_bins *b, uint64_t start_ns,
		      uint64_t width_ns, size_t max_bins)
{
	memset(b, 0, sizeof(*b));
	b->start_ns = start_ns;
	b->width_ns = width_ns ? width_ns : 1;
	b->max_bins = max_bins;
}

void vstats_bins_free(struct vstats_bins *b)
{
	if (!b)
		return;
	free(b->bytes);
	b->bytes = NULL;
	b->nbins = b->cap = 0;
}

int vstats_bins_add(struct vstats_bins *b, uint64_t t_ns, uint64_t bytes)
{
	size_t idx;

	if (t_ns < b->start_ns)
		return 0;
	idx = (size_t)((t_ns - b->start_ns) / b->width_ns);
	if (idx >= b->max_bins)
		return -E2BIG;
	if (idx >= b->cap) {
		size_t ncap = b->cap ? b->cap : 64;
		uint64_t *nb;

		while (ncap <= idx)
			ncap *= 2;
		if (ncap > b->max_bins)
			ncap = b->max_bins;
		nb = realloc(b->bytes, ncap * sizeof(*nb));
		if (!nb)
			return -ENOMEM;
		memset(nb + b->cap, 0, (ncap - b->cap) * sizeof(*nb));
		b->bytes = nb;
		b->cap = ncap;
	}
	b->bytes[idx] += bytes;
	if (idx + 1 > b->nbins)
		b->nbins = idx + 1;
	return 0;
}

size_t vstats_bins_minmax(const struct vstats_bins *b, uint64_t end_ns,
			  double *min_Bps, double *max_Bps)
{
	size_t whole, i;
	double lo = INFINITY, hi = 0;

	if (end_ns <= b->start_ns)
		return 0;
	whole = (size_t)((end_ns - b->start_ns) / b->width_ns);
	for (i = 0; i < whole; i++) {
		uint64_t v = i < b->nbins ? b->bytes[i] : 0;
		double Bps = (double)v * 1e9 / (double)b->width_ns;

		if (Bps < lo)
			lo = Bps;
		if (Bps > hi)
			hi = Bps;
	}
	if (whole) {
		*min_Bps = lo;
		*max_Bps = hi;
	}
	return whole;
}
