// SPDX-License-Identifier: MIT
/*
 * ibpulse-probe: the per-node agent's command line. A {command, handler}
 * table (after iproute2's rdma tool) dispatches the subcommands; each
 * command is a flag table of the shared skeleton (common/cli.h), which
 * parses its flags, answers --help, loads probe.ini and applies the flag
 * overrides through the one option table (probe_settings.h). The verbs
 * tests (`run`, `serve`) are in cmd_verbs.c, the fabric poller in
 * fabric/fcli.c. Exit status: 0 success, 1 failure at run time, 2 a bad
 * command line.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "now.h"
#include "cmd_health.h"
#include "cmd_verbs.h"
#include "config.h"
#include "daemon.h"
#include "enrol.h"
#include "fabric_cli.h"
#include "log.h"
#include "pmetrics.h"
#include "print.h"
#include "probe_settings.h"
#include "push.h"
#include "report.h"
#include "report_build.h"

#define PROG "ibpulse-probe"

/* The command's own flags (cli_flag.id). */
enum { OPT_JSON = 1, OPT_NO_COUNTERS, OPT_PRINT, OPT_OPENMETRICS };

/* What the settings-reading commands share. */
struct pcli {
	const struct cli_cmd *cmd;
	struct cli_args a;
	struct probe_settings s;
	int json, no_counters, print, openmetrics;
};

#define FLAG_CONFIG                                                            \
	{                                                                      \
		"config", 0, "FILE", NULL, CLI_CONFIG,                         \
			"probe.ini (default: the installed one, if present)"   \
	}
#define FLAG_SYSFS                                                             \
	{                                                                      \
		"sysfs-root", 0, "DIR", "sysfs_root", 0,                       \
			"sysfs mount point (a fixture tree for tests)"         \
	}
#define FLAG_LOG                                                               \
	{                                                                      \
		"log-level", 0, "LEVEL", "log_level", 0,                       \
			"error, warn, info or debug"                           \
	}
#define FLAG_HOST                                                              \
	{                                                                      \
		"host", 0, "NAME", "host", 0, "host name sent in reports"      \
	}
#define FLAG_PUSH                                                              \
	{"collector", 0, "URL", "collector_url", 0, "collector report URL"},   \
		{"token-file", 0, "FILE",                                      \
		 "token_file", 0, "file holding this host's bearer token"},    \
	{                                                                      \
		"ca-file", 0, "FILE", "ca_file", 0,                            \
			"CA bundle to verify the collector"                    \
	}

static const struct cli_flag devices_flags[] = {
	{"json", 0, NULL, NULL, OPT_JSON, "print the report as JSON"},
	FLAG_SYSFS,
	FLAG_CONFIG,
	{"no-counters", 0, NULL, NULL, OPT_NO_COUNTERS,
	 "leave the counters out of the listing"},
	FLAG_LOG,
	{0}};

static const struct cli_flag report_flags[] = {
	{"once", 0, NULL, NULL, CLI_IGNORE,
	 "one push (all `report` does; the daemon pushes in a loop)"},
	FLAG_CONFIG,
	FLAG_SYSFS,
	FLAG_PUSH,
	FLAG_HOST,
	{"print", 0, NULL, NULL, OPT_PRINT, "also print the JSON pushed"},
	FLAG_LOG,
	{0}};

static const struct cli_flag metrics_flags[] = {
	{"sysfs", 0, "ROOT", "sysfs_root", 0,
	 "sysfs mount point (a fixture tree for tests)"},
	{"sysfs-root", 0, "DIR", "sysfs_root", 0, NULL},
	FLAG_CONFIG,
	FLAG_HOST,
	{"openmetrics", 0, NULL, NULL, OPT_OPENMETRICS,
	 "OpenMetrics text rather than Prometheus text 0.0.4"},
	FLAG_LOG,
	{0}};

static const struct cli_flag print_config_flags[] = {FLAG_CONFIG, {0}};

static const struct cli_flag daemon_flags[] = {
	FLAG_CONFIG,
	{"print-config", 0, NULL, NULL, CLI_PRINT_CONFIG,
	 "print the effective settings and exit"},
	FLAG_SYSFS,
	FLAG_PUSH,
	FLAG_HOST,
	FLAG_LOG,
	{"set", 0, "KEY=VALUE", NULL, CLI_SET,
	 "any [probe] or [daemon] key (below), over probe.ini"},
	{0}};

static const struct cli_flag ctl_flags[] = {FLAG_CONFIG,
					    {"socket", 0, "PATH",
					     "control_socket", 0,
					     "the daemon's control socket"},
					    {0}};

#define PCMD(n, f, text)                                                       \
	{                                                                      \
		.prog = PROG, .name = n, .flags = f, .about = text             \
	}

static const struct cli_cmd devices_cli =
	PCMD("devices", devices_flags,
	     "List this host's RDMA devices and ports the way ibstat does.");
static const struct cli_cmd report_cli =
	PCMD("report", report_flags,
	     "Read the counters once and push them to the collector.");
static const struct cli_cmd metrics_cli =
	PCMD("metrics", metrics_flags,
	     "Print the daemon's /metrics body once (for a textfile "
	     "collector).");
static const struct cli_cmd print_config_cli =
	PCMD("print-config", print_config_flags,
	     "Print the [probe] settings in effect.");
static const struct cli_cmd daemon_cli = {
	.prog = PROG,
	.name = "daemon",
	.flags = daemon_flags,
	.keys = probe_conf_opts,
	.about = "Read and push counters, run the planned tests, answer "
		 "peers' tests. docs/probe.md \"daemon\".",
};
static const struct cli_cmd pause_cli =
	PCMD("pause", ctl_flags, "Pause the running daemon's tests.");
static const struct cli_cmd resume_cli =
	PCMD("resume", ctl_flags, "Resume the running daemon's tests.");
static const struct cli_cmd status_cli =
	PCMD("status", ctl_flags, "Print the running daemon's state.");

static int pcli_flag(void *arg, int id, const char *value, char *err,
		     size_t errlen)
{
	struct pcli *c = arg;

	(void)value;
	(void)err;
	(void)errlen;
	c->json |= id == OPT_JSON;
	c->no_counters |= id == OPT_NO_COUNTERS;
	c->print |= id == OPT_PRINT;
	c->openmetrics |= id == OPT_OPENMETRICS;
	return 0;
}

/* Flags, then probe.ini and the overrides: 0, CLI_DONE or -EINVAL. */
static int pcli_start(struct pcli *c, int argc, char **argv)
{
	char err[512];
	int ret = cli_parse(c->cmd, argc, argv, &c->a, pcli_flag, c);

	if (ret)
		return ret;
	ret = cli_load(&probe_conf, &c->a, &c->s, err, sizeof(err));
	if (ret) {
		cli_error(c->cmd, "%s", err);
		return -EINVAL;
	}
	return 0;
}

/* The exit status of a pcli_start() that did not return 0. */
static int pcli_exit(struct pcli *c, int ret)
{
	cli_free(&probe_conf, &c->s);
	return ret > 0 ? EXIT_SUCCESS : CLI_EXIT_USAGE;
}

static int cmd_devices(int argc, char **argv)
{
	struct pcli c = {.cmd = &devices_cli};
	struct report *r = NULL;
	char *text;
	int ret = pcli_start(&c, argc, argv);

	if (ret)
		return pcli_exit(&c, ret);
	ret = probe_report_build(&c.s, &r);
	if (ret)
		cli_error(c.cmd, "%s", strerror(-ret));
	else if (c.json && !(ret = report_encode(r, &text))) {
		printf("%s\n", text);
		free(text);
	} else if (!c.json) {
		probe_print_devices(stdout, r, !c.no_counters);
	}
	report_free(r);
	cli_free(&probe_conf, &c.s);
	return ret || fflush(stdout) ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Build one report and POST it; the caller has loaded the settings. */
static int report_once(const struct probe_settings *s, int print)
{
	struct push_opts po = {
		.url = s->collector_url,
		.token_file = s->token_file,
		.ca_file = s->ca_file,
		.connect_timeout = s->connect_timeout,
		.timeout = s->timeout,
	};
	struct push *p = NULL;
	struct report *r = NULL;
	char *text = NULL;
	int ret;

	ret = probe_enrol(s);
	if (!ret)
		ret = probe_report_build(s, &r);
	if (!ret)
		ret = report_encode(r, &text);
	if (!ret && print)
		printf("%s\n", text);
	if (!ret)
		ret = push_new(&po, &p);
	if (!ret)
		ret = push_send(p, text, strlen(text));
	if (!ret)
		log_info("pushed %zu device(s) to %s", r->n_devices, po.url);
	push_free(p);
	free(text);
	report_free(r);
	return ret;
}

static int cmd_report(int argc, char **argv)
{
	struct pcli c = {.cmd = &report_cli};
	int ret = pcli_start(&c, argc, argv);

	if (ret)
		return pcli_exit(&c, ret);
	if (!c.s.collector_url) {
		cli_error(c.cmd, "no collector: set --collector URL or [probe] "
				 "collector_url");
		return pcli_exit(&c, -EINVAL);
	}
	ret = report_once(&c.s, c.print);
	cli_free(&probe_conf, &c.s);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* The daemon's /metrics body, once, to stdout (a textfile collector). */
static int cmd_metrics(int argc, char **argv)
{
	struct pcli c = {.cmd = &metrics_cli};
	struct report *r = NULL;
	struct buf out;
	double t0;
	int ret = pcli_start(&c, argc, argv);

	if (ret)
		return pcli_exit(&c, ret);
	t0 = now_mono();
	ret = probe_report_build(&c.s, &r);
	buf_init(&out, PMETRICS_MAX_BODY);
	if (!ret)
		ret = pmetrics_render(r, NULL, now_mono() - t0,
				      c.openmetrics ? EXPO_OPENMETRICS
						    : EXPO_TEXT,
				      &out, NULL);
	if (!ret && fwrite(out.data, 1, out.len, stdout) != out.len)
		ret = -EIO;
	if (ret)
		cli_error(c.cmd, "%s", strerror(-ret));
	buf_free(&out);
	report_free(r);
	cli_free(&probe_conf, &c.s);
	return ret || fflush(stdout) ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int cmd_print_config(int argc, char **argv)
{
	struct pcli c = {.cmd = &print_config_cli};
	int ret = pcli_start(&c, argc, argv);

	if (ret)
		return pcli_exit(&c, ret);
	cli_print_config(&probe_conf, &c.s, stdout);
	cli_free(&probe_conf, &c.s);
	return fflush(stdout) ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* SIGHUP: the same file and flags as at start, into a fresh struct. */
static int daemon_reload(void *arg, struct probe_settings *out, char *err,
			 size_t errlen)
{
	const struct pcli *c = arg;

	return cli_load(&probe_conf, &c->a, out, err, errlen);
}

static int cmd_daemon(int argc, char **argv)
{
	struct pcli c = {.cmd = &daemon_cli};
	int ret = pcli_start(&c, argc, argv);

	if (ret)
		return pcli_exit(&c, ret);
	if (c.a.print_config) {
		cli_print_config(&probe_conf, &c.s, stdout);
		cli_free(&probe_conf, &c.s);
		return fflush(stdout) ? EXIT_FAILURE : EXIT_SUCCESS;
	}
	ret = probe_enrol(&c.s);
	if (!ret)
		ret = daemon_run(&c.s, daemon_reload, &c);
	cli_free(&probe_conf, &c.s);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* pause, resume, status: one line to the running daemon. */
static int cmd_ctl(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct pcli c = {.cmd = cmd};
	int ret = pcli_start(&c, argc, argv);

	if (ret)
		return pcli_exit(&c, ret);
	ret = daemon_ctl(c.s.control_socket, cmd->name);
	cli_free(&probe_conf, &c.s);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int cmd_pause(int argc, char **argv)
{
	return cmd_ctl(&pause_cli, argc, argv);
}

static int cmd_resume(int argc, char **argv)
{
	return cmd_ctl(&resume_cli, argc, argv);
}

static int cmd_status(int argc, char **argv)
{
	return cmd_ctl(&status_cli, argc, argv);
}

/* The subcommands: a flag table (its --help) and a handler. */
static const struct {
	const struct cli_cmd *cli;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{&devices_cli, cmd_devices},
	{&report_cli, cmd_report},
	{&cmd_health_cli, cmd_health},
	{&print_config_cli, cmd_print_config},
	{&cmd_verbs_run_cli, cmd_verbs_run},
	{&cmd_verbs_serve_cli, cmd_verbs_serve},
	{&daemon_cli, cmd_daemon},
	{&metrics_cli, cmd_metrics},
	{&fabric_cli, fabric_cmd},
	{&pause_cli, cmd_pause},
	{&resume_cli, cmd_resume},
	{&status_cli, cmd_status},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " COMMAND [OPTIONS]\n"
		   "       " PROG " --help | --version\n\ncommands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		cli_synopsis(commands[i].cli, f, "  ");
	fprintf(f, "\n`" PROG " COMMAND --help` for a command's options. See "
		   "docs/probe.md (man page) for details.\n");
}

int main(int argc, char **argv)
{
	int ret;

	log_init(PROG, LOG_LVL_INFO);
	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_SUCCESS;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf(PROG " %s\n", IBPULSE_VERSION);
		return EXIT_SUCCESS;
	}
	for (size_t i = 0; i < N_COMMANDS; i++) {
		if (strcmp(commands[i].cli->name, argv[1]))
			continue;
		if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
			fprintf(stderr, PROG ": curl_global_init failed\n");
			return EXIT_FAILURE;
		}
		ret = commands[i].fn(argc - 1, argv + 1);
		curl_global_cleanup();
		return ret;
	}
	fprintf(stderr, PROG ": unknown command '%s' (try --help)\n", argv[1]);
	return CLI_EXIT_USAGE;
}
