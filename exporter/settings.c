// SPDX-License-Identifier: MIT
/*
 * The exporter's configuration table: see settings.h. Every key has a
 * default and a range here; etc/exporter.ini mirrors them.
 */
#include "settings.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define S(f) offsetof(struct exporter_settings, f)

const struct conf_opt exporter_conf_opts[] = {
	{"exporter", "listen", CONF_STR, S(listen), "0.0.0.0", 0, 0,
	 "numeric IPv4 or IPv6 address to listen on (0.0.0.0 or :: for all)"},
	{"exporter", "port", CONF_INT, S(port), "9471", 0, 65535,
	 "TCP port; 0 picks a free one (logged, and written to port_file)"},
	{"exporter", "port_file", CONF_STR, S(port_file), NULL, 0, 0,
	 "file to write the bound port to (for tests and scripts)"},
	{"exporter", "db", CONF_STR, S(db), "/var/lib/ibpulse/ibpulse.db", 0, 0,
	 "the collector's SQLite database (opened read-only)"},
	{"exporter", "threads", CONF_INT, S(threads), "4", 1, 256,
	 "HTTP worker threads (concurrent scrapes)"},
	{"exporter", "connection_timeout", CONF_INT, S(connection_timeout),
	 "60", 1, 3600,
	 "seconds a connection may stay idle before it is closed"},
	{"exporter", "max_connections", CONF_INT, S(max_connections), "64", 1,
	 65535, "concurrent connections"},
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
	{"exporter", "gzip_level", CONF_INT, S(gzip_level), "1", 1, 9,
	 "zlib level for gzip responses (1: fastest)"},
	{"exporter", "gzip_threads", CONF_INT, S(gzip_threads), "0", 0, 8,
	 "threads compressing one large gzip response (0: one per CPU, at most "
	 "8)"},
	{"exporter", "busy_timeout_ms", CONF_INT, S(busy_timeout_ms), "5000", 0,
	 600000, "SQLite busy timeout in milliseconds"},
	{"exporter", "chunk_rows", CONF_INT, S(chunk_rows), "65536", 1,
	 100000000, "counter rows read in one short read transaction"},
	{"exporter", "test_period", CONF_DOUBLE, S(test_period), "3600", 10,
	 31536000,
	 "seconds: window of the test result aggregates and of overdue "
	 "(the collector's planner period)"},
	{"exporter", "max_pair_series", CONF_INT, S(max_pair_series), "10000",
	 0, 10000000,
	 "latest results per port pair served at most per response (the "
	 "newest)"},
	{"exporter", "max_family_series", CONF_INT, S(max_family_series),
	 "1000000", 1, 1000000000,
	 "samples of one family served at most per response; the rest is "
	 "left out and counted in ibpulse_exporter_series_dropped_total"},
	{"exporter", "results_max_ahead", CONF_DOUBLE, S(results_max_ahead),
	 "300", 0, 31536000,
	 "seconds: test results that started further ahead of this clock are "
	 "not served (the collector's results_max_ahead)"},
	{"exporter", "group_label", CONF_STR, S(group_label), "leaf", 0, 0,
	 "probe label whose value names a group (the collector's "
	 "group_label)"},
	{"exporter", "log_level", CONF_STR, S(log_level), "info", 0, 0,
	 "error, warn, info or debug"},
	{0}};

int settings_init(struct exporter_settings *s)
{
	memset(s, 0, sizeof(*s));
	return conf_defaults(exporter_conf_opts, s);
}

int settings_load(struct exporter_settings *s, const char *path, char *err,
		  size_t errlen)
{
	if (!path)
		return 0;
	return conf_load(exporter_conf_opts, s, path, NULL, err, errlen);
}

int settings_set(struct exporter_settings *s, const char *key,
		 const char *value, char *err, size_t errlen)
{
	return conf_set(exporter_conf_opts, s, "exporter", key, value, err,
			errlen);
}

int settings_check(const struct exporter_settings *s, char *err, size_t errlen)
{
	if (!s->db || !*s->db) {
		snprintf(err, errlen, "db must be set");
		return -EINVAL;
	}
	if (!s->listen || !*s->listen) {
		snprintf(err, errlen, "listen must be set");
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

void settings_print(const struct exporter_settings *s, FILE *f)
{
	conf_print(exporter_conf_opts, s, f);
}

void settings_free(struct exporter_settings *s)
{
	if (!s)
		return;
	conf_free(exporter_conf_opts, s);
}
