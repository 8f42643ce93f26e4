/* SPDX-License-Identifier: MIT */
/*
 * Fabric test results as one scrape serves them (schema/002_tests.sql):
 * the results of the last period, read in short read transactions, turned
 * into per-port and per-group-pair aggregates (worst and median), the
 * latest result per pair (capped), outcome counts, busy-link flags and
 * the ports and group pairs overdue. A port's aggregates count the tests
 * it took part in at either end (initiator or responder): a bad link
 * shows in both. Aggregates use results whose outcome is ok and that were
 * not taken on a busy link; busy results are counted and shown per pair.
 *
 * Only registered probe ports (probe_port) get series: a result whose
 * local port is not one is left out, and one whose peer port is not one
 * counts at its local port only, as if the peer were unknown. So what a
 * host posts can add series for the fabric's real ports only, whatever
 * the result table holds. Results that started more than max_ahead
 * seconds after now are not read.
 * docs/metrics.md lists the families and their series counts.
 *
 * A database without the tests schema (user_version < 2) gives an empty
 * struct results: the counter families are served as before.
 */
#ifndef IBPULSE_RESULTS_H
#define IBPULSE_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "expo.h"

struct sqlite3;

/*
 * The period's results kept between scrapes (one per block cache scope:
 * bcache.h, bc_scope_aux()): results_read() then reads only the rows
 * added since the last read (by id) and those that came within max_ahead,
 * drops those that left the period, and reads the whole period again only
 * when the collector's result_change (schema/011_result_changes.sql) says
 * a row it may hold went or changed, when a port registered, or when the
 * window went back. The struct results it makes borrows the kept rows:
 * free it before the next read with the same keep. Not thread-safe: one
 * read at a time (the scope's lock).
 */
struct res_keep;

struct res_keep_stats {
	uint64_t full_reads;  /* the whole period read */
	uint64_t incremental; /* only the new rows read */
	uint64_t rows_read;   /* result rows read from the database */
};

int res_keep_new(struct res_keep **out);
void res_keep_free(struct res_keep *k);
/* Bytes @k holds (its rows, names and index). */
size_t res_keep_bytes(const struct res_keep *k);
void res_keep_stats(const struct res_keep *k, struct res_keep_stats *st);

struct results_opts {
	double now;	    /* seconds since the epoch */
	double period;	    /* the aggregates' window, seconds */
	double stale_after; /* a probe host silent this long is down */
	unsigned shard, shards;
	size_t max_pairs;	 /* per-pair results served at most */
	double max_ahead;	 /* later "started" is not read; seconds */
	const char *group_label; /* operator label that names a group */
	size_t chunk_rows;	 /* result rows per read transaction */
	struct res_keep *keep;	 /* NULL: read the whole period */
};

struct results;

/*
 * results_read() - read what one scrape serves about tests from @db (open,
 * read-only). *@out gets a new struct results (results_free()). Returns 0,
 * -ENOMEM, or -EIO with SQLite's message in @err.
 */
int results_read(struct sqlite3 *db, const struct results_opts *o,
		 struct results **out, char *err, size_t errlen);

struct tally_count;

/* 1 when the database had the tests schema. */
int results_enabled(const struct results *r);

/* Hand @r the outcome counters to serve (tally.h); @r frees @v. */
void results_set_totals(struct results *r, struct tally_count *v, size_t n);

/* Write the result families into @e. Returns e->err. */
int results_render(struct expo *e, const struct results *r);

void results_free(struct results *r);

/*
 * @v rounded to 9 significant digits (figures are served so: far finer
 * than any measurement, and integral or exact in %.15g, which makes
 * them cheap to print).
 */
double results_round(double v);

/* The median of @v[0..n-1] (sorts @v); NaN when n is 0. */
double results_median(double *v, size_t n);

#endif
