// SPDX-License-Identifier: MIT
/*
 * Baseline statistics, thresholds and the K-of-M regression window: see
 * baseline.h. Pure functions of their arguments.
 */
#include "baseline.h"

#include "testapi.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

const char *baseline_metric_name(enum baseline_metric m)
{
	return testapi_metric_name(m == BASELINE_LATENCY
					   ? TESTAPI_METRIC_LATENCY
					   : TESTAPI_METRIC_BANDWIDTH);
}

enum baseline_metric baseline_metric_of(const char *name)
{
	enum testapi_metric m;

	if (testapi_metric_parse(name, &m))
		return BASELINE_METRICS;
	return m == TESTAPI_METRIC_LATENCY ? BASELINE_LATENCY
					   : BASELINE_BANDWIDTH;
}

enum baseline_metric baseline_metric_row(const char *name)
{
	return baseline_metric_of(name) == BASELINE_LATENCY
		       ? BASELINE_LATENCY
		       : BASELINE_BANDWIDTH;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of the sorted @v[0..n-1], n > 0. */
static double sorted_median(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int baseline_compute(double *v, size_t n, struct baseline_stat *out)
{
	double med;

	if (!n)
		return -ENODATA;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return -ENODATA;
	qsort(v, n, sizeof(*v), cmp_double);
	med = sorted_median(v, n);
	/* |v - med| in place: the order is gone, the values are not needed */
	for (size_t i = 0; i < n; i++)
		v[i] = fabs(v[i] - med);
	qsort(v, n, sizeof(*v), cmp_double);
	out->median = med;
	out->spread = BASELINE_MAD_SCALE * sorted_median(v, n);
	out->n = n;
	return 0;
}

double baseline_threshold(const struct baseline_opts *o, enum baseline_metric m,
			  const struct baseline_stat *b)
{
	double by_spread = o->spread_factor * b->spread, t;

	if (m == BASELINE_BANDWIDTH) {
		t = fmin(b->median * (1 - o->margin), b->median - by_spread);
		return t > 0 ? t : 0;
	}
	t = fmax(b->median * (1 + o->latency_margin), b->median + by_spread);
	return fmax(t, b->median + o->latency_floor);
}

int baseline_bad(enum baseline_metric m, double threshold, double value)
{
	return m == BASELINE_BANDWIDTH ? value < threshold : value > threshold;
}

static uint64_t window_mask(unsigned n)
{
	return n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
}

unsigned baseline_bad_count(const struct baseline_window *w, unsigned m)
{
	unsigned k = w->n < m ? w->n : m;

	return (unsigned)__builtin_popcountll(w->bits & window_mask(k));
}

unsigned baseline_good_run(const struct baseline_window *w)
{
	uint64_t bits = w->bits & window_mask(w->n);

	if (!bits)
		return w->n;
	return (unsigned)__builtin_ctzll(bits);
}

enum baseline_event baseline_step(struct baseline_window *w,
				  const struct baseline_opts *o, int bad)
{
	unsigned m = (unsigned)o->judged_results;

	w->bits = (w->bits << 1) | (bad ? 1 : 0);
	if (w->n < BASELINE_MAX_WINDOW)
		w->n++;
	if (!w->open && baseline_bad_count(w, m) >= (unsigned)o->bad_results) {
		w->open = 1;
		return BASELINE_OPEN;
	}
	if (w->open && baseline_good_run(w) >= (unsigned)o->good_results) {
		w->open = 0;
		w->bits = 0;
		w->n = 0;
		return BASELINE_CLOSE;
	}
	return BASELINE_NONE;
}

int baseline_opts_check(const struct baseline_opts *o, char *err, size_t errlen)
{
	if (o->min_results > o->results) {
		snprintf(err, errlen,
			 "[baseline] min_results (%lld) must not exceed "
			 "results (%lld)",
			 o->min_results, o->results);
		return -EINVAL;
	}
	if (o->bad_results > o->judged_results) {
		snprintf(err, errlen,
			 "[baseline] bad_results (%lld) must not exceed "
			 "judged_results (%lld)",
			 o->bad_results, o->judged_results);
		return -EINVAL;
	}
	if (o->judged_results > BASELINE_MAX_WINDOW ||
	    o->good_results > BASELINE_MAX_WINDOW) {
		snprintf(err, errlen,
			 "[baseline] judged_results and good_results must be "
			 "in [1, %d]",
			 BASELINE_MAX_WINDOW);
		return -EINVAL;
	}
	return 0;
}
