// SPDX-License-Identifier: MIT
/*
 * ibpulse-collector: receives counter reports over HTTP and stores them in
 * SQLite (docs/collector.md). `serve` (the default) runs the daemon;
 * `retire HOST` deletes a host that will not report again. Everything but
 * option parsing and the signal flag lives in libibpulse-collector.
 */
#include "auth.h"
#include "cli.h"
#include "config.h"
#include "http.h"
#include "httpd.h"
#include "log.h"
#include "plansvc.h"
#include "store.h"
#include "collector_settings.h"
#include "ticket.h"
#include "writer.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SHUTDOWN_DRAIN_MS 5000

static volatile sig_atomic_t stop_requested;

enum { OPT_PORT_FILE = 1 };

struct cli {
	const char *command; /* "serve" or "retire" */
	const char *port_file;
	const char *host; /* retire */
	struct cli_args a;
	struct collector_settings s;
};

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

#define FLAG_CONFIG                                                            \
	{                                                                      \
		"config", 'c', "FILE", NULL, CLI_CONFIG,                       \
			"settings (default " IBPULSE_SYSCONFDIR                \
			"/collector.ini if it "                                \
			"exists)"                                              \
	}
#define FLAG_DB                                                                \
	{                                                                      \
		"db", 0, "PATH", "db", 0, "SQLite database"                    \
	}

static const struct cli_flag serve_flags[] = {
	FLAG_CONFIG,
	{"listen", 0, "ADDR", "listen", 0, "numeric address to listen on"},
	{"port", 0, "N", "port", 0, "TCP port, 0 for a free one"},
	{"port-file", 0, "FILE", NULL, OPT_PORT_FILE,
	 "write the bound port there"},
	FLAG_DB,
	{"schema-dir", 0, "DIR", "schema_dir", 0, "schema/NNN_name.sql files"},
	{"print-config", 0, NULL, NULL, CLI_PRINT_CONFIG,
	 "print the effective settings, exit"},
	{"version", 0, NULL, NULL, CLI_VERSION, "print the version, exit"},
	{0}};

/* retire lists what it uses; the rest is accepted as it always was. */
static const struct cli_flag retire_flags[] = {
	FLAG_CONFIG,
	FLAG_DB,
	{"listen", 0, "ADDR", "listen", 0, NULL},
	{"port", 0, "N", "port", 0, NULL},
	{"port-file", 0, "FILE", NULL, OPT_PORT_FILE, NULL},
	{"schema-dir", 0, "DIR", "schema_dir", 0, NULL},
	{"print-config", 0, NULL, NULL, CLI_PRINT_CONFIG, NULL},
	{0}};

static const struct cli_cmd commands[] = {
	{.prog = "ibpulse-collector",
	 .name = "serve",
	 .about = "Receive counter reports and test results over HTTP and "
		  "store them in SQLite\n(the default command). "
		  "docs/collector.md.",
	 .flags = serve_flags},
	{.prog = "ibpulse-collector",
	 .name = "retire",
	 .args = "HOST",
	 .max_args = 1,
	 .about = "Delete a host that will not report again, with its "
		  "history.",
	 .flags = retire_flags},
};

static void usage(FILE *f)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		cli_synopsis(&commands[i], f, i ? "       " : "usage: ");
	fprintf(f, "       ibpulse-collector --help | --version\n"
		   "\n`ibpulse-collector COMMAND --help` for a command's "
		   "options.\n");
}

static int on_flag(void *arg, int id, const char *value, char *err,
		   size_t errlen)
{
	struct cli *c = arg;

	(void)err;
	(void)errlen;
	if (id == OPT_PORT_FILE)
		c->port_file = value;
	return 0;
}

/* 0: go on; CLI_DONE (--help, --version); -EINVAL: bad command line. */
static int parse_args(int argc, char **argv, struct cli *c)
{
	const struct cli_cmd *cmd = &commands[0];
	int ret;

	if (argc > 1 &&
	    (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return CLI_DONE;
	}
	if (argc > 1 && argv[1][0] != '-') {
		cmd = NULL;
		for (size_t i = 0; i < sizeof(commands) / sizeof(*commands);
		     i++)
			if (!strcmp(argv[1], commands[i].name))
				cmd = &commands[i];
		if (!cmd) {
			fprintf(stderr,
				"ibpulse-collector: unknown command '%s' "
				"(serve, retire)\n",
				argv[1]);
			return -EINVAL;
		}
		argv++;
		argc--;
	}
	c->command = cmd->name;
	ret = cli_parse(cmd, argc, argv, &c->a, on_flag, c);
	if (!ret && cmd->max_args && c->a.n_pos != 1) {
		cli_error(cmd, "takes exactly one HOST");
		return -EINVAL;
	}
	if (!ret && cmd->max_args)
		c->host = c->a.pos[0];
	return ret;
}

static int open_store(const struct collector_settings *s, struct store **st)
{
	struct store_localize_opts lo = {
		.enabled = s->localize_enabled,
		.loc =
			{
				.bad_tests = (unsigned)s->localize_bad,
				.good_tests = (unsigned)s->localize_good,
				.confirm_tests =
					(unsigned)s->suspect.confirm_tests,
				.noise = s->localize_noise,
				.min_gain = s->localize_min_gain,
			},
		.window = s->localize_window * (double)s->plan_period,
	};
	struct store_opts o = {
		.path = s->db,
		.schema_dir = s->schema_dir,
		.busy_timeout_ms = s->busy_timeout_ms,
		.keyframe_interval = (double)s->keyframe_interval,
		.retention = (double)s->retention_days * 86400.0,
		.prune_batch = s->prune_batch,
		.wal_max_bytes = s->wal_max_bytes,
		.baseline = &s->baseline,
		.evidence = &s->suspect,
		.group_label = s->group_label,
		.localize = &lo,
		.health = &s->health,
		.results_max_age = (double)s->results_max_age,
		.results_max_ahead = (double)s->results_max_ahead,
		.results_period = (double)s->plan_period,
		.results_max_peers = s->results_max_peers,
		.results_max_profiles = s->results_max_profiles,
	};

	return store_open(&o, st);
}

static int cmd_retire(struct cli *c)
{
	struct store *st = NULL;
	int ret = open_store(&c->s, &st);

	if (!ret)
		ret = store_begin(st);
	if (!ret) {
		ret = store_retire(st, c->host);
		if (ret)
			store_rollback(st);
		else
			ret = store_commit(st);
	}
	store_close(st);
	if (ret == -ENOENT)
		fprintf(stderr, "ibpulse-collector: unknown host '%s'\n",
			c->host);
	else if (ret)
		fprintf(stderr, "ibpulse-collector: retire %s failed: %s\n",
			c->host, strerror(-ret));
	else
		printf("retired %s\n", c->host);
	return ret ? 1 : 0;
}

static int port_file(const char *path, unsigned port)
{
	int ret = cli_write_port_file(path, port);

	if (ret)
		log_err("cannot write port file %s: %s", path, strerror(-ret));
	return ret;
}

static void wait_for_signal(void)
{
	struct timespec tick = {0, 100 * 1000 * 1000};

	while (!stop_requested)
		nanosleep(&tick, NULL);
}

/*
 * The master key of the test tickets: ticket_key_file, else next to the
 * database; created on the first start (common/ticket.h).
 */
static int load_ticket_key(const struct collector_settings *s, uint8_t *key,
			   size_t cap, size_t *len)
{
	char path[4096], err[512];
	int ret;

	if (s->ticket_key_file)
		snprintf(path, sizeof(path), "%s", s->ticket_key_file);
	else
		snprintf(path, sizeof(path), "%s.ticket-key", s->db);
	ret = ticket_master_load(path, key, cap, len, err, sizeof(err));
	if (ret)
		log_err("%s", err);
	else
		log_info("test tickets: master key in %s", path);
	return ret;
}

/* The HTTP server's options from the settings. */
static void http_opts_of(const struct collector_settings *s,
			 struct http_opts *ho)
{
	*ho = (struct http_opts){
		.conf = &s->http,
		.connection_memory = (size_t)s->connection_memory,
		.max_body_bytes = (size_t)s->max_body_bytes,
		.auth = s->auth,
		.admin_token = s->admin_token,
	};
}

/* The planner service's options from the settings. */
static void plansvc_opts_of(const struct collector_settings *s,
			    struct plansvc_opts *po)
{
	*po = (struct plansvc_opts){
		.planner =
			{
				.period = (double)s->plan_period,
				.full_mesh_below = (unsigned)s->full_mesh_below,
				.duty_cycle = s->duty_cycle,
				.slot_seconds = s->slot_seconds,
				.profiles = s->plan_profiles,
				.n_profiles = s->n_plan_profiles,
				.cross_rail = s->cross_rail,
				.host_exclusive = s->host_exclusive,
				.confirm_tests =
					(unsigned)s->suspect.confirm_tests,
				.confirm_share = s->confirm_share,
			},
		.group_label = s->group_label,
		.rail_label = s->rail_label,
		.replan_interval = (double)s->replan_interval,
		.plan_refresh = (double)s->plan_refresh,
		.routes = s->localize_enabled,
		.cover = s->localize_cover,
	};
}

static int serve(struct cli *c)
{
	const struct collector_settings *s = &c->s;
	struct http_opts ho;
	struct plansvc_opts po;
	struct writer_opts wo = {
		.max_batch_rows = s->max_batch_rows,
		.checkpoint_interval = s->checkpoint_interval,
	};
	struct plansvc *ps = NULL;
	uint8_t tkey[256];
	struct store *st = NULL;
	struct writer *w = NULL;
	struct http *h = NULL;
	int ret = 0;

	http_opts_of(s, &ho);
	plansvc_opts_of(s, &po);
	if (!auth_count(s->auth))
		log_warn(
			"no host tokens configured: every report will get 401");
	if (!ret)
		ret = load_ticket_key(s, tkey, sizeof(tkey),
				      &po.ticket_key_len);
	po.ticket_key = tkey;
	if (!ret)
		ret = open_store(s, &st);
	if (!ret)
		ret = plansvc_new(&po, &ps);
	wo.plans = ps;
	if (!ret)
		ret = writer_new(st, &wo, &w);
	if (!ret)
		ret = http_new(&ho, w, &h);
	if (!ret && c->port_file)
		ret = port_file(c->port_file, http_port(h));
	if (!ret) {
		wait_for_signal();
		log_info("stopping: finishing the batch in flight");
		http_quiesce(h);
		writer_stop(w);
		if (http_drain(h, SHUTDOWN_DRAIN_MS))
			log_warn("answers still pending at shutdown");
	}
	http_free(h);
	writer_free(w);
	plansvc_free(ps);
	store_close(st);
	explicit_bzero(tkey, sizeof(tkey));
	return ret;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};
	struct cli c = {0};
	char err[512];
	int ret;

	log_init("ibpulse-collector", LOG_LVL_INFO);
	store_global_init();
	ret = parse_args(argc, argv, &c);
	if (ret)
		return ret > 0 ? 0 : CLI_EXIT_USAGE;
	if (cli_load(&collector_conf, &c.a, &c.s, err, sizeof(err))) {
		fprintf(stderr, "ibpulse-collector: %s\n", err);
		cli_free(&collector_conf, &c.s);
		return CLI_EXIT_USAGE;
	}
	if (c.a.print_config) {
		cli_print_config(&collector_conf, &c.s, stdout);
		cli_free(&collector_conf, &c.s);
		return 0;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(c.command, "retire"))
		ret = cmd_retire(&c);
	else
		ret = serve(&c) ? 1 : 0;
	cli_free(&collector_conf, &c.s);
	return ret;
}
