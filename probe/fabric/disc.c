// SPDX-License-Identifier: MIT
/*
 * Discovery through libibnetdisc: ibnd_discover_fabric() walks the subnet
 * with directed-route SMPs (NodeInfo, NodeDescription, PortInfo and, on
 * Mellanox nodes, their ExtendedPortInfo for FDR10), and this file copies
 * what the poller needs out of its graph into a flat, GUID-sorted
 * struct fabric_net so that nothing of libibnetdisc outlives the call.
 */
#include "fabric_int.h"
#include "now.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>

#include "log.h"

/* Discoveries merged at most, when SMPs went missing. */
#define DISC_TRIES 10

/* PortInfo:CapabilityMask IsExtendedSpeedsSupported (IBA 14.2.5.6). */
#define PORT_CAP_EXT_SPEEDS (1u << 14)

static unsigned pi(const uint8_t *info, int field)
{
	uint32_t v = 0;

	mad_decode_field((uint8_t *)info, field, &v);
	return v;
}

void fabric_net_clear(struct fabric_net *net)
{
	if (!net)
		return;
	for (size_t i = 0; i < net->n_nodes; i++) {
		free(net->nodes[i].ports);
		free(net->nodes[i].lft);
	}
	free(net->nodes);
	memset(net, 0, sizeof(*net));
}

/* NodeDescription as printable ASCII (a switch's may hold anything). */
static void copy_desc(char *dst, size_t len, const char *src)
{
	size_t j = 0;

	for (size_t i = 0; i < IB_SMP_DATA_SIZE && src[i] && j + 1 < len; i++)
		dst[j++] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	while (j && dst[j - 1] == ' ')
		j--;
	dst[j] = '\0';
}

static void copy_port(const ibnd_node_t *n, const ibnd_port_t *p,
		      struct fabric_port *out)
{
	const ibnd_port_t *cap_port =
		n->type == IB_NODE_SWITCH && n->ports[0] ? n->ports[0] : p;
	bool ext = pi(cap_port->info, IB_PORT_CAPMASK_F) & PORT_CAP_EXT_SPEEDS;

	memset(out, 0, sizeof(*out));
	out->num = (unsigned)p->portnum;
	out->lid = n->type == IB_NODE_SWITCH ? n->smalid : p->base_lid;
	/* a switch's LIDs are port 0's; an external port's LMC is reserved */
	out->lmc = n->type == IB_NODE_SWITCH
			   ? n->smalmc
			   : (uint8_t)pi(p->info, IB_PORT_LMC_F);
	out->guid = p->guid;
	out->state = pi(p->info, IB_PORT_STATE_F);
	out->phys_state = pi(p->info, IB_PORT_PHYS_STATE_F);
	out->width_active = pi(p->info, IB_PORT_LINK_WIDTH_ACTIVE_F);
	out->width_enabled = pi(p->info, IB_PORT_LINK_WIDTH_ENABLED_F);
	out->width_supported = pi(p->info, IB_PORT_LINK_WIDTH_SUPPORTED_F);
	out->speed_active = pi(p->info, IB_PORT_LINK_SPEED_ACTIVE_F);
	out->speed_enabled = pi(p->info, IB_PORT_LINK_SPEED_ENABLED_F);
	out->speed_supported = pi(p->info, IB_PORT_LINK_SPEED_SUPPORTED_F);
	if (ext) {
		out->espeed_active =
			pi(p->info, IB_PORT_LINK_SPEED_EXT_ACTIVE_F);
		out->espeed_enabled =
			pi(p->info, IB_PORT_LINK_SPEED_EXT_ENABLED_F);
		out->espeed_supported =
			pi(p->info, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F);
	}
	/* zeros unless libibnetdisc read ExtendedPortInfo (IBND_CONFIG_MLX_EPI)
	 */
	out->fdr10_active =
		pi(p->ext_info, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F) & 1;
	out->fdr10_enabled =
		pi(p->ext_info, IB_MLNX_EXT_PORT_LINK_SPEED_ENABLED_F) & 1;
	out->fdr10_supported =
		pi(p->ext_info, IB_MLNX_EXT_PORT_LINK_SPEED_SUPPORTED_F) & 1;
	out->remote = FABRIC_NO_NODE;
	if (p->remoteport && p->remoteport->node) {
		out->remote_guid = p->remoteport->node->guid;
		out->remote_port = (unsigned)p->remoteport->portnum;
	}
	out->status = FABRIC_NOT_ASKED;
}

static int copy_node(const ibnd_node_t *n, struct fabric_node *out)
{
	int np = 0;

	memset(out, 0, sizeof(*out));
	out->guid = n->guid;
	out->type = (enum fabric_node_type)n->type;
	copy_desc(out->desc, sizeof(out->desc), n->nodedesc);
	out->lid = n->type == IB_NODE_SWITCH ? n->smalid : 0;
	out->numports = n->numports > 0 ? (unsigned)n->numports : 0;
	if (n->type == IB_NODE_SWITCH) {
		out->lft_top = pi(n->switchinfo, IB_SW_LINEAR_FDB_TOP_F);
		if (out->lft_top > 0xBFFF) /* the unicast LIDs end there */
			out->lft_top = 0xBFFF;
	}
	if (!n->ports || !out->numports)
		return 0;
	out->ports = calloc(out->numports, sizeof(*out->ports));
	if (!out->ports)
		return -ENOMEM;
	for (int i = 1; i <= n->numports; i++)
		if (n->ports[i])
			copy_port(n, n->ports[i], &out->ports[np++]);
	out->n_ports = (size_t)np;
	return 0;
}

static int by_guid(const void *a, const void *b)
{
	uint64_t x = ((const struct fabric_node *)a)->guid;
	uint64_t y = ((const struct fabric_node *)b)->guid;

	return x < y ? -1 : x > y;
}

const struct fabric_node *fabric_find(const struct fabric_net *net,
				      uint64_t guid)
{
	struct fabric_node key = {.guid = guid};

	if (!net->n_nodes)
		return NULL;
	return bsearch(&key, net->nodes, net->n_nodes, sizeof(key), by_guid);
}

/* Sort, then turn remote GUIDs into indexes and count. */
static void finish(struct fabric_net *net)
{
	size_t ends = 0;

	net->n_switches = net->n_cas = net->n_ports = 0;
	qsort(net->nodes, net->n_nodes, sizeof(*net->nodes), by_guid);
	for (size_t i = 0; i < net->n_nodes; i++) {
		struct fabric_node *n = &net->nodes[i];

		net->n_switches += n->type == FABRIC_SWITCH;
		net->n_cas += n->type == FABRIC_CA;
		net->n_ports += n->n_ports;
		for (size_t j = 0; j < n->n_ports; j++) {
			struct fabric_port *p = &n->ports[j];
			const struct fabric_node *r;

			p->remote = FABRIC_NO_NODE;
			if (!p->remote_guid)
				continue;
			r = fabric_find(net, p->remote_guid);
			if (r) {
				p->remote = (size_t)(r - net->nodes);
				ends++;
			}
		}
	}
	net->n_links = ends / 2;
}

/* One ibnd_discover_fabric() into @out. */
static int disc_once(const char *ca, unsigned port,
		     const struct fabric_settings *s, struct fabric_net *out)
{
	struct ibnd_config cfg = {
		.max_smps = (unsigned)s->smps,
		.timeout_ms = (unsigned)s->timeout,
		.retries = (unsigned)s->retries,
		.flags = IBND_CONFIG_MLX_EPI,
	};
	char name[FABRIC_CA_NAME_LEN];
	ibnd_fabric_t *f;
	size_t n = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	snprintf(name, sizeof(name), "%s", ca);
	f = ibnd_discover_fabric(name, (int)port, NULL, &cfg);
	if (!f) {
		log_err("fabric: discovery from %s port %u failed "
			"(libibnetdisc says why above)",
			ca, port);
		return -EIO;
	}
	for (ibnd_node_t *nd = f->nodes; nd; nd = nd->next)
		n++;
	out->nodes = calloc(n ? n : 1, sizeof(*out->nodes));
	if (!out->nodes)
		ret = -ENOMEM;
	for (ibnd_node_t *nd = f->nodes; !ret && nd; nd = nd->next)
		ret = copy_node(nd, &out->nodes[out->n_nodes++]);
	if (!ret) {
		out->local_guid = f->from_node ? f->from_node->guid : 0;
		out->discover_mads = f->total_mads_used;
		finish(out);
	}
	ibnd_destroy_fabric(f);
	if (ret)
		fabric_net_clear(out);
	return ret;
}

/*
 * Holes an SMP lost in transit leaves: a port whose PortInfo says LinkUp
 * with no neighbour behind it, or a switch port never read.
 */
static unsigned holes(const struct fabric_net *net)
{
	unsigned n = 0;

	for (size_t i = 0; i < net->n_nodes; i++) {
		const struct fabric_node *nd = &net->nodes[i];

		if (nd->type == FABRIC_SWITCH && nd->numports > nd->n_ports)
			n += nd->numports - nd->n_ports;
		if (nd->type == FABRIC_SWITCH && !nd->lid)
			n++; /* its port 0 PortInfo */
		for (size_t j = 0; j < nd->n_ports; j++) {
			const struct fabric_port *p = &nd->ports[j];

			/* state 0: its PortInfo never came back */
			n += !p->state || (p->phys_state == 5 &&
					   p->remote == FABRIC_NO_NODE);
		}
	}
	return n;
}

/* Of two copies of a port: the one whose PortInfo came, with a neighbour. */
static bool better(const struct fabric_port *x, const struct fabric_port *y)
{
	if (!x->state != !y->state)
		return x->state;
	return x->remote_guid || !y->remote_guid;
}

/* @a's and @b's ports of one node, by number; a port with a neighbour wins. */
static int merge_ports(struct fabric_node *a, struct fabric_node *b)
{
	size_t cap = a->n_ports + b->n_ports, i = 0, j = 0, n = 0;
	struct fabric_port *p = calloc(cap ? cap : 1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	while (i < a->n_ports || j < b->n_ports) {
		struct fabric_port *x = i < a->n_ports ? &a->ports[i] : NULL;
		struct fabric_port *y = j < b->n_ports ? &b->ports[j] : NULL;

		if (!y || (x && x->num < y->num)) {
			p[n++] = *x, i++;
		} else if (!x || y->num < x->num) {
			p[n++] = *y, j++;
		} else {
			p[n++] = better(x, y) ? *x : *y;
			i++, j++;
		}
	}
	free(a->ports);
	free(b->ports);
	b->ports = NULL;
	a->ports = p;
	a->n_ports = n;
	if (b->numports > a->numports)
		a->numports = b->numports;
	if (!a->lid)
		a->lid = b->lid;
	if (!a->lft_top)
		a->lft_top = b->lft_top;
	if (!a->desc[0])
		memcpy(a->desc, b->desc, sizeof(a->desc));
	for (size_t k = 0; a->type == FABRIC_SWITCH && k < a->n_ports; k++)
		a->ports[k].lid = a->lid; /* a switch's PMA: port 0's LID */
	return 0;
}

/* The union of two pictures (both GUID-sorted) into @a; @b is emptied. */
static int merge(struct fabric_net *a, struct fabric_net *b)
{
	size_t i = 0, j = 0, n = 0;
	struct fabric_node *out;
	int ret = 0;

	out = calloc(a->n_nodes + b->n_nodes + 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	while (i < a->n_nodes || j < b->n_nodes) {
		struct fabric_node *x = i < a->n_nodes ? &a->nodes[i] : NULL;
		struct fabric_node *y = j < b->n_nodes ? &b->nodes[j] : NULL;

		if (x && (!y || x->guid < y->guid)) {
			out[n++] = *x, i++;
		} else if (y && (!x || y->guid < x->guid)) {
			out[n++] = *y, j++;
		} else {
			if (!ret)
				ret = merge_ports(x, y);
			out[n++] = *x, i++, j++;
		}
	}
	/* the nodes' ports now belong to @out */
	free(a->nodes);
	a->nodes = out;
	a->n_nodes = n;
	a->discover_mads += b->discover_mads;
	for (size_t k = 0; k < b->n_nodes; k++)
		b->nodes[k].ports = NULL;
	fabric_net_clear(b);
	finish(a);
	return ret;
}

int fabric_disc_run(const char *ca, unsigned port,
		    const struct fabric_settings *s, struct fabric_net *out)
{
	double t0 = now_mono();
	struct fabric_net more;
	int ret;

	/* a discovery that failed outright (its first SMP lost) is retried */
	ret = disc_once(ca, port, s, out);
	for (unsigned r = 1; ret == -EIO && r < DISC_TRIES; r++)
		ret = disc_once(ca, port, s, out);
	/*
	 * The kernel resends a lost SMP (libibnetdisc passes its retries to
	 * umad_send); where nothing does (the simulator's umad2sim), a
	 * picture with holes is taken again and the two merged.
	 */
	for (unsigned r = 0, h, stuck = 0;
	     !ret && r < DISC_TRIES && stuck < 2 && (h = holes(out)); r++) {
		log_info("fabric: discovery left %u holes (ports without "
			 "PortInfo or neighbour): once more",
			 h);
		if (disc_once(ca, port, s, &more))
			continue;
		ret = merge(out, &more);
		/* twice no better: a real hole (a dead SMA), not a lost SMP */
		stuck = holes(out) < h ? 0 : stuck + 1;
	}
	if (ret) {
		fabric_net_clear(out);
		return ret;
	}
	out->discovered_at = now_wall();
	out->discover_seconds = now_mono() - t0;
	return 0;
}
