// SPDX-License-Identifier: MIT
/*
 * The SQL of the baseline and regression store (store_regress_int.h),
 * one statement per enum store_rsql, prepared once at open. The tables
 * are described in schema/003_baselines.sql.
 */
#include "store_regress_int.h"

#define GROUP_OF(h)                                                            \
	"(SELECT l.value FROM probe p JOIN probe_label l ON l.probe_id = "     \
	"p.id AND l.key = ?9 WHERE p.host = " h ")"
#define LINK_COLS                                                              \
	"a_host, a_device, a_port, b_host, b_device, b_port, profile, metric"
static const char *const rsql_text[RSQL_COUNT] = {
	[RSQL_LINK_UPSERT] =
		"INSERT INTO link_state (" LINK_COLS ", a_group, b_group, "
		"updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, " GROUP_OF(
			"?1") ", " GROUP_OF("?4") ", ?10) ON CONFLICT "
						  "(" LINK_COLS
						  ") DO UPDATE SET a_group = "
						  "excluded.a_group, b_group = "
						  "excluded.b_group RETURNING "
						  "id, last_started, "
						  "regression_id, window_from, "
						  "under_since, under_from, "
						  "last_bad",
	[RSQL_SAMPLES] = "SELECT value FROM baseline_sample WHERE link_id = ?1 "
			 "AND started >= ?2 ORDER BY started DESC LIMIT ?3",
	[RSQL_SAMPLE_INS] = "INSERT INTO baseline_sample (link_id, started, "
			    "value) VALUES (?1, ?2, ?3)",
	[RSQL_SAMPLE_TRIM] =
		"DELETE FROM baseline_sample WHERE link_id = ?1 AND (started "
		"< ?2 OR rowid NOT IN (SELECT rowid FROM baseline_sample WHERE "
		"link_id = ?1 ORDER BY started DESC LIMIT ?3))",
	[RSQL_SAMPLE_CLEAR] = "DELETE FROM baseline_sample WHERE link_id = ?1",
	/* Each end through its own index (a UNION ALL: an OR of the two
	 * ends walked every link of the profile, 12 ms at 11,000 links
	 * against 0.3 ms); a loopback link counts once. */
	[RSQL_POOL] = "SELECT s.value FROM (SELECT id FROM link_state WHERE "
		      "a_host = ?1 AND a_device = ?2 AND a_port = ?3 AND "
		      "profile = ?4 AND metric = ?5 UNION ALL SELECT id FROM "
		      "link_state WHERE b_host = ?1 AND b_device = ?2 AND "
		      "b_port = ?3 AND profile = ?4 AND metric = ?5 AND NOT "
		      "(a_host = ?1 AND a_device = ?2 AND a_port = ?3)) l "
		      "JOIN baseline_sample s ON s.link_id = l.id WHERE "
		      "s.started >= ?6 ORDER BY s.started DESC LIMIT ?7",
	[RSQL_PORT_BL_UPSERT] =
		"INSERT INTO port_baseline (host, device, port, profile, "
		"metric, baseline, spread, samples, updated) VALUES (?1, ?2, "
		"?3, ?4, ?5, ?6, ?7, "
		"?8, ?9) ON CONFLICT DO UPDATE SET baseline = ?6, spread = ?7, "
		"samples = ?8, updated = ?9",
	[RSQL_PORT_BL_GET] =
		"SELECT baseline, spread, samples FROM port_baseline WHERE "
		"host = ?1 AND device = ?2 AND port = ?3 AND profile = ?4 AND "
		"metric = ?5 AND baseline IS NOT NULL AND updated >= ?6",
	[RSQL_RECENT] = "SELECT started, value, bad, under FROM link_recent "
			"WHERE link_id = ?1 ORDER BY started DESC LIMIT ?2",
	[RSQL_RECENT_INS] =
		"INSERT INTO link_recent (link_id, started, value, bad, under) "
		"VALUES (?1, ?2, ?3, ?4, "
		"?5)",
	[RSQL_RECENT_TRIM] =
		"DELETE FROM link_recent WHERE link_id = ?1 AND rowid NOT IN "
		"(SELECT rowid FROM link_recent WHERE link_id = ?1 ORDER BY "
		"started DESC LIMIT ?2)",
	[RSQL_REG_GET] = "SELECT started, baseline, threshold, "
			 "baseline_source, worst FROM regression WHERE id = ?1",
	[RSQL_REG_INS] =
		"INSERT INTO regression (" LINK_COLS
		", started, opened, baseline, threshold, baseline_source, "
		"figure, worst, last, bad_results, results, updated) VALUES "
		"(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
		"?15, ?16, ?17, ?18, ?19) RETURNING id",
	[RSQL_REG_UPD] = "UPDATE regression SET worst = ?2, last = ?3, "
			 "bad_results = bad_results + ?4, results = results + "
			 "1, updated = ?5 WHERE id = ?1",
	[RSQL_REG_CLOSE] = "UPDATE regression SET closed = ?2, close_reason = "
			   "?3, updated = ?4 WHERE id = ?1",
	[RSQL_COUNT_BUMP] = "INSERT INTO regression_count (profile, metric, "
			    "opened) VALUES (?1, ?2, 1) "
			    "ON CONFLICT DO UPDATE SET opened = opened + 1",
	[RSQL_LINK_UPD] =
		"UPDATE link_state SET baseline = ?2, spread = ?3, threshold = "
		"?4, baseline_source = ?5, samples = ?6, judged = judged + ?7, "
		"last_value = ?8, last_started = ?9, last_bad = ?10, "
		"regression_id = ?11, window_from = ?12, expected = ?13, "
		"expected_limit = ?14, efficiency = ?15, under_since = ?16, "
		"under_from = ?17, updated = ?18 WHERE id = ?1",
	[RSQL_PORT_INFO] =
		"SELECT p.rate_bytes, p.link_layer, d.pcie_cur_speed_gts, "
		"d.pcie_cur_width, p.state FROM host h JOIN device d ON "
		"d.host_id = h.id AND d.name = ?2 JOIN port p ON p.device_id = "
		"d.id AND p.port = ?3 WHERE h.name = ?1",
	[RSQL_OPEN_LINKS] = "SELECT id, " LINK_COLS ", a_group, b_group FROM "
			    "link_state WHERE profile = ?1 AND metric = ?2 AND "
			    "regression_id IS NOT NULL",
	[RSQL_PORT_LINKS] =
		"SELECT id, " LINK_COLS ", a_group, b_group, regression_id IS "
		"NOT NULL, regression_id IS NULL AND NOT last_bad FROM "
		"link_state WHERE profile = ?4 AND metric = ?5 AND judged > 0 "
		"AND (last_started >= ?6 OR regression_id IS NOT NULL) "
		"AND ((a_host = ?1 AND a_device = ?2 AND a_port = ?3) OR "
		"(b_host = ?1 AND b_device = ?2 AND b_port = ?3))",
	[RSQL_GROUP_TOTAL] =
		"SELECT count(*) FROM link_state WHERE profile = ?1 AND metric "
		"= ?2 AND judged > 0 AND (last_started >= ?5 OR regression_id "
		"IS NOT NULL) AND ((a_group = ?3 AND b_group = ?4) OR (a_group "
		"= ?4 AND b_group = ?3))",
	[RSQL_GSUS_SINCE] = "SELECT group_a, group_b, since FROM "
			    "group_pair_suspect WHERE profile = ?1 AND metric "
			    "= ?2",
	[RSQL_GSUS_DEL] = "DELETE FROM group_pair_suspect WHERE profile = ?1 "
			  "AND metric = ?2",
	[RSQL_GSUS_INS] =
		"INSERT INTO group_pair_suspect (group_a, group_b, profile, "
		"metric, since, links_regressed, links_judged) VALUES (?1, ?2, "
		"?3, "
		"?4, ?5, ?6, ?7)",
	[RSQL_ALL_KINDS] =
		"SELECT profile, metric FROM link_state WHERE regression_id IS "
		"NOT NULL UNION "
		"SELECT profile, metric FROM group_pair_suspect",
	[RSQL_RET_LINKS] = "DELETE FROM link_state WHERE a_host = ?1 OR b_host "
			   "= ?1",
	[RSQL_RET_REGS] = "DELETE FROM regression WHERE a_host = ?1 OR b_host "
			  "= ?1",
	[RSQL_RET_PORT_BL] = "DELETE FROM port_baseline WHERE host = ?1",
	[RSQL_PRUNE_STALE_REGS] =
		"UPDATE regression SET closed = ?1, close_reason = 'stale', "
		"updated = ?1 WHERE id IN (SELECT regression_id FROM "
		"link_state WHERE last_started < ?2 AND regression_id IS NOT "
		"NULL LIMIT ?3)",
	[RSQL_PRUNE_STALE_LINKS] =
		"DELETE FROM link_state WHERE id IN (SELECT l.id FROM "
		"link_state l WHERE l.last_started < ?1 AND (l.regression_id "
		"IS NULL OR EXISTS (SELECT 1 FROM regression r WHERE r.id = "
		"l.regression_id AND r.closed IS NOT NULL)) LIMIT ?2)",
	[RSQL_PRUNE_REGS] = "DELETE FROM regression WHERE id IN (SELECT id "
			    "FROM regression WHERE closed IS NOT NULL AND "
			    "updated < ?1 LIMIT ?2)",
	[RSQL_PRUNE_PORT_BL] = "DELETE FROM port_baseline WHERE updated < ?1",
};

const char *regress_sql(enum store_rsql which)
{
	return rsql_text[which];
}
