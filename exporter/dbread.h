/* SPDX-License-Identifier: MIT */
/*
 * The exporter's SQLite helpers, one copy for every reader of a scrape
 * (snapshot.c, results.c, regress.c, fabric_snap.c): opening the
 * collector's database read-only, SQLite's errors as -EIO with its message,
 * NULL-aware column getters, the schema version, the settings the
 * collector wrote for the exporter, and running a statement row by row into
 * a callback.
 */
#ifndef IBPULSE_DBREAD_H
#define IBPULSE_DBREAD_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

/*
 * dbread_open() - open @path read-only (it may be a WAL database the
 * collector is writing) and check that its schema is there. Returns 0, or
 * a negative errno with the reason in @err; close *@out with
 * sqlite3_close().
 */
int dbread_open(const char *path, int busy_timeout_ms, sqlite3 **out, char *err,
		size_t errlen);

/* "@what: SQLite's message (its code's text)" in @err; returns -EIO. */
int dbread_err(sqlite3 *db, int rc, const char *what, char *err, size_t errlen);

/*
 * Column @i: text (NULL for NULL), integer and real (-1 for NULL: an
 * unknown count or size), and a measured figure (NAN for NULL: a figure
 * may be negative or zero).
 */
const char *dbread_text(sqlite3_stmt *s, int i);
int64_t dbread_int(sqlite3_stmt *s, int i);
double dbread_real(sqlite3_stmt *s, int i);
double dbread_nan(sqlite3_stmt *s, int i);

/* The schema's user_version; 0 when it cannot be read. */
int dbread_version(sqlite3 *db);
/* 1 when table @name exists, else 0 (an older schema). */
int dbread_has_table(sqlite3 *db, const char *name);

/*
 * The collector's settings the exporter uses as they are (the setting
 * table, common/dbsettings.h): the collector's defaults for a row that is
 * not there (a database an older collector wrote, or none yet); @found
 * counts the rows that were.
 */
struct dbread_shared {
	double plan_period;	  /* seconds; 0: unknown (no row) */
	double results_max_ahead; /* seconds */
	char group_label[256];	  /* "": no groups */
	int found;
};

/* dbread_shared() - read them. Returns 0 or -EIO with the reason in @err. */
int dbread_shared(sqlite3 *db, struct dbread_shared *out, char *err,
		  size_t errlen);

/* Parameter @name (":since") of a statement: @text when set, else @real. */
struct dbread_arg {
	const char *name;
	const char *text;
	double real;
};

/* One row; 0 to go on, a negative errno to stop with it. */
typedef int (*dbread_row_fn)(void *ctx, sqlite3_stmt *s);

/*
 * dbread_each() - run @sql (@arg bound; NULL: nothing bound) and
 * hand each row to @fn(@ctx). Returns 0, @fn's error, or -EIO with
 * "@what: ..." in @err.
 */
int dbread_each(sqlite3 *db, const char *sql, const char *what,
		const struct dbread_arg *arg, dbread_row_fn fn, void *ctx,
		char *err, size_t errlen);

/*
 * A keyset walk in pages (dbread_pages()): @sql takes :after_time and
 * :after_id, the (time, id) key of the last row seen, and :limit the page
 * size, and orders by that key; or, with @time_col -1, :after_id and
 * :limit only, ordered by id. @args[0..n_args) are bound as well. Column 0
 * of a row is its id, column @time_col its time.
 */
struct dbread_pages {
	const char *sql, *what;
	double after;	  /* the walk starts after (@after, @after_id) */
	int64_t after_id; /* -1: every row at @after */
	int time_col;	  /* -1: by id only */
	size_t chunk;	  /* rows a page; 0 is 1 */
	const struct dbread_arg *args;
	size_t n_args;
};

/*
 * dbread_pages() - hand every row of @q to @fn(@ctx), one page of
 * @q->chunk rows per statement run, so that each page is its own short
 * read transaction and the collector's writer is never held off for
 * long. Returns 0, @fn's error, or -EIO with "@what: ..." in @err.
 */
int dbread_pages(sqlite3 *db, const struct dbread_pages *q, dbread_row_fn fn,
		 void *ctx, char *err, size_t errlen);

#endif
