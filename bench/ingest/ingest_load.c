// SPDX-License-Identifier: MIT
/*
 * Collector ingest benchmark (bench/README.md, "Collector ingest").
 *
 *   ingest-load tokens --hosts N          print "host token" lines
 *   ingest-load load --port P [...]       post reports, print samples/s
 *   ingest-load raw --db PATH [...]       the plain SQLite anchor, rows/s
 *
 * `load` simulates many hosts, each with ports x counters shaped like real
 * ones (data and packet counters move every report, error counters sit at
 * zero), and posts their reports over keep-alive connections with libcurl
 * multi from a few threads. Samples are counters in reports answered 200,
 * i.e. committed. `raw` is what SQLite alone does on this machine: history
 * inserts plus latest-value upserts, 1,000 rows a commit, WAL,
 * synchronous=FULL, prepared statements.
 */
#include "buf.h"

#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N_IB 20
#define N_HW 40
#define N_NET 10
#define PER_PORT (N_IB + N_HW + N_NET)

static const char *const ib_names[N_IB] = {
	"port_xmit_data",
	"port_rcv_data",
	"port_xmit_packets",
	"port_rcv_packets",
	"unicast_xmit_packets",
	"unicast_rcv_packets",
	"port_xmit_wait",
	"multicast_xmit_packets",
	"multicast_rcv_packets",
	"symbol_error",
	"link_error_recovery",
	"link_downed",
	"port_rcv_errors",
	"port_rcv_remote_physical_errors",
	"port_rcv_switch_relay_errors",
	"port_xmit_discards",
	"port_xmit_constraint_errors",
	"port_rcv_constraint_errors",
	"local_link_integrity_errors",
	"excessive_buffer_overrun_errors",
};
#define IB_MOVING 7 /* the first 7 move */
#define HW_MOVING 5
#define NET_MOVING 2

struct opts {
	const char *cmd;
	unsigned port;
	unsigned hosts, ports, threads, conns;
	double seconds;
	const char *db;
};

struct sim_host {
	char name[32];
	char auth[96];
	uint64_t *vals; /* ports x PER_PORT */
};

struct load {
	const struct opts *o;
	struct sim_host *hosts;
	double t_start, t_end; /* measured window */
	atomic_ullong samples, reports, errors, warm_reports;
	atomic_int phase; /* 0 warm-up, 1 measuring, 2 done */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void host_token(unsigned i, char *out, size_t n)
{
	snprintf(out, n, "bench-%06u-%08x%08x", i, i * 2654435761u,
		 ~i * 40503u);
}

static void counter_name(int k, char *out, size_t n)
{
	if (k < N_IB)
		snprintf(out, n, "%s", ib_names[k]);
	else if (k < N_IB + N_HW)
		snprintf(out, n, "hw_counter_%02d", k - N_IB);
	else
		snprintf(out, n, "net_stat_%02d", k - N_IB - N_HW);
}

static int counter_moves(int k)
{
	if (k < N_IB)
		return k < IB_MOVING;
	if (k < N_IB + N_HW)
		return k - N_IB < HW_MOVING;
	return k - N_IB - N_HW < NET_MOVING;
}

/* Advance the moving counters and write the host's report into @b. */
static int build_report(const struct opts *o, struct sim_host *h, unsigned hid,
			struct buf *b, unsigned *seed)
{
	static const char *const src[3] = {"ib", "hw", "net"};
	int ret;

	buf_reset(b);
	ret = buf_printf(b,
			 "{\"version\":1,\"host\":\"%s\",\"timestamp\":%.3f,"
			 "\"probe_version\":\"bench\",\"devices\":[",
			 h->name, (double)time(NULL));
	for (unsigned p = 0; !ret && p < o->ports; p++) {
		uint64_t *v = h->vals + (size_t)p * PER_PORT;

		ret = buf_printf(
			b,
			"%s{\"name\":\"mlx5_%u\",\"fw_ver\":\"20.31.1014\","
			"\"ports\":[{\"port\":1,\"state\":4,\"phys_state\":5,"
			"\"rate_bytes_per_second\":25000000000,"
			"\"link_layer\":\"InfiniBand\",\"lid\":%u,\"sm_lid\":1,"
			"\"counters\":{",
			p ? "," : "", p, (hid * 16 + p) & 0xffff);
		for (int k = 0; !ret && k < PER_PORT; k++) {
			char name[40];
			int s = k < N_IB ? 0 : k < N_IB + N_HW ? 1 : 2;
			int first = k == 0 || k == N_IB || k == N_IB + N_HW;

			if (counter_moves(k))
				v[k] += 1 + (rand_r(seed) & 0xffff);
			counter_name(k, name, sizeof(name));
			if (first)
				ret = buf_printf(b, "%s\"%s\":{", k ? "}," : "",
						 src[s]);
			if (!ret)
				ret = buf_printf(b, "%s\"%s\":%llu",
						 first ? "" : ",", name,
						 (unsigned long long)v[k]);
		}
		if (!ret)
			ret = buf_adds(b, "}}}]}");
	}
	return ret ? ret : buf_adds(b, "]}");
}

struct slot {
	CURL *easy;
	struct curl_slist *hdrs;
	struct buf body;
	unsigned host;
	unsigned seed;
};

static size_t discard(char *p, size_t sz, size_t n, void *u)
{
	return sz * n;
}

struct worker {
	struct load *l;
	unsigned id;
	unsigned next; /* next host index of this worker */
	pthread_t thread;
};

static int slot_arm(struct worker *w, struct slot *s, CURLM *multi)
{
	const struct opts *o = w->l->o;
	struct sim_host *h;
	char url[96];

	s->host = w->id + w->next * o->threads;
	if (s->host >= o->hosts) {
		w->next = 0;
		s->host = w->id;
	}
	w->next++;
	h = &w->l->hosts[s->host];
	if (build_report(o, h, s->host, &s->body, &s->seed))
		return -ENOMEM;
	curl_slist_free_all(s->hdrs);
	s->hdrs = curl_slist_append(NULL, h->auth);
	s->hdrs = curl_slist_append(s->hdrs, "Content-Type: application/json");
	s->hdrs = curl_slist_append(s->hdrs, "Expect:");
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/v1/report",
		 o->port);
	curl_easy_setopt(s->easy, CURLOPT_URL, url);
	curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, s->hdrs);
	curl_easy_setopt(s->easy, CURLOPT_POSTFIELDS, s->body.data);
	curl_easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE, (long)s->body.len);
	curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(s->easy, CURLOPT_TIMEOUT, 120L);
	curl_easy_setopt(s->easy, CURLOPT_PRIVATE, s);
	curl_multi_add_handle(multi, s->easy);
	return 0;
}

static void slot_done(struct load *l, struct slot *s, CURLcode rc)
{
	long code = 0;

	curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
	if (rc != CURLE_OK || code != 200) {
		if (atomic_fetch_add(&l->errors, 1) < 5)
			fprintf(stderr, "ingest-load: %s, HTTP %ld\n",
				curl_easy_strerror(rc), code);
		return;
	}
	if (atomic_load(&l->phase) == 1) {
		atomic_fetch_add(&l->reports, 1);
		atomic_fetch_add(&l->samples,
				 (unsigned long long)l->o->ports * PER_PORT);
	} else {
		atomic_fetch_add(&l->warm_reports, 1);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct load *l = w->l;
	unsigned n = l->o->conns;
	struct slot *slots = calloc(n, sizeof(*slots));
	CURLM *multi = curl_multi_init();
	int running = 1;

	curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)n);
	for (unsigned i = 0; i < n; i++) {
		slots[i].easy = curl_easy_init();
		slots[i].seed = w->id * 1000 + i;
		buf_init(&slots[i].body, 0);
		slot_arm(w, &slots[i], multi);
	}
	while (atomic_load(&l->phase) < 2 || running) {
		CURLMsg *m;
		int left;

		curl_multi_perform(multi, &running);
		while ((m = curl_multi_info_read(multi, &left))) {
			struct slot *s;

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE,
					  (char **)&s);
			slot_done(l, s, m->data.result);
			curl_multi_remove_handle(multi, s->easy);
			if (atomic_load(&l->phase) < 2)
				slot_arm(w, s, multi);
		}
		if (atomic_load(&l->phase) == 2 && !running)
			break;
		curl_multi_poll(multi, NULL, 0, 100, NULL);
	}
	for (unsigned i = 0; i < n; i++) {
		curl_multi_remove_handle(multi, slots[i].easy);
		curl_easy_cleanup(slots[i].easy);
		curl_slist_free_all(slots[i].hdrs);
		buf_free(&slots[i].body);
	}
	curl_multi_cleanup(multi);
	free(slots);
	return NULL;
}

static int sim_init(const struct opts *o, struct load *l)
{
	l->hosts = calloc(o->hosts, sizeof(*l->hosts));
	if (!l->hosts)
		return -ENOMEM;
	for (unsigned i = 0; i < o->hosts; i++) {
		struct sim_host *h = &l->hosts[i];
		char tok[64];

		snprintf(h->name, sizeof(h->name), "sim%06u", i);
		host_token(i, tok, sizeof(tok));
		snprintf(h->auth, sizeof(h->auth), "Authorization: Bearer %s",
			 tok);
		h->vals = calloc((size_t)o->ports * PER_PORT, sizeof(*h->vals));
		if (!h->vals)
			return -ENOMEM;
	}
	return 0;
}

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};

	nanosleep(&ts, NULL);
}

static int cmd_load(const struct opts *o)
{
	struct load l = {.o = o};
	struct worker *w = calloc(o->threads, sizeof(*w));
	double t0, elapsed;
	int ret = sim_init(o, &l);

	if (ret || !w)
		return 1;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (unsigned i = 0; i < o->threads; i++) {
		w[i] = (struct worker){.l = &l, .id = i};
		pthread_create(&w[i].thread, NULL, worker_main, &w[i]);
	}
	/* Warm-up: every host once, so every series exists. */
	t0 = now_s();
	while (atomic_load(&l.warm_reports) < o->hosts && now_s() - t0 < 600 &&
	       atomic_load(&l.errors) < 100)
		sleep_s(0.05);
	fprintf(stderr,
		"ingest-load: warm-up (%u hosts, first reports) took %.1f s\n",
		o->hosts, now_s() - t0);
	l.t_start = now_s();
	atomic_store(&l.phase, 1);
	sleep_s(o->seconds);
	atomic_store(&l.phase, 2);
	l.t_end = now_s();
	for (unsigned i = 0; i < o->threads; i++)
		pthread_join(w[i].thread, NULL);
	elapsed = l.t_end - l.t_start;
	printf("collector_samples_per_s=%.0f reports_per_s=%.1f "
	       "reports=%llu samples=%llu seconds=%.1f errors=%llu "
	       "hosts=%u ports=%u counters=%d\n",
	       (double)atomic_load(&l.samples) / elapsed,
	       (double)atomic_load(&l.reports) / elapsed,
	       atomic_load(&l.reports), atomic_load(&l.samples), elapsed,
	       atomic_load(&l.errors), o->hosts, o->ports, PER_PORT);
	for (unsigned i = 0; i < o->hosts; i++)
		free(l.hosts[i].vals);
	free(l.hosts);
	free(w);
	curl_global_cleanup();
	return atomic_load(&l.errors) ? 1 : 0;
}

static int raw_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "ingest-load: %s: %s\n", sql, msg);
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

/* The anchor: history + latest-value rows, 1,000 rows a commit. */
static int cmd_raw(const struct opts *o)
{
	long long population = (long long)o->hosts * o->ports * PER_PORT;
	long long rows = 0, i = 0;
	sqlite3_stmt *hist, *latest;
	double t0, t;
	sqlite3 *db;

	if (sqlite3_open(o->db, &db) != SQLITE_OK ||
	    raw_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
			 "PRAGMA cache_size = -65536;" /* as the collector */
			 "CREATE TABLE latest (id INTEGER PRIMARY KEY, "
			 "value INTEGER NOT NULL, changed REAL NOT NULL);"
			 "CREATE TABLE history (series_id INTEGER NOT NULL, "
			 "ts REAL NOT NULL, value INTEGER NOT NULL);"
			 "CREATE INDEX history_series_ts "
			 "ON history (series_id, ts);") ||
	    sqlite3_prepare_v2(db, "INSERT INTO history VALUES (?1, ?2, ?3)",
			       -1, &hist, NULL) ||
	    sqlite3_prepare_v2(
		    db,
		    "INSERT INTO latest VALUES (?1, ?2, ?3) ON CONFLICT "
		    "(id) DO UPDATE SET value = excluded.value, "
		    "changed = excluded.changed",
		    -1, &latest, NULL)) {
		fprintf(stderr, "ingest-load: %s: %s\n", o->db,
			sqlite3_errmsg(db));
		return 1;
	}
	t0 = now_s();
	do {
		raw_exec(db, "BEGIN");
		for (int k = 0; k < 500; k++, i++) {
			long long id = i % population + 1;

			t = (double)time(NULL);
			sqlite3_bind_int64(hist, 1, id);
			sqlite3_bind_double(hist, 2, t);
			sqlite3_bind_int64(hist, 3, i);
			sqlite3_bind_int64(latest, 1, id);
			sqlite3_bind_int64(latest, 2, i);
			sqlite3_bind_double(latest, 3, t);
			if (sqlite3_step(hist) != SQLITE_DONE ||
			    sqlite3_step(latest) != SQLITE_DONE) {
				fprintf(stderr, "ingest-load: %s\n",
					sqlite3_errmsg(db));
				return 1;
			}
			sqlite3_reset(hist);
			sqlite3_reset(latest);
			rows += 2;
		}
		if (raw_exec(db, "COMMIT"))
			return 1;
	} while ((t = now_s() - t0) < o->seconds);
	printf("raw_rows_per_s=%.0f rows=%lld seconds=%.1f "
	       "rows_per_commit=1000\n",
	       (double)rows / t, rows, t);
	sqlite3_finalize(hist);
	sqlite3_finalize(latest);
	sqlite3_close(db);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ingest-load tokens --hosts N\n"
		   "       ingest-load load --port P [--hosts N] [--ports N] "
		   "[--threads N]\n"
		   "                        [--conns N] [--seconds S]\n"
		   "       ingest-load raw --db PATH [--hosts N] [--ports N] "
		   "[--seconds S]\n");
}

static int parse_uint(const char *flag, const char *s, unsigned lo, unsigned hi,
		      unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "ingest-load: --%s: '%s' is not in [%u, %u]\n",
			flag, s, lo, hi);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"port", 1, NULL, 'p'},	 {"hosts", 1, NULL, 'H'},
		{"ports", 1, NULL, 'P'}, {"threads", 1, NULL, 't'},
		{"conns", 1, NULL, 'c'}, {"seconds", 1, NULL, 's'},
		{"db", 1, NULL, 'd'},	 {0}};
	unsigned secs = 10;
	int opt, ret = 0;

	if (argc < 2)
		return -EINVAL;
	o->cmd = argv[1];
	optind = 2;
	while (!ret && (opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'p':
			ret = parse_uint("port", optarg, 1, 65535, &o->port);
			break;
		case 'H':
			ret = parse_uint("hosts", optarg, 1, 1000000,
					 &o->hosts);
			break;
		case 'P':
			ret = parse_uint("ports", optarg, 1, 64, &o->ports);
			break;
		case 't':
			ret = parse_uint("threads", optarg, 1, 64, &o->threads);
			break;
		case 'c':
			ret = parse_uint("conns", optarg, 1, 1024, &o->conns);
			break;
		case 's':
			ret = parse_uint("seconds", optarg, 1, 3600, &secs);
			break;
		case 'd':
			o->db = optarg;
			break;
		default:
			ret = -EINVAL;
		}
	}
	o->seconds = secs;
	return ret;
}

int main(int argc, char **argv)
{
	struct opts o = {.hosts = 2000, .ports = 9, .threads = 2, .conns = 16};

	if (parse(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(o.cmd, "tokens")) {
		for (unsigned i = 0; i < o.hosts; i++) {
			char tok[64];

			host_token(i, tok, sizeof(tok));
			printf("sim%06u %s\n", i, tok);
		}
		return 0;
	}
	if (!strcmp(o.cmd, "load") && o.port)
		return cmd_load(&o);
	if (!strcmp(o.cmd, "raw") && o.db)
		return cmd_raw(&o);
	usage(stderr);
	return 2;
}
