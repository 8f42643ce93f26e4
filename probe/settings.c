// SPDX-License-Identifier: MIT
/*
 * The probe's settings table and report building (probe.h). One table
 * drives the defaults, probe.ini parsing and --print-config; new [probe]
 * keys are a line here and a field in struct probe_settings.
 */
#include "probe.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "sysfs.h"
#include "name.h"

#define OPT(name, type, def, min, max, help)                                   \
	{                                                                      \
		"probe", #name, type, offsetof(struct probe_settings, name),   \
			def, min, max, help                                    \
	}

#define DOPT(name, type, def, min, max, help)                                  \
	{                                                                      \
		"daemon", #name, type, offsetof(struct probe_settings, name),  \
			def, min, max, help                                    \
	}

const struct conf_opt probe_conf_opts[] = {
	OPT(host, CONF_STR, NULL, 0, 0,
	    "host name sent in reports; unset: gethostname()"),
	OPT(sysfs_root, CONF_STR, "/sys", 0, 0,
	    "sysfs mount point; a fixture tree for tests"),
	OPT(collector_url, CONF_STR, NULL, 0, 0,
	    "collector report URL, e.g. https://collector:8443/api/v1/report"),
	OPT(token_file, CONF_STR, NULL, 0, 0,
	    "file holding this host's bearer token"),
	OPT(enrol_secret_file, CONF_STR, NULL, 0, 0,
	    "the collector's enrolment secret: without a token_file, enrol "
	    "once and store the token received there"),
	OPT(ca_file, CONF_STR, NULL, 0, 0,
	    "CA bundle to verify the collector; unset: the system CA store"),
	OPT(connect_timeout, CONF_DOUBLE, "5", 0.1, 300,
	    "seconds to establish the connection"),
	OPT(timeout, CONF_DOUBLE, "20", 0.1, 3600, "seconds for a whole push"),
	OPT(counters_include, CONF_STR, "*", 0, 0,
	    "globs of counters/ and hw_counters/ files to report"),
	OPT(counters_exclude, CONF_STR, NULL, 0, 0,
	    "globs of counters/ and hw_counters/ files to skip"),
	OPT(netdev_stats, CONF_BOOL, "true", 0, 0,
	    "read RoCE netdevs' ethtool statistics (live /sys only)"),
	OPT(netdev_stats_include, CONF_STR, SYSFS_NETDEV_STATS_DEFAULT, 0, 0,
	    "globs of ethtool statistics to report"),
	OPT(log_level, CONF_LOG, "info", 0, 0, "error, warn, info or debug"),
	DOPT(counters_interval, CONF_INT, "10", 1, 3600,
	     "seconds between counter reads"),
	DOPT(push_interval, CONF_INT, "30", 1, 86400,
	     "seconds between counter pushes (the newest read is sent)"),
	DOPT(plan_interval, CONF_INT, "300", 5, 86400,
	     "seconds between plan fetches from the collector"),
	DOPT(test_interval, CONF_INT, "300", 1, 86400,
	     "seconds between static-peer tests (no collector plan)"),
	DOPT(responder_listen, CONF_STR, NULL, 0, 0,
	     "address the responder listens on; unset: every address"),
	DOPT(responder_port, CONF_INT, "18515", 0, 65535,
	     "TCP port of the responder (0: any free port)"),
	DOPT(responder_address, CONF_STR, NULL, 0, 0,
	     "address peers reach the responder at; unset: the host name"),
	DOPT(responder_device, CONF_STR, NULL, 0, 0,
	     "device the responder serves when a peer names none; "
	     "unset: the first one"),
	DOPT(responder_ib_port, CONF_INT, "1", 1, 255,
	     "port the responder serves when a peer names none"),
	DOPT(responder_max_size, CONF_INT, "8388608", 1, 1073741824,
	     "largest message a peer may ask of the responder, bytes"),
	DOPT(responder_max_qps, CONF_INT, "16", 1, 64,
	     "most QPs a peer may ask of the responder"),
	DOPT(responder_max_duration, CONF_DOUBLE, "30", 0.1, 3600,
	     "longest test a peer may ask of the responder, seconds"),
	DOPT(responder_max_iters, CONF_INT, "1000000", 1, 100000000,
	     "most iterations a peer may ask of the responder"),
	DOPT(secret_file, CONF_STR, NULL, 0, 0,
	     "shared secret authenticating tests (both ends); unset: none"),
	DOPT(responder_open, CONF_BOOL, "false", 0, 0,
	     "also admit peers with neither a collector ticket nor the "
	     "secret (anyone who connects)"),
	DOPT(duty_cycle, CONF_DOUBLE, "0.05", 0, 1,
	     "share of time a port may spend in tests (both roles)"),
	DOPT(duty_window, CONF_DOUBLE, "3600", 10, 604800,
	     "seconds over which the duty cycle is accounted"),
	DOPT(jitter, CONF_DOUBLE, "30", 0, 3600,
	     "seconds, at most, of random delay before each test"),
	DOPT(test_timeout, CONF_DOUBLE, "10", 0.5, 600,
	     "seconds each control step of a test may take"),
	DOPT(spool_dir, CONF_STR, "/var/lib/ibpulse/spool", 0, 0,
	     "results wait here until the collector has them"),
	DOPT(spool_max_bytes, CONF_INT, "67108864", 4096, 1099511627776.0,
	     "spool size cap in bytes; the oldest results go first"),
	DOPT(spool_max_age, CONF_INT, "604800", 60, 31536000,
	     "seconds a result may wait in the spool before it is dropped"),
	DOPT(results_batch, CONF_INT, "100", 1, 1000,
	     "results sent per POST /api/v1/results"),
	DOPT(backoff_min, CONF_DOUBLE, "1", 0.01, 3600,
	     "first retry delay cap after a failed push, seconds"),
	DOPT(backoff_max, CONF_DOUBLE, "300", 0.01, 86400,
	     "largest retry delay cap, seconds (full jitter below it)"),
	DOPT(pause_file, CONF_STR, NULL, 0, 0,
	     "no tests while this file exists; unset: no such condition"),
	DOPT(control_socket, CONF_STR, "/run/ibpulse/probe.sock", 0, 0,
	     "unix socket of pause/resume/status"),
	DOPT(selftest, CONF_BOOL, "false", 0, 0,
	     "run a loopback test on every HCA (intra-host check)"),
	DOPT(selftest_interval, CONF_INT, "3600", 10, 604800,
	     "seconds between loopback tests of one HCA"),
	DOPT(selftest_profile, CONF_STR, "bw", 0, 0,
	     "profile the loopback test runs"),
	DOPT(peer_profiles, CONF_STR, NULL, 0, 0,
	     "profiles run against static peers, comma-separated; unset: all"),
	DOPT(busy_tolerance, CONF_DOUBLE, "0.1", 0, 100,
	     "extra port bytes, as a share of the test's, before busy"),
	DOPT(metrics_listen, CONF_STR, NULL, 0, 0,
	     "ADDR:PORT serving this host's /metrics; unset: not served"),
	{0},
};

int probe_settings_load(struct probe_settings *s, const char *path, char *err,
			size_t errlen)
{
	enum log_level lvl;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = conf_defaults(probe_conf_opts, s);
	if (ret) {
		snprintf(err, errlen, "cannot set defaults: %s",
			 strerror(-ret));
		return ret;
	}
	if (path) {
		ret = conf_load(probe_conf_opts, s, path, probe_settings_extra,
				err, errlen);
		if (ret)
			return ret;
	}
	ret = probe_settings_finish(s, err, errlen);
	if (ret)
		return ret;
	if (s->log_level && log_level_parse(s->log_level, &lvl)) {
		snprintf(err, errlen,
			 "log_level: '%s' is not one of error, warn, info, "
			 "debug",
			 s->log_level);
		return -EINVAL;
	}
	return 0;
}

void probe_settings_free(struct probe_settings *s)
{
	conf_free(probe_conf_opts, s);
}

int probe_host_name(const struct probe_settings *s, char **out)
{
	char name[HOST_NAME_MAX + 1];

	if (s->host) {
		snprintf(name, sizeof(name), "%s", s->host);
	} else if (gethostname(name, sizeof(name))) {
		log_err("gethostname: %s", strerror(errno));
		return -errno;
	}
	name[sizeof(name) - 1] = '\0';
	/* The report's host rule (name.h), as the collector checks it. */
	if (!name_valid(NAME_HOST, name, REPORT_MAX_NAME)) {
		log_err("host name '%s' is not valid in a report: set [probe] "
			"host",
			name);
		return -EINVAL;
	}
	*out = strdup(name);
	return *out ? 0 : -ENOMEM;
}

int probe_report_build(const struct probe_settings *s, struct report **out)
{
	struct sysfs_opts o = {
		.root = s->sysfs_root ? s->sysfs_root : "/sys",
		.counters_include = s->counters_include,
		.counters_exclude = s->counters_exclude,
		.netdev_stats = s->netdev_stats,
		.netdev_stats_include = s->netdev_stats_include,
	};
	struct report *r = calloc(1, sizeof(*r));
	struct timespec ts;
	int ret;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->version = REPORT_VERSION;
	clock_gettime(CLOCK_REALTIME, &ts);
	r->timestamp = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	r->probe_version = strdup(IBPULSE_VERSION);
	ret = r->probe_version ? probe_host_name(s, &r->host) : -ENOMEM;
	if (!ret)
		ret = sysfs_scan(&o, r);
	if (ret) {
		report_free(r);
		return ret;
	}
	*out = r;
	return 0;
}
