// SPDX-License-Identifier: MIT
/*
 * The SQL of the localization store (store_localize_int.h), one statement
 * per enum lsql with named parameters, prepared once at open; the tables
 * are schema/009_localize.sql's, with the probes' ports (002), the fabric
 * ports and their counters (004) and the evidence's elements and suspects
 * (005). Also the named binds.
 */
#include "log.h"
#include "store_localize_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* The counters that corroborate a link: errors on either end, and the
 * egress end waiting to send. */
#define LZ_COUNTER_NAMES                                                       \
	"'symbol_error', 'link_error_recovery', 'link_downed', "               \
	"'port_rcv_errors', 'local_link_integrity_errors', "                   \
	"'excessive_buffer_overrun_errors', 'port_xmit_wait'"

/* clang-format off */
static const char *const lsql_text[LSQL_COUNT] = {
	[LSQL_LID] =
		"SELECT pp.lid FROM probe p JOIN probe_port pp ON pp.probe_id = p.id "
		"WHERE p.host = :host AND pp.device = :device AND pp.port = :port",
	[LSQL_TEST_INS] =
		"INSERT INTO localize_test (started, profile, metric, bad, value, baseline, "
		"a_host, a_device, a_port, b_host, b_device, b_port, dlid, links, switches) "
		"VALUES (:started, :profile, :metric, :bad, :value, :baseline, :a_host, "
		":a_device, :a_port, :b_host, :b_device, :b_port, :dlid, :links, :switches)",
	[LSQL_TEST_TRIM] = "DELETE FROM localize_test WHERE started < :cutoff",
	[LSQL_TESTS] =
		"SELECT started, profile, metric, bad, value, baseline, a_host, a_device, "
		"a_port, b_host, b_device, b_port, links, switches FROM localize_test "
		"ORDER BY started, id",
	[LSQL_FROMS] =
		"SELECT kind, profile, metric, a_node_guid, a_port, max(window_from) "
		"FROM fabric_suspect WHERE window_from IS NOT NULL "
		"GROUP BY kind, profile, metric, a_node_guid, a_port",
	[LSQL_HOST_SUS] =
		"SELECT kind, host, device, port FROM suspect WHERE closed IS NULL "
		"AND profile = :profile AND metric = :metric",
	[LSQL_OPEN] =
		"SELECT id, kind, a_node_guid, coalesce(a_port, 0) FROM fabric_suspect "
		"WHERE closed IS NULL AND profile = :profile AND metric = :metric",
	[LSQL_SUS_INS] =
		"INSERT INTO fabric_suspect (kind, profile, metric, a_node_guid, "
		"a_node_desc, a_port, b_node_guid, b_node_desc, b_port, since, first_bad, "
		"opened, bad_tests, good_tests, confidence, gain, counters, baseline, "
		"figure, worst, last, updated) VALUES (:kind, :profile, :metric, :a_guid, "
		":a_desc, :a_port, :b_guid, :b_desc, :b_port, :now, :first_bad, :opened, "
		":bad, :good, :confidence, :gain, :counters, :baseline, :figure, :worst, "
		":last, :now)",
	[LSQL_SUS_UPD] =
		"UPDATE fabric_suspect SET bad_tests = :bad, good_tests = :good, "
		"confidence = coalesce(:confidence, confidence), gain = :gain, "
		"counters = coalesce(:counters, counters), "
		"worst = CASE WHEN :lower THEN min(worst, :worst) ELSE max(worst, :worst) END, "
		"last = :last, updated = :now WHERE id = :id AND closed IS NULL",
	[LSQL_SUS_CLOSE] =
		"UPDATE fabric_suspect SET closed = :now, close_reason = :reason, "
		"window_from = :from, bad_tests = :bad, good_tests = :good, updated = :now "
		"WHERE id = :id AND closed IS NULL",
	[LSQL_EV_EL] =
		"SELECT id FROM element WHERE kind = :kind AND host = :host "
		"AND device = :device AND port = :port AND profile = :profile "
		"AND metric = :metric",
	[LSQL_COUNTERS] =
		"SELECT p.degraded, s.name, s.value, coalesce("
		"(SELECT h.value FROM fabric_sample h WHERE h.series_id = s.id "
		"AND h.ts <= :t0 ORDER BY h.ts DESC LIMIT 1), "
		"(SELECT h.value FROM fabric_sample h WHERE h.series_id = s.id "
		"ORDER BY h.ts LIMIT 1), s.value) "
		"FROM fabric_port p LEFT JOIN fabric_series s ON s.port_id = p.id "
		"AND s.name IN (" LZ_COUNTER_NAMES ") "
		"WHERE p.node_guid = :guid AND p.port = :port ORDER BY s.name",
	[LSQL_RETIRE] =
		"DELETE FROM localize_test WHERE a_host = :host OR b_host = :host",
	[LSQL_PRUNE] =
		"DELETE FROM fabric_suspect WHERE id IN (SELECT id FROM fabric_suspect "
		"WHERE closed IS NOT NULL AND closed < :cutoff LIMIT :batch)",
	[LSQL_COVER_DEL] =
		"DELETE FROM fabric_link_cover WHERE period = :period OR period < :period - 1",
	[LSQL_COVER_INS] =
		"INSERT INTO fabric_link_cover (period, state, links) "
		"VALUES (:period, :state, :links)",
	[LSQL_UNCOV_DEL] =
		"DELETE FROM fabric_link_uncovered WHERE period = :period "
		"OR period < :period - 1",
	[LSQL_UNCOV_INS] =
		"INSERT OR REPLACE INTO fabric_link_uncovered (period, a_node_guid, "
		"a_port, b_node_guid, b_port, reason) VALUES (:period, :a_guid, :a_port, "
		":b_guid, :b_port, :reason)",
	[LSQL_EXPL_INS] =
		"INSERT OR IGNORE INTO localize_explained (element_id, started) "
		"VALUES (:el, :started)",
	[LSQL_EXPL_GET] =
		"SELECT 1 FROM localize_explained WHERE element_id = :el "
		"AND started = :started",
	[LSQL_EXPL_PRUNE] =
		"DELETE FROM localize_explained WHERE (element_id, started) IN "
		"(SELECT element_id, started FROM localize_explained "
		"WHERE started < :cutoff LIMIT :batch)",
};
/* clang-format on */

const char *lz_sql(enum lsql w)
{
	return lsql_text[w];
}

sqlite3_stmt *lz_stmt(struct store_localize *lz, enum lsql w)
{
	sqlite3_stmt *s = lz->s[w];

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return s;
}

void lz_guid_text(uint64_t guid, char *buf, size_t len)
{
	snprintf(buf, len, "0x%016" PRIx64, guid);
}
