// SPDX-License-Identifier: MIT
/*
 * ibpulse-probe: the per-node agent's command line. A {name, handler}
 * table (after iproute2's rdma tool) dispatches the subcommands; each
 * parses its own flags, loads probe.ini and applies flag overrides through
 * the same option table, then calls into libprobe. Exit status: 0 success,
 * 1 failure at run time, 2 a bad command line.
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "fabric_cli.h"
#include "log.h"
#include "pmetrics.h"
#include "probe.h"
#include "push.h"
#include "report.h"
#include "verbs_cli.h"

#define EXIT_USAGE 2
#define MAX_OVERRIDES 64

/* What every subcommand shares: settings and flag overrides. */
struct cli {
	const char *prog;
	const char *cmd;
	const char *config;
	struct {
		const char *key, *value;
	} overrides[MAX_OVERRIDES];
	int n_overrides;
	struct probe_settings s;
};

struct cmd {
	const char *name;
	int (*fn)(struct cli *c, int argc, char **argv);
	const char *usage;
};

static int cli_override(struct cli *c, const char *key, const char *value)
{
	if (c->n_overrides == MAX_OVERRIDES)
		return -E2BIG;
	c->overrides[c->n_overrides].key = key;
	c->overrides[c->n_overrides].value = value;
	c->n_overrides++;
	return 0;
}

/* The config file: --config, else the installed one if present. */
static const char *cli_config_path(const struct cli *c)
{
	const char *def = IBPULSE_SYSCONFDIR "/probe.ini";

	if (!c->config && access(def, R_OK) == 0)
		return def;
	return c->config;
}

/* probe.ini, then the flag overrides, into @s; the reason in @err. */
static int cli_load(const struct cli *c, struct probe_settings *s, char *err,
		    size_t errlen)
{
	enum log_level lvl;
	int ret;

	ret = probe_settings_load(s, cli_config_path(c), err, errlen);
	for (int i = 0; !ret && i < c->n_overrides; i++)
		ret = conf_set(probe_conf_opts, s, NULL, c->overrides[i].key,
			       c->overrides[i].value, err, errlen);
	if (!ret)
		ret = probe_settings_finish(s, err, errlen);
	if (!ret && log_level_parse(s->log_level, &lvl)) {
		snprintf(err, errlen,
			 "--log-level: '%s' is not one of error, warn, info, "
			 "debug",
			 s->log_level);
		ret = -EINVAL;
	}
	if (!ret)
		log_set_level(lvl);
	return ret;
}

/* Load probe.ini (--config, else the installed one if present), then flags. */
static int cli_settings(struct cli *c)
{
	char err[512];
	int ret = cli_load(c, &c->s, err, sizeof(err));

	if (ret)
		fprintf(stderr, "%s %s: %s\n", c->prog, c->cmd, err);
	return ret;
}

static int cli_bad_flag(struct cli *c, char **argv, const char *usage)
{
	fprintf(stderr,
		"%s %s: unknown or incomplete option '%s'\nusage: %s %s\n",
		c->prog, c->cmd, argv[optind - 1], c->prog, usage);
	return EXIT_USAGE;
}

static int cmd_devices(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"sysfs-root", required_argument, NULL, 'r'},
		{"config", required_argument, NULL, 'c'},
		{"no-counters", no_argument, NULL, 'n'},
		{"log-level", required_argument, NULL, 'l'},
		{0},
	};
	int json = 0, counters = 1, opt, ret;
	struct report *r;

	while ((opt = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = 1;
			break;
		case 'n':
			counters = 0;
			break;
		case 'c':
			c->config = optarg;
			break;
		case 'r':
			cli_override(c, "sysfs_root", optarg);
			break;
		case 'l':
			cli_override(c, "log_level", optarg);
			break;
		default:
			return cli_bad_flag(
				c, argv,
				"devices [--json] [--sysfs-root DIR] [--config "
				"FILE] [--no-counters]");
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s devices: unexpected argument '%s'\n",
			c->prog, argv[optind]);
		return EXIT_USAGE;
	}
	if (cli_settings(c))
		return EXIT_USAGE;
	ret = probe_report_build(&c->s, &r);
	if (ret) {
		fprintf(stderr, "%s devices: %s\n", c->prog, strerror(-ret));
		return EXIT_FAILURE;
	}
	if (json) {
		char *text;

		ret = report_encode(r, &text);
		if (!ret) {
			printf("%s\n", text);
			free(text);
		}
	} else {
		probe_print_devices(stdout, r, counters);
	}
	report_free(r);
	return ret || fflush(stdout) ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Build one report and POST it; the caller has loaded the settings. */
static int report_once(struct cli *c, int print)
{
	struct push_opts po = {
		.url = c->s.collector_url,
		.token_file = c->s.token_file,
		.ca_file = c->s.ca_file,
		.connect_timeout = c->s.connect_timeout,
		.timeout = c->s.timeout,
	};
	struct push *p = NULL;
	struct report *r = NULL;
	char *text = NULL;
	int ret;

	ret = probe_enrol(&c->s);
	if (!ret)
		ret = probe_report_build(&c->s, &r);
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

static int cmd_report(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"sysfs-root", required_argument, NULL, 'r'},
		{"collector", required_argument, NULL, 'u'},
		{"token-file", required_argument, NULL, 't'},
		{"ca-file", required_argument, NULL, 'a'},
		{"host", required_argument, NULL, 'H'},
		{"log-level", required_argument, NULL, 'l'},
		{"once", no_argument, NULL, 'o'},
		{"print", no_argument, NULL, 'p'},
		{0},
	};
	int opt, print = 0, ret;

	while ((opt = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			c->config = optarg;
			break;
		case 'r':
			cli_override(c, "sysfs_root", optarg);
			break;
		case 'u':
			cli_override(c, "collector_url", optarg);
			break;
		case 't':
			cli_override(c, "token_file", optarg);
			break;
		case 'a':
			cli_override(c, "ca_file", optarg);
			break;
		case 'H':
			cli_override(c, "host", optarg);
			break;
		case 'l':
			cli_override(c, "log_level", optarg);
			break;
		case 'o':
			break; /* one push is all `report` does; see `run` */
		case 'p':
			print = 1;
			break;
		default:
			return cli_bad_flag(
				c, argv,
				"report [--once] [--config FILE] [--sysfs-root "
				"DIR] [--collector URL] [--token-file FILE] "
				"[--ca-file FILE] [--host NAME] [--print]");
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s report: unexpected argument '%s'\n",
			c->prog, argv[optind]);
		return EXIT_USAGE;
	}
	if (cli_settings(c))
		return EXIT_USAGE;
	if (!c->s.collector_url) {
		fprintf(stderr,
			"%s report: no collector: set --collector URL or "
			"[probe] collector_url\n",
			c->prog);
		return EXIT_USAGE;
	}
	ret = report_once(c, print);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

#define METRICS_USAGE                                                          \
	"metrics [--sysfs ROOT] [--config FILE] [--host NAME] "                \
	"[--openmetrics]"

static double cli_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The daemon's /metrics body, once, to stdout (a textfile collector). */
static int cmd_metrics(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"sysfs", required_argument, NULL, 'r'},
		{"sysfs-root", required_argument, NULL, 'r'},
		{"config", required_argument, NULL, 'c'},
		{"host", required_argument, NULL, 'H'},
		{"log-level", required_argument, NULL, 'l'},
		{"openmetrics", no_argument, NULL, 'o'},
		{0},
	};
	enum expo_format format = EXPO_TEXT;
	struct report *r = NULL;
	struct buf out;
	double t0;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		if (opt == 'c')
			c->config = optarg;
		else if (opt == 'r')
			cli_override(c, "sysfs_root", optarg);
		else if (opt == 'H')
			cli_override(c, "host", optarg);
		else if (opt == 'l')
			cli_override(c, "log_level", optarg);
		else if (opt == 'o')
			format = EXPO_OPENMETRICS;
		else
			return cli_bad_flag(c, argv, METRICS_USAGE);
	}
	if (optind < argc) {
		fprintf(stderr, "%s metrics: unexpected argument '%s'\n",
			c->prog, argv[optind]);
		return EXIT_USAGE;
	}
	if (cli_settings(c))
		return EXIT_USAGE;
	t0 = cli_mono();
	ret = probe_report_build(&c->s, &r);
	buf_init(&out, PMETRICS_MAX_BODY);
	if (!ret)
		ret = pmetrics_render(r, NULL, cli_mono() - t0, format, &out,
				      NULL);
	if (!ret && fwrite(out.data, 1, out.len, stdout) != out.len)
		ret = -EIO;
	if (ret)
		fprintf(stderr, "%s metrics: %s\n", c->prog, strerror(-ret));
	buf_free(&out);
	report_free(r);
	return ret || fflush(stdout) ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int cmd_print_config(struct cli *c, int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--config"))
		c->config = argv[2];
	else if (argc > 1) {
		fprintf(stderr, "%s print-config: unknown option '%s'\n",
			c->prog, argv[1]);
		return EXIT_USAGE;
	}
	if (cli_settings(c))
		return EXIT_USAGE;
	conf_print(probe_conf_opts, &c->s, stdout);
	return EXIT_SUCCESS;
}

/*
 * The subcommands. Adding one (the verbs engine's `run` and `serve`) is a
 * handler with this signature and one line here; `usage` is what --help
 * prints.
 */
/* The verbs tests parse their own flags (probe/verbs/cli.c). */
static int cmd_run(struct cli *c, int argc, char **argv)
{
	(void)c;
	return verbs_cmd_run(argc, argv);
}

static int cmd_serve(struct cli *c, int argc, char **argv)
{
	(void)c;
	return verbs_cmd_serve(argc, argv);
}

/* The fabric poller parses its own flags (probe/fabric/fcli.c). */
static int cmd_fabric(struct cli *c, int argc, char **argv)
{
	(void)c;
	return fabric_cmd(argc, argv);
}

static int cli_reload(void *arg, struct probe_settings *out, char *err,
		      size_t errlen)
{
	return cli_load(arg, out, err, errlen);
}

/* --set KEY=VALUE: any option of the table, by name. */
static int cli_set(struct cli *c, char *kv)
{
	char *eq = strchr(kv, '=');

	if (!eq || eq == kv)
		return -EINVAL;
	*eq = '\0';
	return cli_override(c, kv, eq + 1);
}

#define DAEMON_USAGE                                                           \
	"daemon [--config FILE] [--print-config] [--sysfs-root DIR] "          \
	"[--collector URL] [--token-file FILE] [--ca-file FILE] [--host "      \
	"NAME] "                                                               \
	"[--log-level LEVEL] [--set KEY=VALUE]..."

static int cmd_daemon(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"print-config", no_argument, NULL, 'P'},
		{"sysfs-root", required_argument, NULL, 'r'},
		{"collector", required_argument, NULL, 'u'},
		{"token-file", required_argument, NULL, 't'},
		{"ca-file", required_argument, NULL, 'a'},
		{"host", required_argument, NULL, 'H'},
		{"log-level", required_argument, NULL, 'l'},
		{"set", required_argument, NULL, 's'},
		{0},
	};
	static const char *const keys[] = {
		['r'] = "sysfs_root", ['u'] = "collector_url",
		['t'] = "token_file", ['a'] = "ca_file",
		['H'] = "host",	      ['l'] = "log_level",
	};
	int opt, print = 0, ret = 0;

	while ((opt = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		if (opt == 'c')
			c->config = optarg;
		else if (opt == 'P')
			print = 1;
		else if (opt == 's')
			ret = cli_set(c, optarg);
		else if (opt > 0 && opt < (int)(sizeof(keys) / sizeof(*keys)) &&
			 keys[opt])
			ret = cli_override(c, keys[opt], optarg);
		else
			return cli_bad_flag(c, argv, DAEMON_USAGE);
		if (ret) {
			fprintf(stderr,
				"%s daemon: --set wants KEY=VALUE (at most %d "
				"overrides)\n",
				c->prog, MAX_OVERRIDES);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s daemon: unexpected argument '%s'\n",
			c->prog, argv[optind]);
		return EXIT_USAGE;
	}
	if (cli_settings(c))
		return EXIT_USAGE;
	if (print) {
		probe_settings_print(&c->s, stdout);
		return fflush(stdout) ? EXIT_FAILURE : EXIT_SUCCESS;
	}
	ret = probe_enrol(&c->s);
	if (!ret)
		ret = daemon_run(&c->s, cli_reload, c);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* pause, resume, status: one line to the running daemon. */
static int cmd_ctl(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"socket", required_argument, NULL, 'S'},
		{0},
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		if (opt == 'c')
			c->config = optarg;
		else if (opt == 'S')
			cli_override(c, "control_socket", optarg);
		else
			return cli_bad_flag(c, argv,
					    "pause|resume|status [--config "
					    "FILE] [--socket PATH]");
	}
	if (optind < argc) {
		fprintf(stderr, "%s %s: unexpected argument '%s'\n", c->prog,
			c->cmd, argv[optind]);
		return EXIT_USAGE;
	}
	if (cli_settings(c))
		return EXIT_USAGE;
	return daemon_ctl(c->s.control_socket, c->cmd) ? EXIT_FAILURE
						       : EXIT_SUCCESS;
}

static const struct cmd commands[] = {
	{"devices", cmd_devices,
	 "devices [--json] [--sysfs-root DIR] [--config FILE] [--no-counters]"},
	{"report", cmd_report,
	 "report [--once] [--config FILE] [--sysfs-root DIR] [--collector URL] "
	 "[--token-file FILE] [--ca-file FILE] [--host NAME] [--print]"},
	{"print-config", cmd_print_config, "print-config [--config FILE]"},
	{"run", cmd_run, VERBS_RUN_USAGE},
	{"serve", cmd_serve, VERBS_SERVE_USAGE},
	{"daemon", cmd_daemon, DAEMON_USAGE},
	{"metrics", cmd_metrics, METRICS_USAGE},
	{"fabric", cmd_fabric, FABRIC_USAGE},
	{"pause", cmd_ctl, "pause [--config FILE] [--socket PATH]"},
	{"resume", cmd_ctl, "resume [--config FILE] [--socket PATH]"},
	{"status", cmd_ctl, "status [--config FILE] [--socket PATH]"},
	{NULL, NULL, NULL},
};

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s COMMAND [OPTIONS]\n       %s --help | "
		"--version\n\ncommands:\n",
		prog, prog);
	for (const struct cmd *c = commands; c->name; c++)
		fprintf(f, "  %s %s\n", prog, c->usage);
	fprintf(f, "\nSee docs/probe.md (man page) for details.\n");
}

int main(int argc, char **argv)
{
	struct cli c = {.prog = "ibpulse-probe"};
	int ret;

	log_init(c.prog, LOG_LVL_INFO);
	if (argc < 2) {
		usage(stderr, c.prog);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout, c.prog);
		return EXIT_SUCCESS;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("ibpulse-probe %s\n", IBPULSE_VERSION);
		return EXIT_SUCCESS;
	}
	for (const struct cmd *cmd = commands; cmd->name; cmd++) {
		if (strcmp(cmd->name, argv[1]))
			continue;
		c.cmd = cmd->name;
		opterr = 0;
		optind = 1;
		if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
			fprintf(stderr, "%s: curl_global_init failed\n",
				c.prog);
			return EXIT_FAILURE;
		}
		ret = cmd->fn(&c, argc - 1, argv + 1);
		probe_settings_free(&c.s);
		curl_global_cleanup();
		return ret;
	}
	fprintf(stderr, "%s: unknown command '%s' (try --help)\n", c.prog,
		argv[1]);
	return EXIT_USAGE;
}
