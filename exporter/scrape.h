/* SPDX-License-Identifier: MIT */
/*
 * One /metrics request without the HTTP: open the database read-only,
 * take the snapshot (short read transactions), close it, render the body
 * in memory under the max_body_bytes ceiling, and gzip it if asked. Only
 * then does the server send anything, so a slow client never holds the
 * database. The exporter's own counters (errors, last duration) live in
 * struct scrape_stats, shared by the worker threads.
 */
#ifndef IBPULSE_SCRAPE_H
#define IBPULSE_SCRAPE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "expo.h"
#include "render.h"
#include "settings.h"
#include "tally.h"

struct scrape_stats {
	pthread_mutex_t lock;
	double last_duration; /* < 0 before the first scrape */
	uint64_t database_errors;
	struct tally tally;	   /* test outcomes counted between scrapes */
	struct render_drops drops; /* series the family cap left out */
};

struct scrape_req {
	unsigned shard, shards;
	enum expo_format format;
	int gzip;
	double now; /* seconds since the epoch */
};

void scrape_stats_init(struct scrape_stats *st);
void scrape_stats_destroy(struct scrape_stats *st);

/*
 * scrape_build() - the body for @rq in @out (initialised by the caller;
 * its ceiling is replaced by max_body_bytes). Returns 0; -EIO or -ENOENT
 * when the database cannot be opened or read (the server answers 503);
 * -E2BIG when the body passes max_body_bytes, -ENOMEM (500). @err gets a
 * reason for the client.
 */
int scrape_build(const struct exporter_settings *cfg, struct scrape_stats *st,
		 const struct scrape_req *rq, struct buf *out, char *err,
		 size_t errlen);

/* Size of @db's write-ahead log in bytes: 0 when absent, < 0 on error. */
int64_t scrape_wal_size(const char *db);

/*
 * scrape_health() - 0 when the database opens and has the schema, else a
 * negative errno and the reason in @err.
 */
int scrape_health(const struct exporter_settings *cfg, char *err,
		  size_t errlen);

#endif
