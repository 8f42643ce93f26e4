// SPDX-License-Identifier: MIT
/*
 * The regression tables seen from outside the result path: the JSON of
 * GET /api/v1/regressions (docs/api.md), retiring a host's rows, and the
 * pruning of stale links, old closed regressions and stale port baselines
 * (store_regress.h). Suspects are inferred again whenever a retirement or
 * a prune step changed which links are in regression.
 */
#include "store_evidence.h"
#include "now.h"
#include "store_localize.h"
#include "store_int.h"
#include "store_regress_int.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API_MAX_OPEN 10000    /* open regressions listed at most */
#define API_MAX_CLOSED 1000   /* closed ones, the newest */
#define API_MAX_SUSPECT 10000 /* suspect ports, group pairs */
#define API_MAX_UNDER 10000   /* links under their expected figure */

/* Redo the suspects of every (profile, metric) that has any. */
static int reinfer_all(struct store *st, double now)
{
	struct store_regress *rg = store_regress_of(st);
	sqlite3_stmt *s = regress_stmt(rg, RSQL_ALL_KINDS);
	int rc, ret = 0;

	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *metric = (const char *)sqlite3_column_text(s, 1);

		ret = regress_mark(rg, (const char *)sqlite3_column_text(s, 0),
				   baseline_metric_row(metric));
	}
	sqlite3_reset(s);
	if (!ret && rc != SQLITE_DONE)
		ret = store_err(st, rc, "suspect kinds");
	return ret ? ret : store_regress_flush(st, now);
}

int store_regress_retire(struct store *st, const char *host, double now,
			 size_t *changes)
{
	static const enum store_rsql del[] = {RSQL_RET_LINKS, RSQL_RET_REGS,
					      RSQL_RET_PORT_BL};
	size_t n = 0;
	struct store_regress *rg = store_regress_of(st);
	int ret = 0;

	*changes = 0;
	if (!rg)
		return 0;
	if (!(now > 0))
		now = now_wall();
	for (size_t i = 0; !ret && i < sizeof(del) / sizeof(*del); i++) {
		sqlite3_stmt *s = regress_stmt(rg, del[i]);

		sql_name_text(s, ":host", host);
		ret = store_done(st, s, "retire baselines");
		if (!ret)
			*changes += (size_t)sqlite3_changes(st->db);
	}
	if (!ret)
		ret = store_evidence_retire(st, host, now, &n);
	*changes += n;
	if (!ret)
		ret = store_localize_retire(st, host, &n);
	*changes += ret ? 0 : n;
	return ret ? ret : reinfer_all(st, now);
}

/* Run a prune DELETE/UPDATE with :cutoff @a (or :now @a and :cutoff @b)
 * and :batch @limit where it has them; its changes. */
static int prune_run(struct store *st, enum store_rsql which, double a,
		     double b, long long limit, size_t *changes)
{
	sqlite3_stmt *s = regress_stmt(store_regress_of(st), which);
	int ret;

	if (which == RSQL_PRUNE_STALE_REGS) {
		sql_name_real(s, ":now", a);
		sql_name_real(s, ":cutoff", b);
	} else {
		sql_name_real(s, ":cutoff", a);
	}
	if (which != RSQL_PRUNE_PORT_BL)
		sql_name_int(s, ":batch", limit);
	ret = store_done(st, s, "prune baselines");
	*changes = ret ? 0 : (size_t)sqlite3_changes(st->db);
	return ret;
}

int store_regress_prune(struct store *st, double now, double cutoff,
			long long batch, size_t *deleted)
{
	struct store_regress *rg = store_regress_of(st);
	double stale;
	size_t n[5] = {0};
	int ret, more = 0;

	*deleted = 0;
	if (!rg)
		return 0;
	stale = now - rg->window;
	ret = prune_run(st, RSQL_PRUNE_STALE_REGS, now, stale, batch, &n[0]);
	if (!ret)
		ret = prune_run(st, RSQL_PRUNE_STALE_LINKS, stale, 0, batch,
				&n[1]);
	if (!ret && isfinite(cutoff))
		ret = prune_run(st, RSQL_PRUNE_REGS, cutoff, 0, batch, &n[2]);
	if (!ret)
		ret = prune_run(st, RSQL_PRUNE_PORT_BL, stale, 0, 0, &n[3]);
	if (!ret)
		ret = more = store_evidence_prune(st, now, stale, cutoff, batch,
						  &n[4]);
	if (ret > 0)
		ret = 0;
	if (!ret) {
		size_t k = 0;

		ret = store_localize_prune(st, stale, cutoff, batch, &k);
		more |= ret > 0;
		ret = ret > 0 ? 0 : ret;
		n[4] += k;
	}
	if (!ret && (n[0] || n[1]))
		ret = reinfer_all(st, now);
	if (ret)
		return ret;
	*deleted = n[1] + n[2] + n[3] + n[4];
	return n[0] >= (size_t)batch || n[1] >= (size_t)batch ||
	       n[2] >= (size_t)batch || more;
}

/* ---- GET /api/v1/regressions ---- */

static json_t *col_json(sqlite3_stmt *s, int i)
{
	switch (sqlite3_column_type(s, i)) {
	case SQLITE_NULL:
		return json_null();
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(s, i));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(s, i));
	default:
		return json_string((const char *)sqlite3_column_text(s, i));
	}
}

/* Each row of @sql (:since bound to @a when not NAN, :limit to @max + 1) as an
 * object whose keys are the column names, appended to @arr; at most @max,
 * *@more set past. */
static int rows_json(struct store *st, const char *sql, double a, size_t max,
		     json_t *arr, int *more)
{
	sqlite3_stmt *s;
	size_t n = 0;
	int rc, ret = 0;

	rc = sql_prepare(st->db, sql, 0, &s);
	if (rc != SQLITE_OK)
		return store_err(st, rc, "regressions view");
	if (!isnan(a))
		sql_name_real(s, ":since", a);
	sql_name_int(s, ":limit", (sqlite3_int64)max + 1);
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_t *o;

		if (n++ == max) {
			*more = 1;
			break;
		}
		o = json_object();
		for (int i = 0; o && i < sqlite3_column_count(s); i++)
			json_object_set_new(o, sqlite3_column_name(s, i),
					    col_json(s, i));
		if (!o || json_array_append_new(arr, o))
			ret = -ENOMEM;
	}
	if (!ret && rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = store_err(st, rc, "regressions view");
	sqlite3_finalize(s);
	return ret;
}

/* clang-format off */
#define REG_COLS							\
	"id, a_host AS host, a_device AS device, a_port AS port, "	\
	"b_host AS peer_host, b_device AS peer_device, b_port AS peer_port, " \
	"profile, metric, started, opened, closed, close_reason AS reason, " \
	"baseline, threshold, baseline_source, figure, worst, last, "	\
	"bad_results, results "						\
	"FROM regression "

/* A device's "port" is null: it is every port of the device. Links and
 * switches (schema 9, store_localize.h) have no host: their ends. */
#define SUS_COLS							\
	"id, kind, host, device, "					\
	"CASE WHEN kind = 'device' THEN NULL ELSE port END AS port, "	\
	"profile, metric, since, first_bad, opened, closed, "		\
	"close_reason AS reason, judged_results, bad_results, "	\
	"good_results, peers_bad, peers_exonerating, baseline, figure, " \
	"worst, last, NULL AS a_node_guid, NULL AS a_node_desc, "	\
	"NULL AS a_port, NULL AS b_node_guid, NULL AS b_node_desc, "	\
	"NULL AS b_port, NULL AS confidence, NULL AS counters "	\
	"FROM suspect "
#define FSUS_COLS							\
	"id, kind, NULL, NULL, NULL, profile, metric, since, first_bad, " \
	"opened, closed, close_reason, bad_tests + good_tests, bad_tests, " \
	"good_tests, NULL, NULL, baseline, figure, worst, last, "	\
	"a_node_guid, a_node_desc, a_port, b_node_guid, b_node_desc, "	\
	"b_port, confidence, counters "					\
	"FROM fabric_suspect "

static const struct {
	const char *key, *sql;
	size_t max;
	int windowed; /* :since is now - window */
} api_views[] = {
	{"open",
	 "SELECT " REG_COLS
	 "WHERE closed IS NULL "
	 "ORDER BY opened DESC, id DESC "
	 "LIMIT :limit",
	 API_MAX_OPEN, 0},
	{"closed",
	 "SELECT " REG_COLS
	 "WHERE closed IS NOT NULL AND closed >= :since "
	 "ORDER BY closed DESC, id DESC "
	 "LIMIT :limit",
	 API_MAX_CLOSED, 1},
	{"suspect_ports",
	 "SELECT host, device, port, profile, metric, since, "
	 "links_regressed, links_judged, peers_fine "
	 "FROM port_suspect "
	 "ORDER BY since, host, device, port "
	 "LIMIT :limit",
	 API_MAX_SUSPECT, 0},
	{"suspect_group_pairs",
	 "SELECT group_a, group_b, profile, metric, since, links_regressed, "
	 "links_judged "
	 "FROM group_pair_suspect "
	 "ORDER BY since, group_a, group_b "
	 "LIMIT :limit",
	 API_MAX_SUSPECT, 0},
	{"suspects",
	 "SELECT " SUS_COLS
	 "WHERE closed IS NULL "
	 "UNION ALL "
	 "SELECT " FSUS_COLS
	 "WHERE closed IS NULL "
	 "ORDER BY since, kind, host, device, port, a_node_guid, a_port "
	 "LIMIT :limit",
	 API_MAX_SUSPECT, 0},
	{"suspects_closed",
	 "SELECT " SUS_COLS
	 "WHERE closed IS NOT NULL AND closed >= :since "
	 "UNION ALL "
	 "SELECT " FSUS_COLS
	 "WHERE closed IS NOT NULL AND closed >= :since "
	 "ORDER BY closed DESC, kind, id DESC "
	 "LIMIT :limit",
	 API_MAX_CLOSED, 1},
	{"under_expected",
	 "SELECT a_host AS host, a_device AS device, a_port AS port, "
	 "b_host AS peer_host, b_device AS peer_device, b_port AS peer_port, "
	 "profile, last_value AS figure, expected, expected_limit, "
	 "efficiency, under_since AS since "
	 "FROM link_state "
	 "WHERE under_since IS NOT NULL "
	 "ORDER BY under_since, id "
	 "LIMIT :limit",
	 API_MAX_UNDER, 0},
};
/* clang-format on */

int store_regress_json(struct store *st, double now, char **out)
{
	struct store_regress *rg = store_regress_of(st);
	json_t *root;
	int more = 0, ret = 0;

	*out = NULL;
	if (!rg)
		return -ENOTSUP;
	root = json_pack("{s:f, s:f, s:I, s:I, s:I}", "now", now, "window_days",
			 rg->o.window_days, "bad_results",
			 (json_int_t)rg->o.bad_results, "judged_results",
			 (json_int_t)rg->o.judged_results, "good_results",
			 (json_int_t)rg->o.good_results);
	if (!root)
		return -ENOMEM;
	for (size_t i = 0; !ret && i < sizeof(api_views) / sizeof(*api_views);
	     i++) {
		json_t *arr = json_array();

		if (!arr || json_object_set_new(root, api_views[i].key, arr)) {
			ret = -ENOMEM;
			break;
		}
		ret = rows_json(st, api_views[i].sql,
				api_views[i].windowed ? now - rg->window : NAN,
				api_views[i].max, arr, &more);
	}
	if (!ret && json_object_set_new(root, "truncated", json_boolean(more)))
		ret = -ENOMEM;
	if (!ret && !(*out = json_dumps(root, JSON_COMPACT)))
		ret = -ENOMEM;
	json_decref(root);
	return ret;
}
