/* SPDX-License-Identifier: MIT */
/*
 * SQL parameters by name, for the collector's store and the exporter (the
 * two programs that speak SQLite): a statement names its parameters
 * (":host", ":now"), the C code binds those names next to the SQL text,
 * and a statement with a nameless or numbered parameter ("?", "?1") is
 * refused when it is prepared (issue 18 item 5).
 */
#ifndef IBPULSE_SQLNAME_H
#define IBPULSE_SQLNAME_H

#include <sqlite3.h>
#include <stdint.h>

/*
 * sql_prepare() - sqlite3_prepare_v3() of @sql with @flags into *@out,
 * then sql_names_check(). Returns SQLite's code: SQLITE_OK, the prepare's
 * error, or SQLITE_MISUSE (logged, *@out NULL) for a parameter without a
 * name.
 */
int sql_prepare(sqlite3 *db, const char *sql, unsigned flags,
		sqlite3_stmt **out);

/*
 * sql_names_check() - 0 when every parameter of @s has a name that starts
 * with ':'; -EINVAL, logged with the statement's text, otherwise (a
 * programming error: the unit tests open every statement).
 */
int sql_names_check(sqlite3_stmt *s);

/*
 * sql_param() - the index of parameter @name (":link") in @s; 0, logged,
 * when @s lacks it (a bug of the caller: the bind then fails with
 * SQLITE_RANGE, which the unit tests see as a wrong result). A scan of the
 * names: a statement run per sample looks its indexes up once.
 */
int sql_param(sqlite3_stmt *s, const char *name);

/* Bind @v at @i as text (not copied: it must outlive the step), NULL as
 * NULL. */
void sql_bind_text(sqlite3_stmt *s, int i, const char *v);

/*
 * Binds by name: text (as sql_bind_text()), an integer, a real (NAN as
 * NULL), and NULL.
 */
void sql_name_text(sqlite3_stmt *s, const char *name, const char *v);
void sql_name_int(sqlite3_stmt *s, const char *name, int64_t v);
void sql_name_real(sqlite3_stmt *s, const char *name, double v);
void sql_name_null(sqlite3_stmt *s, const char *name);
/* An integer where negative means unknown: NULL then. */
void sql_name_known(sqlite3_stmt *s, const char *name, int64_t v);

#endif
