// SPDX-License-Identifier: MIT
/*
 * The probe's settings table and report building (probe.h). One table
 * drives the defaults, probe.ini parsing and --print-config; new [probe]
 * keys are a line here and a field in struct probe_settings.
 */
#include "probe.h"

#include <ctype.h>
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
#include "sysval.h"

#define OPT(name, type, def, min, max, help)                                   \
	{                                                                      \
		"probe", #name, type, offsetof(struct probe_settings, name),   \
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
	OPT(log_level, CONF_STR, "info", 0, 0, "error, warn, info or debug"),
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
		ret = conf_load(probe_conf_opts, s, path, NULL, err, errlen);
		if (ret)
			return ret;
	}
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

static int report_host(const struct probe_settings *s, char **out)
{
	char name[HOST_NAME_MAX + 1];

	if (s->host) {
		snprintf(name, sizeof(name), "%s", s->host);
	} else if (gethostname(name, sizeof(name))) {
		log_err("gethostname: %s", strerror(errno));
		return -errno;
	}
	name[sizeof(name) - 1] = '\0';
	/* The report's host rule: [A-Za-z0-9._-], starting alphanumeric. */
	if (!sysval_is_name(name) || !isalnum((unsigned char)name[0]) ||
	    strpbrk(name, ":+")) {
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
	ret = r->probe_version ? report_host(s, &r->host) : -ENOMEM;
	if (!ret)
		ret = sysfs_scan(&o, r);
	if (ret) {
		report_free(r);
		return ret;
	}
	*out = r;
	return 0;
}
