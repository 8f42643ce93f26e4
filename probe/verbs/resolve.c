// SPDX-License-Identifier: MIT
/*
 * Resolves GID selectors and P_Key values to a port's table indexes, and
 * gives the port counters that tell a busy link. The tables and counters
 * come from the probe's one sysfs reader (probe/sysfs/sysfs.h), read per test
 * because indexes move; what is read here is only their meaning for a
 * test. Kept free of libibverbs so fixture trees can stand in for real
 * devices in unit tests.
 */
#include "resolve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "counters.h"
#include "report.h"
#include "sysfs.h"

/*
 * The counters vt_portctr_read() needs, as sysfs_read_port() globs: the
 * data and packet counters, the transmit wait, and the CNP/ECN counters.
 */
#define VRES_PORTCTR_GLOBS                                                     \
	"port_xmit_data,port_rcv_data,port_xmit_packets,port_rcv_packets,"     \
	"port_xmit_wait,sent_pkts,rcvd_pkts,np_cnp_sent,rp_cnp_handled,"       \
	"np_ecn_marked_roce_packets"

/*
 * Counter @name of source @src of @p in base units, scaled by the counters
 * table (port_xmit_data counts 4-octet words: counters.c says so once).
 */
static bool portctr_get(const struct report_port *p, enum counter_source src,
			const char *name, uint64_t *v)
{
	const struct counter_def *d = counters_lookup(src, name);

	for (size_t i = 0; i < p->n_counters[src]; i++) {
		const struct report_counter *c = &p->counters[src][i];

		if (strcmp(c->name, name))
			continue;
		if (!d) {
			*v = c->value;
			return true;
		}
		/* Past 2^62 words a byte count would wrap: unknown. */
		return !counters_scale_u64(d, c->value, v);
	}
	return false;
}

/* Both counters of a pair, or neither. */
static bool portctr_pair(const struct report_port *p, enum counter_source src,
			 const char *const name[2], uint64_t *a, uint64_t *b)
{
	return portctr_get(p, src, name[0], a) &&
	       portctr_get(p, src, name[1], b);
}

static void portctr_fill(const struct report_port *p, struct vt_portctr *c)
{
	static const char *const data[2] = {"port_xmit_data", "port_rcv_data"};
	static const char *const pkts[2] = {"port_xmit_packets",
					    "port_rcv_packets"};
	static const char *const hw_pkts[2] = {"sent_pkts", "rcvd_pkts"};
	static const char *const cnp[] = {"np_cnp_sent", "rp_cnp_handled",
					  "np_ecn_marked_roce_packets"};
	uint64_t a, b;

	if (portctr_pair(p, CSRC_IB, data, &a, &b)) {
		c->has_bytes = true;
		c->xmit_bytes = a;
		c->rcv_bytes = b;
	}
	if (portctr_pair(p, CSRC_IB, pkts, &a, &b) ||
	    portctr_pair(p, CSRC_HW, hw_pkts, &a, &b)) {
		c->has_pkts = true;
		c->xmit_pkts = a;
		c->rcv_pkts = b;
	}
	if (portctr_get(p, CSRC_IB, "port_xmit_wait", &a)) {
		c->has_wait = true;
		c->xmit_wait = a;
	}
	for (size_t i = 0; i < sizeof(cnp) / sizeof(*cnp); i++) {
		if (portctr_get(p, CSRC_HW, cnp[i], &a)) {
			c->has_cnp = true;
			c->cnp += a;
		}
	}
}

int vt_portctr_read(const char *root, const char *dev, unsigned port,
		    struct vt_portctr *c)
{
	const struct sysfs_opts o = {.root = root,
				     .counters_include = VRES_PORTCTR_GLOBS};
	struct report_port p;
	int rc;

	memset(c, 0, sizeof(*c));
	rc = sysfs_read_port(&o, dev, port, SYSFS_PORT_COUNTERS, &p);
	if (!rc)
		portctr_fill(&p, c);
	report_port_clear(&p);
	if (rc == -ENOMEM)
		return rc;
	return c->has_bytes || c->has_pkts || c->has_wait || c->has_cnp
		       ? 0
		       : -ENOENT;
}

static enum vt_gid_type parse_gid_type(const char *s, bool eth)
{
	if (s && !strcmp(s, "RoCE v2"))
		return VT_GID_ROCE_V2;
	if (s && !strcmp(s, "IB/RoCE v1"))
		return eth ? VT_GID_ROCE_V1 : VT_GID_IB;
	return eth ? VT_GID_UNKNOWN : VT_GID_IB;
}

/* The sysfs reader's view of a port, as the resolver's tables. */
static void port_from_report(const struct report_port *p, struct vres_port *out)
{
	out->eth = !strcmp(p->link_layer, "Ethernet");
	/* The reader skips all-zero GIDs and keeps index order. */
	for (size_t i = 0; i < p->n_gids && out->ngids < VRES_MAX_GIDS; i++) {
		struct vres_gid *g = &out->gids[out->ngids];

		if (inet_pton(AF_INET6, p->gids[i].gid, g->gid) != 1)
			continue;
		g->index = p->gids[i].index;
		g->type = parse_gid_type(p->gids[i].type, out->eth);
		out->ngids++;
	}
	/* It skips empty P_Key slots too: they stay 0 here. */
	for (size_t i = 0; i < p->n_pkeys; i++) {
		unsigned idx = p->pkeys[i].index;

		if (idx >= VRES_MAX_PKEYS)
			continue;
		out->pkeys[idx] = p->pkeys[i].pkey;
		if (idx + 1 > out->npkeys)
			out->npkeys = idx + 1;
	}
}

int vres_port_read(const char *root, const char *dev, unsigned port,
		   struct vres_port *out)
{
	const struct sysfs_opts o = {.root = root};
	struct report_port p;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = sysfs_read_port(&o, dev, port,
			     SYSFS_PORT_ATTRS | SYSFS_PORT_TABLES, &p);
	if (!rc && !p.link_layer)
		rc = -ENODEV; /* no link layer: not a port to test on */
	if (!rc)
		port_from_report(&p, out);
	report_port_clear(&p);
	return rc;
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
