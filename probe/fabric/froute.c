// SPDX-License-Identifier: MIT
/*
 * The poller's picture as a route net (common/route.h), and
 * `ibpulse-probe fabric --route SRC_LID DST_LID`: the path printed the way
 * ibtracert prints it (From, one "[out] -> type port {GUID}[in] lid a-b
 * \"desc\"" line per node entered, To), or as the JSON the collector's
 * route API answers, followed by the adaptive-routing caveat.
 */
#include "fabric_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route.h"
#include "route_json.h"

static int add_node(struct route_net *rn, const struct fabric_node *n)
{
	struct route_node_in in = {
		.guid = n->guid,
		.type = (enum route_node_type)n->type,
		.desc = n->desc,
		.numports = n->numports,
	};
	char why[128];
	int ret;

	if (n->type == FABRIC_SWITCH) {
		in.lid = n->lid;
		in.lmc = n->n_ports ? n->ports[0].lmc : 0;
	}
	ret = route_add_node(rn, &in);
	for (size_t j = 0; !ret && j < n->n_ports; j++) {
		const struct fabric_port *p = &n->ports[j];
		struct route_port_in pin = {
			.num = p->num,
			.lid = n->type == FABRIC_SWITCH ? 0 : p->lid,
			.lmc = p->lmc,
			.state = p->state,
			.port_guid = p->guid,
			.remote_guid = p->remote_guid,
			.remote_port = p->remote_port,
		};

		ret = route_add_port(rn, n->guid, &pin);
	}
	if (ret || n->type != FABRIC_SWITCH)
		return ret;
	if (n->lft)
		return route_add_lft_table(rn, n->guid, n->lft_top, n->lft);
	fabric_lft_error(n, why, sizeof(why));
	return route_add_lft_error(rn, n->guid, why);
}

int fabric_route_net(const struct fabric *f, struct route_net **out, char *err,
		     size_t errlen)
{
	struct route_net *rn;
	int ret;

	ret = route_net_new(&rn);
	for (size_t i = 0; !ret && i < f->net.n_nodes; i++)
		ret = add_node(rn, &f->net.nodes[i]);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (!ret)
		ret = route_net_finish(rn, err, errlen);
	else if (ret == -EINVAL)
		route_net_finish(rn, err, errlen); /* names what was refused */
	if (ret) {
		route_net_free(rn);
		return ret;
	}
	*out = rn;
	return 0;
}

/* ------------------------------------------------------ ibtracert form */

/* The LIDs of port @port of node @idx: "lid a-b". */
static void lids(const struct route_net *rn, uint32_t idx, unsigned port,
		 char *buf, size_t len)
{
	struct route_port_info pi = {0};
	struct route_node_info ni;

	route_node_get(rn, idx, &ni);
	if (ni.type == ROUTE_SWITCH) {
		pi.lid = ni.lid;
		pi.lmc = ni.lmc;
	} else {
		route_port_get(rn, idx, port, &pi);
	}
	snprintf(buf, len, "lid %u-%u", pi.lid, pi.lid + (1u << pi.lmc) - 1);
}

/* "From ca {node GUID} portnum 1 lid 4-7 "h00000"" (and To). */
static void end_line(FILE *out, const struct route_net *rn, const char *what,
		     const struct route_end *e)
{
	struct route_node_info ni;
	char l[32];

	route_node_get(rn, e->node, &ni);
	lids(rn, e->node, e->port, l, sizeof(l));
	fprintf(out, "%s %s {0x%016" PRIx64 "} portnum %u %s \"%s\"\n", what,
		route_type_name(ni.type), ni.guid, e->port, l, ni.desc);
}

/* "[out] -> switch port {port GUID}[in] lid 8-8 "leaf000"". */
static void hop_line(FILE *out, const struct route_net *rn, unsigned from,
		     const struct route_end *e)
{
	struct route_port_info pi = {0};
	struct route_node_info ni;
	char l[32];

	route_node_get(rn, e->node, &ni);
	route_port_get(rn, e->node, e->port, &pi);
	lids(rn, e->node, e->port, l, sizeof(l));
	fprintf(out, "[%u] -> %s port {0x%016" PRIx64 "}[%u] %s \"%s\"\n", from,
		route_type_name(ni.type), pi.port_guid ? pi.port_guid : ni.guid,
		e->port, l, ni.desc);
}

/* The path as ibtracert prints it, as far as it goes. */
static void print_text(FILE *out, const struct route_net *rn,
		       const struct route_path *p, bool whole)
{
	unsigned from = p->src.port;

	if (p->src.node == ROUTE_NO_NODE)
		return;
	end_line(out, rn, "From", &p->src);
	for (size_t i = 0; i < p->n_hops; i++) {
		const struct route_hop *h = &p->hops[i];
		struct route_end in = {h->node, h->guid, h->in_port};

		if (h->in_port)
			hop_line(out, rn, from, &in);
		from = h->out_port;
	}
	if (!whole)
		return;
	if (p->n_hops && p->hops[p->n_hops - 1].out_port)
		hop_line(out, rn, from, &p->dst);
	else if (!p->n_hops &&
		 (p->src.node != p->dst.node || p->src.port != p->dst.port))
		hop_line(out, rn, from, &p->dst); /* two CAs, no switch */
	end_line(out, rn, "To", &p->dst);
}

int fabric_route_print(const struct fabric *f, unsigned src, unsigned dst,
		       bool json, FILE *out, char *err, size_t errlen)
{
	struct route_net *rn = NULL;
	struct route_path *p = malloc(sizeof(*p));
	int ret;

	if (!p)
		return -ENOMEM;
	ret = fabric_route_net(f, &rn, err, errlen);
	if (!ret) {
		ret = route_path(rn, src, dst, p, err, errlen);
		if (json && !ret) {
			json_t *o = route_path_json(rn, p);
			char *text =
				o ? json_dumps(o, JSON_COMPACT |
							  JSON_PRESERVE_ORDER)
				  : NULL;

			if (text)
				fprintf(out, "%s\n", text);
			else
				ret = -ENOMEM;
			free(text);
			json_decref(o);
		} else if (!json) {
			print_text(out, rn, p, !ret);
			if (!ret)
				fprintf(out, "Note: %s\n", ROUTE_AR_CAVEAT);
		}
	}
	route_net_free(rn);
	free(p);
	return ret;
}
