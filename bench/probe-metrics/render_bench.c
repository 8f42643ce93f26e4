// SPDX-License-Identifier: MIT
/*
 * The render half of the probe's /metrics alone: read a sysfs tree once
 * (every counter), then time RUNS calls of pmetrics_render() on that
 * report, OpenMetrics as Prometheus asks, and print "series bytes us",
 * the CPU microseconds per call (CLOCK_PROCESS_CPUTIME_ID). bench.py runs
 * it on each tree: the daemon's CPU per scrape is mostly the sysfs read,
 * which hides what the renderer costs. Not a test.
 *
 * usage: render-bench TREE [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pmetrics.h"
#include "sysfs.h"

static double cpu_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	struct sysfs_opts o = {
		.counters_include = "*",
		.netdev_stats = 1,
		.netdev_stats_include = SYSFS_NETDEV_STATS_DEFAULT,
	};
	struct report *r = calloc(1, sizeof(*r));
	long runs = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
	size_t series = 0, len = 0;
	double start;
	int ret = 0;

	if (argc < 2 || runs < 1 || !r) {
		fprintf(stderr, "usage: render-bench TREE [RUNS >= 1]\n");
		free(r);
		return 2;
	}
	o.root = argv[1];
	r->version = REPORT_VERSION;
	r->host = strdup("node01");
	r->probe_version = strdup("bench");
	if (!r->host || !r->probe_version || sysfs_scan(&o, r)) {
		fprintf(stderr, "render-bench: cannot read %s\n", argv[1]);
		report_free(r);
		return 1;
	}
	start = cpu_us();
	for (long i = 0; !ret && i < runs; i++) {
		struct buf out;

		buf_init(&out, 0);
		ret = pmetrics_render(r, NULL, 0.001, EXPO_OPENMETRICS, &out,
				      &series);
		len = out.len;
		buf_free(&out);
	}
	if (!ret)
		printf("%zu %zu %.1f\n", series, len,
		       (cpu_us() - start) / (double)runs);
	report_free(r);
	return ret ? 1 : 0;
}
