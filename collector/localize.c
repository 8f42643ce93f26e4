// SPDX-License-Identifier: MIT
/*
 * Localization (localize.h): the greedy set cover with exoneration over
 * one window of judged tests. The tests are indexed by element (each
 * element's tests in order of start, counting only those after its own
 * window start), then each round scans the elements for the best gain on
 * the bad tests no pick explains yet, checks the rules of links and
 * switches, and covers the winner's bad tests. A run over a window of a
 * few thousand tests and elements costs a few milliseconds.
 */
#include "localize.h"
#include "vec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One run's working state. */
struct lctx {
	const struct loc_opts *o;
	struct loc_elem *e;
	size_t ne;
	const struct loc_test *t;
	size_t nt;
	size_t *off;		 /* element -> its slice of list */
	uint32_t *list;		 /* test indexes, each slice by start */
	unsigned *cur;		 /* unexplained bad tests per element */
	uint32_t *covered;	 /* per test: the pick explaining it */
	unsigned char *repaired; /* per test: bad, explained by a repair */
	unsigned char *no;	 /* per element: enum loc_why refused */
	unsigned *shared;	 /* scratch: rivals' shared bad tests */
	uint32_t *touched;
	struct loc_result *r;
	size_t cap_picks;
};

double localize_llr(unsigned bad, unsigned good, double noise)
{
	double p, g;

	if (!bad)
		return 0;
	p = (double)bad / ((double)bad + good);
	if (p <= noise)
		return 0;
	g = bad * log(p / noise);
	if (good)
		g += good * log((1 - p) / (1 - noise));
	return g;
}

const char *localize_kind_name(enum loc_kind k)
{
	static const char *const names[LOC_KINDS] = {
		[LOC_PORT] = "port",
		[LOC_DEVICE] = "device",
		[LOC_LINK] = "fabric_link",
		[LOC_SWITCH] = "switch",
	};

	return (unsigned)k < LOC_KINDS ? names[k] : NULL;
}

int localize_opts_check(const struct loc_opts *o, char *err, size_t errlen)
{
	if (o->bad_tests < 1 || o->good_tests < 1) {
		snprintf(err, errlen,
			 "[localize] bad_tests and good_tests must be at "
			 "least 1");
		return -EINVAL;
	}
	if (!(o->noise > 0 && o->noise < 0.5)) {
		snprintf(err, errlen,
			 "[localize] noise %g: valid range (0, 0.5)", o->noise);
		return -EINVAL;
	}
	if (!(o->min_gain > 0)) {
		snprintf(err, errlen, "[localize] min_gain must be above 0");
		return -EINVAL;
	}
	return 0;
}

/* Does test @i count for element @x (its window)? */
static int counts(const struct lctx *c, uint32_t i, uint32_t x)
{
	return c->t[i].started > c->e[x].from && !c->repaired[i];
}

/*
 * The bad tests that crossed a link or switch whose suspect recovered,
 * started before it did: that repaired fault explains them, and they
 * count for no element (a cable repaired must not hand its bad tests to
 * a link they also crossed).
 */
static void lc_repaired(struct lctx *c)
{
	for (size_t i = 0; i < c->nt; i++)
		for (size_t j = 0; c->t[i].bad && j < c->t[i].n_elems; j++) {
			const struct loc_elem *x = &c->e[c->t[i].elems[j]];

			if (x->kind >= LOC_LINK && c->t[i].started <= x->from)
				c->repaired[i] = 1;
		}
}

static int cmp_started(const void *a, const void *b, void *arg)
{
	const struct loc_test *t = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (t[x].started != t[y].started)
		return t[x].started < t[y].started ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Index the tests by element, in order of start. */
static int lc_index(struct lctx *c)
{
	uint32_t *order = calloc(c->nt + 1, sizeof(*order));
	size_t *fill, total = 0;

	c->off = calloc(c->ne + 1, sizeof(*c->off));
	fill = calloc(c->ne + 1, sizeof(*fill));
	if (!order || !c->off || !fill) {
		free(order);
		free(fill);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < c->nt; i++)
		order[i] = i;
	qsort_r(order, c->nt, sizeof(*order), cmp_started, (void *)c->t);
	for (size_t k = 0; k < c->nt; k++)
		for (size_t j = 0; j < c->t[order[k]].n_elems; j++) {
			uint32_t x = c->t[order[k]].elems[j];

			if (counts(c, order[k], x)) {
				c->off[x + 1]++;
				total++;
			}
		}
	for (size_t x = 0; x < c->ne; x++)
		c->off[x + 1] += c->off[x];
	c->list = calloc(total + 1, sizeof(*c->list));
	for (size_t k = 0; c->list && k < c->nt; k++)
		for (size_t j = 0; j < c->t[order[k]].n_elems; j++) {
			uint32_t x = c->t[order[k]].elems[j];

			if (counts(c, order[k], x))
				c->list[c->off[x] + fill[x]++] = order[k];
		}
	free(order);
	free(fill);
	return c->list ? 0 : -ENOMEM;
}

/* Keep in @common only the ends bad test @t shares with those before
 * it (@first: it is the first). */
static void lc_common(uint32_t common[2], int first, const struct loc_test *t)
{
	for (int j = 0; j < 2; j++) {
		if (first)
			common[j] = t->ends[j];
		else if (common[j] != t->ends[0] && common[j] != t->ends[1])
			common[j] = LOC_NONE;
	}
}

/*
 * Each element's counts, good run and gain. Good tests count from its
 * first bad one on: a fault starts at some time, and the tests before it
 * say nothing of it (an element without bad tests counts them all).
 */
static void lc_stats(struct lctx *c)
{
	for (size_t x = 0; x < c->ne; x++) {
		struct loc_stat *s = &c->e[x].st;
		unsigned good_all = 0;
		int run = 1;

		*s = (struct loc_stat){.first_bad = NAN,
				       .last_bad = NAN,
				       .pick = LOC_NONE,
				       .covered = LOC_NONE};
		for (size_t k = c->off[x + 1]; k-- > c->off[x];) {
			const struct loc_test *t = &c->t[c->list[k]];

			if (t->bad) {
				s->bad++;
				run = 0;
				if (isnan(s->last_bad))
					s->last_bad = t->started;
				s->first_bad = t->started;
				s->good = good_all; /* the good ones after it */
			} else {
				good_all++;
				s->good_run += run;
			}
		}
		if (!s->bad)
			s->good = good_all;
		c->cur[x] = s->bad;
		s->gain = localize_llr(s->bad, s->good, c->o->noise) +
			  c->e[x].bonus;
	}
}

/* Link @x's tests since @since: bad and good. */
static void lc_since(const struct lctx *c, uint32_t x, double since,
		     unsigned *bad, unsigned *good)
{
	*bad = *good = 0;
	for (size_t k = c->off[x + 1]; k-- > c->off[x];) {
		const struct loc_test *t = &c->t[c->list[k]];

		if (t->started < since)
			break;
		*bad += t->bad != 0;
		*good += !t->bad;
	}
}

/* The switches at the far ends of switch @w's links test @i crossed. */
static size_t lc_far(const struct lctx *c, uint32_t i, uint32_t w,
		     uint32_t *far, size_t max)
{
	size_t n = 0;

	for (size_t j = 0; j < c->t[i].n_elems && n < max; j++) {
		const struct loc_elem *l = &c->e[c->t[i].elems[j]];

		if (l->kind == LOC_LINK && (l->sw[0] == w || l->sw[1] == w))
			far[n++] = l->sw[0] == w ? l->sw[1] : l->sw[0];
	}
	return n;
}

/*
 * Do switch @w's bad tests all cross one cable of it (either way)? Then
 * that cable explains them as well as the whole switch does: its links
 * are the more precise answer, and more tests must tell.
 */
static int lc_one_cable(const struct lctx *c, uint32_t w)
{
	uint32_t keep[2] = {LOC_NONE, LOC_NONE}, far[4];
	int first = 1;

	for (size_t k = c->off[w]; k < c->off[w + 1]; k++) {
		uint32_t i = c->list[k];
		size_t n;

		if (!c->t[i].bad)
			continue;
		n = lc_far(c, i, w, far, 4);
		for (int a = 0; a < 2; a++) {
			int in = 0;

			for (size_t b = 0; b < n && !first; b++)
				in |= far[b] == keep[a];
			if (first)
				keep[a] = a < (int)n ? far[a] : LOC_NONE;
			else if (!in)
				keep[a] = LOC_NONE;
		}
		first = 0;
	}
	return keep[0] != LOC_NONE || keep[1] != LOC_NONE;
}

/*
 * Is one host port an end of all of @x's bad tests that started at
 * @since or later, leaving out those already explained (@unexplained) and
 * those with host port @but at an end (LOC_NONE: none)? @n: how many were
 * looked at.
 */
static int lc_one_port_of(const struct lctx *c, uint32_t x, int unexplained,
			  uint32_t but, double since, unsigned *n)
{
	uint32_t p[2] = {LOC_NONE, LOC_NONE};

	*n = 0;
	for (size_t k = c->off[x]; k < c->off[x + 1]; k++) {
		const struct loc_test *t = &c->t[c->list[k]];

		if (!t->bad || t->started < since ||
		    (unexplained && c->covered[c->list[k]] != LOC_NONE) ||
		    (but != LOC_NONE &&
		     (t->ends[0] == but || t->ends[1] == but)))
			continue;
		lc_common(p, !*n, t);
		++*n;
	}
	return p[0] != LOC_NONE || p[1] != LOC_NONE;
}

/*
 * When switch @w's tests turned bad: the oldest of its bad tests from
 * which on at least half its tests are bad (not a noise outlier long
 * before, followed by good tests); INFINITY: they never did.
 */
static double lc_onset(const struct lctx *c, uint32_t w)
{
	double onset = INFINITY;
	unsigned bad = 0, all = 0;

	for (size_t k = c->off[w + 1]; k-- > c->off[w];) {
		const struct loc_test *t = &c->t[c->list[k]];

		all++;
		bad += t->bad != 0;
		if (t->bad && 2 * bad >= all)
			onset = t->started;
	}
	return onset;
}

/*
 * A switch is a candidate only when every link of it that carried tests
 * since its tests turned bad (lc_onset) is implicated (more bad than
 * good), at least two are, its bad tests do not all cross one cable and
 * those since it turned bad do not all share one host port (that port
 * explains them as well): a switch that failed at some time is judged on
 * what crossed it since.
 */
static int lc_switches(struct lctx *c)
{
	unsigned *with = calloc(c->ne + 1, sizeof(*with));
	unsigned *bad = calloc(c->ne + 1, sizeof(*bad));
	double *onset = malloc((c->ne + 1) * sizeof(*onset));
	int ret = with && bad && onset ? 0 : -ENOMEM;

	for (size_t x = 0; !ret && x <= c->ne; x++)
		onset[x] = NAN;

	for (size_t x = 0; !ret && x < c->ne; x++) {
		if (c->e[x].kind != LOC_LINK)
			continue;
		for (int k = 0; k < 2; k++) {
			uint32_t w = c->e[x].sw[k];
			unsigned b, g;

			if (w >= c->ne || !c->e[w].st.bad)
				continue;
			if (isnan(onset[w]))
				onset[w] = lc_onset(c, w);
			lc_since(c, (uint32_t)x, onset[w], &b, &g);
			if (!(b + g))
				continue;
			with[w]++;
			bad[w] += b && b > g;
		}
	}
	/* a switch already named stays a candidate until it recovers (its
	 * good tests in a row) or another pick explains it better: one good
	 * test on one of its links after a repair must not hand its bad
	 * tests to its links */
	for (size_t x = 0; !ret && x < c->ne; x++) {
		unsigned n;

		if (c->e[x].kind == LOC_SWITCH && !c->e[x].named &&
		    (bad[x] < 2 || bad[x] != with[x] ||
		     lc_one_cable(c, (uint32_t)x) ||
		     lc_one_port_of(c, (uint32_t)x, 0, LOC_NONE, onset[x], &n)))
			c->no[x] = LOC_WHY_SWITCH;
	}
	free(with);
	free(bad);
	free(onset);
	return ret;
}

static double lc_score(const struct lctx *c, uint32_t x)
{
	return localize_llr(c->cur[x], c->e[x].st.good, c->o->noise) +
	       c->e[x].bonus;
}

/* The best element for this round; LOC_NONE when none has bad tests. */
static uint32_t lc_best(const struct lctx *c, double *score)
{
	uint32_t best = LOC_NONE;

	for (uint32_t x = 0; x < c->ne; x++) {
		double s;

		if (!c->cur[x] || c->no[x])
			continue;
		s = lc_score(c, x);
		if (best == LOC_NONE || s > *score + 1e-9 ||
		    (s > *score - 1e-9 && c->e[x].kind < c->e[best].kind)) {
			best = x;
			*score = s;
		}
	}
	return best;
}

/* Is one host port an end of all of @x's unexplained bad tests? */
static int lc_one_port(const struct lctx *c, uint32_t x)
{
	unsigned n;

	return lc_one_port_of(c, x, 1, LOC_NONE, -INFINITY, &n);
}

/* How much more likely @x is than the rivals on its unexplained tests. */
static double lc_confidence(struct lctx *c, uint32_t x, double score)
{
	size_t n = 0;
	double sum = 0;

	for (size_t k = c->off[x]; k < c->off[x + 1]; k++) {
		uint32_t i = c->list[k];

		if (!c->t[i].bad || c->covered[i] != LOC_NONE)
			continue;
		for (size_t j = 0; j < c->t[i].n_elems; j++) {
			uint32_t y = c->t[i].elems[j];

			if (y == x || c->no[y] == LOC_WHY_SWITCH ||
			    !counts(c, i, y))
				continue;
			if (!c->shared[y]++)
				c->touched[n++] = y;
		}
	}
	for (size_t k = 0; k < n; k++) {
		uint32_t y = c->touched[k];
		double d = localize_llr(c->shared[y], c->e[y].st.good,
					c->o->noise) +
			   c->e[y].bonus - score;

		sum += exp(d > 700 ? 700 : d);
		c->shared[y] = 0;
	}
	return 1 / (1 + sum);
}

/* Pick @x: record it, explain its bad tests. */
static int lc_pick(struct lctx *c, uint32_t x, double score)
{
	struct loc_result *r = c->r;
	struct loc_pick *p;

	if (vec_grow(&r->picks, &c->cap_picks, r->n_picks, sizeof(*p)))
		return -ENOMEM;
	p = &r->picks[r->n_picks];
	*p = (struct loc_pick){
		.elem = x,
		.bad = c->cur[x],
		.good = c->e[x].st.good,
		.gain = score,
		.confidence = lc_confidence(c, x, score),
		.named = c->e[x].kind >= LOC_LINK || c->e[x].named,
	};
	c->e[x].st.pick = (uint32_t)r->n_picks;
	for (size_t k = c->off[x]; k < c->off[x + 1]; k++) {
		uint32_t i = c->list[k];

		if (!c->t[i].bad || c->covered[i] != LOC_NONE)
			continue;
		c->covered[i] = (uint32_t)r->n_picks;
		for (size_t j = 0; j < c->t[i].n_elems; j++)
			if (counts(c, i, c->t[i].elems[j]))
				c->cur[c->t[i].elems[j]]--;
	}
	r->n_picks++;
	return 0;
}

/* The bad tests element @x must explain (localize.h). */
static unsigned lc_need(const struct lctx *c, uint32_t x)
{
	unsigned k = c->o->bad_tests;

	return k > 1 && c->e[x].bonus >= LOC_CORROBORATED ? k - 1 : k;
}

static int lc_greedy(struct lctx *c)
{
	for (;;) {
		double score = 0;
		uint32_t x = lc_best(c, &score);
		int ret;

		if (x == LOC_NONE || score < c->o->min_gain ||
		    c->cur[x] < lc_need(c, x))
			return 0;
		if (c->e[x].kind >= LOC_LINK && lc_one_port(c, x)) {
			c->no[x] = LOC_WHY_ONE_PORT;
			continue;
		}
		ret = lc_pick(c, x, score);
		if (ret)
			return ret;
	}
}

/* Another named pick whose element test @i crossed; LOC_NONE: none. */
static uint32_t lc_other_named(const struct lctx *c, uint32_t i, uint32_t p)
{
	for (size_t j = 0; j < c->t[i].n_elems; j++) {
		uint32_t y = c->t[i].elems[j], q = c->e[y].st.pick;

		if (q != LOC_NONE && q != p && c->r->picks[q].named &&
		    counts(c, i, y))
			return q;
	}
	return LOC_NONE;
}

/*
 * Reverse delete: a named link or switch all of whose bad tests also
 * crossed other named picks is not needed to explain them (two faults
 * whose paths meet at a link make that link look worst to the greedy
 * pass); it is dropped, in the order picked, its tests given to those.
 */
static void lc_prune(struct lctx *c)
{
	for (uint32_t p = 0; p < c->r->n_picks; p++) {
		struct loc_pick *k = &c->r->picks[p];
		int needed = 0;

		if (!k->named || c->e[k->elem].kind < LOC_LINK)
			continue;
		for (size_t i = 0; i < c->nt && !needed; i++)
			needed = c->covered[i] == p &&
				 lc_other_named(c, (uint32_t)i, p) == LOC_NONE;
		if (needed)
			continue;
		for (size_t i = 0; i < c->nt; i++)
			if (c->covered[i] == p)
				c->covered[i] =
					lc_other_named(c, (uint32_t)i, p);
		k->named = 0;
		k->bad = 0;
		c->no[k->elem] = LOC_WHY_EXPLAINED;
		c->e[k->elem].st.pick = LOC_NONE;
	}
}

/* The named pick explaining test @i, LOC_NONE when none. */
static uint32_t lc_named(const struct lctx *c, uint32_t i)
{
	uint32_t p = c->covered[i];

	return p != LOC_NONE && c->r->picks[p].named ? p : LOC_NONE;
}

/* Does link @x need confirmation tests (localize.h, loc_stat)? */
static int lc_confirm(const struct lctx *c, uint32_t x)
{
	const struct loc_test *b = NULL;
	unsigned good = 0;
	size_t k;

	for (k = c->off[x + 1]; k > c->off[x] && !b; k--)
		if (c->t[c->list[k - 1]].bad &&
		    lc_named(c, c->list[k - 1]) == LOC_NONE)
			b = &c->t[c->list[k - 1]];
	if (!b)
		return 0;
	/* the good tests after it (k + 1 on), with other ends */
	for (size_t j = k + 1; j < c->off[x + 1]; j++) {
		const struct loc_test *t = &c->t[c->list[j]];
		int shared = 0;

		for (int a = 0; a < 2; a++)
			shared |= t->ends[a] != LOC_NONE &&
				  (t->ends[a] == b->ends[0] ||
				   t->ends[a] == b->ends[1]);
		good += !t->bad && !shared;
	}
	return good < c->o->confirm_tests;
}

/* After the picks: why not, what explains it, confirmations, totals. */
static void lc_finish(struct lctx *c)
{
	for (uint32_t x = 0; x < c->ne; x++) {
		struct loc_stat *s = &c->e[x].st;

		for (size_t k = c->off[x + 1]; k-- > c->off[x];) {
			uint32_t i = c->list[k];

			if (!c->t[i].bad)
				continue;
			if (lc_named(c, i) != s->pick)
				s->covered = lc_named(c, i);
			break;
		}
		if (s->bad && s->pick == LOC_NONE)
			s->why = c->no[x]     ? (enum loc_why)c->no[x]
				 : !c->cur[x] ? LOC_WHY_EXPLAINED
					      : LOC_WHY_WEAK;
		if (c->e[x].kind == LOC_LINK &&
		    !(s->pick != LOC_NONE && c->r->picks[s->pick].named))
			s->confirm = lc_confirm(c, x);
	}
	for (uint32_t i = 0; i < c->nt; i++) {
		if (!c->t[i].bad)
			continue;
		c->r->bad_tests++;
		if (c->repaired[i])
			c->r->bad_repaired++;
		else if (lc_named(c, i) != LOC_NONE)
			c->r->bad_explained++;
		else if (c->covered[i] == LOC_NONE)
			c->r->bad_unexplained++;
	}
}

/* Held (localize.h): a link test @i crossed with bad tests of others than
 * host port @p that no one port explains. */
static int lc_shared_fault(const struct lctx *c, uint32_t i, uint32_t p)
{
	for (size_t j = 0; j < c->t[i].n_elems; j++) {
		uint32_t y = c->t[i].elems[j];
		unsigned n;

		if (c->e[y].kind == LOC_LINK && c->e[y].st.bad >= 3 &&
		    counts(c, i, y) &&
		    !lc_one_port_of(c, y, 0, p, -INFINITY, &n) && n >= 2)
			return 1;
	}
	return 0;
}

/* Does test @i cross element @x? */
static int lc_crosses(const struct lctx *c, uint32_t i, uint32_t x)
{
	for (size_t j = 0; j < c->t[i].n_elems; j++)
		if (c->t[i].elems[j] == x)
			return 1;
	return 0;
}

/*
 * Host port @p's tests that did not cross link @x, since @x's tests
 * turned bad (lc_onset): were they all good, and at least one?
 */
static int lc_fine_elsewhere(const struct lctx *c, uint32_t p, uint32_t x)
{
	double since = lc_onset(c, x);
	unsigned good = 0;

	for (size_t k = c->off[p + 1]; k-- > c->off[p];) {
		uint32_t i = c->list[k];

		if (c->t[i].started < since)
			break;
		if (lc_crosses(c, i, x))
			continue;
		if (c->t[i].bad)
			return 0;
		good++;
	}
	return good > 0;
}

/*
 * Held (localize.h): a link test @i crossed waits only because host port
 * @p is an end of all its bad tests, while @p's tests elsewhere since the
 * link turned bad were all good: the link explains them, not @p.
 */
static int lc_waits_on(const struct lctx *c, uint32_t i, uint32_t p)
{
	for (size_t j = 0; j < c->t[i].n_elems; j++) {
		uint32_t y = c->t[i].elems[j];
		unsigned n;

		if (c->e[y].kind == LOC_LINK &&
		    c->e[y].st.why == LOC_WHY_ONE_PORT && counts(c, i, y) &&
		    !lc_one_port_of(c, y, 0, p, -INFINITY, &n) && !n &&
		    lc_fine_elsewhere(c, p, y))
			return 1;
	}
	return 0;
}

/* Which ends each bad test no named pick explains is held from. */
static int lc_hold(struct lctx *c)
{
	c->r->held = calloc(c->nt + 1, 1);
	if (!c->r->held)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->nt; i++)
		for (int a = 0; a < 2; a++)
			if (c->t[i].bad && lc_named(c, i) == LOC_NONE &&
			    c->t[i].ends[a] != LOC_NONE &&
			    (lc_shared_fault(c, i, c->t[i].ends[a]) ||
			     lc_waits_on(c, i, c->t[i].ends[a])))
				c->r->held[i] |= (unsigned char)(1u << a);
	return 0;
}

static int lc_check(const struct loc_elem *e, size_t ne,
		    const struct loc_test *t, size_t nt)
{
	for (size_t i = 0; i < nt; i++) {
		for (size_t j = 0; j < t[i].n_elems; j++)
			if (t[i].elems[j] >= ne)
				return -EINVAL;
		for (int k = 0; k < 2; k++)
			if (t[i].ends[k] != LOC_NONE && t[i].ends[k] >= ne)
				return -EINVAL;
	}
	for (size_t x = 0; x < ne; x++)
		if ((unsigned)e[x].kind >= LOC_KINDS || !(e[x].bonus >= 0))
			return -EINVAL;
	return 0;
}

static void lc_free(struct lctx *c)
{
	free(c->off);
	free(c->list);
	free(c->cur);
	free(c->covered);
	free(c->repaired);
	free(c->no);
	free(c->shared);
	free(c->touched);
}

int localize_run(const struct loc_opts *o, struct loc_elem *e, size_t ne,
		 const struct loc_test *t, size_t nt, struct loc_result *out)
{
	struct lctx c = {.o = o, .e = e, .ne = ne, .t = t, .nt = nt, .r = out};
	char why[128];
	int ret;

	memset(out, 0, sizeof(*out));
	if (localize_opts_check(o, why, sizeof(why)) || lc_check(e, ne, t, nt))
		return -EINVAL;
	c.cur = calloc(ne + 1, sizeof(*c.cur));
	c.covered = malloc((nt + 1) * sizeof(*c.covered));
	c.repaired = calloc(nt + 1, 1);
	c.no = calloc(ne + 1, 1);
	c.shared = calloc(ne + 1, sizeof(*c.shared));
	c.touched = calloc(ne + 1, sizeof(*c.touched));
	if (c.cur && c.covered && c.repaired && c.no && c.shared && c.touched) {
		lc_repaired(&c);
		ret = lc_index(&c);
	} else {
		ret = -ENOMEM;
	}
	if (!ret) {
		memset(c.covered, 0xff, (nt + 1) * sizeof(*c.covered));
		lc_stats(&c);
		ret = lc_switches(&c);
	}
	if (!ret)
		ret = lc_greedy(&c);
	if (!ret) {
		lc_prune(&c);
		lc_finish(&c);
		ret = lc_hold(&c);
	}
	if (!ret) {
		out->covered = c.covered; /* theirs now */
		c.covered = NULL;
	}
	lc_free(&c);
	if (ret)
		localize_result_free(out);
	return ret;
}

void localize_result_free(struct loc_result *r)
{
	free(r->picks);
	free(r->covered);
	free(r->held);
	memset(r, 0, sizeof(*r));
}
