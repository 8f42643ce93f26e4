// SPDX-License-Identifier: MIT
/*
 * The report's fabric section (report_fabric.h): free, encode (jansson) and
 * the validating decoder (jdec), which names the offending field in its
 * error ("fabric.nodes[3].ports[0].counters.symbol_error: must be a
 * non-negative integer") and stores nothing on failure.
 */
#include "report_fabric.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void report_guid_str(uint64_t guid, char *s, size_t len)
{
	snprintf(s, len, "0x%016" PRIx64, guid);
}

static void fport_clear(struct report_fport *p)
{
	free(p->speed_active);
	free(p->speed_enabled);
	free(p->degraded);
	free(p->error);
	for (size_t i = 0; i < p->n_counters; i++)
		free(p->counters[i].name);
	free(p->counters);
}

void report_fabric_free(struct report_fabric *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_nodes; i++) {
		struct report_fnode *n = &f->nodes[i];

		for (size_t j = 0; j < n->n_ports; j++)
			fport_clear(&n->ports[j]);
		free(n->ports);
		free(n->desc);
		free(n->lft_runs);
		free(n->lft_error);
	}
	free(f->nodes);
	free(f->ca);
	free(f);
}

/* ---------------------------------------------------------------- encode */

static int set_int(json_t *o, const char *k, int64_t v)
{
	return v < 0 ? 0 : json_object_set_new(o, k, json_integer(v));
}

static int set_str(json_t *o, const char *k, const char *s)
{
	return s ? json_object_set_new(o, k, json_string(s)) : 0;
}

static int set_guid(json_t *o, const char *k, uint64_t guid)
{
	char s[24];

	if (!guid)
		return 0;
	report_guid_str(guid, s, sizeof(s));
	return json_object_set_new(o, k, json_string(s));
}

static json_t *enc_fport(const struct report_fport *p)
{
	json_t *o = json_object(), *c = json_object();
	int bad = !o || !c;

	bad |= set_int(o, "port", p->port);
	bad |= set_int(o, "lid", p->lid);
	bad |= set_int(o, "lmc", p->lmc);
	bad |= set_int(o, "state", p->state);
	bad |= set_int(o, "phys_state", p->phys_state);
	bad |= set_int(o, "width_active", p->width_active);
	bad |= set_int(o, "width_enabled", p->width_enabled);
	bad |= set_str(o, "speed_active", p->speed_active);
	bad |= set_str(o, "speed_enabled", p->speed_enabled);
	if (p->rate_bytes != REPORT_UNKNOWN && p->rate_bytes <= INT64_MAX)
		bad |= set_int(o, "rate_bytes_per_second",
			       (int64_t)p->rate_bytes);
	bad |= set_str(o, "degraded", p->degraded);
	bad |= set_guid(o, "remote_guid", p->remote_guid);
	bad |= set_int(o, "remote_port", p->remote_port);
	bad |= set_str(o, "error", p->error);
	for (size_t i = 0; !bad && i < p->n_counters; i++) {
		uint64_t v = p->counters[i].value;

		bad |= json_object_set_new(
			c, p->counters[i].name,
			json_integer(v > INT64_MAX ? INT64_MAX
						   : (json_int_t)v));
	}
	if (!bad && p->n_counters)
		bad |= json_object_set(o, "counters", c);
	json_decref(c);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* {"top": N, "runs": [lid, port, lid, port...]} or {"error": "..."}. */
static int enc_lft(json_t *o, const struct report_fnode *n)
{
	json_t *l = json_object(), *runs = json_array();
	int bad = !l || !runs;

	if (n->has_lft) {
		bad |= set_int(l, "top", n->lft_top);
		for (size_t i = 0; !bad && i < n->lft_n_runs; i++) {
			bad |= json_array_append_new(
				runs, json_integer(n->lft_runs[i].lid));
			bad |= json_array_append_new(
				runs, json_integer(n->lft_runs[i].port));
		}
		bad |= json_object_set(l, "runs", runs);
	}
	bad |= set_str(l, "error", n->lft_error);
	json_decref(runs);
	if (bad) {
		json_decref(l);
		return -1;
	}
	return json_object_set_new(o, "lft", l);
}

static json_t *enc_fnode(const struct report_fnode *n)
{
	json_t *o = json_object(), *ports = json_array();
	int bad = !o || !ports;

	bad |= set_guid(o, "guid", n->guid);
	bad |= set_int(o, "type", n->type);
	bad |= set_str(o, "description", n->desc);
	bad |= set_int(o, "lid", n->lid);
	bad |= set_int(o, "numports", n->numports);
	if (!bad && (n->has_lft || n->lft_error))
		bad |= enc_lft(o, n);
	for (size_t j = 0; !bad && j < n->n_ports; j++) {
		json_t *p = enc_fport(&n->ports[j]);

		bad |= !p || json_array_append_new(ports, p);
	}
	bad |= json_object_set(o, "ports", ports);
	json_decref(ports);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *report_fabric_encode(const struct report_fabric *f)
{
	json_t *o = json_object(), *nodes = json_array();
	int bad = !o || !nodes;

	bad |= set_str(o, "ca", f->ca);
	bad |= set_int(o, "port", f->port);
	bad |= json_object_set_new(o, "discovered", json_real(f->discovered));
	bad |= json_object_set_new(o, "swept", json_real(f->swept));
	if (f->routed > 0)
		bad |= json_object_set_new(o, "routed", json_real(f->routed));
	for (size_t i = 0; !bad && i < f->n_nodes; i++) {
		json_t *n = enc_fnode(&f->nodes[i]);

		bad |= !n || json_array_append_new(nodes, n);
	}
	bad |= json_object_set(o, "nodes", nodes);
	json_decref(nodes);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ---------------------------------------------------------------- decode */

static int dec_guid(struct jdec *d, const json_t *o, const char *key,
		    int required, uint64_t *out)
{
	char *s = NULL, *end;
	size_t old;
	int ret;

	ret = jdec_str(d, o, key, 18, JDEC_NAME, required, &s);
	if (ret || !s)
		return ret;
	old = jdec_key(d, key);
	errno = 0;
	*out = strncmp(s, "0x", 2) || strlen(s) != 18
		       ? 0
		       : strtoull(s + 2, &end, 16);
	if (!*out || errno || *end)
		ret = jdec_fail(d, "must be a GUID: 0x and 16 hex digits, not "
				   "zero");
	jdec_pop(d, old);
	free(s);
	return ret;
}

static int dec_small(struct jdec *d, const json_t *o, const char *key,
		     int64_t min, int64_t max, int *out)
{
	int64_t v = *out;
	int ret = jdec_int(d, o, key, min, max, 0, &v);

	*out = (int)v;
	return ret;
}

static int dec_fcounters(struct jdec *d, const json_t *o,
			 struct report_fport *p)
{
	json_t *c = jdec_get(o, "counters"), *v;
	size_t old = jdec_key(d, "counters");
	const char *name;
	int ret = 0;

	if (c && !json_is_object(c))
		ret = jdec_fail(d, "must be an object");
	else if (c && json_object_size(c) > REPORT_MAX_FABRIC_COUNTERS)
		ret = jdec_fail(d, "must have at most %d counters",
				REPORT_MAX_FABRIC_COUNTERS);
	if (!ret && c) {
		p->counters =
			calloc(json_object_size(c) + 1, sizeof(*p->counters));
		if (!p->counters)
			ret = jdec_nomem(d);
	}
	json_object_foreach(c, name, v)
	{
		struct report_counter *k = &p->counters[p->n_counters];
		size_t o2 = jdec_key(d, name);
		int64_t value = 0;

		if (ret)
			break;
		ret = jdec_cstring(d, name, strlen(name), REPORT_MAX_NAME,
				   JDEC_NAME, &k->name);
		if (!ret)
			ret = jdec_count_at(d, v, &value);
		if (k->name)
			p->n_counters++;
		k->value = (uint64_t)value;
		if (!ret)
			jdec_pop(d, o2);
	}
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

static int dec_fport(struct jdec *d, const json_t *o, struct report_fport *p)
{
	int64_t port = 0, rate = -1, lid = -1;
	int ret;

	p->state = p->phys_state = p->width_active = p->width_enabled = -1;
	p->lmc = -1;
	p->remote_port = -1;
	p->rate_bytes = REPORT_UNKNOWN;
	ret = jdec_object_at(d, o);
	if (!ret)
		ret = jdec_int(d, o, "port", 0, 254, 1, &port);
	p->port = (unsigned)port;
	if (!ret)
		ret = jdec_int(d, o, "lid", 0, 0xffff, 0, &lid);
	p->lid = lid;
	if (!ret)
		ret = dec_small(d, o, "lmc", 0, 7, &p->lmc);
	if (!ret)
		ret = dec_small(d, o, "state", 0, 5, &p->state);
	if (!ret)
		ret = dec_small(d, o, "phys_state", 0, 7, &p->phys_state);
	if (!ret)
		ret = dec_small(d, o, "width_active", 0, 12, &p->width_active);
	if (!ret)
		ret = dec_small(d, o, "width_enabled", 0, 12,
				&p->width_enabled);
	if (!ret)
		ret = jdec_str(d, o, "speed_active", 8, JDEC_NAME, 0,
			       &p->speed_active);
	if (!ret)
		ret = jdec_str(d, o, "speed_enabled", 8, JDEC_NAME, 0,
			       &p->speed_enabled);
	if (!ret)
		ret = jdec_count(d, o, "rate_bytes_per_second", 0, &rate);
	if (!ret && rate >= 0)
		p->rate_bytes = (uint64_t)rate;
	if (!ret)
		ret = jdec_str(d, o, "degraded", REPORT_MAX_NAME, JDEC_TEXT, 0,
			       &p->degraded);
	if (!ret)
		ret = dec_guid(d, o, "remote_guid", 0, &p->remote_guid);
	if (!ret)
		ret = dec_small(d, o, "remote_port", 0, 254, &p->remote_port);
	if (!ret)
		ret = jdec_str(d, o, "error", REPORT_MAX_TEXT, JDEC_TEXT, 0,
			       &p->error);
	if (!ret)
		ret = dec_fcounters(d, o, p);
	return ret;
}

static int dec_fports(struct jdec *d, const json_t *o, struct report_fnode *n)
{
	json_t *a;
	void *elems;
	size_t old;
	int ret;

	ret = jdec_array(d, o, "ports", REPORT_MAX_FABRIC_PORTS, 1,
			 sizeof(*n->ports), &a, &elems, &old);
	n->ports = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t o2 = jdec_index(d, i);

		n->n_ports = i + 1;
		ret = dec_fport(d, json_array_get(a, i), &n->ports[i]);
		for (size_t j = 0; !ret && j < i; j++)
			if (n->ports[j].port == n->ports[i].port) {
				jdec_key(d, "port");
				ret = jdec_fail(d, "duplicate port %u",
						n->ports[i].port);
			}
		if (!ret)
			jdec_pop(d, o2);
	}
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

/* lft.runs: [lid, port, ...] pairs, checked as route_runs_check() does. */
static int dec_runs(struct jdec *d, const json_t *a, struct report_fnode *n)
{
	size_t len = json_array_size(a), old = jdec_key(d, "runs");
	char why[128];
	int ret = 0;

	if (!json_is_array(a) || !len || len % 2 ||
	    len > 2 * ((size_t)n->lft_top + 1))
		return jdec_fail(d, "must be a non-empty array of LID, port "
				    "pairs, at most top + 1 of them");
	n->lft_runs = calloc(len / 2, sizeof(*n->lft_runs));
	if (!n->lft_runs)
		return jdec_nomem(d);
	for (size_t i = 0; !ret && i < len; i++) {
		const json_t *v = json_array_get(a, i);
		json_int_t x = json_is_integer(v) ? json_integer_value(v) : -1;
		int64_t max = i % 2 ? ROUTE_PORT_NONE : n->lft_top;

		if (x < 0 || x > max) {
			jdec_index(d, i);
			ret = jdec_fail(d,
					"must be an integer in [0, %lld]: a "
					"%s",
					(long long)max, i % 2 ? "port" : "LID");
		} else if (i % 2) {
			n->lft_runs[i / 2].port = (uint8_t)x;
		} else {
			n->lft_runs[i / 2].lid = (uint16_t)x;
		}
	}
	n->lft_n_runs = len / 2;
	if (!ret && route_runs_check(n->lft_runs, n->lft_n_runs, n->lft_top,
				     why, sizeof(why)))
		ret = jdec_fail(d, "%s", why);
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

/* A switch's "lft": {"top", "runs"} or {"error"}. */
static int dec_lft(struct jdec *d, const json_t *o, struct report_fnode *n)
{
	json_t *l = NULL, *runs;
	int64_t top = -1;
	size_t old;
	int ret;

	ret = jdec_obj(d, o, "lft", 0, &l);
	if (ret || !l)
		return ret;
	old = jdec_key(d, "lft");
	if (n->type != 2)
		return jdec_fail(d, "only a switch has a forwarding table");
	ret = jdec_str(d, l, "error", REPORT_MAX_TEXT, JDEC_TEXT, 0,
		       &n->lft_error);
	if (!ret)
		ret = jdec_int(d, l, "top", 0, ROUTE_LID_MAX, !n->lft_error,
			       &top);
	runs = jdec_get(l, "runs");
	if (!ret && top >= 0 && !runs)
		ret = jdec_fail(d, "runs: is required with top");
	if (!ret && runs && top < 0)
		ret = jdec_fail(d, "top: is required with runs");
	if (!ret && top >= 0 && n->lft_error)
		ret = jdec_fail(d, "holds a table or an error, not both");
	if (!ret && top >= 0) {
		n->lft_top = (unsigned)top;
		n->has_lft = 1;
		ret = dec_runs(d, runs, n);
	}
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

static int dec_fnode(struct jdec *d, const json_t *o, struct report_fnode *n)
{
	int64_t numports = 0, lid = -1;
	int ret;

	ret = jdec_object_at(d, o);
	if (!ret)
		ret = dec_guid(d, o, "guid", 1, &n->guid);
	if (!ret)
		ret = dec_small(d, o, "type", 1, 3, &n->type);
	if (!ret && !n->type) {
		jdec_key(d, "type");
		ret = jdec_fail(d, "is required: 1 CA, 2 switch, 3 router");
	}
	if (!ret)
		ret = jdec_str(d, o, "description", REPORT_MAX_NAME + 1,
			       JDEC_TEXT, 0, &n->desc);
	if (!ret)
		ret = jdec_int(d, o, "lid", 0, 0xffff, 0, &lid);
	n->lid = lid;
	if (!ret)
		ret = jdec_int(d, o, "numports", 0, 254, 0, &numports);
	n->numports = (unsigned)numports;
	if (!ret)
		ret = dec_lft(d, o, n);
	if (!ret)
		ret = dec_fports(d, o, n);
	return ret;
}

static int by_guid(const void *a, const void *b)
{
	uint64_t x = ((const struct report_fnode *)a)->guid;
	uint64_t y = ((const struct report_fnode *)b)->guid;

	return x < y ? -1 : x > y;
}

static int dec_fnodes(struct jdec *d, const json_t *o, struct report_fabric *f)
{
	json_t *a;
	void *elems;
	size_t old;
	int ret;

	ret = jdec_array(d, o, "nodes", REPORT_MAX_FABRIC_NODES, 1,
			 sizeof(*f->nodes), &a, &elems, &old);
	f->nodes = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t o2 = jdec_index(d, i);

		f->n_nodes = i + 1;
		ret = dec_fnode(d, json_array_get(a, i), &f->nodes[i]);
		if (!ret)
			jdec_pop(d, o2);
	}
	if (!ret)
		jdec_pop(d, old);
	/* each GUID once: sorted, neighbours differ */
	if (!ret && f->n_nodes > 1) {
		qsort(f->nodes, f->n_nodes, sizeof(*f->nodes), by_guid);
		for (size_t i = 1; !ret && i < f->n_nodes; i++)
			if (f->nodes[i].guid == f->nodes[i - 1].guid) {
				char g[24];

				report_guid_str(f->nodes[i].guid, g, sizeof(g));
				jdec_key(d, "nodes");
				ret = jdec_fail(d, "duplicate node guid %s", g);
			}
	}
	return ret;
}

int report_fabric_decode(struct jdec *d, const json_t *report,
			 struct report_fabric **out)
{
	json_t *o = jdec_get(report, "fabric");
	struct report_fabric *f;
	size_t old;
	int64_t port = 0;
	int ret;

	*out = NULL;
	if (!o)
		return 0;
	old = jdec_key(d, "fabric");
	ret = jdec_object_at(d, o);
	jdec_pop(d, old);
	if (ret)
		return ret;
	f = calloc(1, sizeof(*f));
	if (!f)
		return jdec_nomem(d);
	old = jdec_key(d, "fabric");
	ret = jdec_str(d, o, "ca", REPORT_MAX_NAME, JDEC_NAME, 0, &f->ca);
	if (!ret)
		ret = jdec_int(d, o, "port", 0, 254, 0, &port);
	f->port = (unsigned)port;
	if (!ret)
		ret = jdec_num(d, o, "discovered", 0, 1e11, 0, &f->discovered);
	if (!ret)
		ret = jdec_num(d, o, "swept", 0, 1e11, 0, &f->swept);
	if (!ret)
		ret = jdec_num(d, o, "routed", 0, 1e11, 0, &f->routed);
	if (!ret)
		ret = dec_fnodes(d, o, f);
	if (ret) {
		report_fabric_free(f);
		return ret;
	}
	jdec_pop(d, old);
	*out = f;
	return 0;
}
