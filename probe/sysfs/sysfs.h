/* SPDX-License-Identifier: MIT */
/*
 * Reading RDMA devices and ports from sysfs into a struct report
 * (common/report.h): /sys/class/infiniband/<dev>/ and its ports, the PCI
 * device behind it, and for RoCE ports the netdev (carrier_changes under
 * /sys/class/net, the driver's ethtool statistics). The root is a
 * parameter so tests run on fixture trees.
 *
 * A missing, unreadable or garbage file costs that one value, logged once
 * per path and hour with log_once(); only running out of memory fails a
 * scan.
 *
 * The probe's one sysfs reader (libsysfs): the report's scan and the verbs
 * engine's per-test reads of one port (sysfs_read_port()) both come here.
 * Its inside, shared by its files only, is sysfs_int.h.
 */
#ifndef IBPULSE_SYSFS_H
#define IBPULSE_SYSFS_H

#include <stddef.h>

#include "report.h"

struct sysfs_opts {
	const char *root; /* sysfs mount point: "/sys" or a fixture */
	/* Comma-separated fnmatch globs on counters/ and hw_counters/ names. */
	const char *counters_include; /* NULL or "" keeps nothing: use "*" */
	const char *counters_exclude; /* NULL: exclude nothing */
	/*
	 * Ethtool statistics of RoCE netdevs kept by name (globs). Read only
	 * when @netdev_stats is set and @root is the live /sys: the ioctl
	 * asks the running kernel, not the tree under @root.
	 */
	int netdev_stats;
	const char *netdev_stats_include;
};

/* The default netdev statistics globs (pause, PFC, discards, drops). */
#define SYSFS_NETDEV_STATS_DEFAULT                                             \
	"*pause*,*pfc*,*prio*_pause*,*discard*,*drop*,*out_of_buffer*"

/*
 * sysfs_scan() - read every device under @o->root/class/infiniband into
 * @r->devices (sorted by name; the caller sets host, timestamp...).
 * A missing class/infiniband directory means no devices (0, with an info
 * log); a root that is not a directory is an error (sysfs_root_check()).
 * Returns 0, -ENOMEM or sysfs_root_check()'s error; @r keeps what it
 * holds for report_free().
 */
int sysfs_scan(const struct sysfs_opts *o, struct report *r);

/*
 * sysfs_root_check() - 0 when @root is a directory; else logs (once a
 * while) that sysfs_root names nothing and returns -ENOENT, -ENOTDIR or
 * the like. A root without class/infiniband is fine (no RDMA devices); a
 * root that does not exist is a typo, and sysfs_scan() refuses it.
 */
int sysfs_root_check(const char *root);

/*
 * sysfs_read_device() - read one device, @name, into @d (zeroed by the
 * caller). Returns 0 or -ENOMEM.
 */
int sysfs_read_device(const struct sysfs_opts *o, const char *name,
		      struct report_device *d);

/* 1 when @o->root is the live sysfs (/sys, after resolving symlinks). */
int sysfs_root_is_live(const char *root);

/* What sysfs_read_port() reads of a port. */
#define SYSFS_PORT_ATTRS 1u    /* state, rate, link_layer, LIDs, cap_mask */
#define SYSFS_PORT_TABLES 2u   /* the GID and P_Key tables (after ATTRS) */
#define SYSFS_PORT_COUNTERS 4u /* counters/, counters_ext/, hw_counters/ */

/*
 * sysfs_read_port() - port @port of device @dev alone, read as sysfs_scan()
 * reads it but only the @parts asked for (SYSFS_PORT_* bits; counters kept
 * by @o's globs) and never the netdev (finding it needs the device). @p is
 * overwritten; free what it holds with report_port_clear(), also after a
 * failure. Returns 0, -EINVAL when @dev is not a device name, -ENODEV when
 * the port has no directory, or -ENOMEM.
 */
int sysfs_read_port(const struct sysfs_opts *o, const char *dev, unsigned port,
		    unsigned parts, struct report_port *p);

#endif
