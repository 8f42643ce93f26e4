/* SPDX-License-Identifier: MIT */
/*
 * Localization: which elements of the fabric explain the bad tests of a
 * window (docs/collector.md, "WHERE IN THE FABRIC"). Pure (no SQLite, no
 * clock): store_localize.c gives it the judged tests of one profile and
 * metric with the elements each crossed, as the routes say, and opens and
 * closes suspects from what it answers; unit-tested alone.
 *
 * An element is a host port or a device (the host side, which evidence
 * per element names: evidence.h), a directed link between two switches
 * (named by the end the traffic leaves), or a switch. A test crossed both
 * ends' ports and devices and every link and switch of its path (both
 * paths of a round trip). The method is a greedy set cover with
 * exoneration, as deTector's: each round picks the element whose bad
 * tests, not yet explained by an earlier pick, are best explained by it,
 * scored by the log-likelihood ratio of "this element is faulty" (its
 * tests are bad with the share observed) against "it is healthy" (bad
 * only by noise, share @noise):
 *
 *     gain = B ln(p / noise) + G ln((1 - p) / (1 - noise)),  p = B / (B + G)
 *
 * where B are its unexplained bad tests and G its good ones since its
 * first bad test (a fault starts at some time: the tests before it say
 * nothing of it): good tests through an element exonerate it, and a link
 * that only flaps still scores. Evidence from elsewhere (its counters: symbol
 * errors, link downed, a degraded width or speed) adds a bonus. The pick must
 * reach @min_gain and explain at least @bad_tests tests, one fewer when its
 * bonus reaches LOC_CORROBORATED (counters that say the link is at fault,
 * not congestion alone: a flapping cable is named from two bad tests and
 * its errors, where the tests alone need three); a link or switch is
 * also refused when one host port is an end of all its bad tests (that
 * port explains them as well: more tests must tell), and a switch is
 * named only when all its links that carried tests since its tests
 * turned bad (its oldest bad test from which on at least half are bad:
 * not a noise outlier before the fault) are implicated (more bad than good, at
 * least two of them) and its bad tests do not all cross one of its cables (that
 * cable's links explain them as well, and more precisely). Host-side picks are
 * never named here: they absorb the bad tests that a bad port or device
 * explains, so that one fault is not named twice.
 *
 * Held: a bad test that no named pick explains is held from an end (the
 * evidence neither counts it for nor against that end's port and device)
 * when a link it crossed has at least three bad tests and those without
 * that end need two host ports or more to explain them: other hosts' bad
 * tests meet there, and the fabric is as likely at fault as the end. A
 * faulty port's own bad tests are not held (the links they cross are bad
 * with it, or with it and one other faulty port); a failing spine's are,
 * for every host that crossed it, until it is named. They are also held
 * from a port that is an end of all the bad tests of a link they crossed
 * when that port's tests that did not cross the link, since the link's
 * tests turned bad (as a switch's: not a noise outlier before), were all
 * good, at least one: the link waits for a bad test of another port, and
 * the port is not named meanwhile. A port that is at fault has bad tests
 * elsewhere too, and is named from all of them.
 *
 * Confidence: how much more likely the pick is than its rivals (the other
 * elements its bad tests crossed, scored on those tests alone), as a
 * share: 1 / (1 + sum exp(gain_rival - gain)). A link whose bad tests no
 * other element shares is near 1; two links no test tells apart are 0.5.
 */
#ifndef IBPULSE_COLLECTOR_LOCALIZE_H
#define IBPULSE_COLLECTOR_LOCALIZE_H

#include <stddef.h>
#include <stdint.h>

#define LOC_NONE UINT32_MAX

/* A bonus that corroborates an element (above): ln 20, errors on its
 * ends or a degraded width or speed. */
#define LOC_CORROBORATED 3.0

enum loc_kind {
	LOC_PORT = 0, /* host side: evidence per element names it */
	LOC_DEVICE,
	LOC_LINK, /* a directed link between two switches */
	LOC_SWITCH,
	LOC_KINDS
};

/* Why an element with bad tests was not picked. */
enum loc_why {
	LOC_WHY_NONE = 0,
	LOC_WHY_WEAK,	  /* too few bad tests, or not enough gain */
	LOC_WHY_ONE_PORT, /* one host port is an end of all its bad tests */
	LOC_WHY_SWITCH,	  /* a switch whose links are not all implicated */
	LOC_WHY_EXPLAINED /* an earlier pick explains its bad tests */
};

/* The [localize] settings (collector.ini). */
struct loc_opts {
	unsigned bad_tests;	/* K: bad tests a pick must explain, >= 1 */
	unsigned good_tests;	/* good in a row, newest, that clear one */
	unsigned confirm_tests; /* good tests after a bad one, with other
				 * ends, that spare a link confirmation */
	double noise;		/* (0, 0.5): bad share of a healthy element */
	double min_gain;	/* > 0: the gain a pick must reach */
};

/* What one run says of one element. */
struct loc_stat {
	unsigned bad;		    /* its bad tests in the window */
	unsigned good;		    /* its good tests after its first bad
				     * one (all when it has none) */
	unsigned good_run;	    /* good tests in a row, newest first */
	double first_bad, last_bad; /* started of its oldest and newest bad
				     * test; NAN: none */
	double gain;		    /* of all its tests (with its bonus) */
	uint32_t pick;		    /* its index in the picks; LOC_NONE */
	uint32_t covered;	    /* the named pick that explains its newest
				     * bad test (not itself); LOC_NONE */
	enum loc_why why;	    /* with bad tests and not picked */
	int confirm; /* a link that needs confirmation tests: a bad test no
		      * named pick explains, with fewer than confirm_tests
		      * good tests of other ports since */
};

struct loc_elem {
	enum loc_kind kind;
	double from;	    /* tests that started at or before: not its own (a
			     * fresh window after it recovered); a link's or
			     * switch's bad ones then count for no element
			     * (its repaired fault explains them) */
	double bonus;	    /* >= 0: evidence from its counters, as gain */
	int named;	    /* an open suspect already (host side: the
			     * evidence's; a switch then stays a candidate
			     * until it recovers) */
	uint32_t sw[2];	    /* LOC_LINK: the switch elements at its two ends
			     * (LOC_NONE: none) */
	struct loc_stat st; /* filled by localize_run() */
};

struct loc_test {
	double started;
	int bad;
	uint32_t ends[2];      /* the host port elements of its two ends */
	const uint32_t *elems; /* every element it crossed, each once */
	size_t n_elems;
};

/* One pick, in the order they were made. */
struct loc_pick {
	uint32_t elem;
	unsigned bad;	   /* the bad tests it explains */
	unsigned good;	   /* good tests through it */
	double gain;	   /* its score when picked */
	double confidence; /* in (0, 1] */
	int named;	   /* a link or switch suspect (or a host-side
			    * element with a suspect of its own) */
};

struct loc_result {
	struct loc_pick *picks;
	size_t n_picks;
	uint32_t *covered;	/* per test: the pick explaining it; LOC_NONE */
	unsigned char *held;	/* per test: bit a set, held from end a */
	unsigned bad_tests;	/* bad tests in the window */
	unsigned bad_explained; /* ... explained by a named pick */
	unsigned bad_unexplained; /* ... by no pick at all */
	unsigned bad_repaired;	  /* ... by a link or switch that recovered
				   * since (before its from: loc_elem) */
};

/*
 * localize_run() - the picks over tests @t[0..nt) of elements
 * @e[0..ne) (each element's st filled). Returns 0, -EINVAL (an element
 * index out of range, bad options), -ENOMEM. Free @out with
 * localize_result_free().
 */
int localize_run(const struct loc_opts *o, struct loc_elem *e, size_t ne,
		 const struct loc_test *t, size_t nt, struct loc_result *out);
void localize_result_free(struct loc_result *r);

/* The gain of @bad bad and @good good tests against @noise (above). */
double localize_llr(unsigned bad, unsigned good, double noise);

/* "port", "device", "fabric_link", "switch". */
const char *localize_kind_name(enum loc_kind k);

/* 0, or -EINVAL with the setting and its range in @err. */
int localize_opts_check(const struct loc_opts *o, char *err, size_t errlen);

#endif
