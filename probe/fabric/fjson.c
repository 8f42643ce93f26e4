// SPDX-License-Identifier: MIT
/*
 * The fabric as JSON (fabric_json_write()): one discovery and the last sweep,
 * for scripts and checks. Nodes in GUID order, each with its ports: state,
 * width and speed active / enabled / supported, the remote end, and the
 * counters under their sysfs names (raw, as PerfMgt returns them:
 * port_xmit_data in 4-octet words) with the saturated ones listed. Ports
 * that could not be read say why, and are listed again under "unread".
 * With the tables, each switch carries its linear forwarding table as runs
 * (the report's form) or why it has none; "routes" says what their last
 * read cost. The shape is documented in docs/fabric.md. The document is
 * written as
 * it is built, one node at a time, so a large fabric costs the memory of
 * one node's JSON, not of the whole tree.
 */
#include "fabric_int.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "route.h"

static json_t *guid_str(uint64_t guid)
{
	char s[24];

	snprintf(s, sizeof(s), "0x%016" PRIx64, guid);
	return json_string(s);
}

static json_int_t clamp(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX : (json_int_t)v;
}

/* Why a port was not read, in words. */
static const char *why(int status)
{
	switch (status) {
	case -ETIMEDOUT:
		return "timeout";
	case -EHOSTUNREACH:
		return "not asked: its node stopped answering this sweep";
	case -EOPNOTSUPP:
		return "attribute not supported by the PMA";
	case -EINVAL:
		return "refused by the PMA (invalid field)";
	case -EREMOTE:
		return "the PMA redirects (not followed)";
	case -EBUSY:
		return "the PMA stayed busy";
	case -EPROTO:
		return "malformed response";
	default:
		return "error";
	}
}

static json_t *widths(unsigned mask)
{
	json_t *a = json_array();

	for (unsigned b = 1; a && b <= 16; b <<= 1) {
		char s[8];

		if (!(mask & b))
			continue;
		snprintf(s, sizeof(s), "%uX", fabric_width_lanes(b));
		json_array_append_new(a, json_string(s));
	}
	return a;
}

static json_t *speeds(unsigned base, unsigned ext, unsigned fdr10)
{
	static const char *const bn[] = {"SDR", "DDR", "QDR"};
	static const char *const en[] = {"FDR", "EDR", "HDR", "NDR", "XDR"};
	json_t *a = json_array();

	for (unsigned i = 0; a && i < 3; i++)
		if (base & (1u << i))
			json_array_append_new(a, json_string(bn[i]));
	if (a && (fdr10 & 1))
		json_array_append_new(a, json_string("FDR10"));
	for (unsigned i = 0; a && i < 5; i++)
		if (ext & (1u << i))
			json_array_append_new(a, json_string(en[i]));
	return a;
}

static json_t *counters(const struct pma_counters *c, json_t **sat)
{
	json_t *o = json_object();

	*sat = json_array();
	for (int k = 0; o && *sat && k < FC_COUNT; k++) {
		uint64_t bit = UINT64_C(1) << k;

		if (!(c->have & bit))
			continue;
		json_object_set_new(o, pma_counter_name(k),
				    json_integer(clamp(c->v[k])));
		if (c->sat & bit)
			json_array_append_new(*sat,
					      json_string(pma_counter_name(k)));
	}
	return o;
}

static json_t *enc_remote(const struct fabric_net *net,
			  const struct fabric_port *p)
{
	const struct fabric_node *r;

	if (!p->remote_guid)
		return json_null();
	r = p->remote != FABRIC_NO_NODE ? &net->nodes[p->remote] : NULL;
	return json_pack("{s:o,s:i,s:s,s:s}", "guid", guid_str(p->remote_guid),
			 "port", (json_int_t)p->remote_port, "description",
			 r ? r->desc : "", "type",
			 r ? fabric_node_type_name(r->type) : "?");
}

static json_t *enc_port(const struct fabric_net *net,
			const struct fabric_port *p)
{
	char deg[64] = "";
	bool degraded = fabric_port_degraded(p, deg, sizeof(deg));
	unsigned lanes = fabric_width_lanes(p->width_active);
	char wa[8];
	json_t *o, *sat = NULL;

	snprintf(wa, sizeof(wa), "%uX", lanes);
	o = json_pack(
		"{s:i,s:i,s:s,s:s,s:s,s:o,s:o,s:s,s:o,s:o,s:f,s:b,s:o}", "port",
		(json_int_t)p->num, "lid", (json_int_t)p->lid, "state",
		report_port_state_name(p->state), "phys_state",
		report_phys_state_name(p->phys_state), "width_active",
		lanes ? wa : "?", "width_enabled", widths(p->width_enabled),
		"width_supported", widths(p->width_supported), "speed_active",
		fabric_speed_name(p), "speed_enabled",
		speeds(p->speed_enabled, p->espeed_enabled, p->fdr10_enabled),
		"speed_supported",
		speeds(p->speed_supported, p->espeed_supported,
		       p->fdr10_supported),
		"rate_gbps", fabric_speed_active(p) * lanes, "degraded",
		degraded, "remote", enc_remote(net, p));
	if (!o)
		return NULL;
	json_object_set_new(o, "lmc", json_integer(p->lmc));
	if (degraded)
		json_object_set_new(o, "degraded_reason", json_string(deg));
	if (p->status == FABRIC_NOT_ASKED) {
		json_object_set_new(o, "read", json_false());
		json_object_set_new(o, "error",
				    json_string("not asked: no PMA path "
						"(port down or no LID)"));
	} else if (p->status < 0) {
		char e[128];

		snprintf(e, sizeof(e), "%s: %s", pma_kind_name(p->failed),
			 why(p->status));
		json_object_set_new(o, "read", json_false());
		json_object_set_new(o, "error", json_string(e));
	} else {
		json_object_set_new(o, "read", json_true());
	}
	if (p->c.have) {
		json_object_set_new(o, "counters", counters(&p->c, &sat));
		json_object_set_new(o, "saturated", sat);
	}
	return o;
}

static json_t *enc_pma(const struct fabric_node *n)
{
	if (!n->cpi_known)
		return json_null();
	return json_pack("{s:i,s:i,s:b,s:b,s:b,s:b}", "cap_mask",
			 (json_int_t)n->caps.cap_mask, "cap_mask2",
			 (json_int_t)n->caps.cap_mask2, "extended",
			 pma_has_ext(&n->caps), "extended_ietf",
			 pma_has_ietf(&n->caps), "xmit_wait",
			 pma_has_xmit_wait(&n->caps) ||
				 pma_has_ext_xmit_wait(&n->caps),
			 "details_unsupported", n->no_details);
}

/* A switch's table: {"top", "runs": [lid, port...]} or {"error"}. */
static json_t *enc_lft(const struct fabric_node *n)
{
	struct route_run *r = NULL;
	json_t *runs;
	char why[128];
	size_t k = 0;

	if (!n->lft) {
		fabric_lft_error(n, why, sizeof(why));
		return json_pack("{s:s}", "error", why);
	}
	runs = fabric_lft_runs(n, &r, &k) ? NULL : json_array();
	for (size_t i = 0; runs && i < k; i++)
		if (json_array_append_new(runs, json_integer(r[i].lid)) ||
		    json_array_append_new(runs, json_integer(r[i].port))) {
			json_decref(runs);
			runs = NULL;
		}
	free(r);
	if (!runs)
		return NULL;
	return json_pack("{s:i,s:o}", "top", (json_int_t)n->lft_top, "runs",
			 runs);
}

static json_t *enc_node(const struct fabric_net *net,
			const struct fabric_node *n, bool tables,
			json_t *unread)
{
	json_t *ports = json_array();
	json_t *o;

	for (size_t j = 0; ports && j < n->n_ports; j++) {
		const struct fabric_port *p = &n->ports[j];
		json_t *po = enc_port(net, p);

		if (!po || json_array_append_new(ports, po)) {
			json_decref(ports);
			return NULL;
		}
		if (p->status < 0)
			json_array_append_new(
				unread,
				json_pack("{s:o,s:s,s:i,s:O}", "guid",
					  guid_str(n->guid), "description",
					  n->desc, "port", (json_int_t)p->num,
					  "error",
					  json_object_get(po, "error")));
	}
	o = json_pack("{s:o,s:s,s:s,s:i,s:o,s:o}", "guid", guid_str(n->guid),
		      "type", fabric_node_type_name(n->type), "description",
		      n->desc, "numports", (json_int_t)n->numports, "pma",
		      enc_pma(n), "ports", ports);
	if (o && n->type == FABRIC_SWITCH)
		json_object_set_new(o, "lid", json_integer(n->lid));
	if (o && n->type == FABRIC_SWITCH && tables)
		json_object_set_new(o, "lft", enc_lft(n));
	return o;
}

/* What a pass through the window cost, then @more's members. */
static json_t *enc_pass(const struct fabric_pass *p, json_t *more)
{
	json_t *o = json_pack(
		"{s:f,s:f,s:f,s:I,s:I,s:I,s:I,s:I,s:I}", "at", p->started_at,
		"seconds", p->seconds, "cpu_seconds", p->cpu_seconds, "mads",
		clamp(p->mads), "retries", clamp(p->retries), "timeouts",
		clamp(p->timeouts), "errors", clamp(p->errors), "stale",
		clamp(p->stale), "unreachable", clamp(p->unreachable));

	if (!o || !more || json_object_update(o, more)) {
		json_decref(o);
		o = NULL;
	}
	json_decref(more);
	return o;
}

static json_t *enc_sweep(const struct fabric *f)
{
	const struct fabric_sweep_stats *s = &f->last;

	return enc_pass(&s->pass,
			json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:b}",
				  "window", (json_int_t)f->s.window, "per_node",
				  (json_int_t)f->s.per_node, "timeout_ms",
				  (json_int_t)f->s.timeout, "retries_max",
				  (json_int_t)f->s.retries, "dead_lids",
				  (json_int_t)s->lids_dead, "ports_read",
				  (json_int_t)s->ports_read, "ports_failed",
				  (json_int_t)s->ports_failed, "ports_skipped",
				  (json_int_t)s->ports_skipped,
				  "link_downed_moved", s->link_downed_moved));
}

/* The last read of the tables; null when never read. */
static json_t *enc_routes(const struct fabric *f)
{
	const struct fabric_route_stats *r = &f->routes;

	if (!r->pass.started_at)
		return json_null();
	return enc_pass(&r->pass,
			json_pack("{s:i,s:i,s:i,s:i}", "switches",
				  (json_int_t)r->switches, "switches_failed",
				  (json_int_t)r->switches_failed, "blocks",
				  (json_int_t)r->blocks, "interval",
				  (json_int_t)f->s.route_interval));
}

/* The document's head: everything but "nodes" and "unread". */
static json_t *enc_head(const struct fabric *f)
{
	const struct fabric_net *net = &f->net;
	json_t *o;

	o = json_pack(
		"{s:i,s:s,s:i,s:{s:f,s:f,s:i,s:o,s:i,s:i,s:i,s:i,s:i},s:o}",
		"version", 1, "ca", f->ca, "port", (json_int_t)f->port,
		"discovery", "at", net->discovered_at, "seconds",
		net->discover_seconds, "mads", (json_int_t)net->discover_mads,
		"from", guid_str(net->local_guid), "nodes",
		(json_int_t)net->n_nodes, "switches",
		(json_int_t)net->n_switches, "cas", (json_int_t)net->n_cas,
		"ports", (json_int_t)net->n_ports, "links",
		(json_int_t)net->n_links, "sweep", enc_sweep(f));
	if (o)
		json_object_set_new(o, "routes", enc_routes(f));
	return o;
}

/* @o as compact JSON to @out; 0 or -ENOMEM / -EIO. */
static int dump(json_t *o, FILE *out, bool strip_close)
{
	char *text =
		o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	size_t len;
	int ret = 0;

	if (!text)
		return -ENOMEM;
	len = strlen(text);
	if (strip_close && len)
		len--; /* leave the object open for what follows */
	if (fwrite(text, 1, len, out) != len)
		ret = -EIO;
	free(text);
	return ret;
}

int fabric_json_write(const struct fabric *f, bool tables, FILE *out)
{
	const struct fabric_net *net = &f->net;
	json_t *head = enc_head(f), *unread = json_array();
	int ret = head && unread ? 0 : -ENOMEM;

	/* streamed node by node: memory for one node, not the fabric */
	if (!ret)
		ret = dump(head, out, true);
	if (!ret && fputs(",\"nodes\":[", out) == EOF)
		ret = -EIO;
	for (size_t i = 0; !ret && i < net->n_nodes; i++) {
		json_t *n = enc_node(net, &net->nodes[i], tables, unread);

		if (i && fputc(',', out) == EOF)
			ret = -EIO;
		if (!ret)
			ret = dump(n, out, false);
		json_decref(n);
	}
	if (!ret && fputs("],\"unread\":", out) == EOF)
		ret = -EIO;
	if (!ret)
		ret = dump(unread, out, false);
	if (!ret && fputs("}\n", out) == EOF)
		ret = -EIO;
	json_decref(head);
	json_decref(unread);
	return ret;
}
