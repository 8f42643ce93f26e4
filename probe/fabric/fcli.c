// SPDX-License-Identifier: MIT
/*
 * `ibpulse-probe fabric` (fabric_cli.h): flags onto the [fabric] settings
 * table (fconf.c), then one discovery and one sweep (--once) or the
 * poller's loop: rediscover when due, sweep every interval, until SIGINT
 * or SIGTERM (or --sweeps N). --json prints the picture
 * (fabric_json_write()) after each sweep, one document per line; otherwise
 * a summary in the manner of ibqueryerrors: what could not be read,
 * degraded links, ports with errors. With --collector each sweep is also
 * pushed (fabric_push.h); the summary is then left out.
 */
#include "fabric_cli.h"

#include <errno.h>
#include <getopt.h>
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

#define EXIT_USAGE 2
#define PROG "ibpulse-probe fabric"

static volatile sig_atomic_t fabric_stop;

static void on_stop(int sig)
{
	(void)sig;
	fabric_stop = 1;
}

#define MAX_OVERRIDES 64

struct fopts {
	struct fabric_settings s;
	bool once, json, print;
	long long sweeps; /* 0: forever */
	const char *config;
	struct {
		const char *key, *value;
	} ov[MAX_OVERRIDES]; /* flags, applied over probe.ini */
	int n_ov;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ibpulse-probe " FABRIC_USAGE "\n\n"
		"Discover the InfiniBand fabric (libibnetdisc) and read every "
		"switch and HCA\nport's PerfMgt counters through a window of "
		"outstanding MADs (libibumad).\n\n"
		"  --once            one discovery and one sweep, then exit\n"
		"  --json            print the fabric as JSON "
		"(docs/fabric.md)\n"
		"  --sweeps N        stop after N sweeps (the loop)\n"
		"  --print-config    print the [fabric] settings and exit\n"
		"  --config FILE     probe.ini to read [fabric] (and [probe]'s "
		"collector,\n                    token, CA file and host) "
		"from; default: the installed one\n"
		"  --set KEY=VALUE   any [fabric] key; the flags below are "
		"shorthands:\n");
	for (const struct conf_opt *o = fabric_conf_opts; o->name; o++)
		fprintf(f, "  %-16s  %s (default %s)\n", o->name, o->help,
			o->def ? o->def : "unset");
	fprintf(f, "\nRoCE ports have no subnet manager or PMA path: their "
		   "counters come from\nsysfs (ibpulse-probe report). See "
		   "docs/fabric.md.\n");
}

static int override(struct fopts *o, const char *key, const char *value)
{
	if (o->n_ov == MAX_OVERRIDES) {
		fprintf(stderr,
			PROG ": at most %d settings on the command line\n",
			MAX_OVERRIDES);
		return -E2BIG;
	}
	o->ov[o->n_ov].key = key;
	o->ov[o->n_ov++].value = value;
	return 0;
}

static int set_kv(struct fopts *o, const char *key, const char *value)
{
	char err[256];
	int ret = conf_set(fabric_conf_opts, &o->s, NULL, key, value, err,
			   sizeof(err));

	if (ret == -ENOENT)
		fprintf(stderr, PROG ": unknown key '%s' (try --help)\n", key);
	else if (ret)
		fprintf(stderr, PROG ": %s\n", err);
	return ret;
}

static int parse_sweeps(struct fopts *o, const char *v)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < 1 || n > 1000000000) {
		fprintf(stderr, PROG ": --sweeps: '%s' is not in 1..1e9\n", v);
		return -EINVAL;
	}
	o->sweeps = n;
	return 0;
}

static int parse_args(struct fopts *o, int argc, char **argv)
{
	static const struct option lo[] = {
		{"once", no_argument, NULL, 'o'},
		{"json", no_argument, NULL, 'j'},
		{"sweeps", required_argument, NULL, 'n'},
		{"print-config", no_argument, NULL, 'P'},
		{"set", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{"ca", required_argument, NULL, 1},
		{"port", required_argument, NULL, 2},
		{"window", required_argument, NULL, 3},
		{"per-node", required_argument, NULL, 4},
		{"timeout", required_argument, NULL, 5},
		{"retries", required_argument, NULL, 6},
		{"interval", required_argument, NULL, 7},
		{"rediscover", required_argument, NULL, 8},
		{"smps", required_argument, NULL, 9},
		{"details", no_argument, NULL, 10},
		{"reset", no_argument, NULL, 11},
		{"log-level", required_argument, NULL, 12},
		{"collector", required_argument, NULL, 13},
		{"token-file", required_argument, NULL, 14},
		{"ca-file", required_argument, NULL, 15},
		{"host", required_argument, NULL, 16},
		{"config", required_argument, NULL, 'c'},
		{0},
	};
	static const char *const keys[] = {
		NULL,	      "ca",
		"port",	      "window",
		"per_node",   "timeout",
		"retries",    "interval",
		"rediscover", "smps",
		"details",    "reset",
		"log_level",  "collector_url",
		"token_file", "ca_file",
		"host",
	};
	int opt, ret = 0;

	while (!ret && (opt = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
		char *eq;

		if (opt == 'o')
			o->once = true;
		else if (opt == 'j')
			o->json = true;
		else if (opt == 'P')
			o->print = true;
		else if (opt == 'c')
			o->config = optarg;
		else if (opt == 'n')
			ret = parse_sweeps(o, optarg);
		else if (opt == 'h')
			return 1;
		else if (opt == 's' && (eq = strchr(optarg, '=')) &&
			 eq != optarg) {
			*eq = '\0';
			ret = override(o, optarg, eq + 1);
		} else if (opt >= 1 &&
			   opt < (int)(sizeof(keys) / sizeof(*keys)))
			ret = override(o, keys[opt],
				       opt == 10 || opt == 11 ? "true"
							      : optarg);
		else {
			fprintf(stderr,
				PROG ": unknown or incomplete option '%s'\n"
				     "usage: ibpulse-probe " FABRIC_USAGE "\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (!ret && optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n",
			argv[optind]);
		ret = -EINVAL;
	}
	return ret;
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
	       st->ports_read, st->ports_failed, st->ports_skipped, st->seconds,
	       (unsigned long long)st->mads, (unsigned long long)st->retries,
	       (unsigned long long)st->timeouts);
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

static int emit(const struct fabric *f, const struct fopts *o)
{
	int ret = 0;

	if (o->json)
		ret = fabric_json_write(f, stdout);
	else
		print_summary(f);
	if (!ret && fflush(stdout))
		ret = -EIO;
	return ret;
}

static void sleep_until(double when)
{
	while (!fabric_stop) {
		double left = when - fabric_mono();
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

static int run(struct fabric *f, const struct fopts *o,
	       struct fabric_push *push)
{
	long long done = 0;
	int ret = 0;

	while (!fabric_stop) {
		double t0 = fabric_mono();

		if (fabric_rediscover_due(f, t0)) {
			ret = fabric_discover(f);
			if (ret && !fabric_net(f)->n_nodes)
				return ret; /* never discovered anything */
		}
		ret = fabric_sweep(f, &fabric_stop);
		if (ret == -ECANCELED)
			return 0;
		if (!ret && push && fabric_push_send(push, f) && o->once)
			ret = -EIO; /* --once: the one push failed (logged) */
		if (!ret && (!push || o->json))
			ret = emit(f, o);
		if (ret || o->once || (o->sweeps && ++done >= o->sweeps))
			return ret;
		sleep_until(t0 + (double)o->s.interval);
	}
	return 0;
}

/* probe.ini's [fabric] (--config, else the installed one), then flags. */
static int load_settings(struct fopts *o)
{
	const char *path = o->config;
	char err[512];
	int ret = 0;

	if (!path && access(IBPULSE_SYSCONFDIR "/probe.ini", R_OK) == 0)
		path = IBPULSE_SYSCONFDIR "/probe.ini";
	if (path)
		ret = conf_load(fabric_conf_opts, &o->s, path,
				fabric_conf_extra, err, sizeof(err));
	if (ret) {
		fprintf(stderr, PROG ": %s\n", err);
		return ret;
	}
	for (int i = 0; !ret && i < o->n_ov; i++)
		ret = set_kv(o, o->ov[i].key, o->ov[i].value);
	return ret;
}

int fabric_cmd(int argc, char **argv)
{
	struct fopts o = {0};
	struct sigaction sa = {.sa_handler = on_stop};
	struct fabric_push *push = NULL;
	struct fabric *f = NULL;
	enum log_level lvl;
	char err[512];
	int ret;

	if (conf_defaults(fabric_conf_opts, &o.s))
		return EXIT_FAILURE;
	ret = parse_args(&o, argc, argv);
	if (!ret)
		ret = load_settings(&o);
	if (ret) {
		if (ret > 0)
			usage(stdout);
		conf_free(fabric_conf_opts, &o.s);
		return ret > 0 ? EXIT_SUCCESS : EXIT_USAGE;
	}
	if (log_level_parse(o.s.log_level, &lvl)) {
		fprintf(stderr,
			PROG ": --log-level: '%s' is not one of error, warn, "
			     "info, debug\n",
			o.s.log_level);
		conf_free(fabric_conf_opts, &o.s);
		return EXIT_USAGE;
	}
	log_set_level(lvl);
	if (o.print) {
		conf_print(fabric_conf_opts, &o.s, stdout);
		conf_free(fabric_conf_opts, &o.s);
		return EXIT_SUCCESS;
	}
	ret = o.s.collector_url ? fabric_push_new(&o.s, &push, err, sizeof(err))
				: 0;
	if (!ret)
		ret = fabric_open(&o.s, &f, err, sizeof(err));
	if (ret) {
		fprintf(stderr, PROG ": %s\n", err);
	} else {
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		ret = run(f, &o, push);
		if (ret)
			fprintf(stderr, PROG ": %s\n", strerror(-ret));
	}
	fabric_close(f);
	fabric_push_free(push);
	conf_free(fabric_conf_opts, &o.s);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}
