// SPDX-License-Identifier: MIT
/*
 * SQL parameters by name (sqlname.h): the prepare that refuses a
 * parameter without one, and the binds.
 */
#include "sqlname.h"
#include "log.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>

int sql_names_check(sqlite3_stmt *s)
{
	int n = sqlite3_bind_parameter_count(s);

	for (int i = 1; i <= n; i++) {
		const char *name = sqlite3_bind_parameter_name(s, i);

		if (!name || name[0] != ':') {
			log_err("sql: parameter %d (%s) has no :name in: %s", i,
				name ? name : "?", sqlite3_sql(s));
			return -EINVAL;
		}
	}
	return 0;
}

int sql_prepare(sqlite3 *db, const char *sql, unsigned flags,
		sqlite3_stmt **out)
{
	int rc = sqlite3_prepare_v3(db, sql, -1, flags, out, NULL);

	if (rc != SQLITE_OK || !*out || !sql_names_check(*out))
		return rc;
	sqlite3_finalize(*out);
	*out = NULL;
	return SQLITE_MISUSE;
}

int sql_param(sqlite3_stmt *s, const char *name)
{
	int i = sqlite3_bind_parameter_index(s, name);

	if (!i)
		log_err("sql: no parameter %s in: %s", name, sqlite3_sql(s));
	return i;
}

void sql_bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

void sql_name_text(sqlite3_stmt *s, const char *name, const char *v)
{
	sql_bind_text(s, sql_param(s, name), v);
}

void sql_name_int(sqlite3_stmt *s, const char *name, int64_t v)
{
	sqlite3_bind_int64(s, sql_param(s, name), v);
}

void sql_name_real(sqlite3_stmt *s, const char *name, double v)
{
	if (isnan(v))
		sqlite3_bind_null(s, sql_param(s, name));
	else
		sqlite3_bind_double(s, sql_param(s, name), v);
}

void sql_name_null(sqlite3_stmt *s, const char *name)
{
	sqlite3_bind_null(s, sql_param(s, name));
}

void sql_name_known(sqlite3_stmt *s, const char *name, int64_t v)
{
	if (v >= 0)
		sql_name_int(s, name, v);
	else
		sql_name_null(s, name);
}
