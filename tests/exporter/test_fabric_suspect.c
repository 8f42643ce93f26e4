// SPDX-License-Identifier: MIT
/*
 * Unit tests for the link and switch suspects and the link coverage in a
 * scrape (exporter/fabric_suspect.c), through a whole scrape of a real
 * SQLite database made from the schema files: an open link suspect with
 * both ends and its confidence, an open switch suspect, a closed one not
 * served, the coverage of the newest planned period only (covered and
 * uncovered by reason), all on shard 0 alone, and a database without
 * schema 9 serving none of it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "scrape.h"
#include "exporter_settings.h"

struct fixture {
	char dir[64];
	char db[128];
	struct exporter_settings cfg;
	struct scrape_stats stats;
};

static void exec_sql(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
}

/* Schema files 1 to @upto (those that exist), in order. */
static void make_db(struct fixture *f, int upto)
{
	static const char *const files[] = {
		"001_init.sql",	    "002_tests.sql",	"003_baselines.sql",
		"004_fabric.sql",   "005_evidence.sql", "006_routes.sql",
		"009_localize.sql",
	};
	static const int versions[] = {1, 2, 3, 4, 5, 6, 9};
	sqlite3 *db;

	unlink(f->db);
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		char path[512], *text = calloc(1, 1 << 20), pragma[64];
		FILE *fp;

		if (versions[i] > upto) {
			free(text);
			break;
		}
		snprintf(path, sizeof(path), "%s/%s", SCHEMA_DIR, files[i]);
		fp = fopen(path, "r");
		assert_non_null(fp);
		assert_true(fread(text, 1, (1 << 20) - 1, fp) > 0);
		fclose(fp);
		exec_sql(db, text);
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d",
			 versions[i]);
		exec_sql(db, pragma);
		free(text);
	}
	if (upto >= 9)
		exec_sql(
			db,
			"INSERT INTO fabric_suspect (kind, profile, metric, "
			"a_node_guid, a_node_desc, a_port, b_node_guid, "
			"b_node_desc, b_port, since, first_bad, opened, "
			"bad_tests, good_tests, confidence, gain, baseline, "
			"figure, worst, last, updated) VALUES ('fabric_link', "
			"'bw', 'bandwidth', '0x0000000000100001', 'leaf001', "
			"5, "
			"'0x0000000000200000', 'spine00', 2, 0, 0, 0, 4, 0, "
			"0.98, 18.4, 4.9e10, 2.45e10, 2.4e10, 2.45e10, 0), "
			"('switch', 'bw', 'bandwidth', '0x0000000000200001', "
			"'spine01', NULL, NULL, NULL, NULL, 0, 0, 0, 10, 0, 1, "
			"46, 4.9e10, 2.45e10, 2.4e10, 2.45e10, 0), "
			"('fabric_link', 'bw', 'bandwidth', "
			"'0x0000000000100002', 'leaf002', 6, "
			"'0x0000000000200001', 'spine01', 3, 0, 0, 0, 3, 3, "
			"0.9, 12, 4.9e10, 2.45e10, 2.4e10, 4.9e10, 0);"
			"UPDATE fabric_suspect SET closed = 5, close_reason = "
			"'recovered' WHERE a_node_desc = 'leaf002';"
			"INSERT INTO fabric_link_cover VALUES (41, 'covered', "
			"10), (41, 'no_probe', 6), (42, 'covered', 14), (42, "
			"'duty_cycle', 2), (42, 'no_probe', 0);");
	sqlite3_close(db);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/ibpulse-fsus-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	make_db(f, 9);
	assert_int_equal(exporter_settings_init(&f->cfg), 0);
	free(f->cfg.db);
	f->cfg.db = strdup(f->db);
	scrape_stats_init(&f->stats);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char path[160];

	for (const char *const *s =
		     (const char *const[]){"", "-wal", "-shm", NULL};
	     *s; s++) {
		snprintf(path, sizeof(path), "%s%s", f->db, *s);
		unlink(path);
	}
	rmdir(f->dir);
	exporter_settings_free(&f->cfg);
	scrape_stats_destroy(&f->stats);
	free(f);
	return 0;
}

static char *scrape(struct fixture *f, unsigned shard, unsigned shards)
{
	struct scrape_req rq = {.shard = shard,
				.shards = shards,
				.format = EXPO_TEXT,
				.now = (double)time(NULL)};
	char err[256];
	struct buf out;

	buf_init(&out, 0);
	assert_int_equal(
		scrape_build(&f->cfg, &f->stats, &rq, &out, err, sizeof(err)),
		0);
	return buf_steal(&out, NULL);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void has(const char *body, const char *want)
{
	char line[512];

	snprintf(line, sizeof(line), "\n%s\n", want);
	if (!strstr(body, line))
		fail_msg("missing line: %s", want);
}

#define UP                                                                     \
	"{a_node_guid=\"0x0000000000100001\",a_node_desc=\"leaf001\","         \
	"a_port=\"5\",b_node_guid=\"0x0000000000200000\",b_node_desc="         \
	"\"spine00\",b_port=\"2\",profile=\"bw\"}"

static void test_suspects_and_cover(void **state)
{
	char *s = scrape(*state, 0, 1);

	has(s, "ibpulse_fabric_link_suspect" UP " 1");
	has(s, "ibpulse_fabric_link_suspect_confidence" UP " 0.98");
	assert_int_equal(count(s, "ibpulse_fabric_link_suspect{"), 1);
	assert_int_equal(count(s, "leaf002"), 0); /* closed */
	has(s, "ibpulse_switch_suspect{node_guid=\"0x0000000000200001\","
	       "node_desc=\"spine01\",profile=\"bw\"} 1");
	/* the newest period's coverage */
	has(s, "ibpulse_fabric_links_covered 14");
	has(s, "ibpulse_fabric_links_uncovered{reason=\"duty_cycle\"} 2");
	has(s, "ibpulse_fabric_links_uncovered{reason=\"no_probe\"} 0");
	assert_int_equal(count(s, "ibpulse_fabric_links_covered 10"), 0);
	assert_non_null(strstr(s, "# TYPE ibpulse_fabric_link_suspect gauge"));
	free(s);
}

static void test_shard_zero_only(void **state)
{
	char *s0 = scrape(*state, 0, 3), *s1 = scrape(*state, 1, 3);

	assert_int_equal(count(s0, "ibpulse_fabric_link_suspect{"), 1);
	assert_int_equal(count(s1, "ibpulse_fabric_link"), 0);
	assert_int_equal(count(s1, "ibpulse_switch_suspect"), 0);
	free(s0);
	free(s1);
}

static void test_old_schema(void **state)
{
	struct fixture *f = *state;
	char *s;

	make_db(f, 6);
	s = scrape(f, 0, 1);
	assert_int_equal(count(s, "ibpulse_fabric_link"), 0);
	assert_int_equal(count(s, "ibpulse_switch_suspect"), 0);
	assert_non_null(strstr(s, "ibpulse_exporter_series"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_suspects_and_cover, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_shard_zero_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_old_schema, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
