// SPDX-License-Identifier: MIT
/*
 * ibpulse-collector: receives counter reports over HTTP and stores them in
 * SQLite (docs/collector.md). `serve` (the default) runs the daemon;
 * `retire HOST` deletes a host that will not report again. Everything but
 * option parsing and the signal flag lives in libibpulse-collector.
 */
#include "auth.h"
#include "config.h"
#include "http.h"
#include "httpd.h"
#include "log.h"
#include "plansvc.h"
#include "settings.h"
#include "store.h"
#include "ticket.h"
#include "writer.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CONFIG IBPULSE_SYSCONFDIR "/collector.ini"
#define SHUTDOWN_DRAIN_MS 5000
#define MAX_OVERRIDES 16

static volatile sig_atomic_t stop_requested;

struct cli {
	const char *command; /* "serve" or "retire" */
	const char *config;
	const char *port_file;
	const char *host; /* retire */
	int print_config;
	struct collector_settings s;
};

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fputs("usage: ibpulse-collector [serve] [--config FILE]\n"
	      "         [--listen ADDR] [--port N] [--port-file FILE]\n"
	      "         [--db PATH] [--schema-dir DIR] [--print-config]\n"
	      "       ibpulse-collector retire HOST [--config FILE]\n"
	      "         [--db PATH]\n"
	      "       ibpulse-collector --help | --version\n"
	      "\n"
	      "  --config FILE      settings (default " DEFAULT_CONFIG "\n"
	      "                     if it exists)\n"
	      "  --listen ADDR      numeric address to listen on\n"
	      "  --port N           TCP port, 0 for a free one\n"
	      "  --port-file FILE   write the bound port there\n"
	      "  --db PATH          SQLite database\n"
	      "  --schema-dir DIR   schema/NNN_name.sql files\n"
	      "  --print-config     print the effective settings, exit\n",
	      f);
}

static const struct option long_opts[] = {
	{"config", required_argument, NULL, 'c'},
	{"listen", required_argument, NULL, 'l'},
	{"port", required_argument, NULL, 'p'},
	{"port-file", required_argument, NULL, 'P'},
	{"db", required_argument, NULL, 'd'},
	{"schema-dir", required_argument, NULL, 's'},
	{"print-config", no_argument, NULL, 'C'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{0}};

/* Command-line overrides, kept until the config file has been read. */
struct override {
	const char *key, *value;
};

/* 0: go on; 1: done (--help, --version); -EINVAL: bad command line. */
static int parse_args(int argc, char **argv, struct cli *c, struct override *ov,
		      size_t *n_ov)
{
	int opt;

	c->command = "serve";
	if (argc > 1 && argv[1][0] != '-') {
		c->command = argv[1];
		argv++;
		argc--;
	}
	if (strcmp(c->command, "serve") && strcmp(c->command, "retire")) {
		fprintf(stderr,
			"ibpulse-collector: unknown command '%s' "
			"(serve, retire)\n",
			c->command);
		return -EINVAL;
	}
	while ((opt = getopt_long(argc, argv, "c:h", long_opts, NULL)) != -1) {
		const char *key = NULL;

		switch (opt) {
		case 'c':
			c->config = optarg;
			break;
		case 'P':
			c->port_file = optarg;
			break;
		case 'C':
			c->print_config = 1;
			break;
		case 'l':
			key = "listen";
			break;
		case 'p':
			key = "port";
			break;
		case 'd':
			key = "db";
			break;
		case 's':
			key = "schema_dir";
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("ibpulse-collector %s\n", IBPULSE_VERSION);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
		if (key && *n_ov >= MAX_OVERRIDES) {
			fprintf(stderr,
				"ibpulse-collector: too many options\n");
			return -EINVAL;
		}
		if (key) {
			ov[*n_ov].key = key;
			ov[(*n_ov)++].value = optarg;
		}
	}
	if (!strcmp(c->command, "retire")) {
		if (optind + 1 != argc) {
			fprintf(stderr, "ibpulse-collector: retire takes "
					"exactly one HOST\n");
			return -EINVAL;
		}
		c->host = argv[optind];
	} else if (optind != argc) {
		fprintf(stderr, "ibpulse-collector: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static int load_settings(struct cli *c, const struct override *ov, size_t n_ov)
{
	const char *path = c->config;
	char err[512];
	enum log_level lvl;
	int ret;

	if (!path && access(DEFAULT_CONFIG, R_OK) == 0)
		path = DEFAULT_CONFIG;
	ret = settings_init(&c->s);
	if (!ret)
		ret = settings_load(&c->s, path, err, sizeof(err));
	for (size_t i = 0; !ret && i < n_ov; i++) {
		ret = settings_set(&c->s, ov[i].key, ov[i].value, err,
				   sizeof(err));
		if (ret)
			fprintf(stderr, "ibpulse-collector: --%s: ", ov[i].key);
	}
	if (!ret)
		ret = settings_check(&c->s, err, sizeof(err));
	if (!ret && log_level_parse(c->s.log_level, &lvl)) {
		snprintf(err, sizeof(err),
			 "log_level: '%s' is not error, warn, info or debug",
			 c->s.log_level);
		ret = -EINVAL;
	}
	if (ret) {
		fprintf(stderr, "ibpulse-collector: %s\n", err);
		return ret;
	}
	log_set_level(lvl);
	return 0;
}

static int open_store(const struct collector_settings *s, struct store **st)
{
	struct store_opts o = {
		.path = s->db,
		.schema_dir = s->schema_dir,
		.busy_timeout_ms = s->busy_timeout_ms,
		.keyframe_interval = (double)s->keyframe_interval,
		.retention = (double)s->retention_days * 86400.0,
		.prune_batch = s->prune_batch,
		.wal_max_bytes = s->wal_max_bytes,
		.baseline = &s->baseline,
		.group_label = s->group_label,
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

static int write_port_file(const char *path, unsigned port)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (f && fprintf(f, "%u\n", port) < 0) {
		fclose(f);
		f = NULL;
	}
	if (!f || fclose(f) != 0 || rename(tmp, path) != 0) {
		log_err("cannot write port file %s: %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
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

static int serve(struct cli *c)
{
	const struct collector_settings *s = &c->s;
	struct http_opts ho = {
		.listen = s->listen,
		.port = (unsigned)s->port,
		.threads = (unsigned)s->threads,
		.connection_timeout = (unsigned)s->connection_timeout,
		.header_timeout = (unsigned)s->header_timeout,
		.request_timeout = (unsigned)s->request_timeout,
		.max_connections = (unsigned)s->max_connections,
		.per_ip_connection_limit = (unsigned)s->per_ip_connection_limit,
		.connection_memory = (size_t)s->connection_memory,
		.max_body_bytes = (size_t)s->max_body_bytes,
		.auth = s->auth,
		.admin_token = s->admin_token,
	};
	struct plansvc_opts po = {
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
			},
		.group_label = s->group_label,
		.rail_label = s->rail_label,
		.replan_interval = (double)s->replan_interval,
	};
	struct writer_opts wo = {
		.max_batch_rows = s->max_batch_rows,
		.checkpoint_interval = s->checkpoint_interval,
	};
	struct plansvc *ps = NULL;
	uint8_t tkey[256];
	char *cert = NULL, *key = NULL;
	struct store *st = NULL;
	struct writer *w = NULL;
	struct http *h = NULL;
	int ret = 0;

	if (s->tls_cert) {
		ret = httpd_read_pem(s->tls_cert, &cert);
		if (!ret)
			ret = httpd_read_pem(s->tls_key, &key);
		ho.tls_cert_pem = cert;
		ho.tls_key_pem = key;
	}
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
		ret = write_port_file(c->port_file, http_port(h));
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
	free(cert);
	free(key);
	return ret;
}

int main(int argc, char **argv)
{
	struct override ov[MAX_OVERRIDES];
	struct sigaction sa = {.sa_handler = on_signal};
	struct cli c = {0};
	size_t n_ov = 0;
	int ret;

	log_init("ibpulse-collector", LOG_LVL_INFO);
	store_global_init();
	ret = parse_args(argc, argv, &c, ov, &n_ov);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (load_settings(&c, ov, n_ov)) {
		settings_free(&c.s);
		return 2;
	}
	if (c.print_config) {
		settings_print(&c.s, stdout);
		settings_free(&c.s);
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
	settings_free(&c.s);
	return ret;
}
