// SPDX-License-Identifier: MIT
/*
 * The poller's picture as reports' fabric sections (common/report_fabric.h):
 * every node and port of the last discovery with the last sweep's counters
 * and, when asked, each switch's forwarding table as runs, cut into chunks
 * of at most @max_ports ports (64 runs of a table weigh as one port: about
 * 700 bytes either way) so that each report stays under the collector's
 * body limit. A node is never split. Counters go under the names the sweep
 * read them by (the sysfs names).
 */
#include "fabric_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report_fabric.h"
#include "route.h"

static int fport_fill(const struct fabric_port *p, struct report_fport *o)
{
	unsigned lanes = fabric_width_lanes(p->width_active);
	char why[64];

	o->port = p->num;
	o->lid = p->lid;
	o->lmc = p->lmc;
	o->state = p->state;
	o->phys_state = p->phys_state;
	o->width_active = lanes ? (int)lanes : -1;
	o->width_enabled = fabric_width_max(p->width_enabled)
				   ? (int)fabric_width_max(p->width_enabled)
				   : -1;
	o->speed_active = strdup(fabric_speed_name(p));
	o->speed_enabled = NULL;
	/* Gb/s per lane x lanes, as bytes per second (sysfs `rate`) */
	o->rate_bytes =
		lanes && fabric_speed_active(p) > 0
			? (uint64_t)(fabric_speed_active(p) * lanes * 1e9 / 8)
			: REPORT_UNKNOWN;
	o->degraded =
		fabric_port_degraded(p, why, sizeof(why)) ? strdup(why) : NULL;
	o->remote_guid = p->remote_guid;
	o->remote_port = p->remote_guid ? (int)p->remote_port : -1;
	o->error = NULL;
	if (p->status < 0) {
		char e[96];

		snprintf(e, sizeof(e), "%s: %s", pma_kind_name(p->failed),
			 strerror(-p->status));
		o->error = strdup(e);
	} else if (p->status == FABRIC_NOT_ASKED) {
		o->error = strdup("not asked: no PMA path");
	}
	o->counters = calloc(FC_COUNT, sizeof(*o->counters));
	if (!o->speed_active || !o->counters || (p->status && !o->error))
		return -ENOMEM;
	for (int k = 0; k < FC_COUNT; k++) {
		if (!(p->c.have & (UINT64_C(1) << k)))
			continue;
		o->counters[o->n_counters].name = strdup(pma_counter_name(k));
		if (!o->counters[o->n_counters].name)
			return -ENOMEM;
		o->counters[o->n_counters++].value = p->c.v[k];
	}
	return 0;
}

/* A switch's table, or why it has none. */
static int flft_fill(const struct fabric_node *n, struct report_fnode *o)
{
	char why[128];

	if (!n->lft) {
		fabric_lft_error(n, why, sizeof(why));
		o->lft_error = strdup(why);
		return o->lft_error ? 0 : -ENOMEM;
	}
	o->has_lft = 1;
	o->lft_top = n->lft_top;
	return fabric_lft_runs(n, &o->lft_runs, &o->lft_n_runs);
}

static int fnode_fill(const struct fabric_node *n, bool routes,
		      struct report_fnode *o)
{
	o->guid = n->guid;
	o->type = (int)n->type;
	o->desc = strdup(n->desc);
	o->lid = n->type == FABRIC_SWITCH ? n->lid : -1;
	o->numports = n->numports;
	o->ports = calloc(n->n_ports + 1, sizeof(*o->ports));
	if (!o->desc || !o->ports)
		return -ENOMEM;
	for (size_t j = 0; j < n->n_ports; j++) {
		o->n_ports = j + 1;
		if (fport_fill(&n->ports[j], &o->ports[j]))
			return -ENOMEM;
	}
	if (routes && n->type == FABRIC_SWITCH)
		return flft_fill(n, o);
	return 0;
}

/* What node @n weighs in a chunk: its ports, and its table's runs / 64. */
static size_t weight(const struct fabric_node *n, bool routes)
{
	size_t w = n->n_ports;

	if (routes && n->lft)
		w += route_runs_count(n->lft, n->lft_top) / 64;
	return w;
}

size_t fabric_report_chunks(const struct fabric *f, size_t max_ports,
			    bool routes)
{
	size_t chunks = 0, in = 0;

	for (size_t i = 0; i < f->net.n_nodes; i++) {
		size_t np = weight(&f->net.nodes[i], routes);

		if (!chunks || (in && in + np > max_ports)) {
			chunks++;
			in = 0;
		}
		in += np;
	}
	return chunks;
}

int fabric_report_chunk(const struct fabric *f, size_t max_ports, bool routes,
			size_t chunk, struct report_fabric **out)
{
	struct report_fabric *r = calloc(1, sizeof(*r));
	size_t c = 0, in = 0, first = SIZE_MAX, last = 0;
	int ret = 0;

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < f->net.n_nodes; i++) {
		size_t np = weight(&f->net.nodes[i], routes);

		if (i && in && in + np > max_ports) {
			c++;
			in = 0;
		}
		in += np;
		if (c == chunk) {
			first = first == SIZE_MAX ? i : first;
			last = i + 1;
		}
	}
	r->ca = strdup(f->ca);
	r->port = f->port;
	r->discovered = f->net.discovered_at;
	r->swept = f->last.pass.started_at;
	r->routed = routes ? f->routes.pass.started_at : 0;
	r->nodes = calloc(first == SIZE_MAX ? 1 : last - first + 1,
			  sizeof(*r->nodes));
	if (!r->ca || !r->nodes)
		ret = -ENOMEM;
	for (size_t i = first; !ret && first != SIZE_MAX && i < last; i++) {
		r->n_nodes++;
		ret = fnode_fill(&f->net.nodes[i], routes,
				 &r->nodes[i - first]);
	}
	if (ret) {
		report_fabric_free(r);
		return ret;
	}
	*out = r;
	return 0;
}
