/* SPDX-License-Identifier: MIT */
/*
 * The exporter's settings: one descriptor table (common/conf.h) drives the
 * defaults, etc/exporter.ini, command-line overrides and --print-config
 * through the shared command-line skeleton (common/cli.h, exporter_conf).
 * The [basic_auth_users] section (user = bcrypt hash) and
 * bearer_token_file feed struct webauth.
 */
#ifndef IBPULSE_EXPORTER_SETTINGS_H
#define IBPULSE_EXPORTER_SETTINGS_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "conf.h"
#include "httpd_conf.h"

struct webauth;

struct exporter_settings {
	struct httpd_conf http;	      /* listen, port, threads, TLS... */
	char *port_file;	      /* write the bound port here */
	char *db;		      /* SQLite database, opened read-only */
	long long max_inflight_bytes; /* bodies held at once */
	char *bearer_token_file;
	double stale_after;	   /* seconds: host_up 0 past this */
	double drop_after;	   /* seconds: a host's series leave */
	long long max_body_bytes;  /* ceiling of one /metrics body */
	long long gzip_level;	   /* 1 fastest .. 9 smallest */
	long long gzip_threads;	   /* 0: one per online CPU */
	long long cache_max_bytes; /* block cache (bcache.h); 0: none */
	long long busy_timeout_ms;
	long long chunk_rows;	     /* counter rows per read transaction */
	double test_period;	     /* seconds: window of test aggregates
				      * (at least the collector's period) */
	long long max_pair_series;   /* per-pair test results served */
	long long max_family_series; /* samples per family per response */
	char *log_level;
	/* The collector's group_label and results_max_ahead are read from
	 * the database at each scrape (dbread_shared()). */
	struct webauth *auth; /* [basic_auth_users], bearer_token_file */
};

extern const struct conf_opt exporter_conf_opts[];

/*
 * The exporter's settings for cli_load() and cli_print_config(): the
 * table, [basic_auth_users], then bearer_token_file and the checks
 * across keys (drop_after >= stale_after...). The object is a struct
 * exporter_settings; cli_free() frees it.
 */
extern const struct cli_conf exporter_conf;

/* Set the defaults (no credentials). Returns 0 or a negative errno. */
int exporter_settings_init(struct exporter_settings *s);
/* Free the strings; NULL is fine. */
void exporter_settings_free(struct exporter_settings *s);

#endif
