// SPDX-License-Identifier: MIT
/*
 * Reads a port's GID and P_Key tables from sysfs and resolves selectors and
 * values to indexes, and reads the port counters that tell a busy link.
 * Kept free of libibverbs so fixture trees can stand in for real devices
 * in unit tests.
 */
#include "resolve.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read a small sysfs file, trailing newline stripped. */
static int read_attr(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* One counter file of @dev/@port under @dir ("counters", "hw_counters"). */
static int portctr_get(const char *root, const char *dev, unsigned port,
		       const char *dir, const char *name, uint64_t *v)
{
	char path[512], text[64], *end;
	unsigned long long x;
	int n = snprintf(path, sizeof(path),
			 "%s/class/infiniband/%s/ports/%u/%s/%s", root, dev,
			 port, dir, name);

	if (n < 0 || (size_t)n >= sizeof(path) ||
	    read_attr(path, text, sizeof(text)))
		return -ENOENT;
	errno = 0;
	x = strtoull(text, &end, 0);
	if (errno || end == text)
		return -EINVAL;
	*v = x;
	return 0;
}

/* Both counters of a pair, or neither. */
static bool portctr_pair(const char *root, const char *dev, unsigned port,
			 const char *dir, const char *const name[2],
			 uint64_t *a, uint64_t *b)
{
	return !portctr_get(root, dev, port, dir, name[0], a) &&
	       !portctr_get(root, dev, port, dir, name[1], b);
}

int vt_portctr_read(const char *root, const char *dev, unsigned port,
		    struct vt_portctr *c)
{
	static const char *const data[2] = {"port_xmit_data", "port_rcv_data"};
	static const char *const pkts[2] = {"port_xmit_packets",
					    "port_rcv_packets"};
	static const char *const hw_pkts[2] = {"sent_pkts", "rcvd_pkts"};
	static const char *const cnp[] = {"np_cnp_sent", "rp_cnp_handled",
					  "np_ecn_marked_roce_packets"};
	uint64_t a, b;

	memset(c, 0, sizeof(*c));
	if (portctr_pair(root, dev, port, "counters", data, &a, &b)) {
		c->has_bytes = true;
		c->xmit_bytes = a * 4; /* 4-octet words */
		c->rcv_bytes = b * 4;
	}
	if (portctr_pair(root, dev, port, "counters", pkts, &a, &b) ||
	    portctr_pair(root, dev, port, "hw_counters", hw_pkts, &a, &b)) {
		c->has_pkts = true;
		c->xmit_pkts = a;
		c->rcv_pkts = b;
	}
	if (!portctr_get(root, dev, port, "counters", "port_xmit_wait", &a)) {
		c->has_wait = true;
		c->xmit_wait = a;
	}
	for (size_t i = 0; i < sizeof(cnp) / sizeof(*cnp); i++) {
		if (!portctr_get(root, dev, port, "hw_counters", cnp[i], &a)) {
			c->has_cnp = true;
			c->cnp += a;
		}
	}
	return c->has_bytes || c->has_pkts || c->has_wait || c->has_cnp
		       ? 0
		       : -ENOENT;
}

static int parse_index(const char *name, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	if (name[0] < '0' || name[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(name, &end, 10);
	if (errno || *end || v >= max)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static enum vt_gid_type parse_gid_type(const char *s, bool eth)
{
	if (!strcmp(s, "RoCE v2"))
		return VT_GID_ROCE_V2;
	if (!strcmp(s, "IB/RoCE v1"))
		return eth ? VT_GID_ROCE_V1 : VT_GID_IB;
	return eth ? VT_GID_UNKNOWN : VT_GID_IB;
}

static int gid_cmp(const void *a, const void *b)
{
	const struct vres_gid *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

static int read_one_gid(const char *pdir, unsigned idx, bool eth,
			struct vres_gid *g)
{
	char path[512], val[64];
	static const uint8_t zero[16];

	snprintf(path, sizeof(path), "%s/gids/%u", pdir, idx);
	if (read_attr(path, val, sizeof(val)))
		return -ENOENT;
	if (inet_pton(AF_INET6, val, g->gid) != 1 || !memcmp(g->gid, zero, 16))
		return -ENOENT;
	g->index = idx;
	snprintf(path, sizeof(path), "%s/gid_attrs/types/%u", pdir, idx);
	if (read_attr(path, val, sizeof(val)))
		val[0] = '\0';
	g->type = parse_gid_type(val, eth);
	return 0;
}

static int read_gids(const char *pdir, struct vres_port *out)
{
	char path[512];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/gids", pdir);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && out->ngids < VRES_MAX_GIDS) {
		unsigned idx;

		if (parse_index(de->d_name, 65536, &idx))
			continue;
		if (!read_one_gid(pdir, idx, out->eth, &out->gids[out->ngids]))
			out->ngids++;
	}
	closedir(d);
	qsort(out->gids, out->ngids, sizeof(out->gids[0]), gid_cmp);
	return 0;
}

static int read_pkeys(const char *pdir, struct vres_port *out)
{
	char path[512], val[32];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/pkeys", pdir);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned idx;
		unsigned long v;
		char *end;

		if (parse_index(de->d_name, VRES_MAX_PKEYS, &idx))
			continue;
		snprintf(path, sizeof(path), "%s/pkeys/%u", pdir, idx);
		if (read_attr(path, val, sizeof(val)))
			continue;
		v = strtoul(val, &end, 16);
		if (*end || v > 0xffff)
			continue;
		out->pkeys[idx] = (uint16_t)v;
		if (idx + 1 > out->npkeys)
			out->npkeys = idx + 1;
	}
	closedir(d);
	return 0;
}

int vres_port_read(const char *root, const char *dev, unsigned port,
		   struct vres_port *out)
{
	char pdir[384], path[512], val[64];
	int rc;

	memset(out, 0, sizeof(*out));
	if (strchr(dev, '/') || !strcmp(dev, "..") || !dev[0])
		return -EINVAL;
	snprintf(pdir, sizeof(pdir), "%s/class/infiniband/%s/ports/%u", root,
		 dev, port);
	snprintf(path, sizeof(path), "%s/link_layer", pdir);
	rc = read_attr(path, val, sizeof(val));
	if (rc)
		return rc == -ENOENT ? -ENODEV : rc;
	out->eth = !strcmp(val, "Ethernet");
	rc = read_gids(pdir, out);
	if (rc)
		return rc;
	return read_pkeys(pdir, out);
}

static bool gid_is_v4(const uint8_t *g)
{
	static const uint8_t pfx[12] = {0, 0, 0, 0, 0,	  0,
					0, 0, 0, 0, 0xff, 0xff};

	return !memcmp(g, pfx, 12);
}

/* First GID with @type (or any when UNKNOWN) and family (0 any, 4, 6). */
static int find_gid(const struct vres_port *port, enum vt_gid_type type,
		    int family, size_t *pos)
{
	size_t i;

	for (i = 0; i < port->ngids; i++) {
		const struct vres_gid *g = &port->gids[i];

		if (type != VT_GID_UNKNOWN && g->type != type)
			continue;
		if (family == 4 && !gid_is_v4(g->gid))
			continue;
		if (family == 6 && gid_is_v4(g->gid))
			continue;
		*pos = i;
		return 0;
	}
	return -ENOENT;
}

static int find_addr(const struct vres_port *port, const char *sel, size_t *pos)
{
	uint8_t want[16] = {0};
	struct in_addr v4;
	size_t i;
	int found = -ENOENT;

	if (inet_pton(AF_INET, sel, &v4) == 1) {
		want[10] = want[11] = 0xff;
		memcpy(want + 12, &v4, 4);
	} else if (inet_pton(AF_INET6, sel, want) != 1) {
		return -EINVAL;
	}
	for (i = 0; i < port->ngids; i++) {
		if (memcmp(port->gids[i].gid, want, 16))
			continue;
		if (found || port->gids[i].type == VT_GID_ROCE_V2) {
			*pos = i;
			found = 0;
		}
	}
	return found;
}

int vres_gid_select(const struct vres_port *port, const char *sel, size_t *pos)
{
	static const struct {
		const char *name;
		enum vt_gid_type type;
		int family;
	} sels[] = {
		{"v1", VT_GID_ROCE_V1, 0},	{"v2", VT_GID_ROCE_V2, 0},
		{"ipv4", VT_GID_UNKNOWN, 4},	{"ipv6", VT_GID_UNKNOWN, 6},
		{"v1-ipv4", VT_GID_ROCE_V1, 4}, {"v1-ipv6", VT_GID_ROCE_V1, 6},
		{"v2-ipv4", VT_GID_ROCE_V2, 4}, {"v2-ipv6", VT_GID_ROCE_V2, 6},
	};
	size_t i;

	if (!sel || !sel[0]) {
		if (!port->eth)
			return vres_gid_by_index(port, 0, pos);
		if (!find_gid(port, VT_GID_ROCE_V2, 4, pos) ||
		    !find_gid(port, VT_GID_ROCE_V2, 0, pos))
			return 0;
		return port->ngids ? (*pos = 0, 0) : -ENOENT;
	}
	for (i = 0; i < sizeof(sels) / sizeof(sels[0]); i++) {
		if (strcmp(sel, sels[i].name))
			continue;
		/* "v1" on InfiniBand means the IB GID. */
		if (!port->eth && sels[i].type == VT_GID_ROCE_V1)
			return find_gid(port, VT_GID_IB, sels[i].family, pos);
		return find_gid(port, sels[i].type, sels[i].family, pos);
	}
	return find_addr(port, sel, pos);
}

int vres_gid_by_index(const struct vres_port *port, unsigned index, size_t *pos)
{
	size_t i;

	for (i = 0; i < port->ngids; i++) {
		if (port->gids[i].index == index) {
			*pos = i;
			return 0;
		}
	}
	return -ENOENT;
}

int vres_pkey_find(const struct vres_port *port, unsigned value,
		   unsigned *index)
{
	size_t i;
	int rc = -ENOENT;

	if (!(value & 0x7fff) || value > 0xffff)
		return -EINVAL;
	for (i = 0; i < port->npkeys; i++) {
		if (port->pkeys[i] == value) {
			*index = (unsigned)i;
			return 0;
		}
		if (rc && (port->pkeys[i] & 0x7fff) == (value & 0x7fff)) {
			*index = (unsigned)i;
			rc = 0;
		}
	}
	return rc;
}

int vres_pkey_pair_check(unsigned a, unsigned b, char *err, size_t len)
{
	if ((a & 0x7fff) != (b & 0x7fff)) {
		snprintf(err, len,
			 "P_Key mismatch: 0x%04x here, 0x%04x at the peer "
			 "(different partitions)",
			 a, b);
		return -EACCES;
	}
	if (!(a & 0x8000) && !(b & 0x8000)) {
		snprintf(err, len,
			 "both ends are limited members of P_Key 0x%04x "
			 "(0x%04x, 0x%04x): limited members cannot talk to "
			 "each other",
			 a | 0x8000, a, b);
		return -EACCES;
	}
	return 0;
}

void vres_gid_format(const uint8_t gid[16], char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)len) && len)
		buf[0] = '\0';
}

int vres_gid_table_str(const struct vres_port *port, char *buf, size_t len)
{
	size_t i, off = 0;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < port->ngids && off < len; i++) {
		char g[48];
		int n;

		vres_gid_format(port->gids[i].gid, g, sizeof(g));
		n = snprintf(buf + off, len - off, "  %3u  %-10s  %s\n",
			     port->gids[i].index,
			     vt_gid_type_name(port->gids[i].type), g);
		if (n < 0)
			return -EIO;
		off += (size_t)n;
	}
	return 0;
}

int vres_pkey_table_str(const struct vres_port *port, char *buf, size_t len)
{
	size_t i, off = 0;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < port->npkeys && off < len; i++) {
		int n;

		if (!(port->pkeys[i] & 0x7fff))
			continue;
		n = snprintf(buf + off, len - off, "  %3zu  0x%04x (%s)\n", i,
			     port->pkeys[i],
			     port->pkeys[i] & 0x8000 ? "full" : "limited");
		if (n < 0)
			return -EIO;
		off += (size_t)n;
	}
	return 0;
}
