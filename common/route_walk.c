// SPDX-License-Identifier: MIT
/*
 * Routes from forwarding tables (route.h): walking a finished net. A path
 * goes switch by switch: one LFT byte, one port slot, one comparison with
 * the owner of the destination LID, and a look back over the switches
 * already on the path (a loop); every way it can end without reaching the
 * destination is a negative errno and a reason naming the switch and port.
 * Nothing here allocates.
 */
#include "route_int.h"
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* --------------------------------------------------------------- paths */

static const char *state_name(unsigned s)
{
	static const char *const names[] = {
		"unknown", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

/* "leaf003 (0x0000000000200003)" into @buf. */
static const char *name_of(const struct rnode *r, char *buf, size_t len)
{
	if (r->desc[0])
		snprintf(buf, len, "%s (0x%016" PRIx64 ")", r->desc, r->guid);
	else
		snprintf(buf, len, "0x%016" PRIx64, r->guid);
	return buf;
}

/* Why the port owning @lid is not where a walk ended. */
static int misdelivered(const struct route_net *n, uint32_t node, unsigned port,
			unsigned lid, char *err, size_t errlen)
{
	const struct rport *p = &n->ports[n->nodes[node].port0 + port];
	char who[96];

	return route_say(
		err, errlen, -EHOSTUNREACH,
		"LID %u is delivered to port %u of %s, which owns LIDs "
		"%u-%u",
		lid, port, name_of(&n->nodes[node], who, sizeof(who)), p->lid,
		p->lid + (1u << p->lmc) - 1);
}

/* The link out of port @port of @node: 0, or -ENOLINK with the reason. */
static int link_out(const struct route_net *n, uint32_t node, unsigned port,
		    char *err, size_t errlen)
{
	const struct rport *p = &n->ports[n->nodes[node].port0 + port];
	char who[96];

	if (p->present && p->remote != ROUTE_NO_NODE &&
	    (!p->state || p->state == REPORT_PORT_ACTIVE))
		return 0;
	name_of(&n->nodes[node], who, sizeof(who));
	if (!p->present)
		return route_say(
			err, errlen, -ENOLINK,
			"port %u of %s leads nowhere: the picture has no "
			"such port",
			port, who);
	if (p->remote == ROUTE_NO_NODE)
		return route_say(err, errlen, -ENOLINK,
				 "port %u of %s leads nowhere: %s", port, who,
				 p->remote_guid
					 ? "its peer is not in the picture"
					 : "nothing is attached");
	return route_say(err, errlen, -ENOLINK,
			 "port %u of %s is %s: no traffic passes", port, who,
			 state_name(p->state));
}

/* The switch hop @h forwards @lid: its egress port, or an error. */
static int forward(const struct route_net *n, struct route_hop *h, unsigned lid,
		   uint32_t owner, char *err, size_t errlen)
{
	const struct rnode *sw = &n->nodes[h->node];
	char who[96];
	unsigned out;

	name_of(sw, who, sizeof(who));
	if (!sw->lft)
		return route_say(err, errlen, -ENODATA,
				 "the forwarding table of %s is unknown: %s",
				 who,
				 sw->lft_error ? sw->lft_error : "not read");
	if (lid > sw->lft_top)
		return route_say(
			err, errlen, -EHOSTUNREACH,
			"%s has no entry for LID %u: its table ends at "
			"LID %u",
			who, lid, sw->lft_top);
	out = sw->lft[lid];
	h->out_port = out;
	if (out == ROUTE_PORT_NONE)
		return route_say(err, errlen, -EHOSTUNREACH,
				 "%s has no entry for LID %u (255)", who, lid);
	if (out == 0 && owner != OWNER(h->node, 0))
		return route_say(
			err, errlen, -EHOSTUNREACH,
			"%s forwards LID %u to itself (port 0), but its "
			"LIDs are %u-%u",
			who, lid, sw->lid, sw->lid + (1u << sw->lmc) - 1);
	if (out > sw->numports)
		return route_say(err, errlen, -EHOSTUNREACH,
				 "%s forwards LID %u to port %u, and it has %u",
				 who, lid, out, sw->numports);
	return 0;
}

/* Whether switch @node is already on the path: a loop. */
static int looped(const struct route_net *n, const struct route_path *out,
		  uint32_t node, char *err, size_t errlen)
{
	char who[96];

	for (size_t k = 0; k < out->n_hops; k++)
		if (out->hops[k].node == node)
			return route_say(
				err, errlen, -ELOOP,
				"the tables loop for LID %u: %s is reached "
				"again after %zu switches",
				out->dst_lid,
				name_of(&n->nodes[node], who, sizeof(who)),
				out->n_hops - k);
	return 0;
}

/* Walk the switches from @cur, entered by @in from @from. */
static int walk(const struct route_net *n, uint32_t cur, unsigned in,
		struct route_end from, uint32_t owner, struct route_path *out,
		char *err, size_t errlen)
{
	for (;;) {
		const struct rnode *sw = &n->nodes[cur];
		const struct rport *p;
		struct route_hop *h;
		int ret;

		if (out->n_hops == ROUTE_MAX_HOPS)
			return route_say(err, errlen, -E2BIG,
					 "more than %d switches to LID %u",
					 ROUTE_MAX_HOPS, out->dst_lid);
		ret = looped(n, out, cur, err, errlen);
		if (ret)
			return ret;
		h = &out->hops[out->n_hops++];
		*h = (struct route_hop){
			cur,	 sw->guid, sw->desc,
			sw->lid, sw->lmc,  in,
			0,	 from,	   {ROUTE_NO_NODE, 0, 0}};
		ret = forward(n, h, out->dst_lid, owner, err, errlen);
		if (ret)
			return ret;
		if (!h->out_port) {
			h->to = route_end_of(n, cur, 0);
			return 0;
		}
		ret = link_out(n, cur, h->out_port, err, errlen);
		if (ret)
			return ret;
		p = &n->ports[sw->port0 + h->out_port];
		h->to = route_end_of(n, p->remote, p->remote_port);
		if (n->nodes[p->remote].type != ROUTE_SWITCH)
			return owner == OWNER(p->remote, p->remote_port)
				       ? 0
				       : misdelivered(
						 n, p->remote, p->remote_port,
						 out->dst_lid, err, errlen);
		from = route_end_of(n, cur, h->out_port);
		in = p->remote_port;
		cur = p->remote;
	}
}

int route_path_from(const struct route_net *n, uint32_t node, unsigned port,
		    unsigned dst_lid, struct route_path *out, char *err,
		    size_t errlen)
{
	const struct rport *p;
	uint32_t owner;
	int ret;

	memset(out, 0, offsetof(struct route_path, hops));
	out->dst_lid = dst_lid;
	out->src.node = out->dst.node = ROUTE_NO_NODE;
	if (!n->finished)
		return route_say(err, errlen, -EINVAL,
				 "the net is not finished");
	if (!dst_lid || dst_lid > ROUTE_LID_MAX)
		return route_say(err, errlen, -EINVAL,
				 "LID %u is not a unicast LID (1-%u)", dst_lid,
				 ROUTE_LID_MAX);
	if (node >= n->n_nodes || port > n->nodes[node].numports ||
	    !n->ports[n->nodes[node].port0 + port].present)
		return route_say(err, errlen, -ENOENT,
				 "no such source port (node %u port %u)", node,
				 port);
	owner = n->owner[dst_lid];
	if (owner == OWNER_NONE)
		return route_say(err, errlen, -ENOENT, "no port holds LID %u",
				 dst_lid);
	out->dst = route_end_of(n, OWNER_NODE(owner), OWNER_PORT(owner));
	out->src = route_end_of(n, node, port);
	p = &n->ports[n->nodes[node].port0 + port];
	out->src_lid = p->lid;
	if (n->nodes[node].type == ROUTE_SWITCH)
		return walk(n, node, 0, (struct route_end){ROUTE_NO_NODE, 0, 0},
			    owner, out, err, errlen);
	if (owner == OWNER(node, port))
		return 0; /* the port's own LID */
	ret = link_out(n, node, port, err, errlen);
	if (ret)
		return ret;
	if (n->nodes[p->remote].type != ROUTE_SWITCH)
		return owner == OWNER(p->remote, p->remote_port)
			       ? 0
			       : misdelivered(n, p->remote, p->remote_port,
					      dst_lid, err, errlen);
	return walk(n, p->remote, p->remote_port, out->src, owner, out, err,
		    errlen);
}

int route_path(const struct route_net *n, unsigned src_lid, unsigned dst_lid,
	       struct route_path *out, char *err, size_t errlen)
{
	uint32_t o;
	int ret;

	if (!n->finished || !src_lid || src_lid > ROUTE_LID_MAX) {
		memset(out, 0, offsetof(struct route_path, hops));
		out->src_lid = src_lid;
		out->dst_lid = dst_lid;
		out->src.node = out->dst.node = ROUTE_NO_NODE;
		return route_say(
			err, errlen, -EINVAL,
			n->finished ? "LID %u is not a unicast LID (1-%u)"
				    : "the net is not finished (LID %u, %u)",
			src_lid, ROUTE_LID_MAX);
	}
	o = n->owner[src_lid];
	if (o == OWNER_NONE) {
		memset(out, 0, offsetof(struct route_path, hops));
		out->src_lid = src_lid;
		out->dst_lid = dst_lid;
		out->src.node = out->dst.node = ROUTE_NO_NODE;
		return route_say(err, errlen, -ENOENT, "no port holds LID %u",
				 src_lid);
	}
	ret = route_path_from(n, OWNER_NODE(o), OWNER_PORT(o), dst_lid, out,
			      err, errlen);
	out->src_lid = src_lid;
	return ret;
}

size_t route_path_links(const struct route_path *p, struct route_link *out)
{
	size_t k = 0;

	if (!p->n_hops) {
		if (p->src.node != ROUTE_NO_NODE &&
		    p->dst.node != ROUTE_NO_NODE &&
		    (p->src.node != p->dst.node || p->src.port != p->dst.port))
			out[k++] = (struct route_link){p->src, p->dst};
		return k;
	}
	if (p->hops[0].in_port)
		out[k++] = (struct route_link){
			p->hops[0].from,
			{p->hops[0].node, p->hops[0].guid, p->hops[0].in_port}};
	for (size_t i = 0; i < p->n_hops; i++) {
		const struct route_hop *h = &p->hops[i];

		if (h->out_port && h->to.node != ROUTE_NO_NODE)
			out[k++] = (struct route_link){
				{h->node, h->guid, h->out_port}, h->to};
	}
	return k;
}

int route_lft_get(const struct route_net *n, uint32_t node, unsigned lid)
{
	const struct rnode *sw;

	if (!n->finished || node >= n->n_nodes)
		return -EINVAL;
	sw = &n->nodes[node];
	if (sw->type != ROUTE_SWITCH)
		return -EINVAL;
	if (!sw->lft)
		return -ENODATA;
	return lid <= sw->lft_top ? sw->lft[lid] : ROUTE_PORT_NONE;
}
