// SPDX-License-Identifier: MIT
/*
 * The period's test results kept between scrapes (results.h, struct
 * res_keep). A read checks the collector's result_change
 * (schema/011_result_changes.sql) and max(id); when no row the keep may
 * hold went, no port registered and the window did not go back, it reads
 * only the rows added since (by id: a rowid walk) and those that came
 * within max_ahead, drops the rows that left the window and maps the rest
 * to this scrape's numbering of ports, profiles and outcomes; the new
 * rows are sorted and merged in, so that the kept rows stay in the order
 * a whole read gives. Otherwise it reads the whole period and keeps that.
 */
#include "results_int.h"
#include "vec.h"
#include "dbread.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct res_keep {
	int valid;
	double after, ahead;  /* the last read's window: started in it */
	int64_t top, seq;     /* max(id) and result_change.seq as it began:
			       * it left out rows above top (added since) */
	struct res_row *rows; /* [head, head + n_rows): by (at, id), numbered
			       * as the last read's ports, profiles, outcomes */
	size_t head, n_rows, cap_rows;
	struct buf names; /* NUL-terminated: ports' keys, profiles, outcomes */
	size_t *name_at;  /* their offsets */
	size_t n_ports, n_profiles, n_outcomes, cap_names;
	struct res_keep_stats st;
};

/* result_change, and max(id), as a read begins. */
struct res_mark {
	int have; /* result_change is there (schema 11) */
	int64_t top, seq, top_deleted;
	double newest_deleted;
};

int res_keep_new(struct res_keep **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	buf_init(&(*out)->names, 0);
	return 0;
}

/* Forget the rows: the next read reads the whole period. */
void res_keep_drop(struct res_keep *k)
{
	free(k->rows);
	k->rows = NULL;
	k->head = k->n_rows = k->cap_rows = 0;
	k->valid = 0;
}

void res_keep_free(struct res_keep *k)
{
	if (!k)
		return;
	res_keep_drop(k);
	buf_free(&k->names);
	free(k->name_at);
	free(k);
}

size_t res_keep_bytes(const struct res_keep *k)
{
	return k ? sizeof(*k) + k->cap_rows * sizeof(*k->rows) + k->names.cap +
			       k->cap_names * sizeof(*k->name_at)
		 : 0;
}

void res_keep_stats(const struct res_keep *k, struct res_keep_stats *st)
{
	*st = k ? k->st : (struct res_keep_stats){0};
}

static const char *keep_name(const struct res_keep *k, size_t i)
{
	return k->names.data + k->name_at[i];
}

static int mark_row(void *ctx, sqlite3_stmt *s)
{
	struct res_mark *m = ctx;

	m->have = 1;
	m->top = sqlite3_column_int64(s, 0); /* NULL (no row): 0 */
	m->seq = sqlite3_column_int64(s, 1);
	m->newest_deleted = sqlite3_column_double(s, 2);
	m->top_deleted = sqlite3_column_int64(s, 3);
	return 0;
}

static int read_mark(sqlite3 *db, struct res_mark *m, char *err, size_t errlen)
{
	/* clang-format off */
	static const char sql[] =
		"SELECT (SELECT max(id) FROM result), seq, newest_started, top_id "
		"FROM result_change";
	/* clang-format on */

	memset(m, 0, sizeof(*m));
	if (!dbread_has_table(db, "result_change"))
		return 0;
	return dbread_each(db, sql, "result_change", NULL, mark_row, m, err,
			   errlen);
}

/*
 * Can the kept rows serve the window [@after, @ahead]? The window did not
 * go back, and no row the keep may hold went or changed since its read:
 * none did at all, or those that did started before its window and none
 * had an id as large as its top (only then can an id come again).
 */
static int keep_usable(const struct res_keep *k, const struct res_mark *m,
		       double after, double ahead)
{
	return k->valid && m->have && after >= k->after && ahead >= k->ahead &&
	       (m->seq == k->seq ||
		(m->newest_deleted < k->after && m->top_deleted < k->top));
}

/*
 * @map: each kept port's index in @r (RES_NONE: no longer registered).
 * -EAGAIN when @r has a port the keep had not: results of it were left out
 * (or counted at their other end only), so the period is read again.
 */
static int keep_port_map(const struct res_keep *k, struct results *r,
			 uint32_t *map)
{
	size_t found = 0;

	for (size_t i = 0; i < k->n_ports; i++) {
		map[i] = res_lookup(r, 'p', keep_name(k, i));
		found += map[i] != RES_NONE;
	}
	return found == r->n_ports ? 0 : -EAGAIN;
}

/* Kept profile (@outcome 0) or outcome @i as @r numbers it, interned on
 * first use (so that names no row uses are not); RES_NONE on ENOMEM. */
static uint32_t keep_name_map(const struct res_keep *k, struct results *r,
			      uint32_t *map, int outcome, uint32_t i)
{
	uint32_t *m = &map[outcome ? k->n_profiles + i : i];

	if (*m == RES_NONE && outcome)
		*m = res_intern_label(
			r, 'o', keep_name(k, k->n_ports + k->n_profiles + i),
			&r->outcomes, &r->n_outcomes, &r->cap_outcomes);
	else if (*m == RES_NONE)
		*m = res_intern_label(r, 'f', keep_name(k, k->n_ports + i),
				      &r->profiles, &r->n_profiles,
				      &r->cap_profiles);
	return *m;
}

/*
 * The kept rows in @r's numbering: those that left the window (started
 * before @after: the first ones), those read again (above top) and those
 * whose local port is no longer registered go.
 */
static int keep_remap(struct res_keep *k, struct results *r, double after,
		      const uint32_t *pmap, uint32_t *nmap)
{
	struct res_row *v;
	size_t i = 0, w = 0, n;

	if (!k->n_rows)
		return 0;
	while (i < k->n_rows && k->rows[k->head + i].at < after)
		i++;
	k->head += i;
	n = k->n_rows - i;
	v = k->rows + k->head;
	for (i = 0; i < n; i++) {
		struct res_row *x = &v[i];

		if (pmap[x->a] == RES_NONE)
			continue;
		x->a = pmap[x->a];
		if (x->b != RES_NONE)
			x->b = pmap[x->b];
		x->profile = keep_name_map(k, r, nmap, 0, x->profile);
		x->outcome = keep_name_map(k, r, nmap, 1, x->outcome);
		if (x->profile == RES_NONE || x->outcome == RES_NONE)
			return -ENOMEM;
		if (w != i)
			v[w] = *x;
		w++;
	}
	k->n_rows = w;
	return 0;
}

static int row_later(const struct res_row *a, const struct res_row *b)
{
	return a->at > b->at || (a->at == b->at && a->id > b->id);
}

static int cmp_row(const void *a, const void *b)
{
	return row_later(a, b) - row_later(b, a);
}

/* Merge rows @add[0..n) (by (at, id)) into the kept ones. */
static int keep_merge(struct res_keep *k, const struct res_row *add, size_t n)
{
	size_t need = k->n_rows + n, i = k->n_rows, j = n;
	struct res_row *v;

	if (!n)
		return 0;
	if (k->head + need > k->cap_rows && k->head) {
		memmove(k->rows, k->rows + k->head,
			k->n_rows * sizeof(*k->rows));
		k->head = 0;
	}
	if (need > k->cap_rows) {
		size_t cap = need + need / 2;

		v = realloc(k->rows, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		k->rows = v;
		k->cap_rows = cap;
	}
	v = k->rows + k->head;
	while (j) {
		if (i && row_later(&v[i - 1], &add[j - 1]))
			v[i + j - 1] = v[i - 1], i--;
		else
			v[i + j - 1] = add[j - 1], j--;
	}
	k->n_rows = need;
	return 0;
}

/*
 * The rows the keep lacks for [@after, @ahead]: those added since its read
 * (id above its top; by id, the rowid walk) and those that came within
 * max_ahead since (through result_started).
 */
static int read_new(sqlite3 *db, struct results *r, const struct res_keep *k,
		    int64_t top, double after, double ahead, char *err,
		    size_t errlen)
{
	/* clang-format off */
	static const char added_sql[] =
		RESULT_COLUMNS
		" WHERE id > :after_id"
		" AND id <= :top"
		" AND +started >= :from"
		" AND +started <= :ahead"
		" ORDER BY id"
		" LIMIT :limit";
	static const char ahead_sql[] =
		RESULT_COLUMNS
		" WHERE (started, id) > (:after_time, :after_id)"
		" AND started <= :ahead"
		" AND +id <= :top"
		" ORDER BY started, id"
		" LIMIT :limit";
	/* clang-format on */
	struct dbread_arg args[] = {
		{.name = ":from", .real = after},
		{.name = ":ahead", .real = ahead},
		{.name = ":top", .real = (double)top},
	};
	struct dbread_arg came_args[] = {
		{.name = ":ahead", .real = ahead},
		{.name = ":top", .real = (double)k->top},
	};
	struct dbread_pages added = {
		.sql = added_sql,
		.what = "result",
		.after_id = k->top,
		.time_col = -1,
		.chunk = r->o.chunk_rows,
		.args = args,
		.n_args = 3,
	};
	struct dbread_pages came = {
		.sql = ahead_sql,
		.what = "result",
		.after = k->ahead,
		.after_id = INT64_MAX,
		.time_col = 1,
		.chunk = r->o.chunk_rows,
		.args = came_args,
		.n_args = 2,
	};
	int ret = dbread_pages(db, &added, res_result_row, r, err, errlen);

	if (!ret && ahead > k->ahead)
		ret = dbread_pages(db, &came, res_result_row, r, err, errlen);
	return ret;
}

/* Read only what the keep lacks into it; -EAGAIN: it cannot serve. */
static int read_incremental(sqlite3 *db, struct results *r, struct res_keep *k,
			    const struct res_mark *m, double after,
			    double ahead, char *err, size_t errlen)
{
	uint32_t *pmap, *nmap;
	int ret;

	if (!keep_usable(k, m, after, ahead))
		return -EAGAIN;
	pmap = malloc((k->n_ports + 1) * sizeof(*pmap));
	nmap = malloc((k->n_profiles + k->n_outcomes + 1) * sizeof(*nmap));
	ret = pmap && nmap ? keep_port_map(k, r, pmap) : -ENOMEM;
	if (!ret)
		ret = read_new(db, r, k, m->top, after, ahead, err, errlen);
	if (!ret) {
		memset(nmap, 0xff,
		       (k->n_profiles + k->n_outcomes + 1) * sizeof(*nmap));
		ret = keep_remap(k, r, after, pmap, nmap);
	}
	if (!ret) {
		if (r->n_rows > 1)
			qsort(r->rows, r->n_rows, sizeof(*r->rows), cmp_row);
		ret = keep_merge(k, r->rows, r->n_rows);
	}
	if (!ret) {
		free(r->rows);
		r->rows = NULL;
		k->st.incremental++;
	}
	free(pmap);
	free(nmap);
	return ret;
}

/* The period's rows through the keep; @r borrows them (rows_kept). */
int res_read_kept(sqlite3 *db, struct results *r, struct res_keep *k, char *err,
		  size_t errlen)
{
	double after = r->o.now - r->o.period,
	       ahead = r->o.now + r->o.max_ahead;
	struct res_mark m;
	int ret = read_mark(db, &m, err, errlen);

	if (!ret && !m.have) { /* an older schema: nothing tells deletions */
		res_keep_drop(k);
		return res_read_period(db, r, err, errlen);
	}
	r->id_max = m.top;
	if (!ret)
		ret = read_incremental(db, r, k, &m, after, ahead, err, errlen);
	if (ret == -EAGAIN) {
		ret = res_read_period(db, r, err, errlen);
		if (!ret) { /* the keep takes the rows */
			free(k->rows);
			k->rows = r->rows;
			k->cap_rows = r->cap_rows;
			k->n_rows = r->n_rows;
			k->head = 0;
			k->st.full_reads++;
		}
	}
	if (ret)
		return ret;
	k->st.rows_read += r->rows_seen;
	r->rows = k->rows ? k->rows + k->head : NULL;
	r->n_rows = k->n_rows;
	r->cap_rows = 0;
	r->rows_kept = 1;
	k->after = after;
	k->ahead = ahead;
	k->top = m.top;
	k->seq = m.seq;
	k->valid = 1;
	return 0;
}

/* Keep @r's names (after res_canonical()): the next read maps to them. */
int res_keep_names(struct res_keep *k, const struct results *r)
{
	size_t n = r->n_ports + r->n_profiles + r->n_outcomes;
	const struct res_slot *sl;
	int ret = 0;

	buf_reset(&k->names);
	if (vec_grow(&k->name_at, &k->cap_names, n, sizeof(*k->name_at)))
		return -ENOMEM;
	k->n_ports = r->n_ports;
	k->n_profiles = r->n_profiles;
	k->n_outcomes = r->n_outcomes;
	for (size_t i = 0; !ret && (sl = hmap_next(&r->index, &i));) {
		if (sl->kind != 'p')
			continue;
		k->name_at[sl->index] = k->names.len;
		ret = buf_add(&k->names, sl->key, strlen(sl->key) + 1);
	}
	for (size_t i = 0; !ret && i < r->n_profiles + r->n_outcomes; i++) {
		const char *s = i < r->n_profiles
					? r->profiles[i]
					: r->outcomes[i - r->n_profiles];

		k->name_at[r->n_ports + i] = k->names.len;
		ret = buf_add(&k->names, s, strlen(s) + 1);
	}
	return ret;
}
