/* SPDX-License-Identifier: MIT */
/*
 * Inside the block cache (bcache.h): the scope, its families and their
 * segments, shared by bcache.c (the hooks, keeping and reusing segments,
 * the memory bound) and bcache_body.c (text and gzip bodies, compressing
 * pieces). Not for other files.
 */
#ifndef IBPULSE_BCACHE_INT_H
#define IBPULSE_BCACHE_INT_H

#include <pthread.h>
#include <stdint.h>

#include "bcache.h"
#include "hmap.h"

struct bc_seg {
	uint64_t key, fp; /* fp: what it was made from, or a version of its
			   * text for one rendered every time */
	char *text;	  /* malloc'd, not NUL-terminated */
	size_t gz_off;	  /* its piece in the family's pack */
	uint64_t gz_dict; /* the mh of the segment before it when the piece
			   * was made; 0 none */
	uint64_t mh;	  /* its text as a dictionary (bcache_body.c); 0 not
			   * worked out yet */
	uint32_t len, samples;
	uint32_t gz_len; /* 0: no piece */
	uint32_t crc;	 /* of its text, with the piece */
	int fresh;	 /* rendered by this render (not reused) */
};

/* A host held (bc_hosts_held()): its rows' fingerprint. */
struct bc_held {
	int64_t id;
	uint64_t fp;
};

struct bc_family {
	char *name, *help; /* copies */
	enum expo_type type;
	int used;	    /* in this render */
	struct bc_seg *seg; /* this render's, in body order */
	size_t n, cap;
	struct bc_seg *old; /* the last render's; moved out as reused */
	size_t n_old, cap_old, cursor;
	int sorted, old_sorted; /* keys rising: looked up by walking */
	struct hmap index;	/* old keys -> their index (uint32_t) */
	int indexed;		/* index built (on demand) */
	/* the pieces, one after the other (bcache_body.c); a segment's
	 * piece stays there when it moves from the old list to the new */
	unsigned char *pack;
	size_t pack_len, pack_cap;
	uint32_t pack_crc;  /* of the text of all of them, in order */
	uint64_t samples;   /* this render's */
	size_t cap_samples; /* the family cap; 0 none */
	char *hdr[2];	    /* HELP/TYPE per expo_format, NUL-terminated */
	unsigned char *hdr_gz[2];
	uint32_t hdr_len[2], hdr_gz_len[2], hdr_crc[2];
};

struct bc_scope {
	struct bcache *c;
	pthread_mutex_t lock;
	unsigned shard, shards;
	double last_used, cooldown_until; /* seconds since the epoch */
	int keep;			  /* keep segments after the body */
	uint64_t db_id;			  /* bc_epoch() */
	int64_t db_seq;
	struct bc_family *fam;
	size_t n_fam, cap_fam, cur_fam; /* cur_fam: the open one, or n_fam */
	/* the segment being written */
	int seg_open;
	uint64_t seg_key, seg_fp;
	size_t seg_start, seg_samples;
	size_t fam_samples0;   /* e->samples when the open family started */
	struct buf scratch;    /* samples being rendered */
	uint64_t version;      /* for segments rendered every time */
	struct hmap hosts;     /* hosts held: struct bc_held by id */
	struct bc_aux aux;     /* bc_scope_aux() */
	uint64_t bytes;	       /* what this scope keeps */
	int64_t bytes_pending; /* rendered, not yet in bytes */
	uint64_t reused, rendered;
	_Atomic uint32_t *crc_op; /* crc32_combine_gen() by length below
				   * BC_OP_LEN, made as needed (threads) */
	unsigned char *eof_gz;
	uint32_t eof_gz_len, eof_crc;
};

#define BC_OP_LEN 65536

struct bcache {
	pthread_mutex_t lock; /* the scope list and the stats */
	uint64_t max_bytes;
	int level;
	unsigned threads;
	struct bc_scope **scopes;
	size_t n_scopes;
	struct bc_stats st;
};

/* Account @delta bytes (may be negative) to @s and the cache. */
void bc_account(struct bc_scope *s, int64_t delta);

/* Free the text of @g and forget its piece, accounting them. */
void bc_seg_release(struct bc_scope *s, struct bc_seg *g);

/* The header of @f in @format, made on first use. 0 or -ENOMEM. */
int bc_family_header(struct bc_scope *s, struct bc_family *f,
		     enum expo_format format);

#endif
