// SPDX-License-Identifier: MIT
/*
 * Rendering a snapshot into the exposition format: see render.h. The
 * hosts, devices, ports and counters are common/msnap_render.c's (the
 * probe's own /metrics writes them with the same code); the fabric links,
 * test results, baselines and the exporter's own metrics are added here.
 */
#include "render.h"
#include "fabric_snap.h"
#include "fabric_suspect.h"
#include "health_snap.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void render_drops_init(struct render_drops *d)
{
	memset(d, 0, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
}

void render_drops_destroy(struct render_drops *d)
{
	if (!d)
		return;
	pthread_mutex_destroy(&d->lock);
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
}

/* Add this response's drops to @d; caller holds @d->lock. */
static int render_drops_add(struct render_drops *d, const struct expo_drop *v,
			    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < d->n && strcmp(d->v[k].family, v[i].family);
		     k++)
			;
		if (k == d->n) {
			if (d->n == d->cap) {
				size_t cap = d->cap ? d->cap * 2 : 8;
				struct expo_drop *g =
					realloc(d->v, cap * sizeof(*g));

				if (!g)
					return -ENOMEM;
				d->v = g;
				d->cap = cap;
			}
			d->v[d->n] = v[i];
			d->v[d->n++].n = 0;
		}
		d->v[k].n += v[i].n;
	}
	return 0;
}

/*
 * ibpulse_exporter_series_dropped_total: the cumulative drops, this
 * response's included (every family but the exporter's own is written by
 * now).
 */
static int render_dropped(struct expo *e, const struct render_self *s)
{
	size_t n;
	const struct expo_drop *v = expo_drops(e, &n);
	struct buf lb;
	int ret;

	if (!s->drops || e->err)
		return e->err;
	for (size_t i = 0; i < n; i++)
		log_once(v[i].family, 600, LOG_LVL_WARN,
			 "/metrics: %s has more than max_family_series (%zu) "
			 "series: %llu left out of this response (counted in "
			 "ibpulse_exporter_series_dropped_total)",
			 v[i].family, s->family_cap,
			 (unsigned long long)v[i].n);
	buf_init(&lb, 0);
	pthread_mutex_lock(&s->drops->lock);
	ret = render_drops_add(s->drops, v, n);
	if (!ret)
		expo_family(e, "ibpulse_exporter_series_dropped_total",
			    EXPO_COUNTER,
			    "Series left out of /metrics responses because "
			    "their family had more than max_family_series, by "
			    "family, since the exporter started.");
	for (size_t i = 0; !ret && i < s->drops->n && !e->err; i++) {
		buf_reset(&lb);
		ret = expo_label(&lb, "family", s->drops->v[i].family);
		if (!ret)
			expo_sample_u64(e, NULL, lb.data, s->drops->v[i].n);
	}
	pthread_mutex_unlock(&s->drops->lock);
	buf_free(&lb);
	if (ret && !e->err)
		e->err = ret;
	return e->err;
}

static int render_self_metrics(struct expo *e, const struct render_self *s,
			       struct buf *scratch)
{
	size_t series;

	if (expo_label(scratch, "version", s->version ? s->version : "unknown"))
		return e->err = -ENOMEM;
	expo_family(e, "ibpulse_exporter_build_info", EXPO_INFO,
		    "The exporter's version.");
	series = e->samples; /* the families before, all closed now */
	expo_sample_u64(e, NULL, scratch->data, 1);
	expo_family(e, "ibpulse_exporter_scrape_duration_seconds", EXPO_GAUGE,
		    "How long the previous /metrics request took to build, "
		    "from the first database read to the finished body.");
	if (s->last_duration >= 0)
		expo_sample(e, NULL, NULL, s->last_duration);
	expo_family(e, "ibpulse_exporter_database_errors_total", EXPO_COUNTER,
		    "Scrapes that failed to open or read the database "
		    "(answered 503).");
	expo_sample_u64(e, NULL, NULL, s->database_errors);
	expo_family(e, "ibpulse_exporter_wal_size_bytes", EXPO_GAUGE,
		    "Size of the database's write-ahead log; it grows when "
		    "checkpoints cannot keep up.");
	if (s->wal_bytes >= 0)
		expo_sample_u64(e, NULL, NULL, (uint64_t)s->wal_bytes);
	expo_family(
		e, "ibpulse_exporter_series", EXPO_GAUGE,
		"Samples in this response before the exporter's own metrics.");
	expo_sample_u64(e, NULL, NULL, series);
	expo_family(e, "ibpulse_exporter_cache_bytes", EXPO_GAUGE,
		    "Memory the block cache holds: rendered segments and "
		    "their gzip pieces, all shards (cache_max_bytes bounds "
		    "it).");
	if (s->cache_bytes >= 0)
		expo_sample_u64(e, NULL, NULL, (uint64_t)s->cache_bytes);
	return render_dropped(e, s);
}

int render_families(const struct snapshot *sn, const struct render_self *self,
		    struct expo *e)
{
	struct buf scratch;

	buf_init(&scratch, 4096);
	expo_set_family_cap(e, self->family_cap);
	msnap_render(e, sn->m, MSNAP_LIVENESS);
	fabric_render(e, sn);
	results_render(e, sn->results);
	regress_render(e, sn->regress);
	fsus_render(e, sn->fsus);
	health_render(e, sn->health);
	expo_set_family_cap(e, 0); /* the exporter's own: a handful each */
	render_self_metrics(e, self, &scratch);
	buf_free(&scratch);
	return e->err;
}

int render_metrics(const struct snapshot *sn, const struct render_self *self,
		   enum expo_format format, struct buf *out, size_t *series)
{
	struct expo e;
	int ret;

	expo_init(&e, out, format);
	render_families(sn, self, &e);
	ret = expo_finish(&e);
	if (series)
		*series = e.samples;
	expo_free(&e);
	return ret;
}
