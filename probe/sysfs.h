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
 * log). Returns 0 or -ENOMEM; @r keeps what it holds for report_free().
 */
int sysfs_scan(const struct sysfs_opts *o, struct report *r);

/*
 * sysfs_read_device() - read one device, @name, into @d (zeroed by the
 * caller). Returns 0 or -ENOMEM.
 */
int sysfs_read_device(const struct sysfs_opts *o, const char *name,
		      struct report_device *d);

/* 1 when @o->root is the live sysfs (/sys, after resolving symlinks). */
int sysfs_root_is_live(const char *root);

/* ---- internal, shared by sysfs.c, sysfs_port.c and netdev.c ---- */

/*
 * Read a small sysfs file into @buf (NUL-terminated). Returns 0 or a
 * negative errno; logs a failure once per path at warning level, or at
 * debug level for ENOENT with SYSFS_QUIET_MISSING (optional files) and for
 * any error with SYSFS_QUIET_ALL (gid_attrs of an unused GID: EINVAL).
 */
#define SYSFS_QUIET_MISSING 1
#define SYSFS_QUIET_ALL 2
int sysfs_read(const char *path, char *buf, size_t size, int quiet);
/*
 * snprintf() for paths: 0, or -ENAMETOOLONG when @out would be truncated
 * (then a later open() fails on the truncated path, harmlessly).
 */
int sysfs_path(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Log once that the value at @path is garbage. */
void sysfs_garbage(const char *path, const char *value);
/*
 * Entries of directory @path (no "." or ".."), sorted by name, or
 * numerically when @numeric (then non-numeric names are skipped). *@out is
 * an array of *@n strings, freed with sysfs_names_free(). A missing
 * directory gives 0 entries and returns -ENOENT.
 */
int sysfs_list(const char *path, int numeric, char ***out, size_t *n);
void sysfs_names_free(char **names, size_t n);
/* Append @name (copied) to the counter list @src of @p, if room. */
int sysfs_add_counter(struct report_port *p, int src, const char *name,
		      uint64_t value);
/* Read the ports of device directory @devdir into @d. */
int sysfs_read_ports(const struct sysfs_opts *o, const char *devdir,
		     struct report_device *d);
/* Add @name to @d->netdevs unless present or full. */
int sysfs_add_netdev(struct report_device *d, const char *name);

#endif
