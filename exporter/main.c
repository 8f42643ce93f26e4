// SPDX-License-Identifier: MIT
/*
 * ibpulse-exporter: serves the collector's SQLite database to Prometheus.
 * Parses the command line and the configuration, starts the HTTP server
 * and waits for SIGINT or SIGTERM. Everything else is in libexporter.
 */
#include "cli.h"
#include "log.h"
#include "server.h"
#include "exporter_settings.h"

#include <errno.h>
#include <malloc.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static const struct cli_flag exporter_flags[] = {
	{"config", 'c', "FILE", NULL, CLI_CONFIG,
	 "configuration file (INI, section [exporter])"},
	{"db", 0, "PATH", "db", 0, "the collector's SQLite database"},
	{"listen", 0, "ADDR", "listen", 0, "numeric address to listen on"},
	{"port", 'p', "N", "port", 0, "TCP port (0: a free one)"},
	{"port-file", 0, "FILE", "port_file", 0,
	 "write the bound port to FILE"},
	{"log-level", 0, "L", "log_level", 0, "error, warn, info or debug"},
	{"print-config", 0, NULL, NULL, CLI_PRINT_CONFIG,
	 "print the effective configuration and exit"},
	{"version", 'V', NULL, NULL, CLI_VERSION, "the version"},
	{0}};

static const struct cli_cmd exporter_cmd = {
	.prog = "ibpulse-exporter",
	.about = "Serve the ibpulse database to Prometheus: GET /metrics, "
		 "GET /healthz.",
	.flags = exporter_flags,
};

/*
 * The database may appear after the exporter starts (the collector makes
 * it), but not in a folder that does not exist: that is a typo in db.
 */
static int db_folder_check(const char *db)
{
	char *copy = strdup(db);
	struct stat st;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	if (stat(dirname(copy), &st))
		ret = -errno;
	else if (!S_ISDIR(st.st_mode))
		ret = -ENOTDIR;
	if (ret)
		log_err("db %s: its folder %s: %s", db, copy, strerror(-ret));
	free(copy);
	return ret;
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
	ret = db_folder_check(s->db);
	if (!ret)
		ret = server_new(s, &srv);
	if (ret)
		return ret;
	log_info("serving %s on http://%s:%u/metrics", s->db, s->http.listen,
		 server_port(srv));
	if (s->port_file &&
	    (ret = cli_write_port_file(s->port_file, server_port(srv)))) {
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
	struct cli_args a = {0};
	char err[512];
	int ret;

	log_init("ibpulse-exporter", LOG_LVL_INFO);
	ret = cli_parse(&exporter_cmd, argc, argv, &a, NULL, NULL);
	if (ret)
		return ret > 0 ? 0 : CLI_EXIT_USAGE;
	if (cli_load(&exporter_conf, &a, &s, err, sizeof(err))) {
		cli_error(&exporter_cmd, "%s", err);
		cli_free(&exporter_conf, &s);
		return CLI_EXIT_USAGE;
	}
	if (a.print_config) {
		cli_print_config(&exporter_conf, &s, stdout);
		cli_free(&exporter_conf, &s);
		return 0;
	}
	/*
	 * Keep freed memory rather than give it back to the kernel at once:
	 * each scrape frees and allocates megabytes (pieces, segments), and
	 * memory given back is faulted in again page by page, which cost
	 * more than rendering on a virtual machine (bench/README.md).
	 */
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	/* one heap for every thread: memory one worker frees serves the next
	 * scrape, whichever worker runs it */
	mallopt(M_ARENA_MAX, 1);
	ret = run(&s);
	cli_free(&exporter_conf, &s);
	return ret ? 1 : 0;
}
