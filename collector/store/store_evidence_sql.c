// SPDX-License-Identifier: MIT
/*
 * The SQL of the evidence store (store_evidence_int.h), one statement per
 * enum esql with named parameters, prepared once at open; the tables are
 * in schema/005_evidence.sql. Also the store's life: prepare, finalize,
 * reset after a failed transaction, the planner's version counter.
 */
#include "log.h"
#include "store_evidence_int.h"
#include "store_int.h"
#include "store_regress_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
static const char *const esql_text[ESQL_COUNT] = {
	[ESQL_EL_UPSERT] =
		"INSERT INTO element (kind, host, device, port, profile, metric, updated) "
		"VALUES (:kind, :host, :device, :port, :profile, :metric, :now) "
		"ON CONFLICT (kind, host, device, port, profile, metric) "
		"DO UPDATE SET updated = :now RETURNING id, suspect_id",
	[ESQL_REC_INS] =
		"INSERT INTO element_recent (element_id, started, peer_id, via_port, value, baseline, bad) "
		"VALUES (:el, :started, :peer, :via, :value, :baseline, :bad)",
	[ESQL_REC_TRIM] =
		"DELETE FROM element_recent WHERE element_id = :el AND rowid NOT IN "
		"(SELECT rowid FROM element_recent WHERE element_id = :el "
		"ORDER BY started DESC, rowid DESC LIMIT :keep)",
	[ESQL_EL_GET] =
		"SELECT kind, host, device, port, profile, metric, window_from, suspect_id, confirm "
		"FROM element WHERE id = :el",
	[ESQL_WINDOW] =
		"SELECT started, peer_id, via_port, value, baseline, bad FROM element_recent "
		"WHERE element_id = :el AND started > :from "
		"ORDER BY started DESC, rowid DESC LIMIT :keep",
	[ESQL_EL_UPD] =
		"UPDATE element SET status = :status, confirm = :confirm, judged = :judged, "
		"bad = :bad, peers_bad = :peers_bad, peers_exonerating = :peers_ex, "
		"good_run = :good_run, last_started = :last, window_from = :from, "
		"suspect_id = :sus, updated = :now WHERE id = :el",
	[ESQL_REFERRERS] =
		"SELECT DISTINCT element_id FROM element_recent WHERE peer_id = :el AND bad = 1",
	[ESQL_SUS_INS] =
		"INSERT INTO suspect (kind, host, device, port, profile, metric, since, first_bad, "
		"opened, judged_results, bad_results, good_results, peers_bad, peers_exonerating, "
		"baseline, figure, worst, last, updated) "
		"VALUES (:kind, :host, :device, :port, :profile, :metric, :now, :first_bad, "
		":opened, :judged, :bad, :good, :peers_bad, :peers_ex, "
		":baseline, :figure, :worst, :last, :now) RETURNING id",
	[ESQL_SUS_TICK] =
		"UPDATE suspect SET bad_results = bad_results + :bad, "
		"good_results = good_results + 1 - :bad, last = :value, "
		"worst = CASE WHEN :bad AND ((:lower AND :value < worst) OR "
		"(NOT :lower AND :value > worst)) THEN :value ELSE worst END, "
		"updated = :now WHERE id = :sus AND closed IS NULL",
	[ESQL_SUS_CLOSE] =
		"UPDATE suspect SET closed = :now, close_reason = :reason, updated = :now "
		"WHERE id = :sus AND closed IS NULL",
	[ESQL_DEV_EL] =
		"SELECT suspect_id FROM element WHERE kind = 'device' AND host = :host "
		"AND device = :device AND port = 0 AND profile = :profile AND metric = :metric",
	[ESQL_DEV_PORTS_OPEN] =
		"SELECT id, suspect_id FROM element WHERE kind = 'port' AND host = :host "
		"AND device = :device AND profile = :profile AND metric = :metric "
		"AND suspect_id IS NOT NULL",
	[ESQL_DEV_PORTS_FRESH] =
		"UPDATE element SET window_from = :from WHERE kind = 'port' "
		"AND host = :host AND device = :device AND profile = :profile "
		"AND metric = :metric AND window_from < :from RETURNING id",
	[ESQL_PCIE] =
		"SELECT d.pcie_cur_speed_gts, d.pcie_max_speed_gts, d.pcie_cur_width, "
		"d.pcie_max_width FROM host h JOIN device d ON d.host_id = h.id "
		"AND d.name = :device WHERE h.name = :host",
	[ESQL_GP_EXPLAINS] =
		"SELECT 1 FROM group_pair_suspect g, "
		"(SELECT l.value AS v FROM probe p JOIN probe_label l ON l.probe_id = p.id "
		"AND l.key = :label WHERE p.host = :host) a, "
		"(SELECT l.value AS v FROM probe p JOIN probe_label l ON l.probe_id = p.id "
		"AND l.key = :label WHERE p.host = :peer) b "
		"WHERE g.profile = :profile AND g.metric = :metric AND "
		"((g.group_a = a.v AND g.group_b = b.v) OR (g.group_a = b.v AND g.group_b = a.v))",
	[ESQL_CONFIRMS] =
		"SELECT host, device, port, profile FROM element WHERE confirm != 0 "
		"ORDER BY host, device, port, profile",
	[ESQL_GOOD] =
		"SELECT host, device, port, profile FROM element WHERE kind = 'port' "
		"AND confirm = 0 AND suspect_id IS NULL AND good_run > 0 "
		"AND last_started >= :since",
	[ESQL_SUSPECTS] =
		"SELECT host, device, port, profile FROM element WHERE suspect_id IS NOT NULL",
	[ESQL_RET_SUS] = "DELETE FROM suspect WHERE host = :host",
	[ESQL_RET_EL] = "DELETE FROM element WHERE host = :host",
	[ESQL_PRUNE_STALE_SUS] =
		"UPDATE suspect SET closed = :now, close_reason = 'stale', updated = :now "
		"WHERE id IN (SELECT suspect_id FROM element WHERE suspect_id IS NOT NULL "
		"AND last_started < :stale LIMIT :batch)",
	[ESQL_PRUNE_STALE_EL] =
		"DELETE FROM element WHERE id IN (SELECT e.id FROM element e "
		"WHERE e.last_started < :stale AND (e.suspect_id IS NULL OR EXISTS "
		"(SELECT 1 FROM suspect s WHERE s.id = e.suspect_id AND s.closed IS NOT NULL)) "
		"LIMIT :batch)",
	[ESQL_PRUNE_SUS] =
		"DELETE FROM suspect WHERE id IN (SELECT id FROM suspect "
		"WHERE closed IS NOT NULL AND closed < :cutoff LIMIT :batch)",
};
/* clang-format on */

/* ---- statements and named binds ---- */

sqlite3_stmt *evidence_stmt(struct store_evidence *ev, enum esql which)
{
	sqlite3_stmt *s = ev->s[which];

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return s;
}

double evidence_col_real(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL
		       ? NAN
		       : sqlite3_column_double(s, i);
}

const char *evidence_col_text(sqlite3_stmt *s, int i)
{
	const char *v = (const char *)sqlite3_column_text(s, i);

	return v ? v : "";
}

int store_evidence_prepare(struct store *st, const struct evidence_opts *o,
			   const char *group_label, struct store_evidence **out)
{
	struct store_evidence *ev = calloc(1, sizeof(*ev));

	*out = NULL;
	if (!ev)
		return -ENOMEM;
	ev->o = *o;
	if (group_label && !(ev->group_label = strdup(group_label))) {
		free(ev);
		return -ENOMEM;
	}
	for (int i = 0; i < ESQL_COUNT; i++) {
		int rc = sql_prepare(st->db, esql_text[i],
				     SQLITE_PREPARE_PERSISTENT, &ev->s[i]);

		if (rc != SQLITE_OK) {
			int ret = store_err(st, rc, esql_text[i]);

			store_evidence_finalize(ev);
			return ret;
		}
	}
	*out = ev;
	return 0;
}

void store_evidence_finalize(struct store_evidence *ev)
{
	if (!ev)
		return;
	for (int i = 0; i < ESQL_COUNT; i++)
		sqlite3_finalize(ev->s[i]);
	free(ev->group_label);
	free(ev->touched);
	free(ev);
}

void store_evidence_reset(struct store *st)
{
	struct store_evidence *ev = store_regress_evidence(st);

	if (ev)
		ev->n_touched = 0;
}

uint64_t store_evidence_version(struct store *st)
{
	struct store_evidence *ev = store_regress_evidence(st);

	return ev ? ev->version : 0;
}
