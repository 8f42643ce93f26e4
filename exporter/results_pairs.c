// SPDX-License-Identifier: MIT
/*
 * The latest result per pair (docs/metrics.md, "Fabric tests"): for each
 * (served initiator port, peer port, profile) the newest result of the
 * period, at most max_pairs pairs (the newest), in label order: success,
 * busy, start time and the figures. Written host by host, one segment per
 * initiating host (results_render.c says how segments are made).
 */
#include "results_int.h"
#include "fnv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

struct pair {
	uint32_t a, b, profile, row;
	double started;
};

static int cmp_pair_key(const void *x, const void *y)
{
	const struct pair *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	if (p->profile != q->profile)
		return p->profile < q->profile ? -1 : 1;
	return (p->started < q->started) - (p->started > q->started);
}

static int cmp_pair_newest(const void *x, const void *y)
{
	const struct pair *p = x, *q = y;

	if (p->started != q->started)
		return p->started < q->started ? 1 : -1;
	return cmp_pair_key(x, y);
}

/*
 * Sort @v[0..n) as a stable sort by cmp_pair_key() would (glibc's qsort is
 * a merge sort): by initiator port with res_att_sort(), then each port's
 * few pairs by insertion, or qsort for a port with many. 0 or -ENOMEM.
 */
static int pairs_sort(const struct results *r, struct pair **v, size_t n)
{
	struct att *at = malloc((n + 1) * sizeof(*at));
	struct pair *out = malloc((n + 1) * sizeof(*out));

	for (size_t i = 0; at && i < n; i++)
		at[i] = (struct att){(*v)[i].a, 0, (uint32_t)i};
	if (!at || !out || res_att_sort(&at, n, r->n_ports, 1)) {
		free(at);
		free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = (*v)[at[i].row];
	free(at);
	free(*v);
	*v = out;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && out[j].a == out[i].a; j++)
			;
		if (j - i > 32) {
			qsort(out + i, j - i, sizeof(*out), cmp_pair_key);
			continue;
		}
		for (size_t x = i + 1; x < j; x++) {
			struct pair t = out[x];
			size_t y = x;

			for (; y > i && cmp_pair_key(&out[y - 1], &t) > 0; y--)
				out[y] = out[y - 1];
			out[y] = t;
		}
	}
	return 0;
}

/*
 * The latest result per (served initiator port, peer port, profile), the
 * newest max_pairs of them, in label order. *@n gets their number.
 */
static struct pair *pairs_latest(const struct results *r, size_t *n)
{
	struct pair *v = malloc((r->n_rows + 1) * sizeof(*v));
	size_t k = 0, m = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct res_row *w = &r->rows[i];

		if (w->b != RES_NONE && r->hosts[r->ports[w->a].host].served)
			v[k++] = (struct pair){w->a, w->b, w->profile,
					       (uint32_t)i, w->started};
	}
	if (pairs_sort(r, &v, k)) {
		free(v);
		return NULL;
	}
	for (size_t i = 0; i < k; i++)
		if (!m || v[i].a != v[m - 1].a || v[i].b != v[m - 1].b ||
		    v[i].profile != v[m - 1].profile)
			v[m++] = v[i];
	if (m > r->o.max_pairs) {
		qsort(v, m, sizeof(*v), cmp_pair_newest);
		m = r->o.max_pairs;
		qsort(v, m, sizeof(*v), cmp_pair_key);
	}
	*n = m;
	return v;
}

/* The labels of pair @p: its port's, then the peer's and the profile. */
static int pair_labels(const struct results *r, const struct pair *p,
		       struct buf *xb)
{
	buf_reset(xb);
	if (buf_adds(xb, r->ports[p->b].peer_labels) || buf_addc(xb, ','))
		return -ENOMEM;
	return buf_adds(xb, r->profiles[p->profile]);
}

static void pair_item(const struct results *r, const void *items, size_t i,
		      uint64_t *key, uint64_t *fp)
{
	const struct pair *p = (const struct pair *)items + i;

	*key = res_host_key(r, p->a);
	*fp = fnv1a_u64(fnv1a_u64(r->ports[p->a].fp, r->ports[p->b].fp),
			fnv1a_u64(res_str_fp(r->profiles[p->profile]),
				  r->rows[p->row].fp));
}

static int render_pair_figures(struct expo *e, const struct results *r,
			       const struct pair *v, const struct segs *sg,
			       struct buf *xb)
{
	char name[128];

	for (size_t f = 0; f < RES_FIG_FAMILIES && !e->err; f++) {
		const struct fig_family *ff = &res_fig_families[f];

		snprintf(name, sizeof(name), "ibpulse_test_pair_%s",
			 ff->suffix);
		expo_family(e, name, EXPO_GAUGE, ff->help);
		for (size_t k = 0; k < sg->n && !e->err; k++) {
			if (expo_segment(e, sg->key[k], sg->fp[k]))
				continue;
			for (size_t i = sg->start[k]; i < sg->start[k + 1];
			     i++) {
				const struct res_row *w = &r->rows[v[i].row];
				size_t base;

				if (pair_labels(r, &v[i], xb))
					return e->err = -ENOMEM;
				base = xb->len;
				for (size_t s = 0; s < ff->n_pair; s++) {
					double x = w->fig[ff->pair[s].fig];

					if (isnan(x))
						continue;
					buf_setlen(xb, base);
					if (ff->pair[s].stat &&
					    (buf_addc(xb, ',') ||
					     buf_adds(xb, ff->pair[s].stat)))
						return e->err = -ENOMEM;
					expo_sample(e, r->ports[v[i].a].labels,
						    xb->data, x);
				}
			}
		}
	}
	return e->err;
}

int res_render_pairs(struct expo *e, const struct results *r, struct buf *xb)
{
	static const struct {
		const char *name, *help;
		int what; /* 0 success, 1 busy, 2 started */
	} fams[] = {
		{"ibpulse_test_pair_success",
		 "1 when the latest test of the pair in the period succeeded "
		 "(outcome ok), 0 when it failed.",
		 0},
		{"ibpulse_test_pair_busy",
		 "1 when the latest test of the pair ran on a busy link "
		 "(traffic "
		 "beyond its own, or rising transmit wait): its figures are "
		 "kept "
		 "but understate the link.",
		 1},
		{"ibpulse_test_pair_timestamp_seconds",
		 "When the latest test of the pair started (probe clock, "
		 "seconds "
		 "since the epoch).",
		 2},
	};
	size_t n;
	struct pair *v = pairs_latest(r, &n);
	struct segs sg;

	if (!v || res_segs_make(&sg, r, v, n, pair_item)) {
		free(v);
		return e->err = -ENOMEM;
	}
	for (size_t f = 0; f < N_ELEMS(fams) && !e->err; f++) {
		expo_family(e, fams[f].name, EXPO_GAUGE, fams[f].help);
		for (size_t k = 0; k < sg.n && !e->err; k++) {
			if (expo_segment(e, sg.key[k], sg.fp[k]))
				continue;
			for (size_t i = sg.start[k];
			     i < sg.start[k + 1] && !e->err; i++) {
				const struct res_row *w = &r->rows[v[i].row];
				double x = fams[f].what == 0   ? w->ok
					   : fams[f].what == 1 ? w->busy
							       : w->started;

				if (pair_labels(r, &v[i], xb))
					e->err = -ENOMEM;
				else
					expo_sample(e, r->ports[v[i].a].labels,
						    xb->data, x);
			}
		}
	}
	if (!e->err)
		render_pair_figures(e, r, v, &sg, xb);
	res_segs_free(&sg);
	free(v);
	return e->err;
}

/* A (port, profile, outcome) count of render_port_counts(). */
