// SPDX-License-Identifier: MIT
/*
 * Paths as JSON (route_json.h): GUIDs in the report's form
 * ("0x0002c90300a1b2c3"), an end port with its LID range, each hop with
 * its switch's LID and the in and out ports.
 */
#include "route_json.h"

#include <inttypes.h>
#include <stdio.h>

const char *route_type_name(enum route_node_type t)
{
	switch (t) {
	case ROUTE_CA:
		return "ca";
	case ROUTE_SWITCH:
		return "switch";
	case ROUTE_ROUTER:
		return "router";
	}
	return "?";
}

static json_t *guid(uint64_t g)
{
	char s[24];

	snprintf(s, sizeof(s), "0x%016" PRIx64, g);
	return json_string(s);
}

/* An end port: its node, its number and the LIDs it owns. */
static json_t *end_json(const struct route_net *n, const struct route_end *e)
{
	struct route_node_info ni;
	struct route_port_info pi;

	if (route_node_get(n, e->node, &ni) ||
	    route_port_get(n, e->node, e->port, &pi))
		return json_null();
	return json_pack("{s:o,s:s,s:s,s:i,s:i,s:i}", "node_guid",
			 guid(ni.guid), "node_desc", ni.desc, "type",
			 route_type_name(ni.type), "port", (json_int_t)e->port,
			 "lid", (json_int_t)pi.lid, "lmc", (json_int_t)pi.lmc);
}

json_t *route_path_json(const struct route_net *n, const struct route_path *p)
{
	json_t *hops = json_array(), *o;

	for (size_t i = 0; hops && i < p->n_hops; i++) {
		const struct route_hop *h = &p->hops[i];
		json_t *j = json_pack("{s:o,s:s,s:i,s:i,s:i}", "node_guid",
				      guid(h->guid), "node_desc", h->desc,
				      "lid", (json_int_t)h->lid, "in_port",
				      (json_int_t)h->in_port, "out_port",
				      (json_int_t)h->out_port);

		if (!j || json_array_append_new(hops, j)) {
			json_decref(hops);
			return NULL;
		}
	}
	if (!hops)
		return NULL;
	o = json_pack("{s:i,s:i,s:o,s:o,s:o,s:s}", "src_lid",
		      (json_int_t)p->src_lid, "dst_lid", (json_int_t)p->dst_lid,
		      "src", end_json(n, &p->src), "dst", end_json(n, &p->dst),
		      "hops", hops, "note", ROUTE_AR_CAVEAT);
	return o;
}
