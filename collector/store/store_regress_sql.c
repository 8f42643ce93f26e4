// SPDX-License-Identifier: MIT
/*
 * The SQL of the baseline and regression store (store_regress_int.h),
 * one statement per enum store_rsql, prepared once at open. The tables
 * are described in schema/003_baselines.sql.
 */
#include "store_regress_int.h"

/* clang-format off */
#define GROUP_OF(h)							\
	"(SELECT l.value FROM probe p "					\
	"JOIN probe_label l ON l.probe_id = p.id AND l.key = :group_label " \
	"WHERE p.host = " h ")"
#define LINK_COLS							\
	"a_host, a_device, a_port, b_host, b_device, b_port, profile, metric"
#define LINK_PARAMS							\
	":a_host, :a_device, :a_port, :b_host, :b_device, :b_port, :profile, " \
	":metric"
static const char *const rsql_text[RSQL_COUNT] = {
	[RSQL_LINK_UPSERT] =
		"INSERT INTO link_state (" LINK_COLS ", a_group, b_group, updated) "
		"VALUES (" LINK_PARAMS ", " GROUP_OF(":a_host") ", "
		GROUP_OF(":b_host") ", :now) "
		"ON CONFLICT (" LINK_COLS ") DO UPDATE SET a_group = excluded.a_group, "
		"b_group = excluded.b_group "
		"RETURNING id, last_started, regression_id, window_from, under_since, "
		"under_from, last_bad",
	[RSQL_SAMPLES] =
		"SELECT value FROM baseline_sample "
		"WHERE link_id = :link_id AND started >= :from "
		"ORDER BY started DESC LIMIT :cap",
	[RSQL_SAMPLE_INS] =
		"INSERT INTO baseline_sample (link_id, started, value) "
		"VALUES (:link_id, :started, :value)",
	[RSQL_SAMPLE_TRIM] =
		"DELETE FROM baseline_sample "
		"WHERE link_id = :link_id AND (started < :from OR rowid NOT IN ("
		"SELECT rowid FROM baseline_sample WHERE link_id = :link_id "
		"ORDER BY started DESC LIMIT :cap))",
	[RSQL_SAMPLE_CLEAR] = "DELETE FROM baseline_sample WHERE link_id = :link_id",
	/* Each end through its own index (a UNION ALL: an OR of the two
	 * ends walked every link of the profile, 12 ms at 11,000 links
	 * against 0.3 ms); a loopback link counts once. */
	[RSQL_POOL] =
		"SELECT s.value FROM ("
		"SELECT id FROM link_state WHERE a_host = :host AND a_device = :device "
		"AND a_port = :port AND profile = :profile AND metric = :metric "
		"UNION ALL "
		"SELECT id FROM link_state WHERE b_host = :host AND b_device = :device "
		"AND b_port = :port AND profile = :profile AND metric = :metric "
		"AND NOT (a_host = :host AND a_device = :device AND a_port = :port)) l "
		"JOIN baseline_sample s ON s.link_id = l.id "
		"WHERE s.started >= :from "
		"ORDER BY s.started DESC LIMIT :cap",
	[RSQL_PORT_BL_UPSERT] =
		"INSERT INTO port_baseline (host, device, port, profile, metric, "
		"baseline, spread, samples, updated) "
		"VALUES (:host, :device, :port, :profile, :metric, :baseline, :spread, "
		":samples, :now) "
		"ON CONFLICT DO UPDATE SET baseline = :baseline, spread = :spread, "
		"samples = :samples, updated = :now",
	[RSQL_PORT_BL_GET] =
		"SELECT baseline, spread, samples FROM port_baseline "
		"WHERE host = :host AND device = :device AND port = :port "
		"AND profile = :profile AND metric = :metric "
		"AND baseline IS NOT NULL AND updated >= :since",
	[RSQL_RECENT] =
		"SELECT started, value, bad, under FROM link_recent "
		"WHERE link_id = :link_id "
		"ORDER BY started DESC LIMIT :keep",
	[RSQL_RECENT_INS] =
		"INSERT INTO link_recent (link_id, started, value, bad, under) "
		"VALUES (:link_id, :started, :value, :bad, :under)",
	[RSQL_RECENT_TRIM] =
		"DELETE FROM link_recent "
		"WHERE link_id = :link_id AND rowid NOT IN ("
		"SELECT rowid FROM link_recent WHERE link_id = :link_id "
		"ORDER BY started DESC LIMIT :keep)",
	[RSQL_REG_GET] =
		"SELECT started, baseline, threshold, baseline_source, worst "
		"FROM regression WHERE id = :id",
	[RSQL_REG_INS] =
		"INSERT INTO regression (" LINK_COLS ", started, opened, baseline, "
		"threshold, baseline_source, figure, worst, last, bad_results, results, "
		"updated) "
		"VALUES (" LINK_PARAMS ", :started, :opened, :baseline, :threshold, "
		":baseline_source, :figure, :worst, :last, :bad_results, :results, "
		":now) "
		"RETURNING id",
	[RSQL_REG_UPD] =
		"UPDATE regression SET worst = :worst, last = :last, "
		"bad_results = bad_results + :bad, results = results + 1, "
		"updated = :now "
		"WHERE id = :id",
	[RSQL_REG_CLOSE] =
		"UPDATE regression SET closed = :closed, close_reason = :reason, "
		"updated = :now "
		"WHERE id = :id",
	[RSQL_COUNT_BUMP] =
		"INSERT INTO regression_count (profile, metric, opened) "
		"VALUES (:profile, :metric, 1) "
		"ON CONFLICT DO UPDATE SET opened = opened + 1",
	[RSQL_LINK_UPD] =
		"UPDATE link_state SET baseline = :baseline, spread = :spread, "
		"threshold = :threshold, baseline_source = :baseline_source, "
		"samples = :samples, judged = judged + :judged, "
		"last_value = :last_value, last_started = :last_started, "
		"last_bad = :last_bad, regression_id = :regression_id, "
		"window_from = :window_from, expected = :expected, "
		"expected_limit = :expected_limit, efficiency = :efficiency, "
		"under_since = :under_since, under_from = :under_from, "
		"updated = :now "
		"WHERE id = :id",
	[RSQL_PORT_INFO] =
		"SELECT p.rate_bytes, p.link_layer, d.pcie_cur_speed_gts, "
		"d.pcie_cur_width, p.state "
		"FROM host h JOIN device d ON d.host_id = h.id AND d.name = :device "
		"JOIN port p ON p.device_id = d.id AND p.port = :port "
		"WHERE h.name = :host",
	[RSQL_OPEN_LINKS] =
		"SELECT id, " LINK_COLS ", a_group, b_group FROM link_state "
		"WHERE profile = :profile AND metric = :metric "
		"AND regression_id IS NOT NULL",
	[RSQL_PORT_LINKS] =
		"SELECT id, " LINK_COLS ", a_group, b_group, "
		"regression_id IS NOT NULL, regression_id IS NULL AND NOT last_bad "
		"FROM link_state "
		"WHERE profile = :profile AND metric = :metric AND judged > 0 "
		"AND (last_started >= :since OR regression_id IS NOT NULL) "
		"AND ((a_host = :host AND a_device = :device AND a_port = :port) OR "
		"(b_host = :host AND b_device = :device AND b_port = :port))",
	[RSQL_GROUP_TOTAL] =
		"SELECT count(*) FROM link_state "
		"WHERE profile = :profile AND metric = :metric AND judged > 0 "
		"AND (last_started >= :since OR regression_id IS NOT NULL) "
		"AND ((a_group = :group_a AND b_group = :group_b) "
		"OR (a_group = :group_b AND b_group = :group_a))",
	[RSQL_GSUS_SINCE] =
		"SELECT group_a, group_b, since FROM group_pair_suspect "
		"WHERE profile = :profile AND metric = :metric",
	[RSQL_GSUS_DEL] =
		"DELETE FROM group_pair_suspect "
		"WHERE profile = :profile AND metric = :metric",
	[RSQL_GSUS_INS] =
		"INSERT INTO group_pair_suspect (group_a, group_b, profile, metric, "
		"since, links_regressed, links_judged) "
		"VALUES (:group_a, :group_b, :profile, :metric, :since, :regressed, "
		":judged)",
	[RSQL_ALL_KINDS] =
		"SELECT profile, metric FROM link_state WHERE regression_id IS NOT NULL "
		"UNION "
		"SELECT profile, metric FROM group_pair_suspect",
	[RSQL_RET_LINKS] =
		"DELETE FROM link_state WHERE a_host = :host OR b_host = :host",
	[RSQL_RET_REGS] =
		"DELETE FROM regression WHERE a_host = :host OR b_host = :host",
	[RSQL_RET_PORT_BL] = "DELETE FROM port_baseline WHERE host = :host",
	[RSQL_PRUNE_STALE_REGS] =
		"UPDATE regression SET closed = :now, close_reason = 'stale', "
		"updated = :now "
		"WHERE id IN (SELECT regression_id FROM link_state "
		"WHERE last_started < :cutoff AND regression_id IS NOT NULL "
		"LIMIT :batch)",
	[RSQL_PRUNE_STALE_LINKS] =
		"DELETE FROM link_state WHERE id IN ("
		"SELECT l.id FROM link_state l WHERE l.last_started < :cutoff "
		"AND (l.regression_id IS NULL OR EXISTS (SELECT 1 FROM regression r "
		"WHERE r.id = l.regression_id AND r.closed IS NOT NULL)) "
		"LIMIT :batch)",
	[RSQL_PRUNE_REGS] =
		"DELETE FROM regression WHERE id IN ("
		"SELECT id FROM regression WHERE closed IS NOT NULL "
		"AND updated < :cutoff LIMIT :batch)",
	[RSQL_PRUNE_PORT_BL] = "DELETE FROM port_baseline WHERE updated < :cutoff",
};
/* clang-format on */

const char *regress_sql(enum store_rsql which)
{
	return rsql_text[which];
}
