/* SPDX-License-Identifier: MIT */
/*
 * Test outcomes as counters (ibpulse_test_results_total): results counted
 * by initiating host, profile, outcome and wc_status. Counting every row
 * of the result table at each scrape would be a full scan; instead the
 * exporter keeps the counts between scrapes and reads only the rows added
 * since (result.id greater than the last one counted, through the rowid).
 * The first scrape after start-up counts the whole table once, in chunks.
 * A table whose ids went backwards (a new database) starts the counts
 * over: Prometheus sees a counter reset. (A row that reuses the id of a
 * deleted newest row before the next scrape is not counted: SQLite gives
 * max(id) + 1 to a new row.) Shared by the worker threads; its own lock.
 */
#ifndef IBPULSE_TALLY_H
#define IBPULSE_TALLY_H

#include "hmap.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct sqlite3;

struct tally {
	pthread_mutex_t lock;
	int64_t last_id; /* the highest result.id counted */
	struct tally_entry *v;
	size_t n, cap;
	struct hmap index; /* of uint32_t, an index into v, on key */
};

/* One counter as a scrape serves it; @labels belong to the tally. */
struct tally_count {
	const char
		*labels; /* host="..",profile="..",outcome=".."[,wc_status] */
	uint64_t n;
};

int tally_init(struct tally *t);
void tally_destroy(struct tally *t);

/*
 * tally_update() - count the results added to @db since the last call
 * (@chunk rows per read transaction), then copy the counters of the hosts
 * in shard @shard of @shards into a new array *@out (caller frees the
 * array, not the labels; they live as long as @t). Returns 0, -ENOMEM,
 * or -EIO with SQLite's message in @err. A database without the tests
 * schema gives no counters.
 */
int tally_update(struct tally *t, struct sqlite3 *db, size_t chunk,
		 unsigned shard, unsigned shards, struct tally_count **out,
		 size_t *n_out, char *err, size_t errlen);

#endif
