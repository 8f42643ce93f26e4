// SPDX-License-Identifier: MIT
/*
 * ibpulse-exporter: serves the collector's SQLite database to Prometheus.
 * Parses the command line and the configuration, starts the HTTP server
 * and waits for SIGINT or SIGTERM. Everything else is in libexporter.
 */
#include "config.h"
#include "log.h"
#include "server.h"
#include "settings.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ibpulse-exporter [options]\n"
		   "Serve the ibpulse database to Prometheus: GET /metrics, "
		   "GET /healthz.\n\n"
		   "  -c, --config FILE    configuration file (INI, section "
		   "[exporter])\n"
		   "      --db PATH        the collector's SQLite database\n"
		   "      --listen ADDR    numeric address to listen on\n"
		   "  -p, --port N         TCP port (0: a free one)\n"
		   "      --port-file FILE write the bound port to FILE\n"
		   "      --log-level L    error, warn, info or debug\n"
		   "      --print-config   print the effective configuration "
		   "and exit\n"
		   "  -h, --help           this help\n"
		   "  -V, --version        the version\n");
}

/* Write the port to @path via a temporary file, so readers see it whole. */
static int write_port_file(const char *path, unsigned port)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "%u\n", port);
	if (fclose(f) || rename(tmp, path))
		return -errno;
	return 0;
}

/* The file, then the command-line overrides, then the cross checks. */
static int load_settings(struct exporter_settings *s, const char *config,
			 const char *const *keys, const char *const *vals,
			 int n)
{
	char err[256];

	if (settings_load(s, config, err, sizeof(err))) {
		fprintf(stderr, "ibpulse-exporter: %s\n", err);
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		if (settings_set(s, keys[i], vals[i], err, sizeof(err))) {
			char flag[32];

			/* the flag's name: the key with dashes */
			snprintf(flag, sizeof(flag), "%s", keys[i]);
			for (char *p = flag; *p; p++)
				*p = *p == '_' ? '-' : *p;
			fprintf(stderr, "ibpulse-exporter: --%s: %s\n", flag,
				err);
			return -EINVAL;
		}
	}
	if (settings_check(s, err, sizeof(err))) {
		fprintf(stderr, "ibpulse-exporter: %s\n", err);
		return -EINVAL;
	}
	return 0;
}

enum { OPT_DB = 256, OPT_LISTEN, OPT_PORT_FILE, OPT_PRINT, OPT_LOG_LEVEL };

/* The command line into @s; returns 0, 1 (done: exit 0) or -EINVAL. */
static int parse_args(int argc, char **argv, struct exporter_settings *s,
		      int *print)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"db", required_argument, NULL, OPT_DB},
		{"listen", required_argument, NULL, OPT_LISTEN},
		{"port", required_argument, NULL, 'p'},
		{"port-file", required_argument, NULL, OPT_PORT_FILE},
		{"log-level", required_argument, NULL, OPT_LOG_LEVEL},
		{"print-config", no_argument, NULL, OPT_PRINT},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0}};
	/* Overrides apply after the file, whatever their order. */
	const char *keys[8], *vals[8], *config = NULL;
	int n = 0, c;

	while ((c = getopt_long(argc, argv, "c:p:hV", longopts, NULL)) != -1) {
		const char *key = NULL;

		switch (c) {
		case 'c':
			config = optarg;
			break;
		case OPT_DB:
			key = "db";
			break;
		case OPT_LISTEN:
			key = "listen";
			break;
		case 'p':
			key = "port";
			break;
		case OPT_PORT_FILE:
			key = "port_file";
			break;
		case OPT_LOG_LEVEL:
			key = "log_level";
			break;
		case OPT_PRINT:
			*print = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("ibpulse-exporter %s\n", IBPULSE_VERSION);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
		if (key && n < 8) {
			keys[n] = key;
			vals[n++] = optarg;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ibpulse-exporter: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	return load_settings(s, config, keys, vals, n);
}

static int run(const struct exporter_settings *s)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigset_t block, old;
	struct server *srv;
	int ret;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	ret = server_new(s, &srv);
	if (ret)
		return ret;
	log_info("serving %s on http://%s:%u/metrics", s->db, s->listen,
		 server_port(srv));
	if (s->port_file &&
	    (ret = write_port_file(s->port_file, server_port(srv)))) {
		log_err("port_file %s: %s", s->port_file, strerror(-ret));
		server_free(srv);
		return ret;
	}
	/* Signals are delivered only inside sigsuspend: no lost wake-up. */
	while (!stop_requested)
		sigsuspend(&old);
	log_info("stopping");
	server_free(srv);
	return 0;
}

int main(int argc, char **argv)
{
	struct exporter_settings s;
	enum log_level level;
	int print = 0, ret;

	log_init("ibpulse-exporter", LOG_LVL_INFO);
	if (settings_init(&s)) {
		fprintf(stderr, "ibpulse-exporter: out of memory\n");
		return 1;
	}
	ret = parse_args(argc, argv, &s, &print);
	if (ret) {
		settings_free(&s);
		return ret > 0 ? 0 : 2;
	}
	if (log_level_parse(s.log_level, &level)) {
		fprintf(stderr,
			"ibpulse-exporter: log_level: '%s' is not one of "
			"error, warn, info, debug\n",
			s.log_level);
		settings_free(&s);
		return 2;
	}
	log_set_level(level);
	if (print) {
		settings_print(&s, stdout);
		settings_free(&s);
		return 0;
	}
	ret = run(&s);
	settings_free(&s);
	return ret ? 1 : 0;
}
