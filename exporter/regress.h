/* SPDX-License-Identifier: MIT */
/*
 * Baselines, expected figures, regressions and suspects as one scrape
 * serves them (schema/003_baselines.sql; the collector computes them,
 * collector/store/store_regress.c): per link its latest figure, baseline,
 * threshold, expected figure, efficiency, regression and under-expected
 * state; per port its pooled baselines and suspect state; per group pair
 * its suspect state; and the regressions opened so far. docs/metrics.md,
 * "Baselines and regressions", lists the families.
 *
 * Links are those measured within the period plus every link in
 * regression or under its expected figure, at most max_links per
 * response (the cap of the per-pair families): regressed and
 * under-performing links first, then the most recently measured. A link
 * is served by its initiator's shard, a port by its host's; group pairs
 * and the counter by shard 0. A database without the schema (user_version
 * < 3) gives an empty struct regress.
 */
#ifndef IBPULSE_EXPORTER_REGRESS_H
#define IBPULSE_EXPORTER_REGRESS_H

#include <stddef.h>

#include "expo.h"

struct sqlite3;

struct regress_opts {
	double now;    /* seconds since the epoch */
	double period; /* links measured this recently are served */
	unsigned shard, shards;
	size_t max_links;  /* link rows served at most */
	size_t chunk_rows; /* rows per read transaction */
};

struct regress;

/*
 * regress_read() - read what one scrape serves from @db (open, read-only)
 * into a new *@out (regress_free()). 0, -ENOMEM, or -EIO with SQLite's
 * message in @err.
 */
int regress_read(struct sqlite3 *db, const struct regress_opts *o,
		 struct regress **out, char *err, size_t errlen);

/* Write the families into @e. Returns e->err. NULL @r writes nothing. */
int regress_render(struct expo *e, const struct regress *r);

void regress_free(struct regress *r);

#endif
