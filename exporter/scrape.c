// SPDX-License-Identifier: MIT
/*
 * One /metrics request, database to body, and the single flight that
 * shares bodies between concurrent scrapes under a memory ceiling: see
 * scrape.h.
 */
#include "scrape.h"
#include "config.h"
#include "log.h"
#include "render.h"
#include "dbread.h"
#include "snapshot.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void scrape_stats_init(struct scrape_stats *st)
{
	pthread_mutex_init(&st->lock, NULL);
	st->last_duration = -1;
	st->database_errors = 0;
	tally_init(&st->tally);
	render_drops_init(&st->drops);
}

void scrape_stats_destroy(struct scrape_stats *st)
{
	if (!st)
		return;
	pthread_mutex_destroy(&st->lock);
	tally_destroy(&st->tally);
	render_drops_destroy(&st->drops);
}

int64_t scrape_wal_size(const char *db)
{
	char path[4096];
	struct stat sb;

	if (snprintf(path, sizeof(path), "%s-wal", db) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (stat(path, &sb))
		return errno == ENOENT ? 0 : -errno;
	return (int64_t)sb.st_size;
}

static void scrape_db_error(struct scrape_stats *st, const char *err)
{
	pthread_mutex_lock(&st->lock);
	st->database_errors++;
	st->last_error_at = mono_now();
	snprintf(st->last_error, sizeof(st->last_error), "%s", err);
	pthread_mutex_unlock(&st->lock);
	log_once("exporter-db", 60, LOG_LVL_WARN, "database: %s", err);
}

/* The outcome counters, updated from the rows added since the last scrape. */
static int scrape_totals(struct scrape_stats *st, sqlite3 *db,
			 const struct snap_opts *o, struct snapshot *sn,
			 char *err, size_t errlen)
{
	struct tally_count *v;
	size_t n;
	int ret;

	if (!results_enabled(sn->results))
		return 0;
	ret = tally_update(&st->tally, db, o->chunk_rows, o->shard, o->shards,
			   &v, &n, err, errlen);
	if (!ret)
		results_set_totals(sn->results, v, n);
	return ret;
}

static int scrape_snapshot(const struct exporter_settings *cfg,
			   struct scrape_stats *st, const struct scrape_req *rq,
			   struct snapshot **sn, char *err, size_t errlen)
{
	struct snap_opts o = {
		.now = rq->now,
		.stale_after = cfg->stale_after,
		.drop_after = cfg->drop_after,
		.shard = rq->shard,
		.shards = rq->shards,
		.chunk_rows = (size_t)cfg->chunk_rows,
		.test_period = cfg->test_period,
		.max_pairs = (size_t)cfg->max_pair_series,
		.results_max_ahead = cfg->results_max_ahead,
		.group_label = cfg->group_label,
	};
	sqlite3 *db = NULL;
	int ret;

	ret = dbread_open(cfg->db, (int)cfg->busy_timeout_ms, &db, err, errlen);
	if (!ret)
		ret = snapshot_read(db, &o, sn, err, errlen);
	if (!ret && (ret = scrape_totals(st, db, &o, *sn, err, errlen))) {
		snapshot_free(*sn);
		*sn = NULL;
	}
	sqlite3_close(db);
	if (ret && ret != -ENOMEM)
		scrape_db_error(st, err);
	return ret;
}

int scrape_build_limited(const struct exporter_settings *cfg,
			 struct scrape_stats *st, const struct scrape_req *rq,
			 struct buf *out, size_t max, char *err, size_t errlen)
{
	struct render_self self = {
		.version = IBPULSE_VERSION,
		.family_cap = (size_t)cfg->max_family_series,
		.drops = &st->drops,
	};
	struct snapshot *sn = NULL;
	double t0 = mono_now();
	int ret;

	ret = scrape_snapshot(cfg, st, rq, &sn, err, errlen);
	if (ret)
		return ret;
	pthread_mutex_lock(&st->lock);
	self.last_duration = st->last_duration;
	self.database_errors = st->database_errors;
	pthread_mutex_unlock(&st->lock);
	self.wal_bytes = scrape_wal_size(cfg->db);
	out->max = max;
	ret = render_metrics(sn, &self, rq->format, out, NULL);
	snapshot_free(sn);
	if (ret == -E2BIG && max < (size_t)cfg->max_body_bytes)
		snprintf(err, errlen,
			 "the exporter holds max_inflight_bytes (%lld) of "
			 "bodies for other scrapes; retry, or shard the scrape",
			 cfg->max_inflight_bytes);
	else if (ret == -E2BIG)
		snprintf(err, errlen,
			 "the body would pass max_body_bytes (%lld); "
			 "shard the scrape: /metrics?shard=I&shards=N",
			 cfg->max_body_bytes);
	else if (ret)
		snprintf(err, errlen, "rendering failed: %s", strerror(-ret));
	if (ret) {
		log_once("exporter-render", 60, LOG_LVL_WARN, "/metrics: %s",
			 err);
		return ret;
	}
	pthread_mutex_lock(&st->lock);
	st->last_duration = mono_now() - t0;
	st->last_error_at = 0;
	st->last_error[0] = '\0';
	pthread_mutex_unlock(&st->lock);
	return 0;
}

int scrape_build(const struct exporter_settings *cfg, struct scrape_stats *st,
		 const struct scrape_req *rq, struct buf *out, char *err,
		 size_t errlen)
{
	return scrape_build_limited(cfg, st, rq, out,
				    (size_t)cfg->max_body_bytes, err, errlen);
}

int scrape_health(const struct exporter_settings *cfg, char *err, size_t errlen)
{
	/* the last row of each table a scrape starts with: a few pages */
	static const char probe[] = "SELECT (SELECT max(rowid) FROM host), "
				    "(SELECT max(rowid) FROM device), "
				    "(SELECT max(rowid) FROM port), "
				    "(SELECT max(rowid) FROM series)";
	sqlite3_stmt *s = NULL;
	sqlite3 *db = NULL;
	int ret, rc;

	ret = dbread_open(cfg->db, (int)cfg->busy_timeout_ms, &db, err, errlen);
	if (ret)
		return ret;
	rc = sqlite3_prepare_v2(db, probe, -1, &s, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		snprintf(err, errlen, "%s: cannot read: %s", cfg->db,
			 sqlite3_errmsg(db));
		ret = -EIO;
	}
	sqlite3_finalize(s);
	sqlite3_close(db);
	return ret;
}

int scrape_ready(const struct exporter_settings *cfg, struct scrape_stats *st,
		 char *err, size_t errlen)
{
	int ret = scrape_health(cfg, err, errlen);

	if (ret)
		return ret;
	pthread_mutex_lock(&st->lock);
	if (st->last_error_at > 0 &&
	    mono_now() - st->last_error_at < SCRAPE_ERROR_MEMORY) {
		snprintf(err, errlen, "the last scrape could not read: %s",
			 st->last_error);
		ret = -EIO;
	}
	pthread_mutex_unlock(&st->lock);
	return ret;
}
