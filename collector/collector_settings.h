/* SPDX-License-Identifier: MIT */
/*
 * The collector's settings: one descriptor table (common/conf.h) drives the
 * defaults, etc/collector.ini, command-line overrides and --print-config
 * through the shared command-line skeleton (common/cli.h, collector_conf).
 * The [tokens] section (host = token) and tokens_file feed struct auth.
 */
#ifndef IBPULSE_COLLECTOR_SETTINGS_H
#define IBPULSE_COLLECTOR_SETTINGS_H

#include <stddef.h>
#include <stdio.h>

#include "baseline.h"
#include "cli.h"
#include "evidence.h"
#include "conf.h"
#include "httpd_conf.h"
#include "health.h"
#include "planner.h"

struct auth;

struct collector_settings {
	struct httpd_conf http; /* listen, port, threads, TLS... */
	char *db;
	char *schema_dir;
	long long connection_memory; /* bytes per connection (MHD) */
	long long max_body_bytes;
	long long max_batch_rows;    /* counters per group commit */
	long long keyframe_interval; /* seconds */
	long long retention_days;
	long long prune_batch; /* history rows per pruning step */
	long long busy_timeout_ms;
	long long checkpoint_interval; /* seconds between PASSIVE checkpoints */
	long long wal_max_bytes;       /* above this, TRUNCATE attempts */
	/* what one host's results may add (docs/api.md, POST results) */
	long long results_max_age, results_max_ahead;	   /* seconds */
	long long results_max_peers, results_max_profiles; /* per period */
	char *admin_token;
	char *tokens_file;
	char *enrol_secret_file, *enrolled_file; /* enrolment (auth.h) */
	long long enrol_max_hosts;
	char *log_level;
	struct auth *auth; /* from [tokens] and tokens_file */
	/* [planner]: the test plan (docs/collector.md, "Test plan") */
	long long plan_period; /* seconds */
	char *group_label, *rail_label;
	long long full_mesh_below; /* hosts */
	double duty_cycle, slot_seconds;
	int cross_rail, host_exclusive;
	long long replan_interval; /* seconds */
	long long plan_refresh;	   /* seconds between a probe's fetches */
	double confirm_share;	   /* extra tests, share of the planned */
	char *ticket_key_file;	   /* NULL: db + ".ticket-key" */
	/* [planner_profiles] NAME = seconds; names owned here */
	struct planner_profile *plan_profiles;
	size_t n_plan_profiles;
	/* [baseline]: baselines and regressions (docs/collector.md) */
	struct baseline_opts baseline;
	/* [suspect] (and [planner] confirm_tests): evidence per element */
	struct evidence_opts suspect;
	/* [localize]: where in the fabric (docs/collector.md) */
	int localize_enabled, localize_cover;
	double localize_window; /* planner periods */
	long long localize_bad, localize_good;
	double localize_noise, localize_min_gain;
	/* [health]: host health verdicts (docs/health.md) */
	struct health_opts health;
};

extern const struct conf_opt collector_conf_opts[];

/*
 * The collector's settings for cli_load() and cli_print_config(): the
 * table, [tokens] and [planner_profiles], then tokens_file, the enrolment
 * secret and the checks across keys (tls_cert without tls_key...). The
 * object is a struct collector_settings; cli_free() frees it.
 */
extern const struct cli_conf collector_conf;

/* Defaults and an empty token table. Returns 0 or a negative errno. */
int collector_settings_init(struct collector_settings *s);
/* Free what the settings own; NULL is fine. */
void collector_settings_free(struct collector_settings *s);

#endif
