// SPDX-License-Identifier: MIT
/*
 * Routes from forwarding tables (route.h): building the net. Building
 * stages what is added, then route_net_finish() sorts the nodes by GUID,
 * gives every node a row of port slots (port 0 .. numports, so a port is
 * one index away), links each port to the slot of the node at its other
 * end, expands every LFT into one byte per LID and fills the LID owner
 * table (one entry per unicast LID: node index << 8 | port). The walk is
 * route_walk.c's; the layout both share is route_int.h.
 */
#include "route_int.h"
#include "vec.h"
#include "report.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int route_say(char *err, size_t len, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* Remember the first refused add; -EINVAL. */
static int refuse(struct route_net *n, const char *what, uint64_t guid)
{
	if (!n->bad[0])
		snprintf(n->bad, sizeof(n->bad), "%s (node 0x%016" PRIx64 ")",
			 what, guid);
	return -EINVAL;
}

int route_net_new(struct route_net **out)
{
	struct route_net *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	*out = n;
	return 0;
}

static void staging_free(struct route_net *n)
{
	for (size_t i = 0; i < n->n_sl; i++) {
		free(n->sl[i].lft);
		free(n->sl[i].error);
	}
	free(n->sl);
	free(n->sp);
	n->sl = NULL;
	n->sp = NULL;
	n->n_sl = n->n_sp = n->cap_sl = n->cap_sp = 0;
}

void route_net_free(struct route_net *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n_nodes; i++) {
		free(n->nodes[i].desc);
		free(n->nodes[i].lft);
		free(n->nodes[i].lft_error);
	}
	staging_free(n);
	free(n->nodes);
	free(n->ports);
	free(n->owner);
	free(n);
}

int route_add_node(struct route_net *n, const struct route_node_in *in)
{
	struct rnode *r;

	if (n->finished)
		return -EINVAL;
	if (!in->guid || in->type < ROUTE_CA || in->type > ROUTE_ROUTER ||
	    in->numports > 254 || in->lmc > 7 || in->lid > ROUTE_LID_MAX)
		return refuse(n,
			      "a node with a zero GUID, an unknown type, "
			      "more than 254 ports or a LID out of range",
			      in->guid);
	if (n->n_nodes >= ROUTE_MAX_NODES)
		return refuse(n, "more nodes than a net holds", in->guid);
	if (vec_grow(&n->nodes, &n->cap_nodes, n->n_nodes, sizeof(*r)))
		return -ENOMEM;
	r = &n->nodes[n->n_nodes];
	memset(r, 0, sizeof(*r));
	r->desc = strdup(in->desc ? in->desc : "");
	if (!r->desc)
		return -ENOMEM;
	r->guid = in->guid;
	r->seq = (uint32_t)n->n_nodes;
	r->type = (uint8_t)in->type;
	r->numports = in->numports;
	if (in->type == ROUTE_SWITCH) {
		r->lid = in->lid;
		r->lmc = in->lmc;
	}
	n->n_nodes++;
	return 0;
}

int route_add_port(struct route_net *n, uint64_t guid,
		   const struct route_port_in *in)
{
	if (n->finished)
		return -EINVAL;
	if (!in->num || in->num > 254 || in->lmc > 7 ||
	    in->lid > ROUTE_LID_MAX || in->remote_port > 254)
		return refuse(n,
			      "a port numbered outside 1-254, or a LID or "
			      "LMC out of range",
			      guid);
	if (vec_grow(&n->sp, &n->cap_sp, n->n_sp, sizeof(*n->sp)))
		return -ENOMEM;
	n->sp[n->n_sp].guid = guid;
	n->sp[n->n_sp++].in = *in;
	return 0;
}

static int add_lft(struct route_net *n, uint64_t guid, uint8_t *lft,
		   unsigned top, char *error)
{
	if (vec_grow(&n->sl, &n->cap_sl, n->n_sl, sizeof(*n->sl))) {
		free(lft);
		free(error);
		return -ENOMEM;
	}
	n->sl[n->n_sl++] = (struct staged_lft){guid, lft, top, error};
	return 0;
}

int route_add_lft(struct route_net *n, uint64_t guid, unsigned top,
		  const struct route_run *runs, size_t n_runs)
{
	char why[96];
	uint8_t *lft;

	if (n->finished)
		return -EINVAL;
	if (route_runs_check(runs, n_runs, top, why, sizeof(why)))
		return refuse(n, why, guid);
	lft = malloc((size_t)top + 1);
	if (!lft)
		return -ENOMEM;
	route_runs_expand(runs, n_runs, top, lft);
	return add_lft(n, guid, lft, top, NULL);
}

int route_add_lft_table(struct route_net *n, uint64_t guid, unsigned top,
			const uint8_t *lft)
{
	uint8_t *copy;

	if (n->finished)
		return -EINVAL;
	if (top > ROUTE_LID_MAX)
		return refuse(n, "a table beyond the unicast LIDs", guid);
	copy = malloc((size_t)top + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, lft, (size_t)top + 1);
	return add_lft(n, guid, copy, top, NULL);
}

int route_add_lft_error(struct route_net *n, uint64_t guid, const char *why)
{
	char *e;

	if (n->finished)
		return -EINVAL;
	e = strdup(why && why[0] ? why : "not read");
	if (!e)
		return -ENOMEM;
	return add_lft(n, guid, NULL, 0, e);
}

/* ------------------------------------------------------------- finish */

static int by_guid(const void *a, const void *b)
{
	uint64_t x = ((const struct rnode *)a)->guid;
	uint64_t y = ((const struct rnode *)b)->guid;

	return x < y ? -1 : x > y;
}

uint32_t route_node_find(const struct route_net *n, uint64_t guid)
{
	size_t lo = 0, hi = n->n_nodes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (n->nodes[mid].guid == guid)
			return (uint32_t)mid;
		if (n->nodes[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return ROUTE_NO_NODE;
}

/* Every staged port names a node; a node's slots reach its last port. */
static int size_slots(struct route_net *n, char *err, size_t errlen)
{
	size_t slots = 0;

	for (size_t i = 0; i < n->n_sp; i++) {
		uint32_t k = route_node_find(n, n->sp[i].guid);

		if (k == ROUTE_NO_NODE)
			return route_say(err, errlen, -EINVAL,
					 "port %u of node 0x%016" PRIx64
					 ": no such node",
					 n->sp[i].in.num, n->sp[i].guid);
		if (n->sp[i].in.num > n->nodes[k].numports)
			n->nodes[k].numports = n->sp[i].in.num;
	}
	for (size_t i = 0; i < n->n_nodes; i++) {
		n->nodes[i].port0 = (uint32_t)slots;
		slots += n->nodes[i].numports + 1;
	}
	n->ports = calloc(slots ? slots : 1, sizeof(*n->ports));
	if (!n->ports)
		return -ENOMEM;
	n->n_slots = slots;
	for (size_t s = 0; s < slots; s++)
		n->ports[s].remote = ROUTE_NO_NODE;
	return 0;
}

static int place_ports(struct route_net *n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n->n_sp; i++) {
		const struct route_port_in *in = &n->sp[i].in;
		uint32_t k = route_node_find(n, n->sp[i].guid);
		struct rport *p = &n->ports[n->nodes[k].port0 + in->num];

		if (p->present)
			return route_say(err, errlen, -EINVAL,
					 "port %u of node 0x%016" PRIx64
					 " given twice",
					 in->num, n->sp[i].guid);
		p->present = true;
		p->port_guid = in->port_guid;
		p->remote_guid = in->remote_guid;
		p->remote_port = (uint8_t)in->remote_port;
		p->state = in->state;
		if (n->nodes[k].type != ROUTE_SWITCH) {
			p->lid = in->lid;
			p->lmc = in->lmc;
		}
	}
	for (size_t i = 0; i < n->n_nodes; i++) {
		struct rnode *r = &n->nodes[i];
		struct rport *p0 = &n->ports[r->port0];

		if (r->type != ROUTE_SWITCH)
			continue;
		p0->present = true;
		p0->lid = r->lid;
		p0->lmc = r->lmc;
		p0->state = REPORT_PORT_ACTIVE;
	}
	return 0;
}

/* Remote GUIDs to slots; a link to a node or port not known dangles. */
static void link_ports(struct route_net *n)
{
	size_t ends = 0;

	for (size_t i = 0; i < n->n_nodes; i++) {
		const struct rnode *r = &n->nodes[i];

		for (unsigned j = 1; j <= r->numports; j++) {
			struct rport *p = &n->ports[r->port0 + j];
			uint32_t k;

			if (!p->present || !p->remote_guid)
				continue;
			k = route_node_find(n, p->remote_guid);
			if (k == ROUTE_NO_NODE ||
			    p->remote_port > n->nodes[k].numports ||
			    !p->remote_port) {
				n->st.dangling++;
				continue;
			}
			p->remote = k;
			ends++;
		}
	}
	n->st.links = ends / 2;
}

static int attach_lfts(struct route_net *n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n->n_sl; i++) {
		struct staged_lft *l = &n->sl[i];
		uint32_t k = route_node_find(n, l->guid);
		struct rnode *r = k == ROUTE_NO_NODE ? NULL : &n->nodes[k];

		if (!r || r->type != ROUTE_SWITCH)
			return route_say(err, errlen, -EINVAL,
					 "a forwarding table for 0x%016" PRIx64
					 ", which is no switch of the picture",
					 l->guid);
		if (r->lft || r->lft_error)
			return route_say(err, errlen, -EINVAL,
					 "two forwarding tables for switch "
					 "0x%016" PRIx64,
					 l->guid);
		r->lft = l->lft;
		r->lft_top = l->top;
		r->lft_error = l->error;
		l->lft = NULL;
		l->error = NULL;
		n->st.lfts += r->lft != NULL;
		n->st.lft_errors += r->lft_error != NULL;
	}
	return 0;
}

static void own(struct route_net *n, uint32_t node, unsigned port, uint16_t lid,
		uint8_t lmc)
{
	unsigned last = (unsigned)lid + (1u << lmc) - 1;

	if (!lid)
		return;
	if (last > ROUTE_LID_MAX)
		last = ROUTE_LID_MAX;
	for (unsigned l = lid; l <= last; l++) {
		if (n->owner[l] != OWNER_NONE) {
			n->st.lid_conflicts++;
			continue;
		}
		n->owner[l] = OWNER(node, port);
		if (l > n->st.top_lid)
			n->st.top_lid = l;
	}
}

/* Every LID to its port, nodes in the order they were added. */
static int index_lids(struct route_net *n)
{
	uint32_t *order = malloc((n->n_nodes + 1) * sizeof(*order));

	n->owner = malloc(((size_t)ROUTE_LID_MAX + 1) * sizeof(*n->owner));
	if (!n->owner || !order) {
		free(order);
		return -ENOMEM;
	}
	memset(n->owner, 0xff, ((size_t)ROUTE_LID_MAX + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < n->n_nodes; i++)
		order[n->nodes[i].seq] = (uint32_t)i;
	for (size_t k = 0; k < n->n_nodes; k++) {
		uint32_t i = order[k];
		const struct rnode *r = &n->nodes[i];

		if (r->type == ROUTE_SWITCH) {
			own(n, i, 0, r->lid, r->lmc);
			continue;
		}
		for (unsigned j = 1; j <= r->numports; j++) {
			const struct rport *p = &n->ports[r->port0 + j];

			if (p->present)
				own(n, i, j, p->lid, p->lmc);
		}
	}
	free(order);
	return 0;
}

int route_net_finish(struct route_net *n, char *err, size_t errlen)
{
	int ret;

	if (n->finished)
		return 0;
	if (n->bad[0])
		return route_say(err, errlen, -EINVAL, "%s", n->bad);
	if (n->n_nodes) /* no nodes, no array: qsort wants one */
		qsort(n->nodes, n->n_nodes, sizeof(*n->nodes), by_guid);
	for (size_t i = 1; i < n->n_nodes; i++)
		if (n->nodes[i].guid == n->nodes[i - 1].guid)
			return route_say(err, errlen, -EINVAL,
					 "node 0x%016" PRIx64 " given twice",
					 n->nodes[i].guid);
	ret = size_slots(n, err, errlen);
	if (!ret)
		ret = place_ports(n, err, errlen);
	if (!ret)
		ret = attach_lfts(n, err, errlen);
	if (ret)
		return ret;
	link_ports(n);
	ret = index_lids(n);
	if (ret)
		return ret;
	for (size_t i = 0; i < n->n_nodes; i++) {
		n->st.switches += n->nodes[i].type == ROUTE_SWITCH;
		for (unsigned j = 1; j <= n->nodes[i].numports; j++)
			n->st.ports += n->ports[n->nodes[i].port0 + j].present;
	}
	n->st.nodes = n->n_nodes;
	staging_free(n);
	n->finished = true;
	return 0;
}

void route_net_stats(const struct route_net *n, struct route_net_stats *out)
{
	*out = n->st;
}

size_t route_net_nodes(const struct route_net *n)
{
	return n->n_nodes;
}

int route_node_get(const struct route_net *n, uint32_t idx,
		   struct route_node_info *out)
{
	const struct rnode *r;

	if (idx >= n->n_nodes)
		return -ENOENT;
	r = &n->nodes[idx];
	*out = (struct route_node_info){
		.guid = r->guid,
		.type = (enum route_node_type)r->type,
		.desc = r->desc,
		.numports = r->numports,
		.lid = r->lid,
		.lmc = r->lmc,
		.has_lft = r->lft != NULL,
		.lft_top = r->lft_top,
		.lft_error = r->lft_error,
	};
	return 0;
}

int route_port_get(const struct route_net *n, uint32_t idx, unsigned port,
		   struct route_port_info *out)
{
	const struct rport *p;

	if (!n->finished || idx >= n->n_nodes || port > n->nodes[idx].numports)
		return -ENOENT;
	p = &n->ports[n->nodes[idx].port0 + port];
	if (!p->present)
		return -ENOENT;
	*out = (struct route_port_info){
		.lid = p->lid,
		.lmc = p->lmc,
		.state = p->state,
		.port_guid = p->port_guid,
		.remote = {p->remote,
			   p->remote == ROUTE_NO_NODE
				   ? 0
				   : n->nodes[p->remote].guid,
			   p->remote == ROUTE_NO_NODE ? 0 : p->remote_port},
	};
	return 0;
}

int route_lid_owner(const struct route_net *n, unsigned lid,
		    struct route_end *out)
{
	uint32_t o;

	if (!n->finished || !lid || lid > ROUTE_LID_MAX)
		return -ENOENT;
	o = n->owner[lid];
	if (o == OWNER_NONE)
		return -ENOENT;
	*out = route_end_of(n, OWNER_NODE(o), OWNER_PORT(o));
	return 0;
}

int route_lid_parse(const char *s, unsigned *out)
{
	int hex = s && (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2));
	unsigned long v;
	char *end;

	if (!s || !*s || (!hex && (*s < '0' || *s > '9')) ||
	    (hex && !isxdigit((unsigned char)s[2])))
		return -EINVAL;
	errno = 0;
	v = strtoul(hex ? s + 2 : s, &end, hex ? 16 : 10);
	if (errno || *end || !v || v > ROUTE_LID_MAX)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

/* ---------------------------------------------------------------- runs */

size_t route_runs_count(const uint8_t *lft, unsigned top)
{
	size_t runs = 1;

	for (unsigned l = 1; l <= top; l++)
		runs += lft[l] != lft[l - 1];
	return runs;
}

size_t route_runs_encode(const uint8_t *lft, unsigned top,
			 struct route_run *out)
{
	size_t k = 0;

	out[k++] = (struct route_run){0, lft[0]};
	for (unsigned l = 1; l <= top; l++)
		if (lft[l] != lft[l - 1])
			out[k++] = (struct route_run){(uint16_t)l, lft[l]};
	return k;
}

int route_runs_check(const struct route_run *runs, size_t n, unsigned top,
		     char *err, size_t errlen)
{
	if (top > ROUTE_LID_MAX)
		return route_say(err, errlen, -EINVAL,
				 "top LID %u is beyond the unicast LIDs (%u)",
				 top, ROUTE_LID_MAX);
	if (!n)
		return route_say(err, errlen, -EINVAL, "no runs");
	if (runs[0].lid)
		return route_say(err, errlen, -EINVAL,
				 "run 0 starts at LID %u, not 0", runs[0].lid);
	for (size_t i = 1; i < n; i++) {
		if (runs[i].lid <= runs[i - 1].lid)
			return route_say(
				err, errlen, -EINVAL,
				"run %zu starts at LID %u, not after run "
				"%zu's %u",
				i, runs[i].lid, i - 1, runs[i - 1].lid);
		if (runs[i].lid > top)
			return route_say(
				err, errlen, -EINVAL,
				"run %zu starts at LID %u, beyond the top "
				"LID %u",
				i, runs[i].lid, top);
	}
	return 0;
}

void route_runs_expand(const struct route_run *runs, size_t n, unsigned top,
		       uint8_t *lft)
{
	for (size_t i = 0; i < n; i++) {
		unsigned end = i + 1 < n ? runs[i + 1].lid : top + 1;

		memset(lft + runs[i].lid, runs[i].port, end - runs[i].lid);
	}
}
