// SPDX-License-Identifier: MIT
/*
 * Building one report from sysfs (report_build.h): the host name under
 * the report's rule (common/name.h), the time, the probe's version and
 * every device the sysfs reader finds with the settings' filters.
 */
#include "report_build.h"
#include "now.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "name.h"
#include "sysfs.h"

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
	int ret;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->version = REPORT_VERSION;
	r->timestamp = now_wall();
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
