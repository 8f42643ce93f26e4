/* SPDX-License-Identifier: MIT */
/*
 * Learned baselines and the regression state machine, as pure functions
 * (no SQLite, no clock), so every formula is unit-tested alone:
 *   - robust statistics over a link's accepted results: the median and the
 *     median absolute deviation (MAD), scaled by 1.4826 so that it reads as
 *     a standard deviation for normal noise;
 *   - the threshold a result is judged against: bandwidth is bad below
 *     min(median x (1 - margin), median - spread_factor x spread);
 *     latency is bad above max(median x (1 + latency_margin),
 *     median + spread_factor x spread, median + latency_floor), the
 *     absolute floor keeping microsecond noise from paging;
 *   - the window: a regression opens when K (bad_results) of the last M
 *     (judged_results) judged results were bad, and closes after
 *     good_results good ones in a row; closing starts a fresh window.
 * store_regress.c keeps the state in SQLite; docs/collector.md,
 * "BASELINES AND REGRESSIONS", gives the reasons.
 */
#ifndef IBPULSE_COLLECTOR_BASELINE_H
#define IBPULSE_COLLECTOR_BASELINE_H

#include <stddef.h>
#include <stdint.h>

#define BASELINE_MAX_WINDOW 64 /* M and good_results at most (bits) */
#define BASELINE_MAD_SCALE 1.4826

enum baseline_metric {
	BASELINE_BANDWIDTH, /* bw_avg_bytes_per_second: lower is worse */
	BASELINE_LATENCY,   /* lat_median_seconds: higher is worse */
	BASELINE_METRICS
};

/* The [baseline] settings (collector.ini); see etc/collector.ini. */
struct baseline_opts {
	long long results;	  /* N: accepted results a baseline keeps */
	double window_days;	  /* and only those this recent */
	long long min_results;	  /* fewer: no baseline, nothing judged */
	double margin;		  /* bandwidth: bad below median x (1 - m) */
	double latency_margin;	  /* latency: bad above median x (1 + m) */
	double latency_floor;	  /* seconds: and this much above at least */
	double spread_factor;	  /* and beyond this many spreads */
	long long bad_results;	  /* K */
	long long judged_results; /* M */
	long long good_results;	  /* good in a row that close a regression */
	double efficiency_floor;  /* under expected below; 0: not judged */
};

struct baseline_stat {
	double median;
	double spread; /* 1.4826 x MAD */
	size_t n;
};

/* "bandwidth" / "latency", as the database and the API spell them
 * (testapi_metric_name()). */
const char *baseline_metric_name(enum baseline_metric m);

/* The metric named @name; BASELINE_METRICS when it names none. */
enum baseline_metric baseline_metric_of(const char *name);

/* The metric of a row the collector wrote (@name is one of the two):
 * latency or bandwidth, never BASELINE_METRICS. */
enum baseline_metric baseline_metric_row(const char *name);

/*
 * baseline_compute() - median and scaled MAD of @v[0..n-1] into *@out.
 * Reorders @v. -ENODATA when @n is 0 (or a value is not finite).
 */
int baseline_compute(double *v, size_t n, struct baseline_stat *out);

/* The threshold of metric @m for baseline @b (see the top of this file). */
double baseline_threshold(const struct baseline_opts *o, enum baseline_metric m,
			  const struct baseline_stat *b);

/* 1 when @value is on the bad side of @threshold for metric @m. */
int baseline_bad(enum baseline_metric m, double threshold, double value);

/*
 * The judgement window: bit 0 is the newest judged result (1: bad), @n of
 * the bits are meaningful (at most BASELINE_MAX_WINDOW). @open: a
 * regression is open.
 */
struct baseline_window {
	uint64_t bits;
	unsigned n;
	int open;
};

enum baseline_event {
	BASELINE_NONE,
	BASELINE_OPEN,	/* K of the last M were bad */
	BASELINE_CLOSE, /* good_results good in a row while open */
};

/* Bad results among the newest min(n, M) of @w. */
unsigned baseline_bad_count(const struct baseline_window *w, unsigned m);
/* Good results in a row, newest first. */
unsigned baseline_good_run(const struct baseline_window *w);

/*
 * baseline_step() - push one judged result (@bad 0 or 1) into @w and say
 * what changed. CLOSE empties the window, so old bad results cannot
 * re-open it at once.
 */
enum baseline_event baseline_step(struct baseline_window *w,
				  const struct baseline_opts *o, int bad);

/*
 * baseline_opts_check() - the rules across settings (min_results <=
 * results, bad_results <= judged_results, windows of at most 64). 0, or
 * -EINVAL with the reason in @err.
 */
int baseline_opts_check(const struct baseline_opts *o, char *err,
			size_t errlen);

#endif
