/* SPDX-License-Identifier: MIT */
/*
 * Inside struct results: shared by results.c (reading the database) and
 * results_render.c (aggregates and families). Hosts, ports, profiles,
 * outcomes and groups are interned by name in one hash table; labels are
 * escaped once (expo_label()) when an entry is made. Strings live in the
 * arena and go with results_free().
 */
#ifndef IBPULSE_RESULTS_INT_H
#define IBPULSE_RESULTS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "hmap.h"
#include "results.h"
#include "tally.h"
#include "testapi.h"

#define RES_NONE UINT32_MAX

struct res_host {
	const char *labels; /* host="..." */
	uint64_t key;	    /* its name's hash: the key of its segments */
	int served;	    /* in this scrape's shard */
	int up;		    /* -1: no counter report, 0 silent, 1 reporting */
	int probe;	    /* registered */
	int paused;
	double registered;  /* first registration */
	uint32_t group;	    /* RES_NONE: unlabelled */
	int64_t dropped[2]; /* spool_full, expired; -1 unknown */
};

struct res_port {
	uint32_t host;
	const char *labels;	 /* host="...",device="...",port="N" */
	const char *peer_labels; /* peer_host="...",peer_device=...,peer_port */
	int expected;		 /* registered ACTIVE on a probe not paused */
	int measured;		 /* an ok result in the period, either end */
	uint64_t fp;		 /* hash of @labels */
};

/* One result of the period. */
struct res_row {
	uint32_t a, b; /* initiator's and responder's ports; b may be none */
	uint32_t profile, outcome;
	int ok, busy;
	double started;
	double fig[TESTAPI_FIG_COUNT]; /* NaN: unknown */
	uint64_t fp; /* of what a family shows of it: profile, outcome,
		      * busy, started, figures */
	int64_t id;  /* result.id */
	double at;   /* result.started as stored (started is rounded) */
};

/* An entry of the name → index table over several kinds of names. */
struct res_slot {
	uint32_t index;
	char kind;
	const char *key;
};

struct results {
	int enabled; /* the tests schema is there */
	struct results_opts o;
	struct res_host *hosts;
	size_t n_hosts, cap_hosts;
	struct res_port *ports;
	size_t n_ports, cap_ports;
	struct res_row *rows; /* by (at, id) */
	size_t n_rows, cap_rows;
	int rows_kept;	       /* rows belong to o.keep (results.h) */
	size_t rows_seen;      /* result rows read from the database */
	int64_t id_max;	       /* rows with a larger id are left out */
	const char **profiles; /* profile="..." */
	size_t n_profiles, cap_profiles;
	const char **outcomes; /* outcome="..."[,wc_status="..."] */
	size_t n_outcomes, cap_outcomes;
	const char **groups; /* raw group names */
	size_t n_groups, cap_groups;
	struct hmap index;	    /* of struct res_slot */
	struct tally_count *totals; /* ibpulse_test_results_total */
	size_t n_totals;
	struct res_arena *arena;
	struct buf scratch;
};

/* ---- shared by results.c and results_keep.c ---- */

struct sqlite3;
struct sqlite3_stmt;

/* The columns res_result_row() reads, FROM result. */
#define RESULT_COLUMNS                                                         \
	"SELECT id, started, host, local_device, local_port, peer_host, "      \
	"peer_device, peer_port, profile, outcome, wc_status, "                \
	"busy" TESTAPI_FIG_SQL_COLUMNS " FROM result"

/* The index of (@kind, @key), or RES_NONE. */
uint32_t res_lookup(const struct results *r, char kind, const char *key);
/* The index of label list @label of @kind ('f' a profile, 'o' an outcome)
 * in @list, added on first sight; RES_NONE on ENOMEM. */
uint32_t res_intern_label(struct results *r, char kind, const char *label,
			  const char ***list, size_t *n, size_t *cap);
/* One row of RESULT_COLUMNS into r->rows (dbread_row_fn). */
int res_result_row(void *ctx, struct sqlite3_stmt *s);
/* The whole period's rows into r->rows. 0, -ENOMEM or -EIO. */
int res_read_period(struct sqlite3 *db, struct results *r, char *err,
		    size_t errlen);
/* The period's rows through @k (results_keep.c); @r borrows them. */
int res_read_kept(struct sqlite3 *db, struct results *r, struct res_keep *k,
		  char *err, size_t errlen);
/* Keep @r's names for the next read (after res_canonical()). */
int res_keep_names(struct res_keep *k, const struct results *r);
/* Forget the kept rows: the next read reads the whole period. */
void res_keep_drop(struct res_keep *k);

/* ---- shared by results_render.c and results_pairs.c ---- */

struct stat_def {
	enum testapi_fig fig;
	const char *stat; /* stat="..." or NULL: no stat label */
};

/* A family of figures: which stats it carries per pair and aggregated. */
struct fig_family {
	const char *suffix, *help;
	int worst_is_max; /* latency: the largest is worst */
	const struct stat_def *pair, *agg,
		*grp; /* per pair, port, group pair */
	size_t n_pair, n_agg, n_grp;
};

#define RES_FIG_FAMILIES 3
extern const struct fig_family res_fig_families[RES_FIG_FAMILIES];

/*
 * Segments of a family: runs of items with the same key (a host's, a
 * group's), each with the fingerprint of its items. Items come grouped.
 */
struct segs {
	size_t n;
	size_t *start; /* n + 1 offsets into the items */
	uint64_t *key, *fp;
};

typedef void (*seg_item_fn)(const struct results *r, const void *items,
			    size_t i, uint64_t *key, uint64_t *fp);

void res_segs_free(struct segs *sg);
int res_segs_make(struct segs *sg, const struct results *r, const void *items,
		  size_t n, seg_item_fn fn);
/* A result row (@row) attributed to an entity (a port, a group pair). */
struct att {
	uint32_t ent, profile, row;
};

/*
 * Sort @at[0..n) by (entity, profile), rows in order within each: they
 * come in row order, so a stable counting sort over the @keys (entity,
 * profile) pairs (@n_prof profiles) does it in two passes when there are
 * not many more keys than atts; qsort otherwise. *@at is replaced. 0 or
 * -ENOMEM.
 */
int res_att_sort(struct att **at, size_t n, size_t keys, size_t n_prof);
/* The hash of @s ("" for NULL). */
uint64_t res_str_fp(const char *s);
/* The segment key of port @port: its host's. */
uint64_t res_host_key(const struct results *r, uint32_t port);
/* The latest result per pair families (results_pairs.c). */
int res_render_pairs(struct expo *e, const struct results *r, struct buf *xb);

#endif
