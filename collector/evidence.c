// SPDX-License-Identifier: MIT
/*
 * Evidence per element: the verdict over one element's window and the
 * exoneration test of a peer (evidence.h). Pure functions of their
 * arguments.
 */
#include "evidence.h"
#include "baseline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

/* The median of @v[0..n-1] (reordered), NAN when empty. */
static double median_of(double *v, size_t n)
{
	struct baseline_stat b;

	return n && !baseline_compute(v, n, &b) ? b.median : NAN;
}

/* A bad result that counts: not explained by something else. */
static int counts_bad(const struct evidence_row *r)
{
	return r->bad && !r->explained;
}

/* Count the distinct peers of the bad rows that count. */
static void count_bad(const struct evidence_row *r, size_t n,
		      struct evidence_verdict *v)
{
	for (size_t i = 0; i < n; i++) {
		int seen_peer = 0;

		if (!counts_bad(&r[i]))
			continue;
		for (size_t j = 0; j < i && !seen_peer; j++)
			seen_peer = counts_bad(&r[j]) && r[j].peer == r[i].peer;
		if (!seen_peer) {
			v->peers_bad++;
			v->peers_exonerating += r[i].peer_fine ? 1 : 0;
		}
	}
}

/*
 * Each via port of the window, once: bad when more of its results count
 * bad than are good, good when more are good. A device fault shows on
 * every port; a port fault on one while the others stay good.
 */
static void count_ports(const struct evidence_row *r, size_t n,
			struct evidence_verdict *v)
{
	for (size_t i = 0; i < n; i++) {
		int bad = 0, good = 0, seen = 0;

		for (size_t j = 0; j < i && !seen; j++)
			seen = r[j].via_port == r[i].via_port;
		if (seen)
			continue;
		for (size_t j = i; j < n; j++) {
			if (r[j].via_port != r[i].via_port)
				continue;
			bad += counts_bad(&r[j]);
			good += !r[j].bad;
		}
		v->ports_bad += bad > good;
		v->ports_good += good > bad;
	}
}

/* Is @port the via_port of a bad row that counts? */
static int bad_port(const struct evidence_row *r, size_t n, unsigned port)
{
	for (size_t j = 0; j < n; j++)
		if (counts_bad(&r[j]) && r[j].via_port == port)
			return 1;
	return 0;
}

/* Other ports (not among the bad ones) good after the oldest bad row. */
static unsigned count_clear(const struct evidence_row *r, size_t n)
{
	size_t oldest = n;
	unsigned k = 0;

	for (size_t i = 0; i < n; i++)
		if (counts_bad(&r[i]))
			oldest = i;
	for (size_t i = 0; i < oldest; i++) {
		int seen = 0;

		if (r[i].bad || bad_port(r, n, r[i].via_port))
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !r[j].bad && r[j].via_port == r[i].via_port;
		k += !seen;
	}
	return k;
}

/*
 * Does the window ask for confirmation tests? Its newest bad result
 * (explained or not), followed by fewer than confirm_tests good results
 * with other peers.
 */
static int needs_confirm(const struct evidence_opts *o,
			 const struct evidence_row *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		long long good = 0;

		if (!r[i].bad)
			continue;
		for (size_t j = 0; j < i; j++)
			good += !r[j].bad && r[j].peer != r[i].peer;
		return good < o->confirm_tests;
	}
	return 0;
}

void evidence_judge(const struct evidence_opts *o, const struct evidence_row *r,
		    size_t n, int lower_is_worse, struct evidence_verdict *v)
{
	double vals[EVIDENCE_MAX_WINDOW], bases[EVIDENCE_MAX_WINDOW];
	size_t nb = 0;

	*v = (struct evidence_verdict){
		.first_bad = NAN, .baseline = NAN, .figure = NAN, .worst = NAN};
	if (n > EVIDENCE_MAX_WINDOW)
		n = EVIDENCE_MAX_WINDOW;
	if (o->judged_results > 0 && n > (size_t)o->judged_results)
		n = (size_t)o->judged_results;
	v->judged = (unsigned)n;
	/* explained bad results neither break nor extend a good run */
	for (size_t i = 0; i < n && !counts_bad(&r[i]); i++)
		v->good_run += !r[i].bad;
	for (size_t i = 0; i < n; i++) {
		v->explained += r[i].bad && r[i].explained;
		if (!counts_bad(&r[i]))
			continue;
		v->bad++;
		v->first_bad = r[i].started; /* newest first: the last wins */
		vals[nb] = r[i].value;
		bases[nb++] = r[i].baseline;
		if (isnan(v->worst) || (lower_is_worse ? r[i].value < v->worst
						       : r[i].value > v->worst))
			v->worst = r[i].value;
	}
	count_bad(r, n, v);
	count_ports(r, n, v);
	v->ports_clear = count_clear(r, n);
	v->figure = median_of(vals, nb);
	v->baseline = median_of(bases, nb);
	v->suspect = v->bad >= (unsigned)o->bad_results &&
		     v->peers_exonerating >= (unsigned)o->peers;
	v->confirm = !v->suspect && needs_confirm(o, r, n);
}

int evidence_peer_fine(const struct evidence_row *r, size_t n, int64_t self)
{
	unsigned good = 0, bad = 0;

	for (size_t i = 0; i < n; i++) {
		if (r[i].peer == self)
			continue;
		if (r[i].bad)
			bad++;
		else
			good++;
	}
	return good >= 1 && good > bad;
}

int evidence_opts_check(const struct evidence_opts *o, char *err, size_t errlen)
{
	if (o->bad_results > o->judged_results ||
	    o->judged_results > EVIDENCE_MAX_WINDOW) {
		snprintf(err, errlen,
			 "[suspect] bad_results (%lld) must not exceed "
			 "judged_results (%lld), which must be at most %d",
			 o->bad_results, o->judged_results,
			 EVIDENCE_MAX_WINDOW);
		return -EINVAL;
	}
	if (o->peers > o->bad_results) {
		snprintf(err, errlen,
			 "[suspect] peers (%lld) must not exceed bad_results "
			 "(%lld): each exonerating peer comes with a bad "
			 "result",
			 o->peers, o->bad_results);
		return -EINVAL;
	}
	return 0;
}
