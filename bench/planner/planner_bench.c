// SPDX-License-Identifier: MIT
/*
 * planner-bench: times planner_run() on simulated fabrics (N probes in
 * groups of G by leaf label, P ports each, one rail per port index) and
 * prints one table row per fabric: tests planned, tests that found no
 * room, group pairs planned out of those possible, ports covered, the
 * median plan time over R runs, and the median time planner_confirm()
 * takes to add confirmation tests for 1% of the ports to that plan in
 * the middle of the period (every other port a good peer), with how many
 * it placed. Options: planner-bench [RUNS].
 */
#include "planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct fab {
	size_t probes, group, ports;
};

static const char *const profiles[] = {"bw", "lat"};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static size_t covered(const struct planner_plan *p, size_t probes, size_t ports)
{
	char *seen = calloc(probes * ports, 1);
	size_t n = 0;

	if (!seen)
		return 0;
	for (size_t i = 0; i < p->n_tests; i++) {
		seen[p->tests[i].a * ports + p->tests[i].a_port] = 1;
		seen[p->tests[i].b * ports + p->tests[i].b_port] = 1;
	}
	for (size_t i = 0; i < probes * ports; i++)
		n += seen[i];
	free(seen);
	return n;
}

/* Confirmation tests for every 100th port, added to a copy of @plan
 * from round @first: the median time in *@ms, the tests placed. */
static size_t bench_confirm(const struct fab *fb, const struct planner_opts *o,
			    struct planner_probe *p,
			    const struct planner_plan *plan, int runs,
			    double *ms)
{
	size_t n = fb->probes * fb->ports, nc = 0, placed = 0;
	struct planner_confirm *cf = calloc(n / 100 + 1, sizeof(*cf));
	double t[16] = {0};
	int done = 0;

	for (size_t i = 0; cf && i < n; i += 100)
		cf[nc++] = (struct planner_confirm){
			.probe = (uint32_t)(i / fb->ports),
			.port = (uint32_t)(i % fb->ports),
			.profile = "bw"};
	for (int r = 0; cf && r < runs; r++) {
		struct planner_plan cp = *plan;
		double t0;

		cp.tests = malloc((plan->n_tests + 1) * sizeof(*cp.tests));
		if (!cp.tests)
			break;
		memcpy(cp.tests, plan->tests,
		       plan->n_tests * sizeof(*cp.tests));
		t0 = now_ms();
		if (planner_confirm(o, p, fb->probes, &cp, plan->rounds / 2, cf,
				    nc))
			placed = 0;
		t[done++] = now_ms() - t0;
		placed = cp.n_confirm;
		free(cp.tests);
	}
	qsort(t, (size_t)done, sizeof(*t), cmp_dbl);
	*ms = done ? t[done / 2] : 0;
	free(cf);
	return placed;
}

static int bench(const struct fab *fb, const struct planner_opts *o, int runs)
{
	static const char *const good[] = {"bw"};
	struct planner_probe *p = calloc(fb->probes, sizeof(*p));
	struct planner_port *pt = calloc(fb->probes * fb->ports, sizeof(*pt));
	char(*names)[32] = calloc(fb->probes, sizeof(*names));
	char(*groups)[32] = calloc(fb->probes, sizeof(*groups));
	static const uint16_t pkey = 0xffff;
	struct planner_plan *plan = NULL;
	double ms[16];
	int ret = 0;

	if (!p || !pt || !names || !groups)
		return 1;
	for (size_t i = 0; i < fb->probes; i++) {
		snprintf(names[i], sizeof(names[i]), "node%05zu", i);
		snprintf(groups[i], sizeof(groups[i]), "leaf%zu",
			 i / fb->group);
		p[i] = (struct planner_probe){.host = names[i],
					      .address = names[i],
					      .resp_port = 18515,
					      .group = groups[i],
					      .profiles = profiles,
					      .n_profiles = 2,
					      .ports = &pt[i * fb->ports],
					      .n_ports = fb->ports};
		for (size_t j = 0; j < fb->ports; j++)
			pt[i * fb->ports + j] = (struct planner_port){
				.device = "mlx5_0",
				.port = (unsigned)j + 1,
				.state = 4,
				.link_layer = "InfiniBand",
				.subnet_prefix = "fe80:0000:0000:0000",
				.pkeys = &pkey,
				.n_pkeys = 1,
				.good = good,
				.n_good = 1};
	}
	for (int r = 0; r < runs && !ret; r++) {
		double t0 = now_ms();

		planner_plan_free(plan);
		ret = planner_run(o, p, fb->probes, 1000 + (unsigned)r, 0,
				  &plan);
		ms[r] = now_ms() - t0;
	}
	if (!ret) {
		double cms = 0;
		size_t placed = bench_confirm(fb, o, p, plan, runs, &cms);

		qsort(ms, (size_t)runs, sizeof(*ms), cmp_dbl);
		printf("| %zu | %zu | %zu | %u | %zu | %zu | %zu / %zu | %zu / "
		       "%zu | %.1f | %zu / %zu | %.1f |\n",
		       fb->probes, fb->probes * fb->ports,
		       (fb->probes + fb->group - 1) / fb->group, plan->rounds,
		       plan->n_tests, plan->unplaced, plan->group_pairs_planned,
		       plan->group_pairs, covered(plan, fb->probes, fb->ports),
		       fb->probes * fb->ports, ms[runs / 2], placed,
		       (fb->probes * fb->ports + 99) / 100 * o->confirm_tests,
		       cms);
	}
	planner_plan_free(plan);
	free(p);
	free(pt);
	free(names);
	free(groups);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct fab fabs[] = {
		{100, 10, 1},	{1000, 40, 1},	{10000, 40, 1},
		{10000, 40, 8}, {10000, 20, 1},
	};
	/* the collector's defaults (etc/collector.ini) */
	struct planner_opts o = {.period = 300,
				 .full_mesh_below = 16,
				 .duty_cycle = 0.05,
				 .slot_seconds = 5,
				 .host_exclusive = 1,
				 .confirm_tests = 2,
				 .confirm_share = 0.1};
	int runs = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 5;

	if (runs < 1 || runs > 16) {
		fprintf(stderr, "planner-bench: RUNS must be in [1, 16]\n");
		return 2;
	}
	printf("period %.0f s, slot %.0f s, duty cycle %.2f, host-exclusive, "
	       "median of %d runs\n\n",
	       o.period, o.slot_seconds, o.duty_cycle, runs);
	printf("| probes | ports | groups | rounds | tests | unplaced | group "
	       "pairs planned | ports covered | plan ms | confirmations placed "
	       "| confirm ms |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof(fabs) / sizeof(*fabs); i++)
		if (bench(&fabs[i], &o, runs))
			return 1;
	return 0;
}
