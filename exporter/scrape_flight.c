// SPDX-License-Identifier: MIT
/*
 * Single flight and the memory ceiling of /metrics bodies (scrape.h).
 *
 * One mutex guards the list of renders in progress, the bytes held and a
 * small table of the sizes the last bodies of each kind had. A scrape
 * whose key (shard, shards, format, gzip) and database state match a
 * render in progress waits for that render instead of starting its own.
 * A new render first reserves the size the last body of its kind had
 * (text and gzip both, since both exist while it compresses); it is
 * refused when that would pass max_inflight_bytes, and its buffer may grow
 * only to what the ceiling leaves. Bodies live until the last client that
 * sends them lets go (scrape_body_put(), from MHD's free callback).
 */
#include "scrape.h"
#include "now.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FLIGHT_SIZES 16 /* kinds of body whose last size is remembered */
#define FLIGHT_RECENT 8 /* finished bodies kept for SCRAPE_SHARE_SECONDS */
#define FLIGHT_POOL 2	/* buffers of bodies let go, kept for the next */

/*
 * The database's state as the file system shows it, and the header of
 * SQLite's WAL index (the -shm file: its change counter, last frame and
 * salts move with every commit). Size and modification time alone are not
 * enough: once the WAL restarts after a checkpoint its size stays, and
 * file times move in clock ticks of several milliseconds, so two commits
 * could look like one state and a scrape take a body that missed the
 * second.
 */
#define FLIGHT_SHM_HDR 48 /* struct WalIndexHdr (sqlite.org/walformat.html) */

struct flight_token {
	int valid;
	dev_t dev[2];
	ino_t ino[2];
	off_t size[2];
	long mtime_s[2], mtime_ns[2];
	unsigned char shm[FLIGHT_SHM_HDR];
};

struct flight_key {
	unsigned shard, shards;
	enum expo_format format;
	int gzip;
};

struct flight {
	struct flight *next;
	struct flight_key key;
	struct flight_token token;
	unsigned users; /* the leader and its waiters */
	int done, ret;
	struct scrape_body *body;
	char err[256];
};

struct flight_size {
	struct flight_key key;
	size_t text, sent;
};

/* A body just rendered, for scrapes that come a moment later. */
struct flight_recent {
	struct flight_key key;
	struct flight_token token;
	struct scrape_body *body; /* one reference; NULL: empty slot */
	double done_at;		  /* CLOCK_MONOTONIC */
};

struct scrape_flights {
	const struct exporter_settings *cfg;
	struct scrape_stats *st;
	pthread_mutex_t lock;
	pthread_cond_t done;
	struct flight *flying;
	size_t held; /* live bodies plus reservations */
	struct flight_size sizes[FLIGHT_SIZES];
	unsigned next_size;
	struct flight_recent recent[FLIGHT_RECENT];
	unsigned next_recent;
	/*
	 * The buffers of the last bodies let go: a new body is written into
	 * pages that are already there. Freed and allocated again, a body of
	 * 200 MB is 50,000 page faults, each a trap into the hypervisor on a
	 * virtual machine: they cost more than the render (bench/README.md).
	 * Counted in max_inflight_bytes like the bodies.
	 */
	struct {
		char *data;
		size_t cap;
	} pool[FLIGHT_POOL];
	size_t pooled;
};

/* Under the lock: one reference fewer; the body to free, or NULL. */
static struct scrape_body *flight_unref(struct scrape_flights *f,
					struct scrape_body *b)
{
	if (--b->refs)
		return NULL;
	f->held -= b->len;
	return b;
}

/* Under the lock: keep @data for a later body; 0 when it was not kept. */
static int flight_pool_put(struct scrape_flights *f, char *data, size_t cap)
{
	unsigned k = 0;

	for (unsigned i = 1; i < FLIGHT_POOL; i++)
		if (f->pool[i].cap < f->pool[k].cap)
			k = i;
	if (f->pool[k].data && f->pool[k].cap >= cap)
		return 0;
	if (f->held + f->pooled - f->pool[k].cap + cap >
	    (size_t)f->cfg->max_inflight_bytes)
		return 0;
	free(f->pool[k].data); /* the smallest makes room */
	f->pooled += cap - f->pool[k].cap;
	f->pool[k].data = data;
	f->pool[k].cap = cap;
	return 1;
}

/* Under the lock: free the pooled buffers (all, or until @need fits). */
static void flight_pool_drop(struct scrape_flights *f, size_t need)
{
	size_t ceiling = (size_t)f->cfg->max_inflight_bytes;

	for (unsigned i = 0; i < FLIGHT_POOL; i++) {
		if (f->held + f->pooled + need <= ceiling)
			return;
		free(f->pool[i].data);
		f->pooled -= f->pool[i].cap;
		f->pool[i].data = NULL;
		f->pool[i].cap = 0;
	}
}

/* A pooled buffer for about @want bytes, as an empty struct buf. */
static void flight_pool_take(struct scrape_flights *f, size_t want,
			     struct buf *b)
{
	int k = -1;

	pthread_mutex_lock(&f->lock);
	for (int i = 0; i < FLIGHT_POOL; i++) {
		if (!f->pool[i].data)
			continue;
		if (k < 0 ||
		    (f->pool[i].cap >= want &&
		     (f->pool[k].cap < want ||
		      f->pool[i].cap < f->pool[k].cap)) ||
		    (f->pool[k].cap < want && f->pool[i].cap > f->pool[k].cap))
			k = i;
	}
	if (k >= 0) {
		buf_adopt(b, f->pool[k].data, f->pool[k].cap);
		f->pooled -= f->pool[k].cap;
		f->pool[k].data = NULL;
		f->pool[k].cap = 0;
	}
	pthread_mutex_unlock(&f->lock);
}

static void flight_body_free(struct scrape_body *b)
{
	struct scrape_flights *f;
	int kept;

	if (!b)
		return;
	f = b->owner;
	pthread_mutex_lock(&f->lock);
	kept = flight_pool_put(f, (char *)b->data, b->cap);
	pthread_mutex_unlock(&f->lock);
	if (!kept)
		free((char *)b->data);
	free(b);
}

static void flight_token(const char *db, struct flight_token *t)
{
	char wal[4096];
	struct stat sb;
	int fd;

	memset(t, 0, sizeof(*t));
	if (stat(db, &sb))
		return;
	t->dev[0] = sb.st_dev;
	t->ino[0] = sb.st_ino;
	t->size[0] = sb.st_size;
	t->mtime_s[0] = (long)sb.st_mtim.tv_sec;
	t->mtime_ns[0] = sb.st_mtim.tv_nsec;
	if (snprintf(wal, sizeof(wal), "%s-wal", db) >= (int)sizeof(wal))
		return;
	if (!stat(wal, &sb)) {
		t->dev[1] = sb.st_dev;
		t->ino[1] = sb.st_ino;
		t->size[1] = sb.st_size;
		t->mtime_s[1] = (long)sb.st_mtim.tv_sec;
		t->mtime_ns[1] = sb.st_mtim.tv_nsec;
	}
	memcpy(wal + strlen(db), "-shm", 5);
	fd = open(wal, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		/* a read torn by a commit only makes the token differ */
		if (pread(fd, t->shm, sizeof(t->shm), 0) < 0)
			memset(t->shm, 0, sizeof(t->shm));
		close(fd);
	}
	t->valid = 1;
}

static int flight_key_eq(const struct flight_key *a, const struct flight_key *b)
{
	return a->shard == b->shard && a->shards == b->shards &&
	       a->format == b->format && a->gzip == b->gzip;
}

int scrape_flights_new(const struct exporter_settings *cfg,
		       struct scrape_stats *st, struct scrape_flights **out)
{
	struct scrape_flights *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->cfg = cfg;
	f->st = st;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->done, NULL);
	*out = f;
	return 0;
}

void scrape_flights_free(struct scrape_flights *f)
{
	if (!f)
		return;
	for (unsigned i = 0; i < FLIGHT_RECENT; i++)
		if (f->recent[i].body)
			flight_body_free(flight_unref(f, f->recent[i].body));
	for (unsigned i = 0; i < FLIGHT_POOL; i++)
		free(f->pool[i].data);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->done);
	free(f);
}

/* Under the lock: the expected bytes of a render of @k. */
static size_t flight_expect(struct scrape_flights *f,
			    const struct flight_key *k)
{
	for (unsigned i = 0; i < FLIGHT_SIZES; i++)
		if (f->sizes[i].key.shards &&
		    flight_key_eq(&f->sizes[i].key, k))
			return f->sizes[i].text +
			       (k->gzip ? f->sizes[i].sent : 0);
	return 0;
}

/* The size the last body of @k had (0: none yet), for a pooled buffer. */
static size_t flight_expect_body(struct scrape_flights *f,
				 const struct flight_key *k)
{
	size_t n = 0;

	pthread_mutex_lock(&f->lock);
	for (unsigned i = 0; i < FLIGHT_SIZES; i++)
		if (f->sizes[i].key.shards &&
		    flight_key_eq(&f->sizes[i].key, k))
			n = k->gzip ? f->sizes[i].sent : f->sizes[i].text;
	pthread_mutex_unlock(&f->lock);
	return n + 1;
}

/* Under the lock: remember the sizes of the body just made. */
static void flight_remember(struct scrape_flights *f,
			    const struct flight_key *k, size_t text,
			    size_t sent)
{
	struct flight_size *slot = NULL;

	for (unsigned i = 0; i < FLIGHT_SIZES && !slot; i++)
		if (f->sizes[i].key.shards &&
		    flight_key_eq(&f->sizes[i].key, k))
			slot = &f->sizes[i];
	if (!slot)
		slot = &f->sizes[f->next_size++ % FLIGHT_SIZES];
	slot->key = *k;
	slot->text = text;
	slot->sent = sent;
}

/* Render (gzipped when asked) outside the lock. */
static int flight_render(struct scrape_flights *f, const struct scrape_req *rq,
			 size_t budget, size_t want, struct scrape_body **out,
			 size_t *text_len, char *err, size_t errlen)
{
	const struct exporter_settings *cfg = f->cfg;
	size_t max = (size_t)cfg->max_body_bytes;
	struct scrape_body *b = calloc(1, sizeof(*b));
	char *data;
	struct buf buf;
	size_t len;
	int ret;

	if (!b)
		return -ENOMEM;
	buf_init(&buf, 0);
	flight_pool_take(f, want, &buf);
	ret = scrape_build_limited(cfg, f->st, rq, &buf,
				   budget < max ? budget : max, text_len, err,
				   errlen);
	if (ret == -E2BIG && budget < max)
		ret = -ENOBUFS;
	b->cap = buf.cap;
	data = ret ? NULL : buf_steal(&buf, &len);
	buf_free(&buf);
	if (!ret && !data)
		ret = -ENOMEM;
	if (ret) {
		free(b);
		return ret;
	}
	b->data = data;
	b->len = len;
	b->gzip = rq->gzip;
	b->owner = f;
	b->refs = 1;
	*out = b;
	return 0;
}

/* Under the lock: wait for @fl, take its result, leave it. */
static int flight_join(struct scrape_flights *f, struct flight *fl,
		       struct scrape_body **out, char *err, size_t errlen)
{
	int ret;

	fl->users++;
	while (!fl->done)
		pthread_cond_wait(&f->done, &f->lock);
	ret = fl->ret;
	if (!ret) {
		*out = fl->body; /* the leader counted this reference */
	} else {
		snprintf(err, errlen, "%s", fl->err);
	}
	if (!--fl->users)
		free(fl);
	return ret;
}

/*
 * Under the lock: drop the recent bodies older than SCRAPE_SHARE_SECONDS
 * (all of them with @all, to make room); the bodies to free go to @out.
 */
static size_t flight_expire(struct scrape_flights *f, double now, int all,
			    struct scrape_body **out)
{
	size_t n = 0;

	for (unsigned i = 0; i < FLIGHT_RECENT; i++) {
		struct flight_recent *r = &f->recent[i];

		if (r->body &&
		    (all || now - r->done_at >= SCRAPE_SHARE_SECONDS)) {
			out[n] = flight_unref(f, r->body);
			n += out[n] != NULL;
			r->body = NULL;
		}
	}
	return n;
}

/* Under the lock: a recent body for @k in state @t, with a reference. */
static struct scrape_body *flight_recent_get(struct scrape_flights *f,
					     const struct flight_key *k,
					     const struct flight_token *t)
{
	for (unsigned i = 0; i < FLIGHT_RECENT && t->valid; i++) {
		struct flight_recent *r = &f->recent[i];

		if (r->body && flight_key_eq(&r->key, k) &&
		    !memcmp(&r->token, t, sizeof(*t))) {
			r->body->refs++;
			return r->body;
		}
	}
	return NULL;
}

/* Under the lock: keep @b (a new reference) for later scrapes. */
static struct scrape_body *flight_recent_put(struct scrape_flights *f,
					     const struct flight *fl,
					     struct scrape_body *b, double now)
{
	struct flight_recent *r = NULL;
	struct scrape_body *old;

	for (unsigned i = 0; i < FLIGHT_RECENT && !r; i++)
		if (f->recent[i].body &&
		    flight_key_eq(&f->recent[i].key, &fl->key))
			r = &f->recent[i];
	if (!r)
		r = &f->recent[f->next_recent++ % FLIGHT_RECENT];
	old = r->body ? flight_unref(f, r->body) : NULL;
	r->key = fl->key;
	r->token = fl->token;
	r->body = b;
	r->done_at = now;
	b->refs++;
	return old;
}

/* Under the lock: reserve @expect bytes; -ENOBUFS past the ceiling. */
static int flight_reserve(struct scrape_flights *f, size_t expect,
			  size_t *budget, char *err, size_t errlen)
{
	size_t ceiling = (size_t)f->cfg->max_inflight_bytes;

	flight_pool_drop(f, expect);
	if (f->held + expect > ceiling || f->held >= ceiling) {
		snprintf(err, errlen,
			 "%zu bytes of /metrics bodies are held for other "
			 "scrapes (max_inflight_bytes %zu); retry later",
			 f->held, ceiling);
		return -ENOBUFS;
	}
	f->held += expect;
	*budget = ceiling - (f->held - expect);
	return 0;
}

/* Under the lock: a render in progress of @k in state @t, or NULL. */
static struct flight *flight_flying(struct scrape_flights *f,
				    const struct flight_key *k,
				    const struct flight_token *t)
{
	for (struct flight *o = f->flying; o && t->valid; o = o->next)
		if (flight_key_eq(&o->key, k) &&
		    !memcmp(&o->token, t, sizeof(*t)))
			return o;
	return NULL;
}

/* Under the lock: share what another scrape made; 1 when there was one. */
static int flight_share(struct scrape_flights *f, struct flight *fl,
			struct scrape_body **out, int *ret, char *err,
			size_t errlen)
{
	struct flight *o = flight_flying(f, &fl->key, &fl->token);

	if (o) {
		*ret = flight_join(f, o, out, err, errlen);
		return 1;
	}
	*out = flight_recent_get(f, &fl->key, &fl->token);
	*ret = 0;
	return *out != NULL;
}

/* Under the lock: the render of @fl is over with @ret and @b. */
static struct scrape_body *flight_land(struct scrape_flights *f,
				       struct flight *fl, int ret,
				       struct scrape_body *b, size_t text_len,
				       size_t expect)
{
	struct scrape_body *old = NULL;

	f->held -= expect;
	for (struct flight **p = &f->flying; *p; p = &(*p)->next)
		if (*p == fl) {
			*p = fl->next;
			break;
		}
	if (!ret) {
		f->held += b->len;
		flight_remember(f, &fl->key, text_len, b->len);
		/* one reference per user, taken now: a waiter still asleep
		 * must find the body alive whatever the leader does next */
		b->refs = fl->users;
		if (fl->token.valid)
			old = flight_recent_put(f, fl, b, now_mono());
	}
	fl->done = 1;
	fl->ret = ret;
	fl->body = b;
	pthread_cond_broadcast(&f->done);
	return old;
}

int scrape_get(struct scrape_flights *f, const struct scrape_req *rq,
	       struct scrape_body **out, int *shared, char *err, size_t errlen)
{
	struct flight_key k = {rq->shard, rq->shards, rq->format, !!rq->gzip};
	struct scrape_body *b = NULL, *gone[FLIGHT_RECENT + 1];
	struct flight *fl;
	size_t expect, budget, text_len = 0, n_gone;
	int ret;

	*shared = 0;
	fl = calloc(1, sizeof(*fl));
	if (!fl)
		return -ENOMEM;
	flight_token(f->cfg->db, &fl->token);
	fl->key = k;
	pthread_mutex_lock(&f->lock);
	n_gone = flight_expire(f, now_mono(), 0, gone);
	if (flight_share(f, fl, out, &ret, err, errlen)) {
		pthread_mutex_unlock(&f->lock);
		free(fl);
		while (n_gone)
			flight_body_free(gone[--n_gone]);
		*shared = 1;
		return ret;
	}
	expect = flight_expect(f, &k);
	if (f->held + expect > (size_t)f->cfg->max_inflight_bytes)
		n_gone += flight_expire(f, 0, 1, gone + n_gone);
	ret = flight_reserve(f, expect, &budget, err, errlen);
	if (!ret) {
		fl->users = 1;
		fl->next = f->flying;
		f->flying = fl;
	}
	pthread_mutex_unlock(&f->lock);
	while (n_gone)
		flight_body_free(gone[--n_gone]);
	if (ret) {
		free(fl);
		log_once("exporter-ceiling", 60, LOG_LVL_WARN, "/metrics: %s",
			 err);
		return ret;
	}

	ret = flight_render(f, rq, budget, flight_expect_body(f, &k), &b,
			    &text_len, fl->err, sizeof(fl->err));

	pthread_mutex_lock(&f->lock);
	gone[0] = flight_land(f, fl, ret, b, text_len, expect);
	if (ret)
		snprintf(err, errlen, "%s", fl->err);
	*out = b;
	if (!--fl->users)
		free(fl);
	pthread_mutex_unlock(&f->lock);
	flight_body_free(gone[0]);
	if (ret == -ENOBUFS)
		log_once("exporter-ceiling", 60, LOG_LVL_WARN, "/metrics: %s",
			 err);
	return ret;
}

void scrape_body_put(struct scrape_body *b)
{
	struct scrape_flights *f;

	if (!b)
		return;
	f = b->owner;
	pthread_mutex_lock(&f->lock);
	b = flight_unref(f, b);
	pthread_mutex_unlock(&f->lock);
	flight_body_free(b);
}
