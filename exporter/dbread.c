// SPDX-License-Identifier: MIT
/*
 * The exporter's SQLite helpers: see dbread.h. A NULL column reads as -1
 * because the schema's unknown numbers are NULL and every reader shows an
 * unknown number as no sample (or an empty label value), as the report does.
 */
#include "dbread.h"
#include "dbsettings.h"
#include "sqlname.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dbread_err(sqlite3 *db, int rc, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s (%s)", what, sqlite3_errmsg(db),
		 sqlite3_errstr(rc));
	return -EIO;
}

const char *dbread_text(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

int64_t dbread_int(sqlite3_stmt *s, int i)
{
	if (sqlite3_column_type(s, i) == SQLITE_NULL)
		return -1;
	return sqlite3_column_int64(s, i);
}

double dbread_real(sqlite3_stmt *s, int i)
{
	if (sqlite3_column_type(s, i) == SQLITE_NULL)
		return -1;
	return sqlite3_column_double(s, i);
}

double dbread_nan(sqlite3_stmt *s, int i)
{
	if (sqlite3_column_type(s, i) == SQLITE_NULL)
		return NAN;
	return sqlite3_column_double(s, i);
}

/* PRAGMA user_version into *@v; SQLite's result code. */
static int dbread_user_version(sqlite3 *db, int *v)
{
	sqlite3_stmt *s = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		*v = sqlite3_column_int(s, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(s);
	return rc;
}

int dbread_version(sqlite3 *db)
{
	int v = 0;

	return dbread_user_version(db, &v) == SQLITE_OK ? v : 0;
}

int dbread_has_table(sqlite3 *db, const char *name)
{
	sqlite3_stmt *s;
	int yes;

	if (sql_prepare(db, "SELECT 1 FROM sqlite_master WHERE name = :name", 0,
			&s) != SQLITE_OK)
		return 0;
	sql_name_text(s, ":name", name);
	yes = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return yes;
}

int dbread_open(const char *path, int busy_timeout_ms, sqlite3 **out, char *err,
		size_t errlen)
{
	sqlite3 *db = NULL;
	int rc, version = 0;

	rc = sqlite3_open_v2(path, &db,
			     SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(db, busy_timeout_ms);
		rc = dbread_user_version(db, &version);
	}
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path,
			 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		sqlite3_close(db);
		return -EIO;
	}
	if (version < 1) {
		snprintf(err, errlen,
			 "%s: no ibpulse schema (user_version %d); "
			 "has the collector started?",
			 path, version);
		sqlite3_close(db);
		return -ENOENT;
	}
	*out = db;
	return 0;
}

static int dbread_shared_row(void *ctx, sqlite3_stmt *s)
{
	struct dbread_shared *o = ctx;
	const char *k = dbread_text(s, 0), *v = dbread_text(s, 1);
	char *end;
	double d;

	if (!k || !v)
		return 0;
	d = strtod(v, &end);
	if (!strcmp(k, DBSET_GROUP_LABEL))
		snprintf(o->group_label, sizeof(o->group_label), "%s", v);
	else if (*end || end == v || !isfinite(d) || d < 0)
		return 0; /* not a number: the default stays */
	else if (!strcmp(k, DBSET_PLAN_PERIOD))
		o->plan_period = d;
	else if (!strcmp(k, DBSET_RESULTS_MAX_AHEAD))
		o->results_max_ahead = d;
	else
		return 0;
	o->found++;
	return 0;
}

int dbread_shared(sqlite3 *db, struct dbread_shared *out, char *err,
		  size_t errlen)
{
	*out = (struct dbread_shared){
		.results_max_ahead = DBSET_DEFAULT_RESULTS_MAX_AHEAD,
		.group_label = DBSET_DEFAULT_GROUP_LABEL,
	};
	if (!dbread_has_table(db, "setting"))
		return 0;
	return dbread_each(db, "SELECT key, value FROM setting", "setting",
			   NULL, dbread_shared_row, out, err, errlen);
}

int dbread_each(sqlite3 *db, const char *sql, const char *what,
		const struct dbread_arg *arg, dbread_row_fn fn, void *ctx,
		char *err, size_t errlen)
{
	sqlite3_stmt *s;
	int rc, ret = 0;

	rc = sql_prepare(db, sql, 0, &s);
	if (rc != SQLITE_OK)
		return dbread_err(db, rc, what, err, errlen);
	if (arg && arg->text)
		sql_name_text(s, arg->name, arg->text);
	else if (arg)
		sql_name_real(s, arg->name, arg->real);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
		ret = fn(ctx, s);
	if (!ret && rc != SQLITE_DONE)
		ret = dbread_err(db, rc, what, err, errlen);
	sqlite3_finalize(s);
	return ret;
}

int dbread_pages(sqlite3 *db, const struct dbread_pages *q, dbread_row_fn fn,
		 void *ctx, char *err, size_t errlen)
{
	size_t chunk = q->chunk ? q->chunk : 1, n = chunk;
	double after = q->after;
	sqlite3_int64 after_id = q->after_id;
	sqlite3_stmt *s;
	int rc, ret = 0;

	rc = sql_prepare(db, q->sql, 0, &s);
	if (rc != SQLITE_OK)
		return dbread_err(db, rc, q->what, err, errlen);
	while (!ret && n == chunk) {
		if (q->time_col >= 0)
			sql_name_real(s, ":after_time", after);
		sql_name_int(s, ":after_id", after_id);
		sql_name_int(s, ":limit", (sqlite3_int64)chunk);
		for (size_t i = 0; i < q->n_args; i++)
			sql_name_real(s, q->args[i].name, q->args[i].real);
		for (n = 0; !ret && (rc = sqlite3_step(s)) == SQLITE_ROW; n++) {
			after_id = sqlite3_column_int64(s, 0);
			if (q->time_col >= 0)
				after = sqlite3_column_double(s, q->time_col);
			ret = fn(ctx, s);
		}
		if (!ret && rc != SQLITE_DONE)
			ret = dbread_err(db, rc, q->what, err, errlen);
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	return ret;
}
