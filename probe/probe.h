/* SPDX-License-Identifier: MIT */
/*
 * The probe's settings (the [probe] section of probe.ini, table-driven via
 * common/conf.h), building one report from sysfs, and printing it the way
 * ibstat does. Commands in main.c combine these with push.h.
 */
#ifndef IBPULSE_PROBE_H
#define IBPULSE_PROBE_H

#include <stdio.h>

#include "conf.h"
#include "report.h"

struct probe_settings {
	char *host; /* NULL: gethostname() */
	char *sysfs_root;
	char *collector_url;
	char *token_file;
	char *ca_file;
	double connect_timeout; /* seconds */
	double timeout;		/* seconds, whole request */
	char *counters_include;
	char *counters_exclude;
	int netdev_stats;
	char *netdev_stats_include;
	char *log_level;
};

/* The [probe] option table (NULL-terminated). */
extern const struct conf_opt probe_conf_opts[];

/*
 * probe_settings_load() - defaults, then @path if not NULL. On failure
 * returns a negative errno with the reason in @err; @s must still be
 * freed with probe_settings_free().
 */
int probe_settings_load(struct probe_settings *s, const char *path, char *err,
			size_t errlen);
void probe_settings_free(struct probe_settings *s);

/*
 * probe_report_build() - a new report of this host's devices (caller
 * frees with report_free): host, timestamp now, every device under
 * @s->sysfs_root. Returns 0, -ENOMEM, or -EINVAL when the host name is
 * not valid for a report (logged).
 */
int probe_report_build(const struct probe_settings *s, struct report **out);

/*
 * probe_print_devices() - the ibstat-like listing of @r to @f: identity,
 * PCIe state (DEGRADED when below its maximum), per port state, rate,
 * addresses, the P_Key and GID tables and, with @counters, the counters.
 */
void probe_print_devices(FILE *f, const struct report *r, int counters);

/* 1 when the PCIe link runs below its maximum speed or width. */
int probe_pcie_degraded(const struct report_pcie *p);

#endif
