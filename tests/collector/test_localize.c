// SPDX-License-Identifier: MIT
/*
 * Unit tests for localization (collector/localize.c) on a small two-level
 * fat tree routed destination-mod-k, as OpenSM's fat-tree engine routes:
 * a bad uplink is named (and the hosts behind it are not), a bad host
 * port absorbs its bad tests (no link is named), a whole spine is named
 * as a switch (not its links), also when it fails after good tests, but
 * not for the first bad tests of one of its cables, two bad uplinks whose
 * tests meet at a downlink are named and the downlink is not, a flapping
 * link is named, noise names
 * nothing, a link whose bad tests all share one host port waits for more
 * and holds that port's bad tests while its tests elsewhere are good (not
 * those of a port that failed after a noise outlier through the link),
 * a bad test asks for confirmation tests through its links until good
 * tests of other ports follow, two links no test tells apart share the
 * confidence, a link whose counters corroborate it needs one bad test
 * fewer, a bad test is held from an end when other hosts' bad
 * tests meet at a link it crossed, an element's fresh window drops older tests,
 * a repaired link's bad tests name no other link,
 * counters add evidence, and bad input is refused.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "localize.h"

#define LEAVES 6
#define PER 4 /* hosts per leaf */
#define SPINES 2
#define HOSTS (LEAVES * PER)

/* Element indexes: ports, devices, leaves, spines, up links, down links. */
#define PORT(h) ((uint32_t)(h))
#define DEV(h) ((uint32_t)(HOSTS + (h)))
#define LEAF(l) ((uint32_t)(2 * HOSTS + (l)))
#define SPINE(s) ((uint32_t)(2 * HOSTS + LEAVES + (s)))
#define UP(l, s) ((uint32_t)(2 * HOSTS + LEAVES + SPINES + (l)*SPINES + (s)))
#define DOWN(s, l)                                                             \
	((uint32_t)(2 * HOSTS + LEAVES + SPINES + LEAVES * SPINES +            \
		    (l)*SPINES + (s)))
#define NELEM (2 * HOSTS + LEAVES + SPINES + 2 * LEAVES * SPINES)
#define MAXT 4096

static const struct loc_opts O = {.bad_tests = 3,
				  .good_tests = 3,
				  .confirm_tests = 2,
				  .noise = 0.01,
				  .min_gain = 9};

struct world {
	struct loc_elem e[NELEM];
	struct loc_test t[MAXT];
	uint32_t el[MAXT][12];
	size_t nt;
	struct loc_result r;
};

static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	for (uint32_t x = 0; x < NELEM; x++) {
		w->e[x].sw[0] = w->e[x].sw[1] = LOC_NONE;
		w->e[x].from = -1;
	}
	for (int h = 0; h < HOSTS; h++) {
		w->e[PORT(h)].kind = LOC_PORT;
		w->e[DEV(h)].kind = LOC_DEVICE;
	}
	for (int l = 0; l < LEAVES; l++)
		w->e[LEAF(l)].kind = LOC_SWITCH;
	for (int s = 0; s < SPINES; s++)
		w->e[SPINE(s)].kind = LOC_SWITCH;
	for (int l = 0; l < LEAVES; l++)
		for (int s = 0; s < SPINES; s++) {
			struct loc_elem *u = &w->e[UP(l, s)],
					*d = &w->e[DOWN(s, l)];

			u->kind = d->kind = LOC_LINK;
			u->sw[0] = d->sw[1] = LEAF(l);
			u->sw[1] = d->sw[0] = SPINE(s);
		}
}

/* The spine host @b is reached through: destination mod k. */
static int spine_of(int b)
{
	return b % SPINES;
}

/* A write from @a to @b at @when: its elements into the world. */
static struct loc_test *add(struct world *w, int a, int b, double when, int bad)
{
	struct loc_test *t = &w->t[w->nt];
	uint32_t *el = w->el[w->nt];
	size_t n = 0;
	int la = a / PER, lb = b / PER, s = spine_of(b);

	assert_true(w->nt < MAXT);
	assert_true(sizeof(w->el[0]) / sizeof(w->el[0][0]) >= 9);
	el[n++] = PORT(a);
	el[n++] = DEV(a);
	el[n++] = PORT(b);
	el[n++] = DEV(b);
	el[n++] = LEAF(la);
	if (la != lb) {
		el[n++] = UP(la, s);
		el[n++] = SPINE(s);
		el[n++] = DOWN(s, lb);
		el[n++] = LEAF(lb);
	}
	*t = (struct loc_test){.started = when,
			       .bad = bad,
			       .ends = {PORT(a), PORT(b)},
			       .elems = el,
			       .n_elems = n};
	w->nt++;
	return t;
}

/* Does the test a -> b cross link @x? */
static int crosses(int a, int b, uint32_t x)
{
	int la = a / PER, lb = b / PER, s = spine_of(b);

	return la != lb && (x == UP(la, s) || x == DOWN(s, lb));
}

/* Every ordered pair of hosts on different leaves once, in a fixed
 * shuffled order; @bad decides. */
static void all_pairs(struct world *w, int (*bad)(int, int, void *), void *arg)
{
	double when = 0;

	for (int k = 0; k < HOSTS * HOSTS; k++) {
		int i = (k * 37) % (HOSTS * HOSTS), a = i / HOSTS,
		    b = i % HOSTS;

		if (a / PER == b / PER)
			continue;
		add(w, a, b, when += 1, bad(a, b, arg));
	}
}

static int bad_link(int a, int b, void *arg)
{
	return crosses(a, b, *(uint32_t *)arg);
}

static int bad_port(int a, int b, void *arg)
{
	int h = *(int *)arg;

	return a == h || b == h;
}

static int bad_spine(int a, int b, void *arg)
{
	(void)a;
	return a / PER != b / PER && spine_of(b) == *(int *)arg;
}

static int none(int a, int b, void *arg)
{
	(void)a;
	(void)b;
	(void)arg;
	return 0;
}

/* The named picks of the run. */
static size_t named(const struct world *w, uint32_t *out)
{
	size_t n = 0;

	for (size_t i = 0; i < w->r.n_picks; i++)
		if (w->r.picks[i].named)
			out[n++] = w->r.picks[i].elem;
	return n;
}

static void test_bad_uplink(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	uint32_t x = UP(1, 0), got[16];

	(void)state;
	world_init(w);
	all_pairs(w, bad_link, &x);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 1);
	assert_int_equal(got[0], x);
	assert_true(w->r.picks[0].confidence > 0.99);
	assert_int_equal(w->r.picks[0].good, 0);
	assert_int_equal(w->r.bad_unexplained, 0);
	assert_int_equal(w->r.bad_explained, w->r.bad_tests);
	for (size_t i = 0; i < w->nt; i++)
		assert_int_equal(w->r.covered[i], w->t[i].bad ? 0 : LOC_NONE);
	/* the hosts behind it are not picked: it explains their tests */
	for (int h = PER; h < 2 * PER; h++) {
		assert_int_equal(w->e[PORT(h)].st.pick, LOC_NONE);
		assert_int_equal(w->e[PORT(h)].st.why, LOC_WHY_EXPLAINED);
		assert_int_equal(w->e[PORT(h)].st.covered, 0);
	}
	/* nor the spine (its other links are fine) or the leaf */
	assert_int_equal(w->e[SPINE(0)].st.why, LOC_WHY_SWITCH);
	assert_int_equal(w->e[LEAF(1)].st.why, LOC_WHY_SWITCH);
	assert_false(w->e[x].st.confirm);
	localize_result_free(&w->r);
	free(w);
}

static void test_bad_port(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	int h = 5;
	uint32_t got[16];

	(void)state;
	world_init(w);
	all_pairs(w, bad_port, &h);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	/* the port absorbs its tests; nothing in the fabric is named */
	assert_int_equal(named(w, got), 0);
	assert_int_equal(w->r.picks[0].elem, PORT(h));
	assert_int_equal(w->r.bad_unexplained, 0);
	for (int l = 0; l < LEAVES; l++)
		for (int s = 0; s < SPINES; s++)
			assert_int_equal(w->e[UP(l, s)].st.pick, LOC_NONE);
	/* issue 17's suspect for it makes it a named pick */
	w->e[PORT(h)].named = 1;
	localize_result_free(&w->r);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 1);
	assert_int_equal(got[0], PORT(h));
	assert_int_equal(w->r.bad_explained, w->r.bad_tests);
	localize_result_free(&w->r);
	free(w);
}

static void test_bad_spine(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	int s = 1;
	uint32_t got[16];

	(void)state;
	world_init(w);
	all_pairs(w, bad_spine, &s);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 1);
	assert_int_equal(got[0], SPINE(s));
	assert_true(w->r.picks[0].confidence > 0.99);
	for (int l = 0; l < LEAVES; l++) {
		assert_int_equal(w->e[UP(l, s)].st.why, LOC_WHY_EXPLAINED);
		assert_int_equal(w->e[DOWN(s, l)].st.why, LOC_WHY_EXPLAINED);
	}
	localize_result_free(&w->r);
	free(w);
}

/*
 * Spine 0 fails after a window of good tests (one of them through it bad
 * when @outlier), and only some of its links are tested since, from leaves
 * 0 and 1 to every other leaf: the switch is named, not a link.
 */
static void spine_fails_late(int outlier)
{
	struct world *w = calloc(1, sizeof(*w));
	int s = 0;
	uint32_t got[16];
	double when = 1000;

	world_init(w);
	all_pairs(w, none, NULL);
	for (size_t i = 100; outlier && i < w->nt; i++)
		if (w->t[i].n_elems > 5 && w->t[i].elems[6] == SPINE(s)) {
			w->t[i].bad = 1; /* an outlier, long before the fault */
			break;
		}
	for (int a = 0; a < 2 * PER; a++)
		for (int b = 2 * PER; b < HOSTS; b++)
			add(w, a, b, when += 1, bad_spine(a, b, &s));
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 1);
	assert_int_equal(got[0], SPINE(s));
	localize_result_free(&w->r);
	free(w);
}

/* The good tests before it failed say nothing of it. */
static void test_spine_fails_late(void **state)
{
	(void)state;
	spine_fails_late(0);
}

/* Nor does one noise outlier through it in the window: the switch is
 * judged from when its tests turned mostly bad, not from that outlier
 * (then every link tested since was good, and its links were named one by
 * one instead). */
static void test_spine_after_noise(void **state)
{
	(void)state;
	spine_fails_late(1);
}

/* A named switch stays named through one good test on one of its
 * links (after a repair, until it recovers): its links are not named. */
static void test_named_switch_stays(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	uint32_t got[16];
	double when = 0;

	(void)state;
	world_init(w);
	add(w, 0, 8, when += 1, 1);  /* up(0,0), down(0,2) */
	add(w, 4, 12, when += 1, 1); /* up(1,0), down(0,3) */
	add(w, 9, 2, when += 1, 1);  /* up(2,0), down(0,0) */
	add(w, 13, 6, when += 1, 1); /* up(3,0), down(0,1) */
	add(w, 1, 10, when += 1, 1); /* up(0,0), down(0,2) */
	add(w, 5, 14, when += 1, 1); /* up(1,0), down(0,3) */
	add(w, 10, 4, when += 1, 0); /* up(2,0), down(0,1): good */
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(w->e[SPINE(0)].st.why, LOC_WHY_SWITCH);
	localize_result_free(&w->r);
	w->e[SPINE(0)].named = 1;
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 1);
	assert_int_equal(got[0], SPINE(0));
	localize_result_free(&w->r);
	free(w);
}

/* The first bad tests of a cable (both ways) are not its spine's. */
static void test_cable_is_not_the_spine(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	uint32_t got[16];

	(void)state;
	world_init(w);
	/* leaf 1 <-> spine 0, both ways: three bad tests, each through one
	 * other link of the spine, so every tested link is implicated */
	add(w, 4, 8, 1, 1);  /* up(1,0), down(0,2) */
	add(w, 5, 12, 2, 1); /* up(1,0), down(0,3) */
	add(w, 1, 6, 3, 1);  /* up(0,0), down(0,1) */
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(w->e[SPINE(0)].st.why, LOC_WHY_SWITCH);
	assert_int_equal(named(w, got), 0);
	localize_result_free(&w->r);
	/* a bad test elsewhere through the spine: the switch */
	add(w, 9, 14, 4, 1); /* up(2,0), down(0,3) */
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 1);
	assert_int_equal(got[0], SPINE(0));
	localize_result_free(&w->r);
	free(w);
}

/*
 * Two bad uplinks whose tests meet at one downlink: that downlink sees
 * the most bad tests and is picked first, then each uplink for its other
 * tests; then the downlink is dropped (both explain its tests).
 */
static void test_two_faults_meet(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	uint32_t got[16];
	double when = 0;

	(void)state;
	world_init(w);
	for (int k = 0; k < 4; k++) {
		/* up(0,0) and up(1,0) to leaf 3: down(0,3), 8 bad tests */
		add(w, k, 12 + 2 * (k % 2), when += 1, 1);
		add(w, 4 + k, 12 + 2 * (k % 2), when += 1, 1);
	}
	for (int k = 0; k < 3; k++) {
		/* up(0,0) to leaf 2, up(1,0) to leaf 4: their own */
		add(w, k, 8 + 2 * (k % 2), when += 1, 1);
		add(w, 4 + k, 16 + 2 * (k % 2), when += 1, 1);
	}
	/* spine 0 is fine from leaves 2 and 5 */
	add(w, 9, 4, when += 1, 0);
	add(w, 21, 6, when += 1, 0);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(w->r.picks[0].elem, DOWN(0, 3));
	assert_int_equal(named(w, got), 2);
	assert_true((got[0] == UP(0, 0) && got[1] == UP(1, 0)) ||
		    (got[0] == UP(1, 0) && got[1] == UP(0, 0)));
	assert_int_equal(w->e[DOWN(0, 3)].st.why, LOC_WHY_EXPLAINED);
	assert_int_equal(w->e[DOWN(0, 3)].st.pick, LOC_NONE);
	for (size_t i = 0; i < w->nt; i++)
		if (w->t[i].bad)
			assert_true(w->r.picks[w->r.covered[i]].named);
	localize_result_free(&w->r);
	free(w);
}

static int flap(int a, int b, void *arg)
{
	static int n;

	return crosses(a, b, *(uint32_t *)arg) && (n++ & 1);
}

static void test_flap(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	uint32_t x = DOWN(1, 2), got[16];

	(void)state;
	world_init(w);
	all_pairs(w, flap, &x);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 1);
	assert_int_equal(got[0], x);
	assert_true(w->e[x].st.good > 0);
	localize_result_free(&w->r);
	free(w);
}

/*
 * Held from an end: bad tests of three hosts meet at down(0,1) among good
 * ones (not enough to name it). A bad test there is held from an end when
 * the link's other bad tests, without that end, need two ports: from 0
 * and 16 (the others are 8->6 and 16->4, or 0->4 and 8->6), not from 4
 * (one test without it) or 8 and 6 (4 is common to the others). Named,
 * the link explains them and nothing is held; a bad port holds nothing.
 */
static void test_held(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	static const int good[][2] = {{2, 6},  {3, 4},	{9, 6},
				      {10, 4}, {17, 6}, {18, 4}};
	uint32_t got[16];
	int h = 5;

	(void)state;
	world_init(w);
	add(w, 0, 4, 1, 1);
	add(w, 8, 6, 2, 1);
	add(w, 16, 4, 3, 1);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		add(w, good[i][0], good[i][1], 4 + (double)i, 0);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 0);
	assert_int_equal(w->e[DOWN(0, 1)].st.bad, 3);
	assert_int_equal(w->r.held[0], 1);
	assert_int_equal(w->r.held[1], 0);
	assert_int_equal(w->r.held[2], 1);
	for (size_t i = 3; i < w->nt; i++)
		assert_int_equal(w->r.held[i], 0);
	localize_result_free(&w->r);
	/* without the good tests the link is named: nothing held */
	w->nt = 3;
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 1);
	assert_int_equal(got[0], DOWN(0, 1));
	for (size_t i = 0; i < w->nt; i++)
		assert_int_equal(w->r.held[i], 0);
	localize_result_free(&w->r);
	/* a bad port's tests: the links they cross are bad only with it */
	world_init(w);
	all_pairs(w, bad_port, &h);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	for (size_t i = 0; i < w->nt; i++)
		assert_int_equal(w->r.held[i], 0);
	localize_result_free(&w->r);
	free(w);
}

static void test_noise(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	uint32_t got[16];

	(void)state;
	world_init(w);
	all_pairs(w, none, NULL);
	/* three outliers, on three different paths */
	w->t[10].bad = w->t[77].bad = w->t[150].bad = 1;
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 0);
	assert_int_equal(w->r.bad_tests, 3);
	assert_int_equal(w->r.bad_unexplained, 3);
	localize_result_free(&w->r);
	free(w);
}

/* Three bad tests through one link, all from one host: wait. */
static void test_one_port(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	uint32_t got[16];

	(void)state;
	world_init(w);
	/* host 0 (leaf 0) to hosts 4, 6, 10 (even: spine 0), all bad */
	add(w, 0, 4, 1, 1);
	add(w, 0, 6, 2, 1);
	add(w, 0, 10, 3, 1);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 0);
	/* as likely the port as the link: the port absorbs them */
	assert_int_equal(w->r.picks[0].elem, PORT(0));
	for (size_t i = 0; i < w->nt; i++)
		assert_int_equal(w->r.held[i], 0);
	assert_int_equal(w->e[UP(0, 0)].st.why, LOC_WHY_EXPLAINED);
	assert_int_equal(w->e[UP(0, 0)].st.bad, 3);
	/* the link asks for more tests, from other ports */
	assert_true(w->e[UP(0, 0)].st.confirm);
	localize_result_free(&w->r);
	/* host 0 fine elsewhere: the link scores higher, but one port is
	 * an end of all its bad tests */
	add(w, 0, 5, 3.1, 0);
	add(w, 0, 7, 3.2, 0);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 0);
	assert_int_equal(w->e[UP(0, 0)].st.why, LOC_WHY_ONE_PORT);
	assert_true(w->e[UP(0, 0)].st.confirm);
	/* and host 0's bad tests are held from it meanwhile (its tests
	 * elsewhere since the link turned bad were good): its port is not
	 * named before the link */
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(w->r.held[i], 1);
	localize_result_free(&w->r);
	/* one from another host of leaf 0 through it, bad too: named */
	add(w, 1, 12, 4, 1);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 1);
	assert_int_equal(got[0], UP(0, 0));
	assert_false(w->e[UP(0, 0)].st.confirm);
	localize_result_free(&w->r);
	free(w);
}

/*
 * A port that fails after a noise outlier through a link: its good tests
 * elsewhere before the fault do not hold its bad tests for the link (its
 * tests elsewhere since the link turned bad were bad too), though they
 * lower its gain below the link's.
 */
static void test_port_after_outlier(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	uint32_t got[16];
	int dst[] = {5, 7, 9, 11, 13};

	(void)state;
	world_init(w);
	add(w, 0, 4, 1, 1);	    /* the outlier, through UP(0, 0) */
	for (int k = 0; k < 5; k++) /* fine through spine 1 */
		add(w, 0, dst[k], 2 + k, 0);
	/* the fault: through UP(0, 0), then elsewhere */
	add(w, 0, 6, 10, 1);
	add(w, 0, 10, 11, 1);
	add(w, 0, 15, 12, 1);
	add(w, 0, 14, 13, 1);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 0);
	assert_true(w->e[UP(0, 0)].st.gain > w->e[PORT(0)].st.gain);
	assert_int_equal(w->e[UP(0, 0)].st.why, LOC_WHY_ONE_PORT);
	for (size_t i = 0; i < w->nt; i++)
		assert_int_equal(w->r.held[i], 0);
	localize_result_free(&w->r);
	/* before its test elsewhere went bad, they were held */
	w->nt -= 2;
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(w->r.held[w->nt - 1], 1);
	localize_result_free(&w->r);
	free(w);
}

static void test_confirm(void **state)
{
	struct world *w = calloc(1, sizeof(*w));

	(void)state;
	world_init(w);
	add(w, 0, 4, 1, 1); /* up(0,0), down(0,1) */
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_true(w->e[UP(0, 0)].st.confirm);
	assert_true(w->e[DOWN(0, 1)].st.confirm);
	assert_false(w->e[UP(0, 1)].st.confirm);
	localize_result_free(&w->r);
	/* good tests through up(0,0): one with the same host does not
	 * count, two with other hosts do */
	add(w, 0, 8, 2, 0);
	add(w, 1, 8, 3, 0);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_true(w->e[UP(0, 0)].st.confirm);
	localize_result_free(&w->r);
	add(w, 2, 12, 4, 0);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_false(w->e[UP(0, 0)].st.confirm);
	assert_true(w->e[DOWN(0, 1)].st.confirm);
	localize_result_free(&w->r);
	free(w);
}

/* Two links every test crosses together: no one is surer. */
static void test_ambiguous(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	uint32_t got[16];

	(void)state;
	world_init(w);
	/* hosts 0, 1 of leaf 0 to hosts 4, 6 of leaf 1: up(0,0), down(0,1) */
	add(w, 0, 4, 1, 1);
	add(w, 1, 6, 2, 1);
	add(w, 0, 6, 3, 1);
	add(w, 1, 4, 4, 1);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 1);
	/* the two links (not spine 0: one cable of it explains them all) */
	assert_int_equal(got[0], UP(0, 0));
	assert_true(fabs(w->r.picks[0].confidence - 0.5) < 0.01);
	assert_int_equal(w->e[SPINE(0)].st.why, LOC_WHY_SWITCH);
	localize_result_free(&w->r);
	/* a good test through down(0,1) from leaf 2 tells them apart */
	add(w, 8, 4, 5, 0);
	add(w, 9, 6, 6, 0);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 1);
	assert_int_equal(got[0], UP(0, 0));
	assert_true(w->r.picks[0].confidence > 0.9);
	localize_result_free(&w->r);
	free(w);
}

/* A fresh window: the tests before it do not count for that element. */
static void test_from(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	uint32_t x = UP(1, 0), got[16];

	(void)state;
	world_init(w);
	all_pairs(w, bad_link, &x);
	w->e[x].from = w->t[w->nt - 1].started;
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(w->e[x].st.bad + w->e[x].st.good, 0);
	assert_int_equal(w->e[x].st.pick, LOC_NONE);
	for (size_t i = 0; i < named(w, got); i++)
		assert_int_not_equal(got[i], x);
	localize_result_free(&w->r);
	free(w);
}

/*
 * A link that recovered explains its bad tests from before: they do not
 * name another link they crossed (the 64-host bench named a repaired
 * cable's uplink from "3 bad tests of 6").
 */
static void test_repaired(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	static const int bad[][2] = {{0, 4}, {1, 6}, {2, 4}, {8, 4}};
	static const int good[][2] = {{12, 4}, {16, 6}, {20, 4}, {0, 8},
				      {1, 10}, {2, 12}, {4, 9},	 {4, 11},
				      {4, 13}, {6, 9},	{6, 11}};
	uint32_t got[16];
	double when = 0;

	(void)state;
	world_init(w);
	/* spine 0 -> leaf 1 was bad (three of them crossed up(0,0) too),
	 * then good: it recovered at the third good test; hosts 4 and 6
	 * are fine with others */
	for (size_t i = 0; i < 4; i++)
		add(w, bad[i][0], bad[i][1], when += 1, 1);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		add(w, good[i][0], good[i][1], when += 1, 0);
	w->e[DOWN(0, 1)].from = w->t[6].started;
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 0);
	assert_int_equal(w->e[UP(0, 0)].st.bad, 0);
	assert_int_equal(w->e[UP(0, 0)].st.good, 3);
	assert_int_equal(w->r.bad_repaired, 4);
	assert_int_equal(w->r.bad_unexplained, 0);
	localize_result_free(&w->r);
	/* a bad test after the repair counts again */
	add(w, 0, 4, when += 1, 1);
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(w->e[UP(0, 0)].st.bad, 1);
	assert_int_equal(w->e[DOWN(0, 1)].st.bad, 1);
	assert_int_equal(w->r.bad_repaired, 4);
	localize_result_free(&w->r);
	free(w);
}

/* Two bad tests are too few, unless the counters say so too. */
static void test_bonus(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	uint32_t got[16];
	struct loc_opts o = O;

	(void)state;
	o.bad_tests = 2;
	world_init(w);
	add(w, 0, 4, 1, 1);
	add(w, 1, 6, 2, 1);
	add(w, 8, 4, 3, 0); /* down(0,1) exonerated */
	add(w, 9, 6, 4, 0);
	add(w, 0, 9, 5, 0); /* host 0 and 1 fine elsewhere */
	add(w, 1, 11, 6, 0);
	add(w, 0, 5, 7, 0);
	add(w, 1, 7, 8, 0);
	o.min_gain = 12;
	assert_int_equal(localize_run(&o, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 0);
	assert_int_equal(w->e[UP(0, 0)].st.why, LOC_WHY_WEAK);
	localize_result_free(&w->r);
	w->e[UP(0, 0)].bonus = 3; /* symbol errors on it */
	assert_int_equal(localize_run(&o, w->e, NELEM, w->t, w->nt, &w->r), 0);
	assert_int_equal(named(w, got), 1);
	assert_int_equal(got[0], UP(0, 0));
	localize_result_free(&w->r);
	free(w);
}

/* A flapping link with errors on its ends is named from bad_tests - 1
 * bad tests; waiting to send alone does not spare one. */
static void test_corroborated(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	uint32_t x = DOWN(1, 2), got[16];
	struct loc_opts o = O;
	static const double bonus[] = {0, LOC_CORROBORATED - 2.3,
				       LOC_CORROBORATED};

	(void)state;
	o.min_gain = 5;
	world_init(w);
	add(w, 0, 9, 1, 1);   /* up(0,1), down(1,2) */
	add(w, 4, 9, 2, 0);   /* up(1,1), down(1,2) */
	add(w, 12, 11, 3, 1); /* up(3,1), down(1,2) */
	add(w, 16, 11, 4, 0); /* up(4,1), down(1,2) */
	for (size_t i = 0; i < 3; i++) {
		w->e[x].bonus = bonus[i];
		assert_int_equal(
			localize_run(&o, w->e, NELEM, w->t, w->nt, &w->r), 0);
		assert_true(w->e[x].st.gain > o.min_gain);
		assert_int_equal(named(w, got), i == 2);
		if (i == 2)
			assert_int_equal(got[0], x);
		else
			assert_int_equal(w->e[x].st.why, LOC_WHY_WEAK);
		localize_result_free(&w->r);
	}
	free(w);
}

static void test_llr_and_input(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct loc_opts o = O;
	char err[128];

	(void)state;
	assert_true(localize_llr(0, 5, 0.01) == 0);
	assert_true(fabs(localize_llr(3, 0, 0.01) - 3 * log(100)) < 1e-9);
	assert_true(localize_llr(3, 3, 0.01) < localize_llr(3, 0, 0.01));
	assert_true(localize_llr(1, 99, 0.01) == 0); /* the noise itself */
	assert_string_equal(localize_kind_name(LOC_LINK), "fabric_link");
	assert_string_equal(localize_kind_name(LOC_SWITCH), "switch");
	assert_null(localize_kind_name(LOC_KINDS));
	o.noise = 0.5;
	assert_int_equal(localize_opts_check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "noise"));
	o = O;
	o.bad_tests = 0;
	assert_int_equal(localize_opts_check(&o, err, sizeof(err)), -EINVAL);
	world_init(w);
	add(w, 0, 4, 1, 1);
	w->el[0][1] = NELEM; /* out of range */
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, w->nt, &w->r),
			 -EINVAL);
	assert_int_equal(w->r.n_picks, 0);
	/* an empty window */
	assert_int_equal(localize_run(&O, w->e, NELEM, w->t, 0, &w->r), 0);
	assert_int_equal(w->r.n_picks + w->r.bad_tests, 0);
	localize_result_free(&w->r);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_uplink),
		cmocka_unit_test(test_bad_port),
		cmocka_unit_test(test_bad_spine),
		cmocka_unit_test(test_spine_fails_late),
		cmocka_unit_test(test_spine_after_noise),
		cmocka_unit_test(test_cable_is_not_the_spine),
		cmocka_unit_test(test_named_switch_stays),
		cmocka_unit_test(test_two_faults_meet),
		cmocka_unit_test(test_flap),
		cmocka_unit_test(test_held),
		cmocka_unit_test(test_repaired),
		cmocka_unit_test(test_noise),
		cmocka_unit_test(test_one_port),
		cmocka_unit_test(test_port_after_outlier),
		cmocka_unit_test(test_confirm),
		cmocka_unit_test(test_ambiguous),
		cmocka_unit_test(test_from),
		cmocka_unit_test(test_bonus),
		cmocka_unit_test(test_corroborated),
		cmocka_unit_test(test_llr_and_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
