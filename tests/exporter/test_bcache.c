// SPDX-License-Identifier: MIT
/*
 * The block cache (exporter/bcache.h) against whole renders: a real
 * SQLite database made from every schema file, 60 hosts with devices,
 * ports, GIDs, P_Keys, counters, probes and test results, changed round
 * after round as the collector changes it (counters of a share of hosts
 * with their change markers, a port attribute, a new counter, new and
 * ageing results, a host going silent, one retired, one new, a rewound
 * change_seq). After each change one exporter with the cache and one
 * without (cache_max_bytes 0: the whole-body path) render the same state
 * at the same time; the bodies must be byte for byte the same in text and
 * OpenMetrics, plain and gzip (decoded: one gzip member that zlib reads to
 * its end), unsharded and sharded, with and without family caps. Only the
 * exporter's own scrape duration and cache size may differ. It also
 * checks that the cache does its job: after a change of a tenth of the
 * hosts, or after the period slid past its oldest result, most segments
 * are reused.
 */
#include <dirent.h>
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

#include "bcache.h"
#include "dbsettings.h"
#include "results.h"
#include "scrape.h"
#include "exporter_settings.h"

#define HOSTS 60

struct fixture {
	char dir[64];
	char db[128];
	double now;
	uint64_t rnd;
	int next_result, next_host;
	struct exporter_settings cfg, plain_cfg;
	struct scrape_stats cached, plain;
	sqlite3 *w; /* the writer: what the collector does */
};

static unsigned rnd(struct fixture *f, unsigned n)
{
	f->rnd = f->rnd * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)(f->rnd >> 33) % n;
}

static void sql(struct fixture *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void sql(struct fixture *f, const char *fmt, ...)
{
	char q[2048], *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(q, sizeof(q), fmt, ap);
	va_end(ap);
	if (sqlite3_exec(f->w, q, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", q, msg);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every schema file in order, as the collector applies them. */
static void apply_schema(struct fixture *f)
{
	char *names[64] = {0}, path[512];
	DIR *d = opendir(SCHEMA_DIR);
	struct dirent *de;
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) && n < 64)
		if (strlen(de->d_name) > 8 && strstr(de->d_name, ".sql"))
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_name);
	for (size_t i = 0; i < n; i++) {
		char *text = malloc(1 << 20), *msg = NULL;
		FILE *fp;
		size_t len;

		snprintf(path, sizeof(path), "%s/%s", SCHEMA_DIR, names[i]);
		fp = fopen(path, "r");
		assert_non_null(fp);
		len = fread(text, 1, (1 << 20) - 1, fp);
		text[len] = '\0';
		fclose(fp);
		if (sqlite3_exec(f->w, text, NULL, NULL, &msg) != SQLITE_OK)
			fail_msg("%s: %s", names[i], msg);
		sql(f, "PRAGMA user_version = %d", atoi(names[i]));
		free(text);
		free(names[i]);
	}
}

/* What a report that changed host @h does: a fresh change marker. */
static void mark(struct fixture *f, int h)
{
	sql(f,
	    "UPDATE change_seq SET seq = seq + 1;"
	    "INSERT INTO host_change (host_id, seq) VALUES (%d, (SELECT seq "
	    "FROM change_seq)) ON CONFLICT (host_id) DO UPDATE SET seq = "
	    "excluded.seq",
	    h);
}

static const char *const counters[][2] = {
	{"0", "port_xmit_data"},  {"0", "port_rcv_data"},
	{"0", "symbol_error"},	  {"0", "link_downed"},
	{"0", "port_rcv_errors"}, {"1", "rx_write_requests"},
	{"1", "np_cnp_sent"},	  {"2", "rx_pfc_pause"},
};

static void add_host(struct fixture *f, int h)
{
	sql(f,
	    "INSERT INTO host (id, name, first_seen, last_report, "
	    "probe_version) VALUES (%d, 'node-%03d', 0, %f, '1.%d');"
	    "INSERT INTO device (id, host_id, name, node_guid, fw_ver, "
	    "node_desc, numa_node, pcie_cur_speed_gts, pcie_max_speed_gts, "
	    "pcie_cur_width, pcie_max_width, aer_correctable, updated) VALUES "
	    "(%d, %d, 'mlx5_0', '0x%04x', '20.1', 'node-%03d \"hca\"', 0, 16, "
	    "16, %d, 16, %d, 0)",
	    h, h, f->now, h % 3, h, h, h, h, h % 7 ? 16 : 8, h % 5);
	for (int p = 1; p <= 2; p++) {
		int port = h * 2 + p;

		sql(f,
		    "INSERT INTO port (id, host_id, device_id, port, state, "
		    "phys_state, rate_bytes, link_layer, lid, updated) VALUES "
		    "(%d, %d, %d, %d, 4, 5, 25000000000, 'InfiniBand', %d, 0);"
		    "INSERT INTO port_gid VALUES (%d, 0, 'fe80::%x', 'IB', "
		    "NULL);"
		    "INSERT INTO port_pkey VALUES (%d, 0, 65535)",
		    port, h, h, p, port, port, port, port);
		for (size_t c = 0; c < sizeof(counters) / sizeof(counters[0]);
		     c++)
			sql(f,
			    "INSERT INTO series (port_id, source, name, value, "
			    "changed) VALUES (%d, %s, '%s', %u, 0)",
			    port, counters[c][0], counters[c][1],
			    c == 3 ? 255 : rnd(f, 1000000));
	}
	sql(f,
	    "INSERT INTO probe (id, host, address, port, labels, profiles, "
	    "registered, updated) VALUES (%d, 'node-%03d', '10.0.0.1', 1, "
	    "'{}', '[]', %f, %f);"
	    "INSERT INTO probe_label VALUES (%d, 'leaf', 'leaf%d');"
	    "INSERT INTO probe_port (probe_id, device, port, state, pkeys) "
	    "VALUES (%d, 'mlx5_0', 1, 4, '[]'), (%d, 'mlx5_0', 2, 4, '[]')",
	    h, h, f->now - 7200, f->now, h, h % 4, h, h);
	if (h % 9 == 0)
		sql(f,
		    "INSERT INTO probe_dropped VALUES ('node-%03d', %d, 0, "
		    "0)",
		    h, h);
	mark(f, h);
}

static void add_results(struct fixture *f, int n)
{
	for (int i = 0; i < n; i++) {
		int a = 1 + (int)rnd(f, (unsigned)f->next_host - 1);
		int b = 1 + (int)rnd(f, (unsigned)f->next_host - 1);
		int lat = rnd(f, 2), fail = rnd(f, 10) == 0;

		sql(f,
		    "INSERT OR IGNORE INTO result (result_id, host, profile, "
		    "test, started, local_device, local_port, peer_host, "
		    "peer_device, peer_port, outcome, wc_status, busy, "
		    "received, bw_avg_bytes_per_second, "
		    "bw_min_bytes_per_second, lat_median_seconds, "
		    "lat_p99_seconds) VALUES ('r%d', 'node-%03d', '%s', 'x', "
		    "%f, 'mlx5_0', %u, 'node-%03d', 'mlx5_0', %u, '%s', %s, "
		    "%d, "
		    "%f, %s)",
		    f->next_result++, a, lat ? "lat" : "bw",
		    f->now - rnd(f, 4000), 1 + rnd(f, 2), b, 1 + rnd(f, 2),
		    fail ? "verbs_error" : "ok",
		    fail ? "'IBV_WC_RETRY_EXC_ERR'" : "NULL", rnd(f, 20) == 0,
		    f->now,
		    fail  ? "NULL, NULL, NULL, NULL"
		    : lat ? "NULL, NULL, 1.5e-6, 3.25e-6"
			  : "4.7e10, 4.1e10, NULL, NULL");
	}
}

/* A report from each of a share of the hosts, as the collector stores it. */
static void change_hosts(struct fixture *f, unsigned percent)
{
	sql(f, "BEGIN");
	for (int h = 1; h < f->next_host; h++) {
		if (rnd(f, 100) >= percent)
			continue;
		sql(f,
		    "UPDATE series SET value = value + %u WHERE port_id IN "
		    "(SELECT id FROM port WHERE host_id = %d) AND name != "
		    "'link_downed'",
		    1 + rnd(f, 5000), h);
		if (rnd(f, 4) == 0)
			sql(f, "UPDATE port SET state = %u WHERE host_id = %d",
			    1 + rnd(f, 4), h);
		mark(f, h);
	}
	sql(f, "UPDATE host SET last_report = %f WHERE id != 7", f->now);
	sql(f, "COMMIT");
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/ibpulse-bcache-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	assert_int_equal(sqlite3_open(f->db, &f->w), SQLITE_OK);
	sql(f, "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; "
	       "PRAGMA synchronous=OFF");
	apply_schema(f);
	f->now = 1.7e9;
	f->rnd = 42;
	f->next_result = 1;
	sql(f, "BEGIN");
	for (f->next_host = 1; f->next_host <= HOSTS; f->next_host++)
		add_host(f, f->next_host);
	add_results(f, 400);
	sql(f, "COMMIT");
	for (int i = 0; i < 2; i++) {
		struct exporter_settings *c = i ? &f->plain_cfg : &f->cfg;

		assert_int_equal(exporter_settings_init(c), 0);
		free(c->db);
		c->db = strdup(f->db);
		c->chunk_rows = 50;
		c->gzip_threads = 2;
	}
	f->plain_cfg.cache_max_bytes = 0;
	scrape_stats_init(&f->cached);
	scrape_stats_init(&f->plain);
	assert_int_equal(scrape_stats_cache(&f->cached, &f->cfg), 0);
	assert_int_equal(scrape_stats_cache(&f->plain, &f->plain_cfg), 0);
	assert_non_null(f->cached.cache);
	assert_null(f->plain.cache);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char path[160];

	sqlite3_close(f->w);
	for (const char *const *s =
		     (const char *const[]){"", "-wal", "-shm", NULL};
	     *s; s++) {
		snprintf(path, sizeof(path), "%s%s", f->db, *s);
		unlink(path);
	}
	rmdir(f->dir);
	exporter_settings_free(&f->cfg);
	exporter_settings_free(&f->plain_cfg);
	scrape_stats_destroy(&f->cached);
	scrape_stats_destroy(&f->plain);
	free(f);
	return 0;
}

/* The whole of a gzip body: exactly one stream, read to its end. */
static char *gunzip(const char *in, size_t len, size_t *out_len)
{
	size_t cap = 1 << 20, n = 0;
	char *out = malloc(cap);
	z_stream z = {0};
	int zr;

	assert_int_equal(inflateInit2(&z, 16 + 15), Z_OK);
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	do {
		if (n == cap) {
			char *more = realloc(out, cap *= 2);

			assert_non_null(more);
			out = more;
		}
		z.next_out = (Bytef *)out + n;
		z.avail_out = (uInt)(cap - n);
		zr = inflate(&z, Z_NO_FLUSH);
		n = cap - z.avail_out;
	} while (zr == Z_OK);
	assert_int_equal(zr, Z_STREAM_END);
	assert_int_equal(z.avail_in, 0); /* nothing after the one member */
	inflateEnd(&z);
	*out_len = n;
	return out;
}

/* @body without the lines of the two families that may differ. */
static char *comparable(const char *body, size_t len)
{
	char *out = malloc(len + 1), *o = out;
	const char *p = body, *end = body + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);

		if (!memmem(p, n, "ibpulse_exporter_scrape_duration", 32) &&
		    !memmem(p, n, "ibpulse_exporter_cache_bytes", 28)) {
			memcpy(o, p, n);
			o += n;
		}
		p += n;
	}
	*o = '\0';
	return out;
}

static char *body(struct fixture *f, struct scrape_stats *st,
		  const struct exporter_settings *cfg, struct scrape_req *rq,
		  size_t *len)
{
	char err[256], *b, *t;
	struct buf out;
	size_t n;

	buf_init(&out, 0);
	st->last_duration = -1;
	if (scrape_build(cfg, st, rq, &out, err, sizeof(err)))
		fail_msg("scrape: %s", err);
	b = buf_steal(&out, &n);
	if (rq->gzip) {
		t = gunzip(b, n, &n);
		free(b);
		b = t;
	}
	t = comparable(b, n);
	free(b);
	*len = strlen(t);
	(void)f;
	return t;
}

/* Both exporters, every format and encoding, shard @shard of @shards. */
static void same(struct fixture *f, unsigned shard, unsigned shards)
{
	for (int format = 0; format < 2; format++) {
		for (int gz = 0; gz < 2; gz++) {
			struct scrape_req rq = {
				.shard = shard,
				.shards = shards,
				.format = format ? EXPO_OPENMETRICS : EXPO_TEXT,
				.gzip = gz,
				.now = f->now,
			};
			size_t a_len, b_len;
			char *a = body(f, &f->cached, &f->cfg, &rq, &a_len);
			char *b =
				body(f, &f->plain, &f->plain_cfg, &rq, &b_len);

			if (a_len != b_len || memcmp(a, b, a_len)) {
				size_t i = 0;

				while (i < a_len && i < b_len && a[i] == b[i])
					i++;
				fail_msg("format %d gzip %d shard %u/%u: the "
					 "bodies differ at byte %zu of %zu/%zu:"
					 "\n%.200s\n--- whole render:\n%.200s",
					 format, gz, shard, shards, i, a_len,
					 b_len, a + (i > 80 ? i - 80 : 0),
					 b + (i > 80 ? i - 80 : 0));
			}
			assert_true(a_len > 10000);
			free(a);
			free(b);
		}
	}
}

static void test_same_as_whole_render(void **state)
{
	struct fixture *f = *state;

	same(f, 0, 1); /* first: everything rendered */
	same(f, 0, 1); /* nothing changed: everything reused */
	for (int round = 0; round < 6; round++) {
		f->now += 15;
		change_hosts(f, 10);
		sql(f, "BEGIN");
		add_results(f, 20);
		switch (round) {
		case 1: /* a new counter, a new family for one host */
			sql(f, "INSERT INTO series (port_id, source, name, "
			       "value, changed) VALUES (11, 1, "
			       "'rx_atomic_requests', 5, 0)");
			mark(f, 5);
			break;
		case 2: /* a host retired; one enrolled */
			sql(f, "DELETE FROM host WHERE id = 12");
			add_host(f, f->next_host++);
			break;
		case 3: /* host 7 stopped reporting: past drop_after */
			f->now += 700;
			break;
		case 4: /* caps: a family cut in the middle of a host */
			f->cfg.max_family_series = 7;
			f->plain_cfg.max_family_series = 7;
			break;
		default:
			break;
		}
		sql(f, "COMMIT");
		same(f, 0, 1);
		same(f, 1, 3);
		f->cfg.max_family_series = 1000000;
		f->plain_cfg.max_family_series = 1000000;
	}
}

/* A tenth of the hosts changed: the rest of their segments are reused. */
static void test_reuses(void **state)
{
	struct fixture *f = *state;
	struct bc_stats a, b;

	same(f, 0, 1);
	f->now += 15;
	change_hosts(f, 10);
	bcache_stats(f->cached.cache, &a);
	same(f, 0, 1);
	bcache_stats(f->cached.cache, &b);
	assert_true(b.reused - a.reused > 4 * (b.rendered - a.rendered));
	assert_true(b.bytes > 0 && b.bytes <= b.max_bytes);
}

/* A result of @profile ("lat" or "bw") from node-@a port 1 to node-002
 * that started at @t. */
static void add_result_at(struct fixture *f, int a, const char *profile,
			  double t)
{
	int lat = !strcmp(profile, "lat");

	sql(f,
	    "INSERT INTO result (result_id, host, profile, test, started, "
	    "local_device, local_port, peer_host, peer_device, peer_port, "
	    "outcome, busy, received, %s) VALUES ('r%d', 'node-%03d', '%s', "
	    "'x', %f, 'mlx5_0', 1, 'node-002', 'mlx5_0', 1, 'ok', 0, %f, %s)",
	    lat ? "lat_median_seconds" : "bw_avg_bytes_per_second",
	    f->next_result++, a, profile, t, f->now, lat ? "2e-6" : "4.5e10");
}

/*
 * The period slides past its oldest result, whose profile ("lat") came
 * before the next one's ("bw"): the order of profiles must not follow
 * the rows, or every port's aggregates change order and the cache
 * renders every segment again while their text stays the same.
 */
static void test_reuses_as_period_slides(void **state)
{
	struct fixture *f = *state;
	double from = f->now - f->cfg.test_period;
	struct bc_stats a, b;

	sql(f, "BEGIN");
	sql(f, "DELETE FROM result WHERE started < %f", from + 20);
	add_result_at(f, 1, "lat", from + 5);
	add_result_at(f, 1, "bw", from + 10);
	sql(f, "COMMIT");
	same(f, 0, 1);
	f->now += 7; /* the "lat" result leaves the period */
	bcache_stats(f->cached.cache, &a);
	same(f, 0, 1);
	bcache_stats(f->cached.cache, &b);
	/* the segments of the one pair whose result left, and the families
	 * rendered every time: about 18 of 8,300 (all 221 without) */
	assert_true(100 * (b.rendered - a.rendered) < b.reused - a.reused);
}

/*
 * A change_seq that went back (a database restored from a copy, then
 * changed): the markers the cache knows come again with other rows behind
 * them. The cache must start over.
 */
static void test_rewound_markers(void **state)
{
	struct fixture *f = *state;

	same(f, 0, 1);
	sql(f, "BEGIN;"
	       "UPDATE series SET value = value + 77;"
	       "UPDATE change_seq SET seq = 1;"
	       "COMMIT");
	same(f, 0, 1);
}

/* The unsharded scope's kept results' counters (results.h). */
static struct res_keep_stats keep_stats(struct fixture *f)
{
	struct res_keep_stats st;
	struct bc_scope *sc;

	assert_int_equal(bc_scope_lock(f->cached.cache, 0, 1, f->now, &sc), 0);
	res_keep_stats(bc_scope_aux(sc)->data, &st);
	bc_scope_unlock(sc);
	return st;
}

/*
 * The results kept between scrapes: each step changes the result table as
 * the collector may, and the bodies must stay those of a whole render. A
 * step that only adds rows, moves time, deletes rows from long before the
 * period or unregisters a port reads only the new rows.
 */
static void test_keeps_results(void **state)
{
	struct fixture *f = *state;
	double ahead = DBSET_DEFAULT_RESULTS_MAX_AHEAD;
	struct res_keep_stats a, b;

	same(f, 0, 1);
	same(f, 1, 3);
	a = keep_stats(f);
	assert_int_equal(a.full_reads, 1);
	assert_int_equal(a.incremental, 3);
	/* new rows, many of them older than the newest kept, and one too
	 * far ahead to serve yet */
	f->now += 15;
	sql(f, "BEGIN");
	add_results(f, 20);
	add_result_at(f, 3, "bw", f->now + ahead + 10);
	sql(f, "COMMIT");
	same(f, 0, 1);
	b = keep_stats(f);
	assert_true(b.rows_read - a.rows_read <= 4 * 21);
	/* time moves: the one ahead comes within max_ahead, old ones go */
	f->now += 30;
	same(f, 0, 1);
	same(f, 1, 3);
	/* rows deleted long before the period (the retention) */
	sql(f, "BEGIN");
	add_result_at(f, 5, "bw", f->now - 90000);
	add_result_at(f, 5, "bw", f->now - 20);
	sql(f, "COMMIT");
	same(f, 0, 1);
	sql(f, "DELETE FROM result WHERE started < %f", f->now - 80000);
	add_result_at(f, 6, "bw", f->now - 10);
	same(f, 0, 1);
	/* a port no longer registered: its rows go from the kept ones */
	sql(f, "DELETE FROM probe_port WHERE probe_id = 5 AND port = 1");
	same(f, 0, 1);
	/* the period slides past most rows */
	f->now += 3000;
	same(f, 0, 1);
	b = keep_stats(f);
	assert_int_equal(b.full_reads, a.full_reads);
	assert_true(b.incremental >= a.incremental + 20);
}

/* One step of test_keeps_read_again(): the bodies, and a whole read. */
static void read_again(struct fixture *f)
{
	struct res_keep_stats a = keep_stats(f), b;

	same(f, 0, 1);
	b = keep_stats(f);
	assert_int_equal(b.full_reads, a.full_reads + 1);
}

/*
 * What makes the kept results be read again: a row the keep may hold
 * deleted or changed, an id it knew handed out again, a port registered
 * whose results came before it.
 */
static void test_keeps_read_again(void **state)
{
	struct fixture *f = *state;

	same(f, 0, 1);
	/* the newest row, from long before the period, deleted and its id
	 * handed out again */
	add_result_at(f, 5, "bw", f->now - 90000);
	same(f, 0, 1);
	sql(f, "DELETE FROM result WHERE id = (SELECT max(id) FROM result)");
	add_result_at(f, 6, "bw", f->now - 5);
	read_again(f);
	/* results of a host that registers after them */
	sql(f, "BEGIN");
	add_result_at(f, 90, "bw", f->now - 100);
	add_result_at(f, 90, "bw", f->now - 40);
	sql(f, "COMMIT");
	same(f, 0, 1);
	sql(f, "BEGIN");
	add_host(f, 90);
	sql(f, "COMMIT");
	read_again(f);
	/* a kept row deleted (a retired host's), then one changed */
	sql(f,
	    "DELETE FROM result WHERE id = (SELECT min(id) FROM result "
	    "WHERE started > %f)",
	    f->now - 1000);
	read_again(f);
	sql(f, "UPDATE result SET outcome = 'verbs_error' WHERE id = (SELECT "
	       "max(id) FROM result WHERE outcome = 'ok')");
	read_again(f);
}

/* cache_max_bytes too small: the scope keeps nothing, output the same. */
static void test_over_the_bound(void **state)
{
	struct fixture *f = *state;
	struct bc_stats st;

	scrape_stats_destroy(&f->cached);
	scrape_stats_init(&f->cached);
	f->cfg.cache_max_bytes = 4096;
	assert_int_equal(scrape_stats_cache(&f->cached, &f->cfg), 0);
	same(f, 0, 1);
	f->now += 15;
	change_hosts(f, 10);
	same(f, 0, 1);
	bcache_stats(f->cached.cache, &st);
	assert_int_equal(st.bytes, 0);
	assert_true(st.dropped >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same_as_whole_render,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_reuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reuses_as_period_slides,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rewound_markers, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_over_the_bound, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_keeps_results, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_keeps_read_again, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
