// SPDX-License-Identifier: MIT
/*
 * The port side of the sysfs reader (sysfs.h): ports/N/ attributes, the GID
 * table with gid_attrs types and ndevs, the P_Key table, counters/,
 * counters_ext/ (kernels before 4.5) and hw_counters/ (every file,
 * vendor-agnostic, filtered by the configured globs) and, on RoCE ports,
 * the netdev's counters (netdev.c). sysfs_read_port() reads parts of one
 * port alone, for the verbs engine (GID and P_Key resolution, the counters
 * that tell a busy link).
 */
#include "sysfs_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "netdev.h"
#include "sysval.h"

int sysfs_add_counter(struct report_port *p, int src, const char *name,
		      uint64_t value)
{
	struct report_counter *grown;
	size_t n = p->n_counters[src];

	if (n >= REPORT_MAX_COUNTERS || !sysval_is_name(name))
		return 0;
	grown = realloc(p->counters[src], (n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	p->counters[src] = grown;
	grown[n].name = strdup(name);
	if (!grown[n].name)
		return -ENOMEM;
	grown[n].value = value;
	p->n_counters[src]++;
	return 0;
}

/* Read @portdir/@file; 0 and the text in @buf, or -1 (already logged). */
static int port_file(const char *portdir, const char *file, char *buf,
		     size_t size, char *path, size_t pathlen, int quiet)
{
	if (sysfs_path(path, pathlen, "%s/%s", portdir, file))
		return -1;
	return sysfs_read(path, buf, size, quiet) ? -1 : 0;
}

static void port_attrs(const char *portdir, struct report_port *p)
{
	static const struct {
		const char *file;
		size_t off;
		uint64_t max;
	} nums[] = {
		{"lid", offsetof(struct report_port, lid), 0xffff},
		{"sm_lid", offsetof(struct report_port, sm_lid), 0xffff},
		{"lid_mask_count", offsetof(struct report_port, lmc), 7},
		{"cap_mask", offsetof(struct report_port, cap_mask),
		 0xffffffff},
	};
	char path[PATH_MAX], buf[128], text[REPORT_MAX_NAME + 1];
	uint64_t v;

	if (!port_file(portdir, "state", buf, sizeof(buf), path, sizeof(path),
		       0) &&
	    sysval_state(buf, &p->state))
		sysfs_garbage(path, buf);
	if (!port_file(portdir, "phys_state", buf, sizeof(buf), path,
		       sizeof(path), 0) &&
	    sysval_state(buf, &p->phys_state))
		sysfs_garbage(path, buf);
	if (!port_file(portdir, "rate", buf, sizeof(buf), path, sizeof(path),
		       0) &&
	    sysval_rate(buf, &p->rate_bytes))
		sysfs_garbage(path, buf);
	if (!port_file(portdir, "link_layer", buf, sizeof(buf), path,
		       sizeof(path), 0)) {
		if (sysval_text(buf, text, sizeof(text)) ||
		    !sysval_is_name(text))
			sysfs_garbage(path, buf);
		else
			p->link_layer = strdup(text);
	}
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		/* Optional: a driver may leave any of them out. */
		if (port_file(portdir, nums[i].file, buf, sizeof(buf), path,
			      sizeof(path), SYSFS_QUIET_MISSING))
			continue;
		if (sysval_num(buf, nums[i].max, &v))
			sysfs_garbage(path, buf);
		else
			*(int64_t *)((char *)p + nums[i].off) = (int64_t)v;
	}
}

/* gid_attrs/types/I and ndevs/I of a GID in use: optional, quiet. */
static int gid_attrs(const char *portdir, struct report_gid *g)
{
	char path[PATH_MAX], buf[128], text[REPORT_MAX_NAME + 1];
	char rel[64];

	snprintf(rel, sizeof(rel), "gid_attrs/types/%u", g->index);
	if (!port_file(portdir, rel, buf, sizeof(buf), path, sizeof(path),
		       SYSFS_QUIET_ALL) &&
	    !sysval_text(buf, text, sizeof(text))) {
		g->type = strdup(text);
		if (!g->type)
			return -ENOMEM;
	}
	snprintf(rel, sizeof(rel), "gid_attrs/ndevs/%u", g->index);
	if (!port_file(portdir, rel, buf, sizeof(buf), path, sizeof(path),
		       SYSFS_QUIET_ALL) &&
	    !sysval_text(buf, text, sizeof(text)) && sysval_is_name(text)) {
		g->netdev = strdup(text);
		if (!g->netdev)
			return -ENOMEM;
	}
	return 0;
}

/* One GID file: appended to @p->gids unless all-zero or garbage. */
static int port_gid(const char *portdir, const char *idx, struct report_port *p)
{
	char path[PATH_MAX], buf[128], gid[40], rel[64];
	struct report_gid *g;
	int zero, ret;

	snprintf(rel, sizeof(rel), "gids/%s", idx);
	if (port_file(portdir, rel, buf, sizeof(buf), path, sizeof(path), 0))
		return 0;
	if (sysval_gid(buf, gid, sizeof(gid), &zero)) {
		sysfs_garbage(path, buf);
		return 0;
	}
	if (zero)
		return 0;
	g = realloc(p->gids, (p->n_gids + 1) * sizeof(*g));
	if (!g)
		return -ENOMEM;
	p->gids = g;
	g = &p->gids[p->n_gids++];
	memset(g, 0, sizeof(*g));
	g->index = (unsigned)strtoul(idx, NULL, 10);
	g->gid = strdup(gid);
	if (!g->gid)
		return -ENOMEM;
	ret = gid_attrs(portdir, g);
	if (ret)
		return ret;
	if (g->index == 0 && p->link_layer &&
	    !strcmp(p->link_layer, "InfiniBand")) {
		/* The port GUID is GID 0's interface ID (its low 64 bits). */
		p->port_guid = strdup(gid + 20);
		if (!p->port_guid)
			return -ENOMEM;
	}
	return 0;
}

static int port_pkey(const char *portdir, const char *idx,
		     struct report_port *p)
{
	char path[PATH_MAX], buf[64], rel[64];
	struct report_pkey *k;
	uint16_t pkey;

	snprintf(rel, sizeof(rel), "pkeys/%s", idx);
	if (port_file(portdir, rel, buf, sizeof(buf), path, sizeof(path), 0))
		return 0;
	if (sysval_pkey(buf, &pkey)) {
		sysfs_garbage(path, buf);
		return 0;
	}
	if (pkey == 0) /* an empty slot in the table */
		return 0;
	k = realloc(p->pkeys, (p->n_pkeys + 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	p->pkeys = k;
	k[p->n_pkeys].index = (unsigned)strtoul(idx, NULL, 10);
	k[p->n_pkeys].pkey = pkey;
	p->n_pkeys++;
	return 0;
}

/* The GID and P_Key tables, in index order. */
static int port_tables(const char *portdir, struct report_port *p)
{
	char path[PATH_MAX];
	char **names;
	size_t n;
	int ret;

	sysfs_path(path, sizeof(path), "%s/gids", portdir);
	ret = sysfs_list(path, 1, &names, &n);
	if (ret == -ENOMEM)
		return ret;
	ret = 0;
	for (size_t i = 0; !ret && i < n && p->n_gids < REPORT_MAX_GIDS; i++)
		ret = port_gid(portdir, names[i], p);
	sysfs_names_free(names, n);
	if (ret)
		return ret;
	sysfs_path(path, sizeof(path), "%s/pkeys", portdir);
	ret = sysfs_list(path, 1, &names, &n);
	if (ret == -ENOMEM)
		return ret;
	ret = 0;
	for (size_t i = 0; !ret && i < n && p->n_pkeys < REPORT_MAX_PKEYS; i++)
		ret = port_pkey(portdir, names[i], p);
	sysfs_names_free(names, n);
	return ret;
}

static int has_counter(const struct report_port *p, int src, const char *name)
{
	for (size_t i = 0; i < p->n_counters[src]; i++)
		if (!strcmp(p->counters[src][i].name, name))
			return 1;
	return 0;
}

/*
 * Every file of @portdir/@sub (counters, counters_ext, hw_counters) into
 * source @src. A name the port already has (counters_ext after counters/)
 * is kept once. Values the kernel prints as "N/A (no PMA)" (a device or
 * VF without a performance management agent) are not garbage: they cost
 * their values and one line per directory, not one per file.
 */
static int port_counters(const struct sysfs_opts *o, const char *portdir,
			 const char *sub, int src, struct report_port *p)
{
	char dir[PATH_MAX], path[PATH_MAX], buf[64];
	size_t n, n_na = 0;
	char **names;
	int ret;

	sysfs_path(dir, sizeof(dir), "%s/%s", portdir, sub);
	ret = sysfs_list(dir, 0, &names, &n);
	if (ret == -ENOMEM)
		return ret;
	ret = 0; /* no such directory (rxe has no counters/): nothing */
	for (size_t i = 0; !ret && i < n; i++) {
		uint64_t v;

		if (!sysval_glob_any(o->counters_include, names[i]) ||
		    sysval_glob_any(o->counters_exclude, names[i]) ||
		    has_counter(p, src, names[i]))
			continue;
		if (sysfs_path(path, sizeof(path), "%s/%s", dir, names[i]))
			continue;
		if (sysfs_read(path, buf, sizeof(buf), 0))
			continue;
		if (sysval_u64(buf, &v)) {
			if (sysval_is_na(buf))
				n_na++;
			else
				sysfs_garbage(path, buf);
			continue;
		}
		ret = sysfs_add_counter(p, src, names[i], v);
	}
	sysfs_names_free(names, n);
	if (n_na)
		log_once(dir, 3600, LOG_LVL_WARN,
			 "%s: %zu counters read \"N/A\" (no performance "
			 "management agent on this port): skipped",
			 dir, n_na);
	return ret;
}

/* RoCE: the netdev behind GID 0 (or the first GID naming one). */
static int port_netdev(const struct sysfs_opts *o, struct report_port *p,
		       struct report_device *d)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < p->n_gids; i++)
		if (p->gids[i].netdev)
			ret = sysfs_add_netdev(d, p->gids[i].netdev);
	if (ret || !p->link_layer || strcmp(p->link_layer, "Ethernet"))
		return ret;
	for (size_t i = 0; i < p->n_gids; i++) {
		if (p->gids[i].netdev) {
			p->netdev = strdup(p->gids[i].netdev);
			if (!p->netdev)
				return -ENOMEM;
			break;
		}
	}
	if (!p->netdev && d->n_netdevs == 1) {
		p->netdev = strdup(d->netdevs[0]);
		if (!p->netdev)
			return -ENOMEM;
	}
	return p->netdev ? netdev_read(o, p->netdev, p) : 0;
}

/* The @parts (SYSFS_PORT_*) of the port in @devdir/ports/@num into @p. */
static int read_port_parts(const struct sysfs_opts *o, const char *devdir,
			   const char *num, unsigned parts,
			   struct report_port *p)
{
	char portdir[PATH_MAX];
	int ret = 0;

	memset(p, 0, sizeof(*p));
	p->port = (unsigned)strtoul(num, NULL, 10);
	p->state = p->phys_state = -1;
	p->rate_bytes = REPORT_UNKNOWN;
	p->lid = p->sm_lid = p->lmc = p->cap_mask = -1;
	if (sysfs_path(portdir, sizeof(portdir), "%s/ports/%s", devdir, num))
		return 0;
	if (parts & SYSFS_PORT_ATTRS)
		port_attrs(portdir, p);
	if (parts & SYSFS_PORT_TABLES)
		ret = port_tables(portdir, p);
	if (!ret && (parts & SYSFS_PORT_COUNTERS))
		ret = port_counters(o, portdir, "counters", CSRC_IB, p);
	if (!ret && (parts & SYSFS_PORT_COUNTERS))
		/* the 64-bit counters of kernels before 4.5 (mlx4) */
		ret = port_counters(o, portdir, "counters_ext", CSRC_IB, p);
	if (!ret && (parts & SYSFS_PORT_COUNTERS))
		ret = port_counters(o, portdir, "hw_counters", CSRC_HW, p);
	return ret;
}

static int read_port(const struct sysfs_opts *o, const char *devdir,
		     const char *num, struct report_device *d)
{
	struct report_port *p = &d->ports[d->n_ports];
	int ret;

	d->n_ports++;
	ret = read_port_parts(
		o, devdir, num,
		SYSFS_PORT_ATTRS | SYSFS_PORT_TABLES | SYSFS_PORT_COUNTERS, p);
	if (!ret)
		ret = port_netdev(o, p, d);
	return ret;
}

int sysfs_read_port(const struct sysfs_opts *o, const char *dev, unsigned port,
		    unsigned parts, struct report_port *p)
{
	char devdir[PATH_MAX], portdir[PATH_MAX], num[16];
	struct stat st;

	memset(p, 0, sizeof(*p));
	/* A name, so never a path: "..", "." and "a/b" are not devices. */
	if (!sysval_is_name(dev) || !strcmp(dev, ".") || !strcmp(dev, ".."))
		return -EINVAL;
	snprintf(num, sizeof(num), "%u", port);
	if (sysfs_path(devdir, sizeof(devdir), "%s/class/infiniband/%s",
		       o->root, dev) ||
	    sysfs_path(portdir, sizeof(portdir), "%s/ports/%s", devdir, num) ||
	    stat(portdir, &st) || !S_ISDIR(st.st_mode))
		return -ENODEV;
	return read_port_parts(o, devdir, num, parts, p);
}

int sysfs_read_ports(const struct sysfs_opts *o, const char *devdir,
		     struct report_device *d)
{
	char path[PATH_MAX];
	char **names;
	size_t n, nports;
	int ret;

	sysfs_path(path, sizeof(path), "%s/ports", devdir);
	ret = sysfs_list(path, 1, &names, &n);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		log_once(path, 3600, LOG_LVL_WARN, "%s: %s", path,
			 strerror(-ret));
		return 0;
	}
	ret = 0;
	nports = n > REPORT_MAX_PORTS ? REPORT_MAX_PORTS : n;
	if (nports) {
		d->ports = calloc(nports, sizeof(*d->ports));
		if (!d->ports)
			ret = -ENOMEM;
	}
	for (size_t i = 0; !ret && i < nports; i++) {
		uint64_t num;

		if (sysval_u64(names[i], &num) || num > 255)
			continue;
		ret = read_port(o, devdir, names[i], d);
	}
	sysfs_names_free(names, n);
	return ret;
}
