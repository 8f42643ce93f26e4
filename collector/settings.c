// SPDX-License-Identifier: MIT
/*
 * The collector's configuration table and token loading: see
 * collector_settings.h.
 * Every key has a default and a range here; etc/collector.ini mirrors them.
 */
#include "collector_settings.h"
#include "auth.h"
#include "conf.h"
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S(f) offsetof(struct collector_settings, f)

/* [health] (docs/health.md, "THRESHOLDS"): a reason's level, and for the
 * counter reasons their threshold and window. */
#define LEVEL_OPT(kind, key, def, help)                                        \
	{                                                                      \
		"health", key, CONF_STR, S(health.level_text[kind]), def, 0,   \
			0, help " (failed, degraded or ignore)"                \
	}
#define RULE_OPTS(kind, key, mx, win, what)                                    \
	{"health", key "_max",                                                 \
	 CONF_INT, S(health.rule[kind].max),                                   \
	 mx,	   0,                                                          \
	 1e12,	   what " more than this within " key "_window_seconds"},      \
	{                                                                      \
		"health", key "_window_seconds", CONF_INT,                     \
			S(health.rule[kind].window), win, 10, 604800,          \
			"seconds " key "_max is counted over"                  \
	}
#define HEALTH_OPTS                                                            \
	{"health",                                                             \
	 "quiet_seconds",                                                      \
	 CONF_INT,                                                             \
	 S(health.quiet_seconds),                                              \
	 "600",                                                                \
	 0,                                                                    \
	 604800,                                                               \
	 "a reason holds the verdict this long after it was last seen "        \
	 "(sticky)"},                                                          \
		{"health",                                                     \
		 "switch_ports",                                               \
		 CONF_BOOL,                                                    \
		 S(health.switch_ports),                                       \
		 "true",                                                       \
		 0,                                                            \
		 0,                                                            \
		 "judge the switch port facing each host port too (fabric "    \
		 "pollers' sweeps)"},                                          \
		LEVEL_OPT(HK_PORT_DOWN, "port_down", "failed",                 \
			  "a port that was ACTIVE and is not"),                \
		LEVEL_OPT(HK_LINK_DEGRADED, "link_degraded", "degraded",       \
			  "a port below the rate it ran at, or its switch "    \
			  "port below its enabled width or speed"),            \
		LEVEL_OPT(HK_PCIE_DEGRADED, "pcie_degraded", "degraded",       \
			  "an HCA's PCIe link below its maximum"),             \
		LEVEL_OPT(HK_AER_FATAL, "aer_fatal", "failed",                 \
			  "fatal PCIe AER errors since boot"),                 \
		LEVEL_OPT(HK_SUSPECT_BANDWIDTH, "suspect_bandwidth", "failed", \
			  "an open bandwidth suspect on the host's port or "   \
			  "HCA"),                                              \
		LEVEL_OPT(HK_SUSPECT_LATENCY, "suspect_latency", "degraded",   \
			  "an open latency suspect"),                          \
		LEVEL_OPT(HK_REGRESSION, "regression", "degraded",             \
			  "an open regression on one of its links"),           \
		LEVEL_OPT(HK_LINK_DOWNED, "link_downed", "failed",             \
			  "link_downed rising (host or switch port)"),         \
		RULE_OPTS(HK_LINK_DOWNED, "link_downed", "0", "900",           \
			  "link_downed:"),                                     \
		LEVEL_OPT(HK_CARRIER_CHANGES, "carrier_changes", "failed",     \
			  "a RoCE netdev's carrier changes rising"),           \
		RULE_OPTS(HK_CARRIER_CHANGES, "carrier_changes", "1", "900",   \
			  "carrier_changes:"),                                 \
		LEVEL_OPT(HK_LINK_ERROR_RECOVERY, "link_error_recovery",       \
			  "failed", "link recoveries rising (flapping)"),      \
		RULE_OPTS(HK_LINK_ERROR_RECOVERY, "link_error_recovery", "5",  \
			  "60", "link_error_recovery:"),                       \
		LEVEL_OPT(HK_SYMBOL_ERROR, "symbol_error", "degraded",         \
			  "symbol errors rising"),                             \
		RULE_OPTS(HK_SYMBOL_ERROR, "symbol_error", "120", "3600",      \
			  "symbol_error:"),                                    \
		LEVEL_OPT(HK_BUFFER_OVERRUN, "buffer_overrun", "failed",       \
			  "excessive_buffer_overrun_errors rising"),           \
		RULE_OPTS(HK_BUFFER_OVERRUN, "buffer_overrun", "0", "900",     \
			  "excessive_buffer_overrun_errors:"),                 \
		LEVEL_OPT(HK_COUNTER_SATURATED, "counter_saturated",           \
			  "degraded",                                          \
			  "one of those counters stuck at its maximum")

const struct conf_opt collector_conf_opts[] = {
	HTTPD_CONF_OPTS("collector", struct collector_settings, http, "9470",
			"1024",
			"HTTP worker threads (they decode and validate "
			"reports)"),
	{"collector", "db", CONF_STR, S(db), "/var/lib/ibpulse/ibpulse.db", 0,
	 0, "SQLite database (created if missing)"},
	{"collector", "schema_dir", CONF_STR, S(schema_dir),
	 IBPULSE_DATADIR "/schema", 0, 0,
	 "directory of NNN_name.sql files applied at start-up"},
	{"collector", "connection_memory", CONF_INT, S(connection_memory),
	 "65536", 8192, 16777216,
	 "bytes of header and read buffer per connection"},
	{"collector", "max_body_bytes", CONF_INT, S(max_body_bytes), "4194304",
	 1024, 1073741824, "largest report body accepted (413 above)"},
	{"collector", "max_batch_rows", CONF_INT, S(max_batch_rows), "200000",
	 1000, 100000000, "counters per group-commit transaction (at most)"},
	{"collector", "keyframe_interval", CONF_INT, S(keyframe_interval),
	 "300", 1, 86400,
	 "seconds after which an unchanged counter is written to history "
	 "again"},
	{"collector", "retention_days", CONF_INT, S(retention_days), "7", 0,
	 36500, "days of history kept (0: keep forever)"},
	{"collector", "prune_batch", CONF_INT, S(prune_batch), "5000", 100,
	 1000000,
	 "history rows deleted per pruning step (between ingest batches)"},
	{"collector", "busy_timeout_ms", CONF_INT, S(busy_timeout_ms), "5000",
	 0, 600000, "SQLite busy timeout in milliseconds"},
	{"collector", "checkpoint_interval", CONF_INT, S(checkpoint_interval),
	 "10", 1, 3600, "seconds between passive WAL checkpoints"},
	{"collector", "wal_max_bytes", CONF_INT, S(wal_max_bytes), "268435456",
	 1048576, 1099511627776.0,
	 "WAL size above which the collector tries to truncate it"},
	{"collector", "results_max_age", CONF_INT, S(results_max_age), "604800",
	 60, 315360000,
	 "seconds a test result's started may lie behind the collector's "
	 "clock (400 beyond; the probe's spool_max_age)"},
	{"collector", "results_max_ahead", CONF_INT, S(results_max_ahead),
	 "300", 1, 86400,
	 "seconds a test result's started may lie ahead of the collector's "
	 "clock (400 beyond)"},
	{"collector", "results_max_peers", CONF_INT, S(results_max_peers),
	 "1024", 1, 10000000,
	 "distinct peer ports one host's results may name per planner period "
	 "(400 beyond)"},
	{"collector", "results_max_profiles", CONF_INT, S(results_max_profiles),
	 "32", 1, 100000,
	 "distinct profiles one host's results may name per planner period "
	 "(400 beyond)"},
	{"collector", "admin_token", CONF_STR, S(admin_token), NULL, 0, 0,
	 "bearer token for POST /api/v1/hosts/NAME/retire (unset: API "
	 "disabled)"},
	{"collector", "tokens_file", CONF_STR, S(tokens_file), NULL, 0, 0,
	 "file of \"host token\" lines, added to the [tokens] section"},
	{"collector", "enrol_secret_file", CONF_STR, S(enrol_secret_file), NULL,
	 0, 0,
	 "file holding the secret that lets a probe enrol once for a token "
	 "bound to its host name (unset: enrolment disabled)"},
	{"collector", "enrolled_file", CONF_STR, S(enrolled_file),
	 "/var/lib/ibpulse/enrolled", 0, 0,
	 "enrolled hosts and the SHA-256 of their tokens (appended)"},
	{"collector", "enrol_max_hosts", CONF_INT, S(enrol_max_hosts), "100000",
	 1, 10000000, "hosts that may enrol at most"},
	{"collector", "log_level", CONF_LOG, S(log_level), "info", 0, 0,
	 "error, warn, info or debug"},
	{"planner", "period", CONF_INT, S(plan_period), "300", 10, 604800,
	 "seconds: every active port and group pair is tested once per "
	 "period"},
	{"planner", "group_label", CONF_STR, S(group_label), "leaf", 0, 0,
	 "probe label whose values are the groups (leaf switch, pod...)"},
	{"planner", "rail_label", CONF_STR, S(rail_label), NULL, 0, 0,
	 "probe label naming its rail (unset: a port's index on its host)"},
	{"planner", "full_mesh_below", CONF_INT, S(full_mesh_below), "16", 0,
	 100000, "with fewer probes than this, test every pair of ports"},
	{"planner", "duty_cycle", CONF_DOUBLE, S(duty_cycle), "0.05", 0.001, 1,
	 "share of the period a port may spend in tests"},
	{"planner", "slot_seconds", CONF_DOUBLE, S(slot_seconds), "5", 1, 3600,
	 "length of a test slot (a profile may take several)"},
	{"planner", "cross_rail", CONF_BOOL, S(cross_rail), "false", 0, 0,
	 "also pair ports of different rails"},
	{"planner", "host_exclusive", CONF_BOOL, S(host_exclusive), "true", 0,
	 0, "a probe takes part in one test at a time (else one per port)"},
	{"planner", "replan_interval", CONF_INT, S(replan_interval), "30", 0,
	 86400,
	 "seconds between replans when registrations, pauses or the elements "
	 "needing confirmation change"},
	{"planner", "plan_refresh", CONF_INT, S(plan_refresh), "60", 1, 86400,
	 "seconds between a probe's plan fetches, told to probes in every "
	 "plan; confirmation tests are placed at least this far ahead"},
	{"planner", "confirm_share", CONF_DOUBLE, S(confirm_share), "0.1", 0, 1,
	 "confirmation tests a period may add, as a share of its planned "
	 "tests (at least confirm_tests); 0: none"},
	{"planner", "confirm_tests", CONF_INT, S(suspect.confirm_tests), "2", 1,
	 16,
	 "tests with good peers that confirm or clear one bad result of a "
	 "port"},
	{"planner", "ticket_key_file", CONF_STR, S(ticket_key_file), NULL, 0, 0,
	 "master key of the test tickets (created, mode 0600, when missing); "
	 "unset: the db path with .ticket-key appended"},
	{"baseline", "results", CONF_INT, S(baseline.results), "20", 2, 1000,
	 "accepted results of a link its baseline keeps (the newest)"},
	{"baseline", "window_days", CONF_DOUBLE, S(baseline.window_days), "7",
	 0.01, 365,
	 "only results this recent make a baseline; a regression open this "
	 "long is taken as the link's new level"},
	{"baseline", "min_results", CONF_INT, S(baseline.min_results), "5", 2,
	 1000, "results a baseline needs before anything is judged by it"},
	{"baseline", "margin", CONF_DOUBLE, S(baseline.margin), "0.05", 0.001,
	 0.9,
	 "bandwidth: the floor of a bad result's loss, as a share of the "
	 "baseline (bad below baseline - max(margin x baseline, "
	 "spread_factor x spread))"},
	{"baseline", "latency_margin", CONF_DOUBLE, S(baseline.latency_margin),
	 "0.05", 0.001, 100,
	 "latency: the floor of a bad result's rise, as a share of the "
	 "baseline"},
	{"baseline", "latency_floor_seconds", CONF_DOUBLE,
	 S(baseline.latency_floor), "1e-7", 0, 1,
	 "latency: and only when at least this far above the baseline"},
	{"baseline", "spread_factor", CONF_DOUBLE, S(baseline.spread_factor),
	 "3", 0, 100,
	 "and only beyond this many spreads (1.4826 x MAD) from it"},
	{"baseline", "bad_results", CONF_INT, S(baseline.bad_results), "3", 1,
	 64, "K: bad results among the last judged_results open a regression"},
	{"baseline", "judged_results", CONF_INT, S(baseline.judged_results),
	 "5", 1, 64, "M: the window bad_results are counted in"},
	{"baseline", "good_results", CONF_INT, S(baseline.good_results), "5", 1,
	 64, "good results in a row that close a regression"},
	{"baseline", "efficiency_floor", CONF_DOUBLE,
	 S(baseline.efficiency_floor), "0.8", 0, 1,
	 "a link below this share of its expected figure (K of M results) "
	 "is under-performing; 0: not judged"},
	{"suspect", "bad_results", CONF_INT, S(suspect.bad_results), "3", 1, 64,
	 "K: bad results among a port's or device's last judged_results "
	 "that make it a suspect"},
	{"suspect", "judged_results", CONF_INT, S(suspect.judged_results), "6",
	 1, 64, "M: the window of each port and device, whatever the peer"},
	{"suspect", "peers", CONF_INT, S(suspect.peers), "2", 1, 64,
	 "distinct peers of the bad results that must be fine with others"},
	{"suspect", "good_results", CONF_INT, S(suspect.good_results), "3", 1,
	 64, "good results in a row that close a suspect"},
	{"localize", "enabled", CONF_BOOL, S(localize_enabled), "true", 0, 0,
	 "attribute judged tests to the links and switches their routes "
	 "cross and name those at fault (false where traffic does not follow "
	 "the forwarding tables: adaptive routing)"},
	{"localize", "cover", CONF_BOOL, S(localize_cover), "true", 0, 0,
	 "plan so that every directed link between switches carries a test "
	 "each period (choosing pairs and, with LMC > 0, destination LIDs)"},
	{"localize", "window_periods", CONF_DOUBLE, S(localize_window), "2",
	 0.5, 100,
	 "the planner periods of judged tests localization looks "
	 "at"},
	{"localize", "bad_tests", CONF_INT, S(localize_bad), "3", 1, 64,
	 "bad tests a link or switch must explain to be named"},
	{"localize", "good_tests", CONF_INT, S(localize_good), "3", 1, 64,
	 "good tests in a row through a named link or switch that close it"},
	{"localize", "noise", CONF_DOUBLE, S(localize_noise), "0.01", 0.0001,
	 0.4, "the share of bad tests a healthy link may see (outliers)"},
	{"localize", "min_gain", CONF_DOUBLE, S(localize_min_gain), "9", 0.1,
	 1000,
	 "the evidence a link or switch needs: the natural log of how "
	 "much likelier its tests are if it is at fault than if healthy"},
	HEALTH_OPTS,
	{0}};

int collector_settings_init(struct collector_settings *s)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = conf_defaults(collector_conf_opts, s);
	if (ret)
		return ret;
	return auth_new(&s->auth);
}

/* [planner_profiles] NAME = seconds */
static int settings_profile(struct collector_settings *s, const char *name,
			    const char *value, char *err, size_t errlen)
{
	struct planner_profile *p;
	char *end;
	double v;

	errno = 0;
	v = strtod(value, &end);
	if (errno || end == value || *end || !(v >= 1 && v <= 86400)) {
		snprintf(err, errlen,
			 "[planner_profiles] %s: '%s' is not a number of "
			 "seconds in [1, 86400]",
			 name, value);
		return -EINVAL;
	}
	p = realloc(s->plan_profiles,
		    (s->n_plan_profiles + 1) * sizeof(*s->plan_profiles));
	if (!p)
		return -ENOMEM;
	s->plan_profiles = p;
	p[s->n_plan_profiles].name = strdup(name);
	p[s->n_plan_profiles].seconds = v;
	if (!p[s->n_plan_profiles].name)
		return -ENOMEM;
	s->n_plan_profiles++;
	return 0;
}

static int settings_extra(void *obj, const char *section, const char *name,
			  const char *value, char *err, size_t errlen)
{
	struct collector_settings *s = obj;

	if (!strcmp(section, "planner_profiles"))
		return settings_profile(s, name, value, err, errlen);
	if (strcmp(section, "tokens") != 0) {
		snprintf(err, errlen, "unknown section [%s]", section);
		return -EINVAL;
	}
	return auth_add(s->auth, name, value, err, errlen);
}

/* Read the enrolment secret (its first line) and the enrolled hosts. */
static int settings_enrol(struct collector_settings *s, char *err,
			  size_t errlen)
{
	FILE *f = fopen(s->enrol_secret_file, "re");
	char *line = NULL, msg[256];
	size_t cap = 0;
	int ret;

	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "enrol_secret_file: %s: %s",
			 s->enrol_secret_file, strerror(errno));
		return ret;
	}
	if (getline(&line, &cap, f) < 0) {
		free(line);
		line = NULL;
	}
	fclose(f);
	if (line)
		line[strcspn(line, " \t\r\n")] = '\0';
	ret = auth_enrol_setup(s->auth, line ? line : "", s->enrolled_file,
			       (size_t)s->enrol_max_hosts, msg, sizeof(msg));
	if (line)
		explicit_bzero(line, cap);
	free(line);
	if (ret)
		snprintf(err, errlen, "%s: %s", s->enrol_secret_file, msg);
	return ret;
}

static int settings_check(const struct collector_settings *s, char *err,
			  size_t errlen)
{
	if (httpd_conf_check(&s->http, err, errlen))
		return -EINVAL;
	if (s->admin_token && strlen(s->admin_token) < AUTH_MIN_TOKEN) {
		snprintf(err, errlen,
			 "admin_token is shorter than %d characters",
			 AUTH_MIN_TOKEN);
		return -EINVAL;
	}
	if (!s->db || !*s->db || !s->schema_dir || !*s->schema_dir) {
		snprintf(err, errlen, "db and schema_dir must be set");
		return -EINVAL;
	}
	if (baseline_opts_check(&s->baseline, err, errlen))
		return -EINVAL;
	return evidence_opts_check(&s->suspect, err, errlen);
}

/* After the file and the flags: the tokens, enrolment, the checks. */
static int settings_finish(void *obj, char *err, size_t errlen)
{
	struct collector_settings *s = obj;
	int ret = 0;

	if (s->tokens_file)
		ret = auth_load_file(s->auth, s->tokens_file, err, errlen);
	if (!ret && s->enrol_secret_file)
		ret = settings_enrol(s, err, errlen);
	if (!ret)
		ret = health_opts_check(&s->health, err, errlen);
	return ret ? ret : settings_check(s, err, errlen);
}

/* --print-config's sections beyond the table. */
static void settings_print_extra(const void *obj, FILE *f)
{
	const struct collector_settings *s = obj;

	fprintf(f, "\n[planner_profiles]\n# profile = slot seconds (none: "
		   "every registered profile, slot_seconds each)\n");
	for (size_t i = 0; i < s->n_plan_profiles; i++)
		fprintf(f, "%s = %g\n", s->plan_profiles[i].name,
			s->plan_profiles[i].seconds);
	fprintf(f, "\n[tokens]\n# host = token (%zu loaded; not printed)\n",
		auth_count(s->auth));
}

void collector_settings_free(struct collector_settings *s)
{
	if (!s)
		return;
	conf_free(collector_conf_opts, s);
	for (size_t i = 0; i < s->n_plan_profiles; i++)
		free((char *)s->plan_profiles[i].name);
	free(s->plan_profiles);
	s->plan_profiles = NULL;
	s->n_plan_profiles = 0;
	auth_free(s->auth);
	s->auth = NULL;
}

static int settings_init_obj(void *obj)
{
	return collector_settings_init(obj);
}

static void settings_free_obj(void *obj)
{
	collector_settings_free(obj);
}

const struct cli_conf collector_conf = {
	.opts = collector_conf_opts,
	.section = "collector",
	.default_path = IBPULSE_SYSCONFDIR "/collector.ini",
	.extra = settings_extra,
	.init = settings_init_obj,
	.finish = settings_finish,
	.print_extra = settings_print_extra,
	.free = settings_free_obj,
};
