/* SPDX-License-Identifier: MIT */
/*
 * The netdev side of a RoCE port, which IB counters never show: the
 * carrier_changes count from /sys/class/net/<if>/ (a RoCE link flap does
 * not move link_downed) and the driver's ethtool statistics (SIOCETHTOOL:
 * ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS, ETHTOOL_GSTATS) filtered by name,
 * for pause frames, PFC and discards.
 */
#ifndef IBPULSE_NETDEV_H
#define IBPULSE_NETDEV_H

#include "report.h"
#include "sysfs.h"

/*
 * netdev_read() - add @ifname's counters to @p's CSRC_NET list.
 * carrier_changes is read under @o->root; the ethtool statistics only when
 * @o->netdev_stats is set and @o->root is the live /sys. A failure costs
 * those values (logged once). Returns 0 or -ENOMEM.
 */
int netdev_read(const struct sysfs_opts *o, const char *ifname,
		struct report_port *p);

/*
 * netdev_ethtool_stats() - the ethtool statistics of @ifname whose names
 * match the globs in @include, appended to @p's CSRC_NET list. Returns 0,
 * -ENOMEM, or the negative errno of a failed ioctl (-ENODEV, -EOPNOTSUPP).
 */
int netdev_ethtool_stats(const char *ifname, const char *include,
			 struct report_port *p);

#endif
