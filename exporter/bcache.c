// SPDX-License-Identifier: MIT
/*
 * The block cache: scopes, the writer's hooks, keeping and reusing
 * segments, the hosts held, the memory bound (see bcache.h). A render
 * walks the families in body order; each family keeps the last render's
 * segments ("old") and fills a new list. A segment whose key and
 * fingerprint match an old one moves over with its text and compressed
 * piece; the old ones left at the end are freed. Matching follows the
 * last render's order with a cursor (the usual case: the same keys in the
 * same order), else an index of the old keys built on demand (the index
 * and the hosts held are common/hmap.h tables).
 */
#include "bcache_int.h"
#include "fnv.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Bookkeeping counted per kept segment beside its text and piece. */
#define BC_SEG_OVERHEAD (2 * sizeof(struct bc_seg) + 32)

void bc_account(struct bc_scope *s, int64_t delta)
{
	s->bytes = (uint64_t)((int64_t)s->bytes + delta);
	pthread_mutex_lock(&s->c->lock);
	s->c->st.bytes = (uint64_t)((int64_t)s->c->st.bytes + delta);
	pthread_mutex_unlock(&s->c->lock);
}

void bc_seg_release(struct bc_scope *s, struct bc_seg *g)
{
	s->bytes_pending -= (int64_t)(g->len + BC_SEG_OVERHEAD);
	free(g->text);
	g->text = NULL;
	g->len = g->gz_len = 0;
}

/* Publish what the render counted (one lock, not one per segment). */
static void bc_publish(struct bc_scope *s)
{
	bc_account(s, s->bytes_pending);
	pthread_mutex_lock(&s->c->lock);
	s->c->st.reused += s->reused;
	s->c->st.rendered += s->rendered;
	s->c->st.segments += s->rendered;
	pthread_mutex_unlock(&s->c->lock);
	s->bytes_pending = 0;
	s->reused = s->rendered = 0;
}

int bcache_new(uint64_t max_bytes, int level, unsigned threads,
	       struct bcache **out)
{
	struct bcache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	c->max_bytes = max_bytes;
	c->level = level;
	c->threads = threads;
	c->st.max_bytes = max_bytes;
	*out = c;
	return 0;
}

static void bc_family_clear(struct bc_scope *s, struct bc_family *f)
{
	for (size_t i = 0; i < f->n; i++)
		bc_seg_release(s, &f->seg[i]);
	for (size_t i = 0; i < f->n_old; i++)
		if (f->old[i].text)
			bc_seg_release(s, &f->old[i]);
	f->n = f->n_old = 0;
	s->bytes_pending -= (int64_t)f->pack_cap;
	free(f->pack);
	f->pack = NULL;
	f->pack_len = f->pack_cap = 0;
}

static void bc_family_free(struct bc_scope *s, struct bc_family *f)
{
	bc_family_clear(s, f);
	free(f->name);
	free(f->help);
	free(f->seg);
	free(f->old);
	hmap_free(&f->index);
	for (int i = 0; i < 2; i++) {
		free(f->hdr[i]);
		free(f->hdr_gz[i]);
	}
}

/* Forget everything @s keeps. */
static void bc_scope_empty(struct bc_scope *s)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->n_fam; i++) {
		n += s->fam[i].n;
		bc_family_free(s, &s->fam[i]);
	}
	free(s->fam);
	s->fam = NULL;
	s->n_fam = s->cap_fam = s->cur_fam = 0;
	hmap_free(&s->hosts);
	if (s->aux.data)
		s->aux.free(s->aux.data);
	bc_aux_bytes(s, 0);
	s->aux.data = NULL;
	pthread_mutex_lock(&s->c->lock);
	s->c->st.segments -= n;
	pthread_mutex_unlock(&s->c->lock);
	bc_publish(s);
}

struct bc_aux *bc_scope_aux(struct bc_scope *s)
{
	return &s->aux;
}

void bc_aux_bytes(struct bc_scope *s, uint64_t bytes)
{
	bc_account(s, (int64_t)bytes - (int64_t)s->aux.bytes);
	s->aux.bytes = bytes;
}

static void bc_scope_free(struct bc_scope *s)
{
	if (!s)
		return;
	bc_scope_empty(s);
	buf_free(&s->scratch);
	free(s->crc_op);
	free(s->eof_gz);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void bcache_free(struct bcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_scopes; i++)
		bc_scope_free(c->scopes[i]);
	free(c->scopes);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void bcache_stats(struct bcache *c, struct bc_stats *st)
{
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	pthread_mutex_unlock(&c->lock);
}

int bc_scope_lock(struct bcache *c, unsigned shard, unsigned shards, double now,
		  struct bc_scope **out)
{
	struct bc_scope *s = NULL, **v;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n_scopes && !s; i++)
		if (c->scopes[i]->shard == shard &&
		    c->scopes[i]->shards == shards)
			s = c->scopes[i];
	if (!s) {
		v = realloc(c->scopes, (c->n_scopes + 1) * sizeof(*v));
		s = v ? calloc(1, sizeof(*s)) : NULL;
		if (v)
			c->scopes = v;
		if (!s) {
			pthread_mutex_unlock(&c->lock);
			return -ENOMEM;
		}
		s->c = c;
		s->shard = shard;
		s->shards = shards;
		pthread_mutex_init(&s->lock, NULL);
		buf_init(&s->scratch, 0);
		hmap_init(&s->hosts, sizeof(struct bc_held));
		c->scopes[c->n_scopes++] = s;
	}
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_lock(&s->lock);
	s->last_used = now;
	s->keep = c->max_bytes > 0 && now >= s->cooldown_until;
	*out = s;
	return 0;
}

void bc_scope_unlock(struct bc_scope *s)
{
	pthread_mutex_unlock(&s->lock);
}

void bc_epoch(struct bc_scope *s, uint64_t id, int64_t seq)
{
	if (id != s->db_id || seq < s->db_seq)
		bc_scope_empty(s);
	s->db_id = id;
	s->db_seq = seq;
}

/* ---- hosts held ---- */

static uint64_t bc_id_hash(int64_t id)
{
	return (uint64_t)id * 0x9e3779b97f4a7c15ULL;
}

static int bc_held_eq(const void *ent, const void *key)
{
	return ((const struct bc_held *)ent)->id == *(const int64_t *)key;
}

int bc_host_held(const struct bc_scope *s, int64_t id, uint64_t fp)
{
	const struct bc_held *h =
		fp ? hmap_find(&s->hosts, bc_id_hash(id), bc_held_eq, &id)
		   : NULL;

	return h && h->fp == fp;
}

int bc_hosts_held(struct bc_scope *s, const int64_t *ids, const uint64_t *fps,
		  size_t n)
{
	if (!s->keep) {
		hmap_free(&s->hosts);
		return 0;
	}
	hmap_clear(&s->hosts);
	for (size_t k = 0; k < n; k++) {
		struct bc_held *h;
		int added;

		if (!fps[k])
			continue;
		h = hmap_put(&s->hosts, bc_id_hash(ids[k]), bc_held_eq, &ids[k],
			     &added);
		if (!h) {
			hmap_clear(&s->hosts);
			return -ENOMEM;
		}
		h->id = ids[k];
		h->fp = fps[k];
	}
	return 0;
}

/* ---- the segment being written ---- */

/* What bc_old_eq() compares an index entry with. */
struct bc_old_key {
	const struct bc_family *f;
	uint64_t key;
};

static int bc_old_eq(const void *ent, const void *key)
{
	const struct bc_old_key *k = key;

	return k->f->old[*(const uint32_t *)ent].key == k->key;
}

static uint64_t bc_key_hash(uint64_t key)
{
	return fnv1a_bytes(FNV1A_BASIS, &key, sizeof(key));
}

/* Index + 1 of the old segment with @key in @f, 0 when none. */
static size_t bc_old_index(struct bc_family *f, uint64_t key)
{
	struct bc_old_key k = {f, key};
	const uint32_t *i;

	for (size_t j = 0; !f->indexed && j < f->n_old; j++) {
		uint32_t *e = hmap_add(&f->index, bc_key_hash(f->old[j].key));

		if (!e) {
			hmap_free(&f->index);
			return 0;
		}
		*e = (uint32_t)j;
	}
	f->indexed = 1;
	i = hmap_find(&f->index, bc_key_hash(key), bc_old_eq, &k);
	return i ? *i + 1 : 0;
}

/* The old segment with @key that still has its text, or NULL. */
static struct bc_seg *bc_old_find(struct bc_family *f, uint64_t key)
{
	size_t i;

	/* keys in order (a host's id): walk, no index */
	while (f->old_sorted && f->cursor < f->n_old &&
	       f->old[f->cursor].key < key)
		f->cursor++;
	if (f->cursor < f->n_old && f->old[f->cursor].key == key)
		i = f->cursor + 1;
	else if (f->old_sorted)
		return NULL;
	else
		i = bc_old_index(f, key);
	if (!i || !f->old[i - 1].text)
		return NULL;
	f->cursor = i;
	return &f->old[i - 1];
}

static int bc_push(struct bc_scope *s, struct bc_family *f,
		   const struct bc_seg *g)
{
	if (f->n && f->seg[f->n - 1].key >= g->key)
		f->sorted = 0;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;

		if (cap < f->n_old)
			cap = f->n_old;
		struct bc_seg *v = realloc(f->seg, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		f->seg = v;
		f->cap = cap;
	}
	f->seg[f->n++] = *g;
	f->samples += g->samples;
	(void)s;
	return 0;
}

/* Close the open segment: keep what it wrote (if anything). */
static int bc_seg_close(struct bc_scope *s, struct expo *e)
{
	struct bc_family *f = &s->fam[s->cur_fam];
	struct bc_seg g = {.key = s->seg_key, .fp = s->seg_fp};
	size_t len = s->scratch.len - s->seg_start;
	struct bc_seg *o;

	if (!s->seg_open)
		return 0;
	s->seg_open = 0;
	/* a failed append freed the scratch: the segment's text is gone */
	if (s->scratch.len < s->seg_start)
		return -ENOMEM;
	g.samples = (uint32_t)(e->samples - s->seg_samples);
	if (!len)
		return 0;
	if (len > UINT32_MAX)
		return -E2BIG;
	g.len = (uint32_t)len;
	/* rendered every time: the old piece stays if the text is the same */
	o = g.fp ? NULL : bc_old_find(f, g.key);
	if (o && o->len == g.len &&
	    !memcmp(o->text, s->scratch.data + s->seg_start, len)) {
		g = *o;
		g.fresh = 0;
		o->text = NULL;
		buf_setlen(&s->scratch, s->seg_start);
		return bc_push(s, f, &g);
	}
	if (!g.fp)
		g.fp = ++s->version;
	g.fresh = 1;
	g.text = malloc(len);
	if (!g.text)
		return -ENOMEM;
	memcpy(g.text, s->scratch.data + s->seg_start, len);
	buf_setlen(&s->scratch, s->seg_start);
	s->bytes_pending += (int64_t)(len + BC_SEG_OVERHEAD);
	s->rendered++;
	return bc_push(s, f, &g);
}

static void bc_seg_open(struct bc_scope *s, struct expo *e, uint64_t key,
			uint64_t fp)
{
	s->seg_open = 1;
	s->seg_key = key;
	s->seg_fp = fp;
	s->seg_start = s->scratch.len;
	s->seg_samples = e->samples;
}

/* The writer's hook: a segment starts. */
static int bc_hook_segment(void *ctx, struct expo *e, uint64_t key, uint64_t fp)
{
	struct bc_scope *s = ctx;
	struct bc_family *f = &s->fam[s->cur_fam];
	struct bc_seg *o;
	int ret = bc_seg_close(s, e);

	if (ret)
		return ret;
	o = fp ? bc_old_find(f, key) : NULL;
	if (o && o->fp == fp) {
		struct bc_seg g = *o;

		g.fresh = 0;
		o->text = NULL;
		s->reused++;
		ret = bc_push(s, f, &g);
		return ret ? ret : 1;
	}
	bc_seg_open(s, e, key, fp);
	return 0;
}

/* ---- families ---- */

/* Close the open family: its cap, what it left out. */
static int bc_family_close(struct bc_scope *s, struct expo *e)
{
	struct bc_family *f;
	int ret;

	if (s->cur_fam >= s->n_fam)
		return 0;
	ret = bc_seg_close(s, e);
	f = &s->fam[s->cur_fam];
	s->cur_fam = s->n_fam;
	if (ret)
		return ret;
	/* the writer counted what was rendered: count what is served */
	if (f->cap_samples && f->samples > f->cap_samples) {
		ret = expo_add_drop(e, f->name, f->samples - f->cap_samples);
		e->samples = s->fam_samples0 + f->cap_samples;
	} else {
		e->samples = s->fam_samples0 + f->samples;
	}
	return ret;
}

/* Make @f's new list: the last one becomes old. */
static void bc_family_start(struct bc_scope *s, struct bc_family *f,
			    struct expo *e)
{
	struct bc_seg *t = f->old;
	size_t cap = f->cap_old;

	for (size_t i = 0; i < f->n_old; i++) /* a render that failed */
		if (f->old[i].text)
			bc_seg_release(s, &f->old[i]);
	f->old = f->seg;
	f->n_old = f->n;
	f->cap_old = f->cap;
	f->old_sorted = f->sorted;
	f->sorted = 1;
	f->seg = t;
	f->cap = cap;
	f->n = 0;
	f->cursor = 0;
	hmap_free(&f->index);
	f->indexed = 0;
	f->samples = 0;
	f->cap_samples = e->family_cap;
	f->used = 1;
}

static struct bc_family *bc_family_find(struct bc_scope *s, struct expo *e)
{
	struct bc_family *f;

	for (size_t i = 0; i < s->n_fam; i++) {
		f = &s->fam[i];
		if (!f->used && f->type == e->type && !strcmp(f->name, e->name))
			return f;
	}
	if (s->n_fam == s->cap_fam) {
		size_t cap = s->cap_fam ? s->cap_fam * 2 : 64;

		f = realloc(s->fam, cap * sizeof(*f));
		if (!f)
			return NULL;
		s->fam = f;
		s->cap_fam = cap;
	}
	f = &s->fam[s->n_fam];
	memset(f, 0, sizeof(*f));
	hmap_init(&f->index, sizeof(uint32_t));
	f->name = strdup(e->name);
	f->type = e->type;
	if (!f->name) {
		free(f->name);
		return NULL;
	}
	s->n_fam++;
	return f;
}

/* The writer's hook: a family starts; samples go to an open segment. */
static int bc_hook_family(void *ctx, struct expo *e)
{
	struct bc_scope *s = ctx;
	struct bc_family *f;
	int ret = bc_family_close(s, e);

	if (ret)
		return ret;
	f = bc_family_find(s, e);
	if (!f)
		return -ENOMEM;
	if (!f->help || !e->help || strcmp(f->help, e->help)) {
		free(f->help);
		f->help = e->help ? strdup(e->help) : NULL;
		if (e->help && !f->help)
			return -ENOMEM;
		for (int i = 0; i < 2; i++) {
			free(f->hdr[i]);
			free(f->hdr_gz[i]);
			f->hdr[i] = NULL;
			f->hdr_gz[i] = NULL;
		}
	}
	bc_family_start(s, f, e);
	s->cur_fam = (size_t)(f - s->fam);
	s->fam_samples0 = e->samples;
	bc_seg_open(s, e, 0, 0);
	return 0;
}

static const struct expo_hooks bc_hooks = {
	.family = bc_hook_family,
	.segment = bc_hook_segment,
};

int bc_begin(struct bc_scope *s, struct expo *e)
{
	for (size_t i = 0; i < s->n_fam; i++)
		s->fam[i].used = 0;
	s->cur_fam = s->n_fam;
	s->seg_open = 0;
	buf_reset(&s->scratch);
	e->out = &s->scratch;
	expo_set_hooks(e, &bc_hooks, s);
	return 0;
}

/* Drop the families this render did not write, and the old segments. */
static void bc_sweep(struct bc_scope *s)
{
	uint64_t gone = 0;
	size_t k = 0;

	for (size_t i = 0; i < s->n_fam; i++) {
		struct bc_family *f = &s->fam[i];

		for (size_t j = 0; j < f->n_old; j++)
			if (f->old[j].text) {
				bc_seg_release(s, &f->old[j]);
				gone++;
			}
		f->n_old = 0;
		if (!f->used) {
			gone += f->n;
			bc_family_free(s, f);
			continue;
		}
		s->fam[k++] = *f;
	}
	s->n_fam = k;
	s->cur_fam = k;
	pthread_mutex_lock(&s->c->lock);
	s->c->st.segments -= gone;
	pthread_mutex_unlock(&s->c->lock);
	bc_publish(s);
}

int bc_end(struct bc_scope *s, struct expo *e)
{
	int ret = bc_family_close(s, e);

	bc_publish(s);
	expo_set_hooks(e, NULL, NULL);
	if (ret) {
		bc_abort(s);
		return ret;
	}
	bc_sweep(s);
	return 0;
}

void bc_abort(struct bc_scope *s)
{
	bc_publish(s);
	bc_scope_empty(s);
	buf_reset(&s->scratch);
}

void bc_finish(struct bc_scope *s)
{
	struct bcache *c = s->c;
	uint64_t total;

	pthread_mutex_lock(&c->lock);
	total = c->st.bytes;
	pthread_mutex_unlock(&c->lock);
	if (s->keep && total > c->max_bytes) {
		log_once("exporter-cache", 600, LOG_LVL_WARN,
			 "/metrics: the block cache would hold %llu bytes, "
			 "more than cache_max_bytes (%llu): shard %u of %u "
			 "renders everything for %.0f s",
			 (unsigned long long)total,
			 (unsigned long long)c->max_bytes, s->shard, s->shards,
			 BC_COOLDOWN);
		s->cooldown_until = s->last_used + BC_COOLDOWN;
		pthread_mutex_lock(&c->lock);
		c->st.dropped++;
		pthread_mutex_unlock(&c->lock);
		s->keep = 0;
	}
	if (!s->keep)
		bc_scope_empty(s);
	/* the scratch buffer stays: the next render reuses its pages */
}
