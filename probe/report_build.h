/* SPDX-License-Identifier: MIT */
/*
 * One report of this host's RDMA devices, read from sysfs with the
 * probe's settings (sysfs root, counter globs, host name): what
 * `devices`, `report`, `metrics` and the daemon send or print.
 */
#ifndef IBPULSE_REPORT_BUILD_H
#define IBPULSE_REPORT_BUILD_H

#include "probe_settings.h"
#include "report.h"

/*
 * probe_report_build() - a new report of this host's devices (caller
 * frees with report_free): host, timestamp now, every device under
 * @s->sysfs_root. Returns 0, -ENOMEM, or -EINVAL when the host name is
 * not valid for a report (logged).
 */
int probe_report_build(const struct probe_settings *s, struct report **out);

/*
 * probe_host_name() - the host name reports carry (@s->host or
 * gethostname()), checked against the report's rule; caller frees.
 * Returns 0, -EINVAL (logged) or -ENOMEM.
 */
int probe_host_name(const struct probe_settings *s, char **out);

#endif
