// SPDX-License-Identifier: MIT
/*
 * Per-host change markers for the exporter's block cache: see
 * store_change.h. Two statements per changed host and report: take the
 * next value of change_seq, then set the host's row to it.
 */
#include "store_change.h"
#include "store_int.h"

#include <errno.h>

/* clang-format off */
static const char *const change_sql[2] = {
	"UPDATE change_seq SET seq = seq + 1 RETURNING seq",
	"INSERT INTO host_change (host_id, seq) VALUES (:host_id, :seq) "
	"ON CONFLICT (host_id) DO UPDATE SET seq = excluded.seq",
};
/* clang-format on */

static int store_change_has_tables(struct store *st)
{
	sqlite3_stmt *s;
	int n = 0;

	if (sqlite3_prepare_v2(
		    st->db,
		    "SELECT count(*) FROM sqlite_master WHERE type = "
		    "'table' AND name IN ('change_seq', "
		    "'host_change')",
		    -1, &s, NULL) != SQLITE_OK)
		return store_err(st, sqlite3_errcode(st->db), "host_change");
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return n == 2;
}

int store_change_open(struct store *st)
{
	int ret = store_change_has_tables(st);

	if (ret <= 0)
		return ret;
	for (int i = 0; i < 2; i++) {
		int rc = sql_prepare(st->db, change_sql[i],
				     SQLITE_PREPARE_PERSISTENT, &st->change[i]);

		if (rc != SQLITE_OK)
			return store_err(st, rc, change_sql[i]);
	}
	return 0;
}

void store_change_close(struct store *st)
{
	for (int i = 0; i < 2; i++) {
		sqlite3_finalize(st->change[i]);
		st->change[i] = NULL;
	}
}

int store_change_host(struct store *st, int64_t host_id)
{
	sqlite3_stmt *s = st->change[0];
	int64_t seq;
	int rc;

	if (!s)
		return 0;
	sqlite3_reset(s);
	rc = sqlite3_step(s);
	seq = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return store_err(st, rc, "change_seq");
	s = st->change[1];
	sqlite3_reset(s);
	sql_name_int(s, ":host_id", host_id);
	sql_name_int(s, ":seq", seq);
	return store_done(st, s, "host_change");
}
