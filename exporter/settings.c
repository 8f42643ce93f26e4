// SPDX-License-Identifier: MIT
/*
 * The exporter's configuration table: see exporter_settings.h. Every key has a
 * default and a range here; etc/exporter.ini mirrors them.
 */
#include "exporter_settings.h"
#include "webauth.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define S(f) offsetof(struct exporter_settings, f)

const struct conf_opt exporter_conf_opts[] = {
	HTTPD_CONF_OPTS("exporter", struct exporter_settings, http, "9471",
			"64", "HTTP worker threads (concurrent scrapes)"),
	{"exporter", "port_file", CONF_STR, S(port_file), NULL, 0, 0,
	 "file to write the bound port to (for tests and scripts)"},
	{"exporter", "db", CONF_STR, S(db), "/var/lib/ibpulse/ibpulse.db", 0, 0,
	 "the collector's SQLite database (opened read-only)"},
	{"exporter", "stale_after", CONF_DOUBLE, S(stale_after), "90", 1,
	 31536000,
	 "seconds without a report after which ibpulse_host_up is 0 (3 push "
	 "intervals)"},
	{"exporter", "drop_after", CONF_DOUBLE, S(drop_after), "600", 1,
	 31536000,
	 "seconds without a report after which a host's port and device series "
	 "leave /metrics"},
	{"exporter", "max_body_bytes", CONF_INT, S(max_body_bytes), "536870912",
	 4096, 4294967295.0,
	 "largest /metrics body built (500 above; shard the scrape)"},
	{"exporter", "max_inflight_bytes", CONF_INT, S(max_inflight_bytes),
	 "1073741824", 4096, 1099511627776.0,
	 "bytes of /metrics bodies held at once, being sent or rendered (503 "
	 "above; at least max_body_bytes)"},
	{"exporter", "bearer_token_file", CONF_STR, S(bearer_token_file), NULL,
	 0, 0,
	 "file whose first line is a bearer token that may scrape (with "
	 "[basic_auth_users]: either will do)"},
	{"exporter", "gzip_level", CONF_INT, S(gzip_level), "1", 1, 9,
	 "zlib level for gzip responses (1: fastest)"},
	{"exporter", "gzip_threads", CONF_INT, S(gzip_threads), "0", 0, 8,
	 "threads compressing one large gzip response (0: one per CPU, at most "
	 "8)"},
	{"exporter", "cache_max_bytes", CONF_INT, S(cache_max_bytes),
	 "1073741824", 0, 1099511627776.0,
	 "bytes the block cache keeps at most: rendered segments and their "
	 "gzip pieces, all shards (0: keep nothing, render every scrape "
	 "whole)"},
	{"exporter", "busy_timeout_ms", CONF_INT, S(busy_timeout_ms), "5000", 0,
	 600000, "SQLite busy timeout in milliseconds"},
	{"exporter", "chunk_rows", CONF_INT, S(chunk_rows), "65536", 1,
	 100000000, "counter rows read in one short read transaction"},
	{"exporter", "test_period", CONF_DOUBLE, S(test_period), "3600", 10,
	 31536000,
	 "seconds: window of the test result aggregates and of overdue; at "
	 "least the collector's planner period (the database says it: a "
	 "shorter one is raised to it)"},
	{"exporter", "max_pair_series", CONF_INT, S(max_pair_series), "10000",
	 0, 10000000,
	 "latest results per port pair served at most per response (the "
	 "newest)"},
	{"exporter", "max_family_series", CONF_INT, S(max_family_series),
	 "1000000", 1, 1000000000,
	 "samples of one family served at most per response; the rest is "
	 "left out and counted in ibpulse_exporter_series_dropped_total"},
	{"exporter", "results_max_ahead", CONF_GONE, 0, NULL, 0, 0,
	 "the exporter uses the collector's, which the collector writes into "
	 "the database (docs/exporter.md, SETTINGS FROM THE COLLECTOR)"},
	{"exporter", "group_label", CONF_GONE, 0, NULL, 0, 0,
	 "the exporter uses the collector's [planner] group_label, which the "
	 "collector writes into the database (docs/exporter.md, SETTINGS "
	 "FROM THE COLLECTOR)"},
	{"exporter", "log_level", CONF_LOG, S(log_level), "info", 0, 0,
	 "error, warn, info or debug"},
	{0}};

int exporter_settings_init(struct exporter_settings *s)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = conf_defaults(exporter_conf_opts, s);
	if (ret)
		return ret;
	return webauth_new(&s->auth);
}

/* [basic_auth_users] user = bcrypt hash */
static int settings_extra(void *obj, const char *section, const char *name,
			  const char *value, char *err, size_t errlen)
{
	struct exporter_settings *s = obj;

	if (strcmp(section, "basic_auth_users") != 0) {
		snprintf(err, errlen, "unknown section [%s]", section);
		return -EINVAL;
	}
	return webauth_add_user(s->auth, name, value, err, errlen);
}

/* After the file and the flags: the bearer token, the checks. */
static int settings_finish(void *obj, char *err, size_t errlen)
{
	struct exporter_settings *s = obj;
	int ret;

	if (s->bearer_token_file) {
		ret = webauth_token_file(s->auth, s->bearer_token_file, err,
					 errlen);
		if (ret)
			return ret;
	}
	if (!s->db || !*s->db) {
		snprintf(err, errlen, "db must be set");
		return -EINVAL;
	}
	if (httpd_conf_check(&s->http, err, errlen))
		return -EINVAL;
	if (s->max_inflight_bytes < s->max_body_bytes) {
		snprintf(err, errlen,
			 "max_inflight_bytes (%lld) must be at least "
			 "max_body_bytes (%lld)",
			 s->max_inflight_bytes, s->max_body_bytes);
		return -EINVAL;
	}
	if (s->drop_after < s->stale_after) {
		snprintf(err, errlen,
			 "drop_after (%g) must be at least stale_after (%g)",
			 s->drop_after, s->stale_after);
		return -EINVAL;
	}
	return 0;
}

static void settings_print_extra(const void *obj, FILE *f)
{
	const struct exporter_settings *s = obj;

	fprintf(f,
		"\n[basic_auth_users]\n# user = bcrypt hash (%zu loaded; "
		"not printed)\n",
		webauth_users(s->auth));
}

void exporter_settings_free(struct exporter_settings *s)
{
	if (!s)
		return;
	conf_free(exporter_conf_opts, s);
	webauth_free(s->auth);
	s->auth = NULL;
}

static int settings_init_obj(void *obj)
{
	return exporter_settings_init(obj);
}

static void settings_free_obj(void *obj)
{
	exporter_settings_free(obj);
}

const struct cli_conf exporter_conf = {
	.opts = exporter_conf_opts,
	.section = "exporter",
	.default_path = NULL, /* the exporter reads a file only when told */
	.extra = settings_extra,
	.init = settings_init_obj,
	.finish = settings_finish,
	.print_extra = settings_print_extra,
	.free = settings_free_obj,
};
