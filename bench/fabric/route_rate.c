// SPDX-License-Identifier: MIT
/*
 * route_rate: how fast the path function (common/route.h) walks a real
 * subnet's forwarding tables, for the fabric benchmark. Run under the
 * simulator (LD_PRELOAD=libumad2sim.so, SIM_HOST=...), it discovers the
 * subnet and reads every switch's table through the fabric role's own
 * code (fabric.h), builds the route net once, then times route_path()
 * for PAIRS (source LID, destination LID) pairs: every CA port's base LID
 * as a source, destinations spread over every LID a port owns. Prints one
 * line of JSON. Bench tooling only: never installed.
 *
 *   route_rate [PAIRS]    (default 200000)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "fabric.h"
#include "route.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sources: CA ports' base LIDs; destinations: every LID a port owns. */
static int endpoints(const struct route_net *n, unsigned **src, size_t *ns,
		     unsigned **dst, size_t *nd)
{
	struct route_net_stats st;

	route_net_stats(n, &st);
	*src = calloc((size_t)st.top_lid + 1, sizeof(**src));
	*dst = calloc((size_t)st.top_lid + 1, sizeof(**dst));
	*ns = *nd = 0;
	if (!*src || !*dst)
		return -ENOMEM;
	for (unsigned lid = 1; lid <= st.top_lid; lid++) {
		struct route_end e;
		struct route_port_info pi;
		struct route_node_info ni;

		if (route_lid_owner(n, lid, &e))
			continue;
		(*dst)[(*nd)++] = lid;
		route_node_get(n, e.node, &ni);
		route_port_get(n, e.node, e.port, &pi);
		if (ni.type == ROUTE_CA && pi.lid == lid)
			(*src)[(*ns)++] = lid;
	}
	return *ns && *nd ? 0 : -ENOENT;
}

static int run(const struct fabric *f, long pairs)
{
	struct route_net *n = NULL;
	struct route_path *p = malloc(sizeof(*p));
	unsigned *src = NULL, *dst = NULL;
	size_t ns = 0, nd = 0, hops = 0, failed = 0;
	double t0, t1, t2;
	char err[256];
	int ret;

	if (!p)
		return -ENOMEM;
	t0 = now_s();
	ret = fabric_route_net(f, &n, err, sizeof(err));
	t1 = now_s();
	if (!ret)
		ret = endpoints(n, &src, &ns, &dst, &nd);
	for (long i = 0; !ret && i < pairs; i++) {
		size_t k = (size_t)i;

		/* a stride prime to any fabric here spreads the pairs */
		if (route_path(n, src[k % ns], dst[(k * 7919) % nd], p, NULL,
			       0))
			failed++;
		hops += p->n_hops;
	}
	t2 = now_s();
	if (!ret)
		printf("{\"nodes\":%zu,\"sources\":%zu,\"destinations\":%zu,"
		       "\"build_seconds\":%.6f,\"paths\":%ld,\"failed\":%zu,"
		       "\"seconds\":%.6f,\"per_second\":%.0f,"
		       "\"hops_mean\":%.3f}\n",
		       route_net_nodes(n), ns, nd, t1 - t0, pairs, failed,
		       t2 - t1, (double)pairs / (t2 - t1),
		       (double)hops / (double)pairs);
	else
		fprintf(stderr, "route_rate: %s\n",
			ret == -EINVAL ? err : strerror(-ret));
	route_net_free(n);
	free(src);
	free(dst);
	free(p);
	return ret;
}

int main(int argc, char **argv)
{
	struct fabric_settings s;
	struct fabric *f = NULL;
	long pairs = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
	char err[512] = "out of memory";
	int ret;

	if (pairs < 1) {
		fprintf(stderr, "usage: route_rate [PAIRS]\n");
		return 2;
	}
	memset(&s, 0, sizeof(s));
	ret = conf_defaults(fabric_conf_opts, &s);
	if (!ret)
		ret = fabric_open(&s, &f, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "route_rate: %s\n", err);
		conf_free(fabric_conf_opts, &s);
		return 1;
	}
	ret = fabric_discover(f);
	if (!ret)
		ret = fabric_routes_read(f, NULL);
	if (!ret)
		ret = run(f, pairs);
	fabric_close(f);
	conf_free(fabric_conf_opts, &s);
	return ret ? 1 : 0;
}
