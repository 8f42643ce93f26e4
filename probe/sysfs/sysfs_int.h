/* SPDX-License-Identifier: MIT */
/*
 * Internals of the sysfs reader shared by sysfs.c (devices, and the small
 * file and directory helpers), sysfs_port.c (ports) and netdev.c (a RoCE
 * port's netdev). Not for other files: they ask sysfs.h.
 */
#ifndef IBPULSE_SYSFS_INT_H
#define IBPULSE_SYSFS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "sysfs.h"

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
