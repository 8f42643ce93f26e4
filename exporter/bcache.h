/* SPDX-License-Identifier: MIT */
/*
 * The block cache: render only what changed (docs/exporter.md, "RENDERING
 * ONLY WHAT CHANGED"). A /metrics body is a list of families, and with
 * hooks on the writer (expo_set_hooks()) each family is a list of
 * segments: one per host for the families of hosts, devices, ports,
 * counters and test results, one for the others. A renderer that says
 * what a segment was made from (expo_segment(): a key and a fingerprint,
 * for a host the collector's change marker) gets it from the cache when
 * the fingerprint is the same, and skips its samples; the snapshot does
 * not even read such a host's rows (bc_host_held()). Other segments are
 * rendered every time, and kept when their text did not change.
 *
 * Each segment keeps its text and, once a gzip body was asked for, its
 * compressed form: raw deflate ending in a sync flush, primed with the
 * text of the segment before it in the family. Pieces at byte boundaries
 * concatenate: a body is the gzip header, the families' pieces, a final
 * empty block and a trailer whose CRC-32 is combined from the pieces'
 * (RFC 1952, one member). A piece is compressed again only when its text
 * or the text before it changed. The body is byte for byte what a render
 * without the cache gives for the same state (tests/exporter/
 * test_bcache.c checks it), the family caps (max_family_series) included.
 *
 * One cache per exporter; in it one scope per (shard, shards) asked for,
 * rendered by one scrape at a time (bc_scope_lock()). Everything the
 * scopes keep counts against max_bytes (cache_max_bytes): a scope that
 * passes it is emptied and renders without keeping anything for
 * BC_COOLDOWN seconds. The functions return 0 or a negative errno.
 */
#ifndef IBPULSE_BCACHE_H
#define IBPULSE_BCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "expo.h"

#define BC_COOLDOWN 600.0 /* seconds a scope that was too big keeps nothing */

struct bcache;
struct bc_scope;

/* What the cache holds, for the exporter's own metrics. */
struct bc_stats {
	uint64_t bytes;	     /* text, compressed pieces and bookkeeping */
	uint64_t max_bytes;  /* cache_max_bytes */
	uint64_t segments;   /* kept, all scopes */
	uint64_t reused;     /* segments taken from the cache, cumulative */
	uint64_t rendered;   /* segments rendered, cumulative */
	uint64_t compressed; /* pieces compressed, cumulative */
	uint64_t dropped;    /* scopes emptied for passing max_bytes */
};

/*
 * bcache_new() - a cache of at most @max_bytes (0: keep nothing; every
 * scrape renders everything) that gzips at zlib @level on up to
 * @threads threads (0: one per CPU, at most 8). bcache_free() frees it.
 */
int bcache_new(uint64_t max_bytes, int level, unsigned threads,
	       struct bcache **out);
void bcache_free(struct bcache *c);

void bcache_stats(struct bcache *c, struct bc_stats *st);

/*
 * bc_scope_lock() - the scope of (@shard, @shards), made on first use,
 * locked until bc_scope_unlock(): one scrape renders it at a time.
 * -ENOMEM.
 */
int bc_scope_lock(struct bcache *c, unsigned shard, unsigned shards, double now,
		  struct bc_scope **out);
void bc_scope_unlock(struct bc_scope *s);

/*
 * bc_epoch() - the database @s was made from: @id names the file (device
 * and inode), @seq is its change_seq (-1: none). A different file, or a
 * change_seq that went back (a database restored from a copy), empties
 * the scope: its segments could be another database's.
 */
void bc_epoch(struct bc_scope *s, uint64_t id, int64_t seq);

/*
 * bc_scope_aux() - what the scope's owner keeps beside its segments
 * between renders (the scrape: the period's test results, results.h),
 * under the scope's lock: @free(@data) is called when the scope is emptied
 * (another database, a failed render, the memory bound) or freed.
 * bc_aux_bytes() says how many bytes it holds, counted in max_bytes.
 */
struct bc_aux {
	void *data;
	void (*free)(void *data);
	uint64_t bytes; /* counted */
};

struct bc_aux *bc_scope_aux(struct bc_scope *s);
void bc_aux_bytes(struct bc_scope *s, uint64_t bytes);

/*
 * bc_host_held() - 1 when @s holds every segment of host @id's devices,
 * ports and counters as made from @fp (not 0): its rows need not be read.
 */
int bc_host_held(const struct bc_scope *s, int64_t id, uint64_t fp);

/*
 * bc_begin() - a render of @s through @e (set up by the caller with
 * expo_init() on any buffer and its family cap): hooks are set and the
 * samples go to the scope's scratch buffer. bc_end() closes it, or
 * bc_abort() after a failure (the scope starts over).
 */
int bc_begin(struct bc_scope *s, struct expo *e);
int bc_end(struct bc_scope *s, struct expo *e);
void bc_abort(struct bc_scope *s);

/*
 * bc_hosts_held() - after bc_end(): the @n hosts (ids, fingerprints; 0:
 * unknown) whose segments this render made or reused, replacing the last
 * list.
 */
int bc_hosts_held(struct bc_scope *s, const int64_t *ids, const uint64_t *fps,
		  size_t n);

/*
 * bc_body() - append the body of the last render in @format to @out,
 * gzipped when @gzip (-E2BIG past @out's ceiling). *@text_len gets the
 * uncompressed size.
 */
int bc_body(struct bc_scope *s, enum expo_format format, int gzip,
	    struct buf *out, size_t *text_len);

/*
 * bc_finish() - after the body: check the memory bound (empty the scope
 * past it), and free what a scope that keeps nothing rendered.
 */
void bc_finish(struct bc_scope *s);

#endif
