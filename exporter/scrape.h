/* SPDX-License-Identifier: MIT */
/*
 * One /metrics request without the HTTP: open the database read-only,
 * take the snapshot (short read transactions), close it, render the body
 * in memory under the max_body_bytes ceiling, and gzip it if asked. Only
 * then does the server send anything, so a slow client never holds the
 * database. The exporter's own counters (errors, last duration) live in
 * struct scrape_stats, shared by the worker threads; concurrent scrapes
 * share bodies through struct scrape_flights (below).
 */
#ifndef IBPULSE_SCRAPE_H
#define IBPULSE_SCRAPE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "expo.h"
#include "render.h"
#include "exporter_settings.h"
#include "tally.h"

struct scrape_stats {
	pthread_mutex_t lock;
	double last_duration; /* < 0 before the first scrape */
	uint64_t database_errors;
	struct tally tally;	   /* test outcomes counted between scrapes */
	double last_error_at;	   /* monotonic s of the last failed read; 0 */
	char last_error[256];	   /* its reason, until a scrape succeeds */
	struct render_drops drops; /* series the family cap left out */
	struct bcache *cache;	   /* bcache.h; NULL: render whole bodies */
};

struct scrape_req {
	unsigned shard, shards;
	enum expo_format format;
	int gzip;
	double now; /* seconds since the epoch */
};

void scrape_stats_init(struct scrape_stats *st);
/*
 * scrape_stats_cache() - give @st the block cache @cfg asks for
 * (cache_max_bytes; 0: none). 0 or -ENOMEM. scrape_stats_destroy()
 * frees it.
 */
int scrape_stats_cache(struct scrape_stats *st,
		       const struct exporter_settings *cfg);
void scrape_stats_destroy(struct scrape_stats *st);

/*
 * scrape_build() - the body for @rq in @out (initialised by the caller;
 * its ceiling is replaced by max_body_bytes), gzipped when @rq->gzip.
 * Returns 0; -EIO or -ENOENT when the database cannot be opened or read
 * (the server answers 503); -E2BIG when the body passes max_body_bytes,
 * -ENOMEM (500). @err gets a reason for the client. With the block cache
 * (scrape_stats_cache()) only what changed is rendered.
 */
int scrape_build(const struct exporter_settings *cfg, struct scrape_stats *st,
		 const struct scrape_req *rq, struct buf *out, char *err,
		 size_t errlen);

/*
 * scrape_build_limited() - scrape_build() with the body's ceiling at @max
 * (below max_body_bytes: what the memory ceiling leaves); -E2BIG past it.
 * *@text_len (may be NULL) gets the body's size before gzip.
 */
int scrape_build_limited(const struct exporter_settings *cfg,
			 struct scrape_stats *st, const struct scrape_req *rq,
			 struct buf *out, size_t max, size_t *text_len,
			 char *err, size_t errlen);

/* Size of @db's write-ahead log in bytes: 0 when absent, < 0 on error. */
int64_t scrape_wal_size(const char *db);

/*
 * scrape_health() - 0 when the database opens, has the schema and its
 * tables can be read (one row of each, a few pages), else a negative
 * errno and the reason in @err.
 */
int scrape_health(const struct exporter_settings *cfg, char *err,
		  size_t errlen);

/*
 * scrape_ready() - scrape_health(), and also -EIO while the last scrape
 * failed to read the database (less than SCRAPE_ERROR_MEMORY seconds ago,
 * and no scrape has succeeded since): a fault in a page the health check
 * does not touch still shows.
 */
#define SCRAPE_ERROR_MEMORY 60
int scrape_ready(const struct exporter_settings *cfg, struct scrape_stats *st,
		 char *err, size_t errlen);

/*
 * Single flight with a memory ceiling. Concurrent scrapes of the same
 * database state (the database and WAL files' device, inode, size and
 * modification time), shard, format and encoding share one body: the
 * first renders it, the others wait for it, and those that come within
 * SCRAPE_SHARE_SECONDS of its end (with the worker threads busy, most of
 * a burst of scrapes does) take it as it is. Bodies are reference-counted
 * and sent from the one buffer to every client. Bytes held by bodies
 * (being sent, kept for sharing, or expected of renders in progress) stay
 * under max_inflight_bytes: past it a scrape gets -ENOBUFS (503) instead
 * of a new body.
 */
#define SCRAPE_SHARE_SECONDS 1.0
struct scrape_flights;

struct scrape_body {
	const char *data;
	size_t len;
	int gzip; /* data is gzipped */
	/* private */
	struct scrape_flights *owner;
	unsigned refs;
	size_t cap; /* of data */
};

/* @cfg and @st outlive the flights. 0 or -ENOMEM. */
int scrape_flights_new(const struct exporter_settings *cfg,
		       struct scrape_stats *st, struct scrape_flights **out);
/* Free; every body must have been put back. NULL is fine. */
void scrape_flights_free(struct scrape_flights *f);

/*
 * scrape_get() - the body for @rq in *@out (one reference: give it back
 * with scrape_body_put()). Returns 0; the errors of scrape_build(), whose
 * -EIO and -ENOENT mean 503; or -ENOBUFS (503: the memory ceiling). *@shared
 * is set when the body came from another scrape's render.
 */
int scrape_get(struct scrape_flights *f, const struct scrape_req *rq,
	       struct scrape_body **out, int *shared, char *err, size_t errlen);

/* Give back a reference; the last one frees the body. NULL is fine. */
void scrape_body_put(struct scrape_body *b);

#endif
