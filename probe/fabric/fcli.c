// SPDX-License-Identifier: MIT
/*
 * `ibpulse-probe fabric` (fabric_cli.h): flags onto the [fabric] settings
 * table (fconf.c), then one discovery, one sweep and one read of the
 * forwarding tables (--once) or the poller's loop: rediscover when due,
 * sweep every interval, read the tables when due, until SIGINT or SIGTERM
 * (or --sweeps N). --json prints the picture (fabric_json_write()) after
 * each sweep, one document per line; otherwise a summary in the manner of
 * ibqueryerrors: what could not be read, degraded links, ports with
 * errors. With --collector each sweep is also pushed (fabric_push.h), with
 * the tables in the cycle that read them; the summary is then left out.
 * --route SRC_LID DST_LID discovers, reads the tables and prints one path
 * as ibtracert does (froute.c). The flags and the loading are
 * common/cli.h's: each shorthand flag is a [fabric] key.
 */
#include "fabric_cli.h"
#include "now.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"

#include "fabric_int.h"
#include "fabric_push.h"
#include "log.h"
#include "route.h"

#define PROG "ibpulse-probe fabric"

static volatile sig_atomic_t fabric_stop;

static void on_stop(int sig)
{
	(void)sig;
	fabric_stop = 1;
}

enum { OPT_ONCE = 1, OPT_JSON, OPT_SWEEPS, OPT_ROUTE };

struct fopts {
	struct fabric_settings s;
	bool once, json;
	long long sweeps;      /* 0: forever */
	const char *route_src; /* --route SRC_LID (DST_LID: a->pos[0]) */
	unsigned src, dst;
	struct cli_args a;
};

static const struct cli_flag fabric_flags[] = {
	{"once", 0, NULL, NULL, OPT_ONCE,
	 "one discovery and one sweep, then exit"},
	{"json", 0, NULL, NULL, OPT_JSON,
	 "print the fabric as JSON (docs/fabric.md)"},
	{"sweeps", 0, "N", NULL, OPT_SWEEPS, "stop after N sweeps (the loop)"},
	{"route", 0, "SRC_LID DST_LID", NULL, OPT_ROUTE,
	 "print the path from SRC_LID to DST_LID as ibtracert does (from "
	 "the switches' forwarding tables, read now; no sweep)"},
	{"print-config", 0, NULL, NULL, CLI_PRINT_CONFIG,
	 "print the [fabric] settings and exit"},
	{"config", 0, "FILE", NULL, CLI_CONFIG,
	 "probe.ini to read [fabric] (and [probe]'s collector, token, CA "
	 "file and host) from; default: the installed one"},
	{"set", 0, "KEY=VALUE", NULL, CLI_SET,
	 "any [fabric] key (below); the flags that follow are shorthands"},
	{"ca", 0, "NAME", "ca", 0, ""},
	{"port", 0, "N", "port", 0, ""},
	{"window", 0, "N", "window", 0, ""},
	{"per-node", 0, "N", "per_node", 0, ""},
	{"timeout", 0, "MS", "timeout", 0, ""},
	{"retries", 0, "N", "retries", 0, ""},
	{"interval", 0, "SEC", "interval", 0, ""},
	{"rediscover", 0, "SEC", "rediscover", 0, ""},
	{"smps", 0, "N", "smps", 0, ""},
	{"route-interval", 0, "SEC", "route_interval", 0, ""},
	{"details", 0, NULL, "details", 0, ""},
	{"reset", 0, NULL, "reset", 0, ""},
	{"collector", 0, "URL", "collector_url", 0, ""},
	{"token-file", 0, "FILE", "token_file", 0, ""},
	{"ca-file", 0, "FILE", "ca_file", 0, ""},
	{"host", 0, "NAME", "host", 0, ""},
	{"log-level", 0, "LEVEL", "log_level", 0, ""},
	{0},
};

const struct cli_cmd fabric_cli = {
	.prog = "ibpulse-probe",
	.name = "fabric",
	.max_args = 1, /* --route's DST_LID */
	.about = "Discover the InfiniBand fabric (libibnetdisc) and read every "
		 "switch and HCA\nport's PerfMgt counters through a window of "
		 "outstanding MADs (libibumad),\nand every switch's linear "
		 "forwarding table (the routes). RoCE ports have no\nsubnet "
		 "manager or PMA path: their counters come from sysfs "
		 "(ibpulse-probe\nreport). A route is the tables' path: with "
		 "adaptive routing, traffic may take\nothers. See "
		 "docs/fabric.md.",
	.flags = fabric_flags,
	.keys = fabric_conf_opts,
};

static int fabric_init(void *obj)
{
	memset(obj, 0, sizeof(struct fabric_settings));
	return conf_defaults(fabric_conf_opts, obj);
}

/* probe.ini's [fabric] (--config, else the installed one), then flags. */
static const struct cli_conf fabric_conf = {
	.opts = fabric_conf_opts,
	.default_path = IBPULSE_SYSCONFDIR "/probe.ini",
	.extra = fabric_conf_extra,
	.init = fabric_init,
};

static int on_flag(void *arg, int id, const char *v, char *err, size_t errlen)
{
	struct fopts *o = arg;
	char *end;
	long long n;

	if (id == OPT_ONCE)
		o->once = true;
	else if (id == OPT_JSON)
		o->json = true;
	else if (id == OPT_ROUTE)
		o->route_src = v;
	if (id != OPT_SWEEPS)
		return 0;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < 1 || n > 1000000000) {
		snprintf(err, errlen, "--sweeps: '%s' is not in 1..1e9", v);
		return -EINVAL;
	}
	o->sweeps = n;
	return 0;
}

/* A port has error counters above zero: the ibqueryerrors view. */
static void print_errors(const struct fabric_node *n,
			 const struct fabric_port *p)
{
	bool first = true;

	for (int k = 0; k < FC_COUNT; k++) {
		uint64_t bit = UINT64_C(1) << k;

		if (k >= FC_XMIT_DATA && k <= FC_MULTICAST_RCV_PACKETS)
			continue; /* traffic, not errors */
		if (!(p->c.have & bit) || !p->c.v[k])
			continue;
		if (first)
			printf("  errors  %-20s port %3u:", n->desc, p->num);
		first = false;
		printf(" %s=%llu%s", pma_counter_name(k),
		       (unsigned long long)p->c.v[k],
		       (p->c.sat & bit) ? "(saturated)" : "");
	}
	if (!first)
		printf("\n");
}

static void print_summary(const struct fabric *f)
{
	const struct fabric_net *net = fabric_net(f);
	const struct fabric_sweep_stats *st = fabric_last_sweep(f);

	printf("fabric via %s port %u: %zu nodes (%zu switches, %zu CAs), "
	       "%zu ports, %zu links; discovered in %.3f s\n",
	       fabric_ca(f), fabric_ca_port(f), net->n_nodes, net->n_switches,
	       net->n_cas, net->n_ports, net->n_links, net->discover_seconds);
	printf("sweep: %zu ports read, %zu unread, %zu not asked in %.3f s "
	       "(%llu MADs, %llu retries, %llu timeouts)\n",
	       st->ports_read, st->ports_failed, st->ports_skipped,
	       st->pass.seconds, (unsigned long long)st->pass.mads,
	       (unsigned long long)st->pass.retries,
	       (unsigned long long)st->pass.timeouts);
	for (size_t i = 0; i < net->n_nodes; i++) {
		const struct fabric_node *n = &net->nodes[i];

		for (size_t j = 0; j < n->n_ports; j++) {
			const struct fabric_port *p = &n->ports[j];
			char why[64];

			if (p->status < 0)
				printf("  unread  %-20s port %3u: %s: %s\n",
				       n->desc, p->num,
				       pma_kind_name(p->failed),
				       strerror(-p->status));
			if (fabric_port_degraded(p, why, sizeof(why)))
				printf("  degraded %-19s port %3u: %s\n",
				       n->desc, p->num, why);
			print_errors(n, p);
		}
	}
}

static int emit(const struct fabric *f, const struct fopts *o, bool tables)
{
	int ret = 0;

	if (o->json)
		ret = fabric_json_write(f, tables, stdout);
	else
		print_summary(f);
	if (!ret && fflush(stdout))
		ret = -EIO;
	return ret;
}

static void sleep_until(double when)
{
	while (!fabric_stop) {
		double left = when - now_mono();
		struct timespec ts;

		if (left <= 0)
			return;
		if (left > 0.2)
			left = 0.2;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
}

/* The tables, when due: whether they were read in this cycle. */
static int routes(struct fabric *f, bool *fresh, bool *unpushed)
{
	int ret = 0;

	*fresh = false;
	if (fabric_routes_due(f, now_mono())) {
		ret = fabric_routes_read(f, &fabric_stop);
		*fresh = !ret;
		*unpushed |= !ret;
	}
	return ret;
}

static int run(struct fabric *f, const struct fopts *o,
	       struct fabric_push *push)
{
	bool fresh, unpushed = false;
	long long done = 0;
	int ret = 0;

	while (!fabric_stop) {
		double t0 = now_mono();

		if (fabric_rediscover_due(f, t0)) {
			ret = fabric_discover(f);
			if (ret && !fabric_net(f)->n_nodes)
				return ret; /* never discovered anything */
		}
		ret = fabric_sweep(f, &fabric_stop);
		if (!ret)
			ret = routes(f, &fresh, &unpushed);
		if (ret == -ECANCELED)
			return 0;
		if (!ret && push) {
			int pr = fabric_push_send(push, f, unpushed);

			if (!pr)
				unpushed = false;
			else if (o->once)
				ret = -EIO; /* the one push failed (logged) */
		}
		if (!ret && (!push || o->json))
			ret = emit(f, o, fresh);
		if (ret || o->once || (o->sweeps && ++done >= o->sweeps))
			return ret;
		sleep_until(t0 + (double)o->s.interval);
	}
	return 0;
}

/* A LID of --route: 1..49151, naming itself otherwise. */
static int parse_lid(const char *what, const char *v, unsigned *out)
{
	if (!route_lid_parse(v, out))
		return 0;
	cli_error(&fabric_cli,
		  "--route: %s '%s' is not a unicast LID in [1, %u] (decimal "
		  "or 0x-hex)",
		  what, v, ROUTE_LID_MAX);
	return -EINVAL;
}

/* --route wants both LIDs; a lone argument is an error otherwise. */
static int route_args(struct fopts *o)
{
	if (!o->route_src && o->a.n_pos) {
		cli_error(&fabric_cli, "unexpected argument '%s'", o->a.pos[0]);
		return -EINVAL;
	}
	if (!o->route_src)
		return 0;
	if (!o->a.n_pos) {
		cli_error(&fabric_cli,
			  "--route wants two LIDs: --route SRC_LID DST_LID");
		return -EINVAL;
	}
	if (parse_lid("SRC_LID", o->route_src, &o->src) ||
	    parse_lid("DST_LID", o->a.pos[0], &o->dst))
		return -EINVAL;
	return 0;
}

/* --route: discover, read the tables, print one path. */
static int route_once(struct fabric *f, const struct fopts *o)
{
	char err[512];
	int ret;

	ret = fabric_discover(f);
	if (!ret)
		ret = fabric_routes_read(f, &fabric_stop);
	if (ret)
		return ret;
	ret = fabric_route_print(f, o->src, o->dst, o->json, stdout, err,
				 sizeof(err));
	fflush(stdout);
	if (ret && ret != -ENOMEM) {
		fprintf(stderr, PROG ": no route from LID %u to LID %u: %s\n",
			o->src, o->dst, err);
		return 1;
	}
	return ret;
}

int fabric_cmd(int argc, char **argv)
{
	struct fopts o = {0};
	struct sigaction sa = {.sa_handler = on_stop};
	struct fabric_push *push = NULL;
	struct fabric *f = NULL;
	char err[512];
	int ret;

	ret = cli_parse(&fabric_cli, argc, argv, &o.a, on_flag, &o);
	if (ret)
		return ret > 0 ? EXIT_SUCCESS : CLI_EXIT_USAGE;
	if (route_args(&o))
		return CLI_EXIT_USAGE;
	if (cli_load(&fabric_conf, &o.a, &o.s, err, sizeof(err))) {
		cli_error(&fabric_cli, "%s", err);
		cli_free(&fabric_conf, &o.s);
		return CLI_EXIT_USAGE;
	}
	if (o.a.print_config) {
		cli_print_config(&fabric_conf, &o.s, stdout);
		cli_free(&fabric_conf, &o.s);
		return EXIT_SUCCESS;
	}
	ret = o.s.collector_url && !o.route_src
		      ? fabric_push_new(&o.s, &push, err, sizeof(err))
		      : 0;
	if (!ret)
		ret = fabric_open(&o.s, &f, err, sizeof(err));
	if (ret) {
		fprintf(stderr, PROG ": %s\n", err);
	} else {
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		ret = o.route_src ? route_once(f, &o) : run(f, &o, push);
		if (ret < 0)
			fprintf(stderr, PROG ": %s\n", strerror(-ret));
	}
	fabric_close(f);
	fabric_push_free(push);
	cli_free(&fabric_conf, &o.s);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}
