// SPDX-License-Identifier: MIT
/*
 * One /metrics request, database to body, and the single flight that
 * shares bodies between concurrent scrapes under a memory ceiling: see
 * scrape.h.
 */
#include "scrape.h"
#include "now.h"
#include "bcache.h"
#include "config.h"
#include "fnv.h"
#include "pgzip.h"
#include "log.h"
#include "render.h"
#include "dbread.h"
#include "snapshot.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

void scrape_stats_init(struct scrape_stats *st)
{
	pthread_mutex_init(&st->lock, NULL);
	st->last_duration = -1;
	st->database_errors = 0;
	st->cache = NULL;
	tally_init(&st->tally);
	render_drops_init(&st->drops);
}

int scrape_stats_cache(struct scrape_stats *st,
		       const struct exporter_settings *cfg)
{
	if (!cfg->cache_max_bytes)
		return 0;
	return bcache_new((uint64_t)cfg->cache_max_bytes, (int)cfg->gzip_level,
			  (unsigned)cfg->gzip_threads, &st->cache);
}

void scrape_stats_destroy(struct scrape_stats *st)
{
	if (!st)
		return;
	bcache_free(st->cache);
	st->cache = NULL;
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
	st->last_error_at = now_mono();
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

static int scrape_seq_row(void *ctx, sqlite3_stmt *s)
{
	*(int64_t *)ctx = sqlite3_column_int64(s, 0);
	return 0;
}

/* Empty @sc when the database is another one than it was made from, or
 * the collector's settings changed. */
static int scrape_epoch(sqlite3 *db, const char *path,
			const struct dbread_shared *sh, struct bc_scope *sc,
			char *err, size_t errlen);

static int scrape_held(void *ctx, int64_t id, uint64_t fp)
{
	return bc_host_held(ctx, id, fp);
}

/* The database file's identity, for bc_epoch(). */
static uint64_t scrape_db_id(const char *db)
{
	struct stat sb;
	uint64_t v[2] = {0, 0};

	if (!stat(db, &sb)) {
		v[0] = (uint64_t)sb.st_dev;
		v[1] = (uint64_t)sb.st_ino;
	}
	return fnv1a_bytes(FNV1A_BASIS, v, sizeof(v));
}

static int scrape_epoch(sqlite3 *db, const char *path,
			const struct dbread_shared *sh, struct bc_scope *sc,
			char *err, size_t errlen)
{
	uint64_t id = scrape_db_id(path);
	int64_t seq = -1;
	int ret = 0;

	if (dbread_has_table(db, "change_seq"))
		ret = dbread_each(db, "SELECT seq FROM change_seq",
				  "change_seq", NULL, scrape_seq_row, &seq, err,
				  errlen);
	if (!ret) {
		id = fnv1a_bytes(id, &sh->plan_period, sizeof(sh->plan_period));
		id = fnv1a_bytes(id, &sh->results_max_ahead,
				 sizeof(sh->results_max_ahead));
		id = fnv1a_bytes(id, sh->group_label, strlen(sh->group_label));
		bc_epoch(sc, id, seq);
	}
	return ret;
}

static void scrape_keep_free(void *k)
{
	res_keep_free(k);
}

/* The test results @sc keeps between scrapes (results.h); NULL: none. */
static struct res_keep *scrape_keep(struct bc_scope *sc)
{
	struct bc_aux *aux = sc ? bc_scope_aux(sc) : NULL;
	struct res_keep *k;

	if (aux && !aux->data && !res_keep_new(&k)) {
		aux->data = k;
		aux->free = scrape_keep_free;
	}
	return aux ? aux->data : NULL;
}

static int scrape_snapshot(const struct exporter_settings *cfg,
			   struct scrape_stats *st, const struct scrape_req *rq,
			   struct bc_scope *sc, struct snapshot **sn, char *err,
			   size_t errlen)
{
	struct snap_opts o = {
		.now = rq->now,
		.stale_after = cfg->stale_after,
		.drop_after = cfg->drop_after,
		.shard = rq->shard,
		.shards = rq->shards,
		.chunk_rows = (size_t)cfg->chunk_rows,
		.max_pairs = (size_t)cfg->max_pair_series,
		.held = sc ? scrape_held : NULL,
		.held_ctx = sc,
	};
	struct dbread_shared sh = {0};
	sqlite3 *db = NULL;
	int ret;

	ret = dbread_open(cfg->db, (int)cfg->busy_timeout_ms, &db, err, errlen);
	if (!ret)
		ret = dbread_shared(db, &sh, err, errlen);
	if (!ret) { /* the collector's own (dbsettings.h) */
		o.test_period = fmax(cfg->test_period, sh.plan_period);
		o.results_max_ahead = sh.results_max_ahead;
		o.group_label = sh.group_label[0] ? sh.group_label : NULL;
	}
	if (!ret && sc)
		ret = scrape_epoch(db, cfg->db, &sh, sc, err, errlen);
	o.keep = scrape_keep(sc); /* after the epoch, which may empty sc */
	if (!ret)
		ret = snapshot_read(db, &o, sn, err, errlen);
	if (sc)
		bc_aux_bytes(sc, res_keep_bytes(o.keep));
	if (!ret && (ret = scrape_totals(st, db, &o, *sn, err, errlen))) {
		snapshot_free(*sn);
		*sn = NULL;
	}
	sqlite3_close(db);
	if (ret && ret != -ENOMEM)
		scrape_db_error(st, err);
	return ret;
}

/* The exporter's own numbers, under st->lock. */
static void scrape_self(const struct exporter_settings *cfg,
			struct scrape_stats *st, struct render_self *self)
{
	struct bc_stats cs;

	pthread_mutex_lock(&st->lock);
	self->last_duration = st->last_duration;
	self->database_errors = st->database_errors;
	pthread_mutex_unlock(&st->lock);
	self->wal_bytes = scrape_wal_size(cfg->db);
	self->cache_bytes = -1;
	if (st->cache) {
		bcache_stats(st->cache, &cs);
		self->cache_bytes = (int64_t)cs.bytes;
	}
}

/* Without the cache: render the whole body, then gzip it if asked. */
static int scrape_plain(const struct exporter_settings *cfg,
			const struct scrape_req *rq, const struct snapshot *sn,
			const struct render_self *self, struct buf *out,
			size_t *text_len)
{
	char *gz = NULL;
	size_t len;
	int ret = render_metrics(sn, self, rq->format, out, NULL);

	*text_len = out->len;
	if (ret || !rq->gzip)
		return ret;
	ret = pgzip_compress(out->data, out->len, (int)cfg->gzip_level,
			     (unsigned)cfg->gzip_threads, &gz, &len);
	if (ret)
		return ret;
	buf_reset(out);
	ret = buf_add(out, gz, len);
	free(gz);
	return ret;
}

/* With the cache: render what changed, then the body from the segments. */
static int scrape_cached(const struct scrape_req *rq, const struct snapshot *sn,
			 const struct render_self *self, struct bc_scope *sc,
			 struct buf *out, size_t *text_len)
{
	const struct msnap *m = sn->m;
	int64_t *ids = malloc((m->n_hosts + 1) * sizeof(*ids));
	uint64_t *fps = malloc((m->n_hosts + 1) * sizeof(*fps));
	struct buf none;
	struct expo e;
	int ret = ids && fps ? 0 : -ENOMEM;

	buf_init(&none, 1);
	expo_init(&e, &none, rq->format);
	if (!ret)
		ret = bc_begin(sc, &e);
	if (!ret) {
		render_families(sn, self, &e);
		ret = bc_end(sc, &e);
	}
	for (size_t i = 0; !ret && i < m->n_hosts; i++) {
		ids[i] = m->hosts[i].id;
		fps[i] = m->hosts[i].fp;
	}
	if (!ret)
		ret = bc_hosts_held(sc, ids, fps, m->n_hosts);
	if (!ret)
		ret = bc_body(sc, rq->format, rq->gzip, out, text_len);
	if (ret)
		bc_abort(sc);
	expo_free(&e);
	buf_free(&none);
	free(ids);
	free(fps);
	return ret;
}

int scrape_build_limited(const struct exporter_settings *cfg,
			 struct scrape_stats *st, const struct scrape_req *rq,
			 struct buf *out, size_t max, size_t *text_len,
			 char *err, size_t errlen)
{
	struct render_self self = {
		.version = IBPULSE_VERSION,
		.family_cap = (size_t)cfg->max_family_series,
		.drops = &st->drops,
	};
	struct bc_scope *sc = NULL;
	struct snapshot *sn = NULL;
	double t0 = now_mono();
	size_t tl = 0;
	int ret = 0;

	if (st->cache)
		ret = bc_scope_lock(st->cache, rq->shard, rq->shards, rq->now,
				    &sc);
	if (!ret)
		ret = scrape_snapshot(cfg, st, rq, sc, &sn, err, errlen);
	if (ret) {
		if (sc)
			bc_scope_unlock(sc);
		return ret;
	}
	scrape_self(cfg, st, &self);
	out->max = max;
	if (sc) { /* the snapshot borrows what sc keeps: free it first */
		ret = scrape_cached(rq, sn, &self, sc, out, &tl);
		snapshot_free(sn);
		bc_finish(sc);
		bc_scope_unlock(sc);
	} else {
		ret = scrape_plain(cfg, rq, sn, &self, out, &tl);
		snapshot_free(sn);
	}
	if (text_len)
		*text_len = tl;
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
	st->last_duration = now_mono() - t0;
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
				    (size_t)cfg->max_body_bytes, NULL, err,
				    errlen);
}

int scrape_health(const struct exporter_settings *cfg, char *err, size_t errlen)
{
	/* the last row of each table a scrape starts with: a few pages */
	/* clang-format off */
	static const char probe[] =
		"SELECT (SELECT max(rowid) FROM host), "
		"(SELECT max(rowid) FROM device), "
		"(SELECT max(rowid) FROM port), "
		"(SELECT max(rowid) FROM series)";
	/* clang-format on */
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
	    now_mono() - st->last_error_at < SCRAPE_ERROR_MEMORY) {
		snprintf(err, errlen, "the last scrape could not read: %s",
			 st->last_error);
		ret = -EIO;
	}
	pthread_mutex_unlock(&st->lock);
	return ret;
}
