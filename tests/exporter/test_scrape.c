// SPDX-License-Identifier: MIT
/*
 * Unit tests for a scrape without HTTP (exporter/scrape.c, snapshot.c,
 * render.c) on a real SQLite database made from the schema files: host_up and
 * the dropping of a silent host's series, families grouped with one TYPE
 * each, units (x4 bytes), saturation, sharding as a partition, the body
 * ceiling, database errors, gzip, and reading in many small transactions.
 */
#include <errno.h>
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
#include <zlib.h>

#include "pgzip.h"
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

static void apply_schema(sqlite3 *db)
{
	char *text = malloc(1 << 20);
	FILE *f = fopen(SCHEMA_DIR "/001_init.sql", "r");
	size_t n;

	assert_non_null(f);
	n = fread(text, 1, (1 << 20) - 1, f);
	text[n] = '\0';
	fclose(f);
	exec_sql(db, "PRAGMA journal_mode=WAL");
	exec_sql(db, text);
	exec_sql(db, "PRAGMA user_version = 1");
	free(text);
}

/* Three hosts: fresh, stale (up 0, series kept), gone (series dropped). */
static void fill(sqlite3 *db, double now)
{
	static const char *const hosts[] = {"fresh", "stale", "gone"};
	static const double age[] = {1, 200, 3600};
	char sql[1024];

	for (int h = 0; h < 3; h++) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO host VALUES (%d, '%s', 0, %f, NULL, "
			 "'0.1');"
			 "INSERT INTO device (id, host_id, name, node_desc, "
			 "hca_type,"
			 " pcie_cur_speed_gts, pcie_max_speed_gts, "
			 "pcie_cur_width,"
			 " pcie_max_width, updated) VALUES (%d, %d, 'mlx5_0',"
			 " 'a \"q\" \\ b', 'MT4123', 8.0, 16.0, 16, 16, 0);",
			 h + 1, hosts[h], now - age[h], h + 1, h + 1);
		exec_sql(db, sql);
		for (int p = 1; p <= 2; p++) {
			int port_id = h * 2 + p;

			snprintf(sql, sizeof(sql),
				 "INSERT INTO port (id, host_id, device_id, "
				 "port, state,"
				 " phys_state, rate_bytes, updated) VALUES"
				 " (%d, %d, %d, %d, 4, 5, 12500000000, 0);"
				 "INSERT INTO series (port_id, source, name, "
				 "value, changed) VALUES"
				 " (%d, 0, 'port_xmit_data', 1000, 0),"
				 " (%d, 0, 'symbol_error', %d, 0),"
				 " (%d, 0, 'link_downed', 255, 0),"
				 " (%d, 1, 'out_of_buffer', 9, 0),"
				 " (%d, 1, 'sent_pkts', 77, 0),"
				 " (%d, 1, 'lifespan', 10, 0),"
				 " (%d, 2, 'carrier_changes', 3, 0),"
				 " (%d, 2, 'rx_prio3_pause', -1, 0);",
				 port_id, h + 1, h + 1, p, port_id, port_id,
				 p == 1 ? 65535 : 12, port_id, port_id, port_id,
				 port_id, port_id, port_id);
			exec_sql(db, sql);
		}
	}
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	sqlite3 *db;

	snprintf(f->dir, sizeof(f->dir), "/tmp/ibpulse-scrape-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	apply_schema(db);
	fill(db, (double)time(NULL));
	sqlite3_close(db);
	assert_int_equal(exporter_settings_init(&f->cfg), 0);
	free(f->cfg.db);
	f->cfg.db = strdup(f->db);
	f->cfg.chunk_rows = 3; /* many small read transactions */
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

static char *scrape(struct fixture *f, enum expo_format format, unsigned shard,
		    unsigned shards, int *ret)
{
	struct scrape_req rq = {.shard = shard,
				.shards = shards,
				.format = format,
				.now = (double)time(NULL)};
	char err[256];
	struct buf out;

	buf_init(&out, 0);
	*ret = scrape_build(&f->cfg, &f->stats, &rq, &out, err, sizeof(err));
	if (*ret) {
		buf_free(&out);
		return NULL;
	}
	return buf_steal(&out, NULL);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Every sample's family is the one of the last TYPE line, seen once. */
static void check_grouped(const char *body, int om)
{
	char family[256] = "", seen[64][256];
	int n_seen = 0;

	for (const char *l = body; *l; l = strchr(l, '\n') + 1) {
		size_t len = strcspn(l, "{ \n");

		if (!strncmp(l, "# TYPE ", 7)) {
			size_t fl = strcspn(l + 7, " ");

			snprintf(family, sizeof(family), "%.*s", (int)fl,
				 l + 7);
			for (int i = 0; i < n_seen; i++)
				assert_string_not_equal(seen[i], family);
			snprintf(seen[n_seen++], sizeof(seen[0]), "%s", family);
		} else if (l[0] != '#') {
			assert_true(len >= strlen(family));
			assert_memory_equal(l, family, strlen(family));
			if (!om)
				assert_int_equal(len, strlen(family));
		}
	}
}

static void test_text_body(void **state)
{
	struct fixture *f = *state;
	int ret;
	char *s = scrape(f, EXPO_TEXT, 0, 1, &ret);

	assert_int_equal(ret, 0);
	check_grouped(s, 0);
	assert_non_null(strstr(s, "ibpulse_host_up{host=\"fresh\"} 1\n"));
	assert_non_null(strstr(s, "ibpulse_host_up{host=\"stale\"} 0\n"));
	assert_non_null(strstr(s, "ibpulse_host_up{host=\"gone\"} 0\n"));
	/* the silent host keeps up/last_report, loses its port series */
	assert_int_equal(count(s, "host=\"gone\""), 3);
	assert_int_equal(count(s, "ibpulse_port_data_transmitted_bytes_total{"),
			 4);
	assert_non_null(
		strstr(s, "ibpulse_port_data_transmitted_bytes_total{host="
			  "\"stale\",device=\"mlx5_0\",port=\"2\"} 4000\n"));
	assert_non_null(strstr(
		s, "ibpulse_port_error_saturated{host=\"fresh\",device=\"mlx5_"
		   "0\",port=\"1\",counter=\"symbol_error\"} 1\n"));
	assert_non_null(strstr(
		s, "ibpulse_port_error_saturated{host=\"fresh\",device=\"mlx5_"
		   "0\",port=\"2\",counter=\"symbol_error\"} 0\n"));
	assert_non_null(strstr(
		s, "ibpulse_port_error_saturated{host=\"fresh\",device=\"mlx5_"
		   "0\",port=\"2\",counter=\"link_downed\"} 1\n"));
	assert_non_null(strstr(
		s, "ibpulse_port_hw_counters_total{host=\"fresh\",device="
		   "\"mlx5_0\",port=\"1\",counter=\"sent_pkts\"} 77\n"));
	assert_non_null(
		strstr(s, "ibpulse_port_lifespan_seconds{host=\"fresh\",device="
			  "\"mlx5_0\",port=\"1\"} 0.01\n"));
	assert_non_null(
		strstr(s, "ibpulse_port_carrier_changes_total{host=\"fresh\","
			  "device=\"mlx5_0\",port=\"1\"} 3\n"));
	/* stored as a signed 64-bit integer, served as the u64 it was */
	assert_non_null(strstr(
		s, "counter=\"rx_prio3_pause\"} 18446744073709551615\n"));
	assert_non_null(strstr(s, "node_desc=\"a \\\"q\\\" \\\\ b\""));
	assert_non_null(strstr(s, "ibpulse_device_pcie_link_degraded{host="
				  "\"fresh\",device=\"mlx5_0\"} 1\n"));
	assert_non_null(strstr(
		s, "ibpulse_device_pcie_current_speed_transfers_per_second{"
		   "host=\"fresh\",device=\"mlx5_0\"} 8000000000\n"));
	assert_null(strstr(s, "# EOF"));
	assert_non_null(strstr(s, "ibpulse_exporter_series "));
	free(s);
}

static void test_openmetrics_body(void **state)
{
	struct fixture *f = *state;
	int ret;
	char *s = scrape(f, EXPO_OPENMETRICS, 0, 1, &ret);

	assert_int_equal(ret, 0);
	check_grouped(s, 1);
	assert_non_null(strstr(
		s, "# TYPE ibpulse_port_data_transmitted_bytes counter\n"));
	assert_non_null(strstr(s, "# TYPE ibpulse_port info\n"));
	assert_non_null(
		strstr(s, "# TYPE ibpulse_port_lifespan_seconds gauge\n"));
	assert_string_equal(s + strlen(s) - 6, "# EOF\n");
	free(s);
}

static void test_shards_partition(void **state)
{
	struct fixture *f = *state;
	int ret, total = 0;

	for (unsigned i = 0; i < 4; i++) {
		char *s = scrape(f, EXPO_TEXT, i, 4, &ret);

		assert_int_equal(ret, 0);
		total += count(s, "ibpulse_host_up{");
		/* no host's series leak into another shard */
		assert_int_equal(count(s, "ibpulse_host_up{host=\"fresh\"}"),
				 count(s, "ibpulse_port_data_transmitted_bytes_"
					  "total{host=\"fresh\"") /
					 2);
		free(s);
	}
	assert_int_equal(total, 3);
}

static void test_ceiling(void **state)
{
	struct fixture *f = *state;
	int ret;

	f->cfg.max_body_bytes = 4096;
	assert_null(scrape(f, EXPO_TEXT, 0, 1, &ret));
	assert_int_equal(ret, -E2BIG);
	f->cfg.max_body_bytes = 1 << 20;
}

static void test_database_errors(void **state)
{
	struct fixture *f = *state;
	char *good = f->cfg.db, *s;
	int ret;

	f->cfg.db = "/nonexistent/ibpulse.db";
	assert_null(scrape(f, EXPO_TEXT, 0, 1, &ret));
	assert_int_equal(ret, -EIO);
	f->cfg.db = good;
	s = scrape(f, EXPO_TEXT, 0, 1, &ret);
	assert_int_equal(ret, 0);
	assert_non_null(
		strstr(s, "ibpulse_exporter_database_errors_total 1\n"));
	/* the previous scrape's duration is served */
	assert_non_null(strstr(s, "ibpulse_exporter_scrape_duration_seconds "));
	free(s);
}

/* Inflate @gz and compare with @want. */
static void check_gunzip(const char *gz, size_t gz_len, const char *want,
			 size_t len)
{
	char *back = malloc(len + 16);
	z_stream z = {0};

	assert_int_equal((unsigned char)gz[0], 0x1f); /* gzip magic */
	assert_int_equal((unsigned char)gz[1], 0x8b);
	assert_int_equal(inflateInit2(&z, 16 + 15), Z_OK);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)gz_len;
	z.next_out = (Bytef *)back;
	z.avail_out = (uInt)len + 16;
	/* one stream: it ends exactly where the data ends */
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.avail_in, 0);
	assert_int_equal(z.total_out, len);
	assert_memory_equal(back, want, len);
	inflateEnd(&z);
	free(back);
}

static void test_gzip_roundtrip(void **state)
{
	struct fixture *f = *state;
	int ret;
	char *s = scrape(f, EXPO_TEXT, 0, 1, &ret), *gz, *big;
	size_t len = strlen(s), gz_len, big_len = 3 * 1024 * 1024 + 12345;

	assert_int_equal(pgzip_compress(s, len, 1, 0, &gz, &gz_len), 0);
	assert_true(gz_len < len);
	check_gunzip(gz, gz_len, s, len);
	free(gz);
	/* several chunks on several threads still make one valid stream */
	big = malloc(big_len);
	for (size_t i = 0; i < big_len; i++)
		big[i] = s[(i * 7) % len];
	for (unsigned threads = 1; threads <= 3; threads++) {
		assert_int_equal(
			pgzip_compress(big, big_len, 6, threads, &gz, &gz_len),
			0);
		check_gunzip(gz, gz_len, big, big_len);
		free(gz);
	}
	assert_int_equal(pgzip_compress("", 0, 1, 2, &gz, &gz_len), 0);
	check_gunzip(gz, gz_len, "", 0);
	free(gz);
	free(big);
	free(s);
}

static void test_no_schema(void **state)
{
	struct fixture *f = *state;
	char path[160], *good = f->cfg.db, err[256];
	sqlite3 *db;
	int ret;

	snprintf(path, sizeof(path), "%s/empty.db", f->dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	exec_sql(db, "CREATE TABLE x (a)");
	sqlite3_close(db);
	f->cfg.db = path;
	assert_int_equal(scrape_health(&f->cfg, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no ibpulse schema"));
	assert_null(scrape(f, EXPO_TEXT, 0, 1, &ret));
	assert_int_equal(ret, -ENOENT);
	f->cfg.db = good;
	assert_int_equal(scrape_health(&f->cfg, err, sizeof(err)), 0);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_body),
		cmocka_unit_test(test_openmetrics_body),
		cmocka_unit_test(test_shards_partition),
		cmocka_unit_test(test_ceiling),
		cmocka_unit_test(test_database_errors),
		cmocka_unit_test(test_gzip_roundtrip),
		cmocka_unit_test(test_no_schema),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
