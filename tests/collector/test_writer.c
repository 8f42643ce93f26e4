// SPDX-License-Identifier: MIT
/*
 * Unit tests for the writer thread: a job's done() runs only once its rows
 * are committed (checked from a second connection inside done()), jobs
 * from several threads share transactions, a failed transaction fails
 * every job in it and nothing of them is stored, and writer_stop() drains
 * the queue before refusing new jobs.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "log.h"
#include "report.h"
#include "store.h"
#include "writer.h"

#define THREADS 4
#define PER_THREAD 25

struct fixture {
	char dir[64];
	char db[128];
	struct store *st;
	struct writer *w;
};

/* One report (one device, one port, one counter) and its job. */
struct item {
	struct report r;
	struct report_device dev;
	struct report_port port;
	struct report_counter c;
	char host[32];
	struct writer_job job;
	const char *db;
	int visible; /* the counter's value was readable in done() */
	int done;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct store_opts so = {
		.schema_dir = SCHEMA_DIR,
		.busy_timeout_ms = 100,
		.keyframe_interval = 300,
		.prune_batch = 5000,
		.wal_max_bytes = 1 << 20,
	};
	struct writer_opts wo = {.max_batch_rows = 1000,
				 .checkpoint_interval = 1};

	snprintf(f->dir, sizeof(f->dir), "/tmp/ibpulse-writer-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	so.path = f->db;
	assert_int_equal(store_open(&so, &f->st), 0);
	assert_int_equal(writer_new(f->st, &wo, &f->w), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	writer_free(f->w);
	store_close(f->st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* What another process (the exporter) sees: the counter's value or -1. */
static long long read_value(const char *db, const char *host)
{
	sqlite3 *c;
	sqlite3_stmt *s;
	long long v = -1;

	if (sqlite3_open_v2(db, &c, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return -2;
	if (sqlite3_prepare_v2(c,
			       "SELECT x.value FROM series x JOIN port p ON "
			       "p.id = x.port_id JOIN host h ON h.id = "
			       "p.host_id WHERE h.name = ?1",
			       -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_text(s, 1, host, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW)
			v = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_close(c);
	return v;
}

static void item_done(struct writer_job *job)
{
	struct item *it = job->arg;

	/* On the writer thread, right after the commit. */
	it->visible = read_value(it->db, it->host) == (long long)it->c.value;
	pthread_mutex_lock(&it->lock);
	it->done = 1;
	pthread_cond_signal(&it->cond);
	pthread_mutex_unlock(&it->lock);
}

static void item_init(struct item *it, const char *db, const char *host,
		      uint64_t value)
{
	memset(it, 0, sizeof(*it));
	snprintf(it->host, sizeof(it->host), "%s", host);
	it->c = (struct report_counter){(char *)"port_xmit_data", value};
	it->port = (struct report_port){.port = 1,
					.state = 4,
					.phys_state = 5,
					.rate_bytes = REPORT_UNKNOWN,
					.lid = -1,
					.sm_lid = -1,
					.lmc = -1,
					.cap_mask = -1};
	it->port.counters[CSRC_IB] = &it->c;
	it->port.n_counters[CSRC_IB] = 1;
	it->dev = (struct report_device){.name = (char *)"mlx5_0",
					 .numa_node = -1,
					 .ports = &it->port,
					 .n_ports = 1};
	it->dev.pcie = (struct report_pcie){.cur_speed_gts = -1,
					    .max_speed_gts = -1,
					    .cur_width = -1,
					    .max_width = -1,
					    .aer_correctable = -1,
					    .aer_nonfatal = -1,
					    .aer_fatal = -1};
	it->r = (struct report){.version = 1,
				.host = it->host,
				.timestamp = 1,
				.devices = &it->dev,
				.n_devices = 1};
	it->job = (struct writer_job){.kind = WRITER_REPORT,
				      .report = &it->r,
				      .done = item_done,
				      .arg = it};
	it->db = db;
	pthread_mutex_init(&it->lock, NULL);
	pthread_cond_init(&it->cond, NULL);
}

static void item_wait(struct item *it)
{
	pthread_mutex_lock(&it->lock);
	while (!it->done)
		pthread_cond_wait(&it->cond, &it->lock);
	pthread_mutex_unlock(&it->lock);
}

struct client {
	struct fixture *f;
	int id;
	int failures;
};

static void *client_main(void *arg)
{
	struct client *c = arg;
	char host[32];

	snprintf(host, sizeof(host), "node%d", c->id);
	for (int i = 1; i <= PER_THREAD; i++) {
		struct item it;

		item_init(&it, c->f->db, host, (uint64_t)(c->id * 1000 + i));
		if (writer_submit(c->f->w, &it.job)) {
			c->failures++;
			continue;
		}
		item_wait(&it);
		if (it.job.status || !it.visible ||
		    it.job.stats.history_written != 1)
			c->failures++;
	}
	return NULL;
}

static void test_done_after_commit(void **state)
{
	struct fixture *f = *state;
	struct client c[THREADS];
	pthread_t t[THREADS];
	struct writer_counts n;

	for (int i = 0; i < THREADS; i++) {
		c[i] = (struct client){.f = f, .id = i};
		pthread_create(&t[i], NULL, client_main, &c[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		char host[32];

		pthread_join(t[i], NULL);
		assert_int_equal(c[i].failures, 0);
		snprintf(host, sizeof(host), "node%d", i);
		assert_int_equal(read_value(f->db, host),
				 i * 1000 + PER_THREAD);
	}
	writer_counts(f->w, &n);
	assert_int_equal(n.jobs, THREADS * PER_THREAD);
	assert_int_equal(n.samples, THREADS * PER_THREAD);
	assert_int_equal(n.failed, 0);
	assert_true(n.commits >= 1 && n.commits <= THREADS * PER_THREAD);
}

static void test_failed_commit_fails_every_job(void **state)
{
	struct fixture *f = *state;
	struct item a, b;
	sqlite3 *locker;

	item_init(&a, f->db, "node1", 7);
	assert_int_equal(writer_submit(f->w, &a.job), 0);
	item_wait(&a);
	assert_int_equal(a.job.status, 0);
	/* Another process holds the write lock past busy_timeout. */
	assert_int_equal(sqlite3_open(f->db, &locker), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(locker, "BEGIN IMMEDIATE", NULL, NULL, NULL),
		SQLITE_OK);
	item_init(&a, f->db, "node1", 8);
	item_init(&b, f->db, "node2", 9);
	assert_int_equal(writer_submit(f->w, &a.job), 0);
	assert_int_equal(writer_submit(f->w, &b.job), 0);
	item_wait(&a);
	item_wait(&b);
	assert_int_equal(a.job.status, -EBUSY);
	assert_int_equal(b.job.status, -EBUSY);
	sqlite3_exec(locker, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(locker);
	assert_int_equal(read_value(f->db, "node1"), 7);
	assert_int_equal(read_value(f->db, "node2"), -1);
	/* The cache was dropped with the rollback: a retry stores it. */
	item_init(&a, f->db, "node1", 8);
	assert_int_equal(writer_submit(f->w, &a.job), 0);
	item_wait(&a);
	assert_int_equal(a.job.status, 0);
	assert_true(a.visible);
}

static void test_stop_drains_queue(void **state)
{
	struct fixture *f = *state;
	struct item *it = calloc(50, sizeof(*it));
	char host[16];

	for (int i = 0; i < 50; i++) {
		snprintf(host, sizeof(host), "h%d", i);
		item_init(&it[i], f->db, host, (uint64_t)i + 1);
		assert_int_equal(writer_submit(f->w, &it[i].job), 0);
	}
	writer_stop(f->w);
	for (int i = 0; i < 50; i++) {
		assert_true(it[i].done);
		assert_int_equal(it[i].job.status, 0);
		assert_true(it[i].visible);
	}
	item_init(&it[0], f->db, "late", 1);
	assert_int_equal(writer_submit(f->w, &it[0].job), -ESHUTDOWN);
	free(it);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_done_after_commit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_failed_commit_fails_every_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_drains_queue, setup,
						teardown),
	};

	log_init("test_writer", LOG_LVL_ERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
