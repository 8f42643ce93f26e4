// SPDX-License-Identifier: MIT
/* Outcome counters kept between scrapes: see tally.h. */
#include "tally.h"
#include "fnv.h"
#include "vec.h"
#include "buf.h"
#include "expo.h"
#include "shard.h"
#include "sqlname.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tally_entry {
	char *key;    /* host \x1f profile \x1f outcome \x1f wc_status */
	char *host;   /* for the shard */
	char *labels; /* escaped label list */
	uint64_t n;
};

int tally_init(struct tally *t)
{
	memset(t, 0, sizeof(*t));
	hmap_init(&t->index, sizeof(uint32_t));
	return -pthread_mutex_init(&t->lock, NULL);
}

void tally_destroy(struct tally *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].key);
		free(t->v[i].host);
		free(t->v[i].labels);
	}
	free(t->v);
	hmap_free(&t->index);
	pthread_mutex_destroy(&t->lock);
}

static uint64_t tally_hash(const char *s)
{
	return fnv1a_str(FNV1A_BASIS, s);
}

/* What tally_eq() compares an index entry with. */
struct tally_look {
	const struct tally *t;
	const char *key;
};

static int tally_eq(const void *ent, const void *key)
{
	const struct tally_look *l = key;

	return !strcmp(l->t->v[*(const uint32_t *)ent].key, l->key);
}

/* A new entry for @key, its labels made from @col. */
static int tally_new(struct tally *t, const char *key, const char *const col[4])
{
	static const char *const names[4] = {"host", "profile", "outcome",
					     "wc_status"};
	struct tally_entry *e;
	struct buf b;
	int ret = 0;

	if (vec_grow(&t->v, &t->cap, t->n, sizeof(*t->v)))
		return -ENOMEM;
	buf_init(&b, 0);
	for (int i = 0; i < 4 && !ret; i++)
		if (i < 3 || (col[i] && *col[i]))
			ret = expo_label(&b, names[i], col[i]);
	e = &t->v[t->n];
	e->key = strdup(key);
	e->host = strdup(col[0]);
	e->labels = ret ? NULL : buf_steal(&b, NULL);
	buf_free(&b);
	e->n = 0;
	if (!e->key || !e->host || !e->labels) {
		free(e->key);
		free(e->host);
		free(e->labels);
		return -ENOMEM;
	}
	t->n++;
	return 0;
}

/* Count one result: columns host, profile, outcome, wc_status. */
static int tally_count_row(struct tally *t, sqlite3_stmt *s)
{
	const char *col[4];
	char key[1024];
	struct tally_look l = {t, key};
	uint32_t *e;

	for (int i = 0; i < 4; i++)
		col[i] = (const char *)sqlite3_column_text(s, 1 + i);
	if (!col[0] || !col[1] || !col[2])
		return 0;
	snprintf(key, sizeof(key), "%s\x1f%s\x1f%s\x1f%s", col[0], col[1],
		 col[2], col[3] ? col[3] : "");
	e = hmap_find(&t->index, tally_hash(key), tally_eq, &l);
	if (!e) {
		e = hmap_add(&t->index, tally_hash(key));
		if (!e)
			return -ENOMEM;
		if (tally_new(t, key, col)) {
			hmap_del(&t->index, e);
			return -ENOMEM;
		}
		*e = (uint32_t)t->n - 1;
	}
	t->v[*e].n++;
	return 0;
}

static int tally_sql_err(sqlite3 *db, int rc, char *err, size_t errlen)
{
	snprintf(err, errlen, "result: %s (%s)", sqlite3_errmsg(db),
		 sqlite3_errstr(rc));
	return -EIO;
}

/* Start over when the table's ids went backwards (another database). */
static int tally_check_reset(struct tally *t, sqlite3 *db, char *err,
			     size_t errlen)
{
	sqlite3_stmt *s;
	int rc;

	rc = sqlite3_prepare_v2(db, "SELECT ifnull(max(id), 0) FROM result", -1,
				&s, NULL);
	if (rc != SQLITE_OK)
		return tally_sql_err(db, rc, err, errlen);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_int64(s, 0) < t->last_id) {
		for (size_t i = 0; i < t->n; i++)
			t->v[i].n = 0;
		t->last_id = 0;
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : tally_sql_err(db, rc, err, errlen);
}

static int tally_read(struct tally *t, sqlite3 *db, size_t chunk, char *err,
		      size_t errlen)
{
	/* clang-format off */
	static const char sql[] =
		"SELECT id, host, profile, outcome, wc_status"
		" FROM result"
		" WHERE id > :after"
		" ORDER BY id"
		" LIMIT :limit";
	/* clang-format on */
	sqlite3_stmt *s;
	size_t n = chunk;
	int rc, ret;

	ret = tally_check_reset(t, db, err, errlen);
	if (ret)
		return ret;
	rc = sql_prepare(db, sql, 0, &s);
	if (rc != SQLITE_OK)
		return tally_sql_err(db, rc, err, errlen);
	while (!ret && n == chunk) {
		sql_name_int(s, ":after", t->last_id);
		sql_name_int(s, ":limit", (sqlite3_int64)chunk);
		for (n = 0; !ret && (rc = sqlite3_step(s)) == SQLITE_ROW; n++) {
			ret = tally_count_row(t, s);
			if (!ret)
				t->last_id = sqlite3_column_int64(s, 0);
		}
		if (!ret && rc != SQLITE_DONE)
			ret = tally_sql_err(db, rc, err, errlen);
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	return ret;
}

static int tally_copy(struct tally *t, unsigned shard, unsigned shards,
		      struct tally_count **out, size_t *n_out)
{
	struct tally_count *v = malloc((t->n + 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		if (shard_of(t->v[i].host, shards) == shard)
			v[n++] =
				(struct tally_count){t->v[i].labels, t->v[i].n};
	*out = v;
	*n_out = n;
	return 0;
}

int tally_update(struct tally *t, sqlite3 *db, size_t chunk, unsigned shard,
		 unsigned shards, struct tally_count **out, size_t *n_out,
		 char *err, size_t errlen)
{
	int ret;

	*out = NULL;
	*n_out = 0;
	pthread_mutex_lock(&t->lock);
	ret = tally_read(t, db, chunk ? chunk : 1, err, errlen);
	if (!ret)
		ret = tally_copy(t, shard, shards ? shards : 1, out, n_out);
	pthread_mutex_unlock(&t->lock);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory counting test results");
	return ret;
}
