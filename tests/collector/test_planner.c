// SPDX-License-Identifier: MIT
/*
 * Planner unit tests: fabrics of 2, 3, 100 and 10,000 probes with group
 * labels, each plan checked against every property planner.h promises
 * (every ACTIVE port covered, every group pair exercised, within a rail,
 * no probe or port in two tests at once, no port over its duty cycle,
 * never two limited P_Key members, full mesh only below the threshold),
 * plus determinism and rotation across periods.
 */
#include "planner.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MAX_PORTS 4

/* A generated fabric: probes with names, groups and ports. */
struct fabric {
	struct planner_probe *p;
	struct planner_port *ports;
	char (*names)[32];
	char (*groups)[32];
	uint16_t *pkeys; /* one per port */
	size_t n, ports_per;
};

static const char *const profiles[] = {"bw", "lat"};

/*
 * @n probes in groups of @group_size ("leafK"), @ports ports each; every
 * @limited_every-th probe holds its P_Key as a limited member (0: none).
 */
static struct fabric *fabric_new(size_t n, size_t group_size, size_t ports,
				 size_t limited_every)
{
	struct fabric *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->n = n;
	f->ports_per = ports;
	f->p = calloc(n, sizeof(*f->p));
	f->ports = calloc(n * ports, sizeof(*f->ports));
	f->names = calloc(n, sizeof(*f->names));
	f->groups = calloc(n, sizeof(*f->groups));
	f->pkeys = calloc(n * ports, sizeof(*f->pkeys));
	assert_true(f->p && f->ports && f->names && f->groups && f->pkeys);
	for (size_t i = 0; i < n; i++) {
		snprintf(f->names[i], sizeof(f->names[i]), "node%05zu", i);
		snprintf(f->groups[i], sizeof(f->groups[i]), "leaf%zu",
			 i / group_size);
		f->p[i] = (struct planner_probe){
			.host = f->names[i],
			.address = f->names[i],
			.resp_port = 18515,
			.group = f->groups[i],
			.profiles = profiles,
			.n_profiles = 2,
			.ports = &f->ports[i * ports],
			.n_ports = ports,
		};
		for (size_t j = 0; j < ports; j++) {
			uint16_t *k = &f->pkeys[i * ports + j];

			*k = limited_every && i % limited_every == 0 ? 0x0001
								     : 0x8001;
			f->ports[i * ports + j] = (struct planner_port){
				.device = j < 2 ? "mlx5_0" : "mlx5_1",
				.port = (unsigned)(j % 2 + 1),
				.state = 4,
				.link_layer = "InfiniBand",
				.subnet_prefix = "fe80:0000:0000:0000",
				.pkeys = k,
				.n_pkeys = 1,
			};
		}
	}
	return f;
}

static void fabric_free(struct fabric *f)
{
	free(f->p);
	free(f->ports);
	free(f->names);
	free(f->groups);
	free(f->pkeys);
	free(f);
}

static struct planner_opts opts_default(void)
{
	return (struct planner_opts){
		.period = 3600,
		.full_mesh_below = 16,
		.duty_cycle = 0.1,
		.slot_seconds = 30,
		.host_exclusive = 1,
	};
}

static unsigned round_of(const struct planner_plan *p, double t)
{
	return (unsigned)floor(t / p->round_seconds + 1e-6);
}

struct use {
	unsigned start, end; /* rounds [start, end) */
};

static int use_cmp(const void *a, const void *b)
{
	const struct use *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* No two intervals of one resource overlap; returns the total rounds. */
static unsigned check_no_overlap(struct use *u, size_t n)
{
	unsigned total = 0;

	qsort(u, n, sizeof(*u), use_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i)
			assert_true(u[i].start >= u[i - 1].end);
		total += u[i].end - u[i].start;
	}
	return total;
}

/* Time: per probe and per port, no overlap; per port, within the duty. */
static void check_time(const struct fabric *f, const struct planner_opts *o,
		       const struct planner_plan *p)
{
	size_t np = f->n * f->ports_per;
	struct use *u = calloc(p->n_tests * 2 + 1, sizeof(*u));
	unsigned max = (unsigned)floor(o->duty_cycle * p->rounds + 1e-9);

	assert_non_null(u);
	for (size_t r = 0; r < np + f->n; r++) {
		size_t k = 0;

		for (size_t i = 0; i < p->n_tests; i++) {
			const struct planner_test *t = &p->tests[i];
			size_t ra = r < np ? t->a * f->ports_per + t->a_port
					   : np + t->a;
			size_t rb = r < np ? t->b * f->ports_per + t->b_port
					   : np + t->b;

			assert_true(t->not_before < t->deadline);
			assert_true(t->deadline <= o->period + 1e-6);
			if (ra == r || rb == r)
				u[k++] =
					(struct use){round_of(p, t->not_before),
						     round_of(p, t->deadline)};
		}
		if (r < np)
			assert_true(check_no_overlap(u, k) <= max);
		else if (o->host_exclusive)
			check_no_overlap(u, k);
		if (f->n > 200 && r > 64 && r < np)
			r = np - 1; /* big fabrics: sample the ports */
		if (f->n > 200 && r > np + 64)
			break;
	}
	free(u);
}

/* Rails, P_Keys, other host; returns how many ports are covered. */
static size_t check_pairs(const struct fabric *f, const struct planner_opts *o,
			  const struct planner_plan *p)
{
	size_t np = f->n * f->ports_per, covered = 0;
	char *seen = calloc(np, 1);

	assert_non_null(seen);
	for (size_t i = 0; i < p->n_tests; i++) {
		const struct planner_test *t = &p->tests[i];
		const struct planner_port *a = &f->p[t->a].ports[t->a_port];
		const struct planner_port *b = &f->p[t->b].ports[t->b_port];

		assert_int_not_equal(t->a, t->b);
		if (!o->cross_rail)
			assert_int_equal(t->a_port, t->b_port);
		assert_true(planner_pkeys_ok(a->pkeys, a->n_pkeys, b->pkeys,
					     b->n_pkeys));
		assert_true((a->pkeys[0] | b->pkeys[0]) & 0x8000);
		assert_true(!strcmp(t->profile, "bw") ||
			    !strcmp(t->profile, "lat"));
		seen[t->a * f->ports_per + t->a_port] = 1;
		seen[t->b * f->ports_per + t->b_port] = 1;
	}
	for (size_t i = 0; i < np; i++)
		covered += seen[i];
	free(seen);
	return covered;
}

/* Every pair of groups has a test (groups are contiguous ranges). */
static void check_groups(const struct fabric *f, size_t group_size,
			 const struct planner_plan *p)
{
	size_t g = (f->n + group_size - 1) / group_size, got = 0;
	char *pair = calloc(g * g, 1);

	assert_non_null(pair);
	for (size_t i = 0; i < p->n_tests; i++) {
		size_t a = p->tests[i].a / group_size,
		       b = p->tests[i].b / group_size;

		if (a != b && !pair[a * g + b]) {
			pair[a * g + b] = pair[b * g + a] = 1;
			got++;
		}
	}
	assert_int_equal(got, g * (g - 1) / 2);
	assert_int_equal(p->group_pairs, g * (g - 1) / 2);
	assert_int_equal(p->group_pairs_planned, g * (g - 1) / 2);
	free(pair);
}

static struct planner_plan *run(const struct fabric *f,
				const struct planner_opts *o, uint64_t period)
{
	struct planner_plan *p = NULL;

	assert_int_equal(planner_run(o, f->p, f->n, period, 0, &p), 0);
	assert_non_null(p);
	return p;
}

static void check_all(size_t n, size_t group_size, size_t ports)
{
	struct fabric *f = fabric_new(n, group_size, ports, 0);
	struct planner_opts o = opts_default();
	struct planner_plan *p = run(f, &o, 1000);

	assert_int_equal(p->ports, n * ports);
	assert_int_equal(check_pairs(f, &o, p), n * ports);
	assert_int_equal(p->unplaced, 0);
	check_groups(f, group_size, p);
	check_time(f, &o, p);
	if (n < o.full_mesh_below)
		assert_int_equal(p->n_tests, ports * n * (n - 1) / 2);
	else
		assert_true(p->n_tests < ports * n * (n - 1) / 2);
	planner_plan_free(p);
	fabric_free(f);
}

static void test_two(void **state)
{
	(void)state;
	check_all(2, 1, 1);
	check_all(2, 1, 2);
}

static void test_three(void **state)
{
	(void)state;
	check_all(3, 2, 1);
	check_all(3, 1, 2);
}

static void test_hundred(void **state)
{
	(void)state;
	check_all(100, 10, 1);
	check_all(100, 7, 2);
}

static void test_ten_thousand(void **state)
{
	(void)state;
	check_all(10000, 40, 1);
}

/* Limited members never meet each other; they still get a test. */
static void test_limited_pkeys(void **state)
{
	struct fabric *f = fabric_new(100, 10, 1, 2);
	struct planner_opts o = opts_default();
	struct planner_plan *p;

	(void)state;
	o.full_mesh_below = 1000; /* every pair that can talk */
	p = run(f, &o, 7);
	assert_int_equal(check_pairs(f, &o, p), 100);
	/* 50 full members: C(50,2) among them + 50 x 50 with the limited. */
	assert_int_equal(p->n_tests + p->unplaced, 50 * 49 / 2 + 50 * 50);
	check_time(f, &o, p);
	planner_plan_free(p);
	/* Only limited members: nothing at all can be planned. */
	for (size_t i = 0; i < f->n; i++)
		f->pkeys[i] = 0x0001;
	p = run(f, &o, 7);
	assert_int_equal(p->n_tests, 0);
	planner_plan_free(p);
	fabric_free(f);
}

/* Rails: by port index, or by label; cross_rail lifts it. */
static void test_rails(void **state)
{
	struct fabric *f = fabric_new(40, 5, 2, 0);
	struct planner_opts o = opts_default();
	struct planner_plan *p;
	int cross = 0;

	(void)state;
	p = run(f, &o, 3);
	check_pairs(f, &o, p); /* a_port == b_port throughout */
	planner_plan_free(p);
	o.cross_rail = 1;
	o.full_mesh_below = 100;
	p = run(f, &o, 3);
	for (size_t i = 0; i < p->n_tests; i++)
		cross += p->tests[i].a_port != p->tests[i].b_port;
	assert_true(cross > 0);
	check_time(f, &o, p);
	planner_plan_free(p);
	/* A rail label puts a host's ports in one rail: "0" never meets "1". */
	o.cross_rail = 0;
	for (size_t i = 0; i < f->n; i++)
		f->p[i].rail = i % 2 ? "1" : "0";
	p = run(f, &o, 3);
	for (size_t i = 0; i < p->n_tests; i++)
		assert_int_equal(p->tests[i].a % 2, p->tests[i].b % 2);
	planner_plan_free(p);
	/* Two InfiniBand subnets never meet; RoCE prefixes do not split. */
	for (size_t i = 0; i < f->n; i++) {
		f->p[i].rail = NULL;
		for (size_t j = 0; j < f->ports_per; j++)
			f->ports[i * f->ports_per + j].subnet_prefix =
				i < 20 ? "fe80:0000:0000:0000"
				       : "fe80:0000:0000:0001";
	}
	p = run(f, &o, 3);
	assert_true(p->n_tests > 0);
	for (size_t i = 0; i < p->n_tests; i++)
		assert_int_equal(p->tests[i].a < 20, p->tests[i].b < 20);
	planner_plan_free(p);
	cross = 0;
	for (size_t i = 0; i < f->n * f->ports_per; i++)
		f->ports[i].link_layer = "Ethernet";
	p = run(f, &o, 3);
	for (size_t i = 0; i < p->n_tests; i++)
		cross += (p->tests[i].a < 20) != (p->tests[i].b < 20);
	assert_true(cross > 0);
	planner_plan_free(p);
	fabric_free(f);
}

/* Same input, same plan; other periods, other pairs. */
static void test_deterministic_and_rotating(void **state)
{
	struct fabric *f = fabric_new(100, 10, 1, 0);
	struct planner_opts o = opts_default();
	struct planner_plan *a = run(f, &o, 42), *b = run(f, &o, 42);
	char *pair = calloc(100 * 100, 1);
	size_t distinct = 0, one = a->n_tests;

	(void)state;
	assert_non_null(pair);
	assert_int_equal(a->n_tests, b->n_tests);
	assert_memory_equal(a->tests, b->tests, a->n_tests * sizeof(*a->tests));
	planner_plan_free(a);
	planner_plan_free(b);
	for (uint64_t period = 100; period < 110; period++) {
		struct planner_plan *p = run(f, &o, period);

		for (size_t i = 0; i < p->n_tests; i++) {
			uint32_t x = p->tests[i].a, y = p->tests[i].b;

			if (!pair[x * 100 + y])
				distinct++;
			pair[x * 100 + y] = pair[y * 100 + x] = 1;
		}
		planner_plan_free(p);
	}
	/* Ten periods see several times the pairs of one. */
	assert_true(distinct > 4 * one);
	free(pair);
	fabric_free(f);
}

/* Ports not ACTIVE are left out; a too small duty cycle is reported. */
static void test_inactive_and_budget(void **state)
{
	struct fabric *f = fabric_new(20, 5, 1, 0);
	struct planner_opts o = opts_default();
	struct planner_plan *p;

	(void)state;
	f->ports[3].state = 1;
	o.full_mesh_below = 0;
	p = run(f, &o, 1);
	assert_int_equal(p->ports, 19);
	for (size_t i = 0; i < p->n_tests; i++)
		assert_true(p->tests[i].a != 3 && p->tests[i].b != 3);
	planner_plan_free(p);
	/* One round of 120 per port, and a profile that needs two. */
	{
		struct planner_profile prof[] = {{"bw", 60}};

		o.duty_cycle = 0.01;
		o.profiles = prof;
		o.n_profiles = 1;
		p = run(f, &o, 1);
		assert_int_equal(p->n_tests, 0);
		assert_true(p->unplaced > 0);
		planner_plan_free(p);
		o.duty_cycle = 0.02;
		p = run(f, &o, 1);
		assert_true(p->n_tests > 0);
		check_time(f, &o, p);
		for (size_t i = 0; i < p->n_tests; i++)
			assert_string_equal(p->tests[i].profile, "bw");
		planner_plan_free(p);
	}
	/* A profile no probe has: nothing planned, and it shows. */
	{
		struct planner_profile prof[] = {{"nope", 30}};

		o.profiles = prof;
		p = run(f, &o, 1);
		assert_int_equal(p->n_tests, 0);
		assert_true(p->unplaced >= 10);
		planner_plan_free(p);
		o.profiles = NULL;
		o.n_profiles = 0;
	}
	o.duty_cycle = 0;
	assert_int_equal(planner_run(&o, f->p, f->n, 1, 0, &p), -EINVAL);
	fabric_free(f);
}

/* Every port is tested in each of its profiles every period (one
 * matching per profile), as the budget allows. */
static void test_every_profile(void **state)
{
	struct fabric *f = fabric_new(101, 10, 1, 0);
	struct planner_opts o = opts_default();
	struct planner_plan *p;
	char *bw = calloc(101, 1), *lat = calloc(101, 1);

	(void)state;
	o.full_mesh_below = 0;
	p = run(f, &o, 42);
	for (size_t i = 0; i < p->n_tests; i++) {
		const struct planner_test *t = &p->tests[i];
		char *seen = !strcmp(t->profile, "bw") ? bw : lat;

		seen[t->a] = seen[t->b] = 1;
	}
	for (size_t i = 0; i < 101; i++)
		assert_true(bw[i] && lat[i]);
	planner_plan_free(p);
	/* a budget of one round: one matching, each port in a test */
	o.duty_cycle = 1.0 / 120;
	p = run(f, &o, 42);
	assert_true(p->n_tests >= 50 && p->n_tests <= 101);
	planner_plan_free(p);
	free(bw);
	free(lat);
	fabric_free(f);
}

/*
 * Too many group pairs for one period's budget: the ones left out differ
 * from period to period, so a few periods cover them all.
 */
static void test_group_pairs_rotate(void **state)
{
	struct fabric *f = fabric_new(200, 2, 1, 0); /* 100 groups */
	struct planner_opts o = opts_default();
	size_t ng = 100, covered = 0, first = 0;
	char *seen = calloc(ng * ng, 1);

	(void)state;
	o.full_mesh_below = 0;
	o.period = 300;
	o.slot_seconds = 5;
	/* 3 rounds a port, 2 for the matchings: 100 tests a period for
	 * 4,950 pairs, 50 periods for all (60 with margin) */
	o.duty_cycle = 0.05;
	for (uint64_t period = 1; period <= 60; period++) {
		struct planner_plan *p = run(f, &o, period);

		for (size_t i = 0; i < p->n_tests; i++) {
			size_t g = p->tests[i].a / 2, h = p->tests[i].b / 2;

			if (g != h && !seen[g * ng + h]) {
				seen[g * ng + h] = seen[h * ng + g] = 1;
				covered++;
			}
		}
		if (period == 1)
			first = covered;
		assert_true(p->unplaced > 0);
		planner_plan_free(p);
	}
	assert_true(first < ng * (ng - 1) / 2 / 10);
	assert_true(covered >= ng * (ng - 1) / 2 * 99 / 100);
	free(seen);
	fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two),
		cmocka_unit_test(test_three),
		cmocka_unit_test(test_hundred),
		cmocka_unit_test(test_ten_thousand),
		cmocka_unit_test(test_limited_pkeys),
		cmocka_unit_test(test_rails),
		cmocka_unit_test(test_deterministic_and_rotating),
		cmocka_unit_test(test_inactive_and_budget),
		cmocka_unit_test(test_every_profile),
		cmocka_unit_test(test_group_pairs_rotate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
