// SPDX-License-Identifier: MIT
/*
 * Netdev counters of RoCE ports (netdev.h): carrier_changes from sysfs and
 * the driver's ethtool statistics through the SIOCETHTOOL ioctl, the same
 * three calls `ethtool -S` makes. The statistics set can be large (mlx5
 * has ~1,000 entries with per-queue ones), so only names matching the
 * configured globs are kept.
 */
#include "netdev.h"

#include <errno.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "sysfs_int.h"
#include "sysval.h"

/* Far above any real driver; a bound on what we allocate. */
#define NETDEV_MAX_STATS 65536

static int ethtool_ioctl(int fd, const char *ifname, void *cmd)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

/* The number of ETH_SS_STATS strings of @ifname, or a negative errno. */
static int ethtool_n_stats(int fd, const char *ifname, uint32_t *n)
{
	struct ethtool_sset_info *info;
	int ret;

	/* One set asked for: one u32 of data after the header. */
	info = calloc(1, sizeof(*info) + sizeof(uint32_t));
	if (!info)
		return -ENOMEM;
	info->cmd = ETHTOOL_GSSET_INFO;
	info->sset_mask = 1ULL << ETH_SS_STATS;
	ret = ethtool_ioctl(fd, ifname, info);
	if (!ret)
		*n = (info->sset_mask & (1ULL << ETH_SS_STATS)) ? info->data[0]
								: 0;
	free(info);
	return ret;
}

static int ethtool_fetch(int fd, const char *ifname, uint32_t n,
			 struct ethtool_gstrings **names,
			 struct ethtool_stats **stats)
{
	int ret;

	*names = calloc(1, sizeof(**names) + (size_t)n * ETH_GSTRING_LEN);
	*stats = calloc(1, sizeof(**stats) + (size_t)n * sizeof(uint64_t));
	if (!*names || !*stats)
		return -ENOMEM;
	(*names)->cmd = ETHTOOL_GSTRINGS;
	(*names)->string_set = ETH_SS_STATS;
	(*names)->len = n;
	ret = ethtool_ioctl(fd, ifname, *names);
	if (ret)
		return ret;
	(*stats)->cmd = ETHTOOL_GSTATS;
	(*stats)->n_stats = n;
	ret = ethtool_ioctl(fd, ifname, *stats);
	/* The set can change between calls (a queue added): trust the less. */
	if (!ret && (*names)->len < n)
		(*stats)->n_stats = (*names)->len;
	return ret;
}

int netdev_ethtool_stats(const char *ifname, const char *include,
			 struct report_port *p)
{
	struct ethtool_gstrings *names = NULL;
	struct ethtool_stats *stats = NULL;
	uint32_t n = 0;
	int fd, ret;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ret = ethtool_n_stats(fd, ifname, &n);
	if (ret || n == 0)
		goto out;
	if (n > NETDEV_MAX_STATS)
		n = NETDEV_MAX_STATS;
	ret = ethtool_fetch(fd, ifname, n, &names, &stats);
	for (uint32_t i = 0; !ret && i < stats->n_stats && i < n; i++) {
		char name[ETH_GSTRING_LEN + 1];

		memcpy(name, names->data + (size_t)i * ETH_GSTRING_LEN,
		       ETH_GSTRING_LEN);
		name[ETH_GSTRING_LEN] = '\0';
		if (sysval_glob_any(include, name))
			ret = sysfs_add_counter(p, CSRC_NET, name,
						stats->data[i]);
	}
out:
	free(names);
	free(stats);
	close(fd);
	return ret;
}

int netdev_read(const struct sysfs_opts *o, const char *ifname,
		struct report_port *p)
{
	char path[PATH_MAX], buf[64];
	uint64_t v;
	int ret;

	sysfs_path(path, sizeof(path), "%s/class/net/%s/carrier_changes",
		   o->root, ifname);
	if (!sysfs_read(path, buf, sizeof(buf), SYSFS_QUIET_MISSING)) {
		if (sysval_u64(buf, &v))
			sysfs_garbage(path, buf);
		else if (sysfs_add_counter(p, CSRC_NET, "carrier_changes", v))
			return -ENOMEM;
	}
	if (!o->netdev_stats || !sysfs_root_is_live(o->root))
		return 0;
	ret = netdev_ethtool_stats(ifname, o->netdev_stats_include, p);
	if (ret == -ENOMEM)
		return ret;
	if (ret)
		log_once(ifname, 3600,
			 ret == -EOPNOTSUPP ? LOG_LVL_DEBUG : LOG_LVL_WARN,
			 "%s: ethtool statistics: %s", ifname, strerror(-ret));
	return 0;
}
