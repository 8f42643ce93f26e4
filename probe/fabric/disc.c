// SPDX-License-Identifier: MIT
/*
 * Discovery through libibnetdisc: ibnd_discover_fabric() walks the subnet
 * with directed-route SMPs (NodeInfo, NodeDescription, PortInfo and, on
 * Mellanox nodes, their ExtendedPortInfo for FDR10), and this file copies
 * what the poller needs out of its graph into a flat, GUID-sorted
 * struct fabric_net so that nothing of libibnetdisc outlives the call.
 */
#include "fabric_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>

#include "log.h"

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
	for (size_t i = 0; i < net->n_nodes; i++)
		free(net->nodes[i].ports);
	free(net->nodes);
	memset(net, 0, sizeof(*net));
}

/* NodeDescription as printable ASCII (a switch's may hold anything). */
static void copy_desc(char *dst, size_t len, const char *src)
{
	size_t j = 0;

	for (size_t i = 0; src[i] && i < IB_SMP_DATA_SIZE && j + 1 < len; i++)
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

	qsort(net->nodes, net->n_nodes, sizeof(*net->nodes), by_guid);
	for (size_t i = 0; i < net->n_nodes; i++) {
		struct fabric_node *n = &net->nodes[i];

		net->n_switches += n->type == FABRIC_SWITCH;
		net->n_cas += n->type == FABRIC_CA;
		net->n_ports += n->n_ports;
		for (size_t j = 0; j < n->n_ports; j++) {
			struct fabric_port *p = &n->ports[j];
			const struct fabric_node *r;

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

int fabric_disc_run(const char *ca, unsigned port,
		    const struct fabric_settings *s, struct fabric_net *out)
{
	struct ibnd_config cfg = {
		.max_smps = (unsigned)s->smps,
		.timeout_ms = (unsigned)s->timeout,
		.retries = (unsigned)s->retries,
		.flags = IBND_CONFIG_MLX_EPI,
	};
	char name[FABRIC_CA_NAME_LEN];
	double t0 = fabric_mono();
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
		out->discovered_at = fabric_real();
		out->discover_seconds = fabric_mono() - t0;
	}
	ibnd_destroy_fabric(f);
	if (ret)
		fabric_net_clear(out);
	return ret;
}
