// SPDX-License-Identifier: MIT
/*
 * The report decoder (report.h): JSON -> struct report with jansson. It
 * validates every field it knows (type, range, length, character set) and
 * names the offending field by its path, so a collector can answer 400
 * with a reason an operator can act on. Keys it does not know are ignored,
 * so a newer probe may add fields without breaking an older collector;
 * changing the meaning of a field bumps REPORT_VERSION. The JSON shape is
 * documented in docs/api.md, "Report body".
 */
#include "report.h"
#include "report_fabric.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jdec.h"

static const char *const csrc_keys[CSRC_COUNT] = {"ib", "hw", "net"};

/* jdec_int() for the narrower fields of the struct. */
static int dec_int32(struct jdec *d, const json_t *o, const char *key,
		     int64_t min, int64_t max, int required, int *out)
{
	int64_t v = *out;
	int ret = jdec_int(d, o, key, min, max, required, &v);

	*out = (int)v;
	return ret;
}

static int dec_gid(struct jdec *d, const json_t *o, struct report_gid *g)
{
	int64_t idx = 0;
	int ret;

	ret = jdec_object_at(d, o);
	if (!ret)
		ret = jdec_int(d, o, "index", 0, 65535, 1, &idx);
	g->index = (unsigned)idx;
	if (!ret)
		ret = jdec_str(d, o, "gid", REPORT_MAX_NAME, JDEC_NAME, 1,
			       &g->gid);
	if (!ret)
		ret = jdec_str(d, o, "type", REPORT_MAX_NAME, JDEC_TEXT, 0,
			       &g->type);
	if (!ret)
		ret = jdec_str(d, o, "netdev", REPORT_MAX_NAME, JDEC_NAME, 0,
			       &g->netdev);
	return ret;
}

static int dec_pkey(struct jdec *d, const json_t *o, struct report_pkey *k)
{
	int64_t idx = 0, pkey = 0;
	int ret;

	ret = jdec_object_at(d, o);
	if (!ret)
		ret = jdec_int(d, o, "index", 0, 65535, 1, &idx);
	if (!ret)
		ret = jdec_int(d, o, "pkey", 0, 65535, 1, &pkey);
	k->index = (unsigned)idx;
	k->pkey = (uint16_t)pkey;
	return ret;
}

static int dec_gids_pkeys(struct jdec *d, const json_t *o,
			  struct report_port *p)
{
	json_t *a;
	void *elems;
	size_t old, i;
	int ret;

	ret = jdec_array(d, o, "gids", REPORT_MAX_GIDS, 0, sizeof(*p->gids), &a,
			 &elems, &old);
	p->gids = elems;
	for (i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t o2 = jdec_index(d, i);

		p->n_gids = i + 1;
		ret = dec_gid(d, json_array_get(a, i), &p->gids[i]);
		for (size_t j = 0; !ret && j < i; j++)
			if (p->gids[j].index == p->gids[i].index) {
				jdec_key(d, "index");
				ret = jdec_fail(d, "duplicate index %u",
						p->gids[i].index);
			}
		if (!ret)
			jdec_pop(d, o2);
	}
	jdec_pop(d, old);
	if (ret)
		return ret;
	ret = jdec_array(d, o, "pkeys", REPORT_MAX_PKEYS, 0, sizeof(*p->pkeys),
			 &a, &elems, &old);
	p->pkeys = elems;
	for (i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t o2 = jdec_index(d, i);

		p->n_pkeys = i + 1;
		ret = dec_pkey(d, json_array_get(a, i), &p->pkeys[i]);
		for (size_t j = 0; !ret && j < i; j++)
			if (p->pkeys[j].index == p->pkeys[i].index) {
				jdec_key(d, "index");
				ret = jdec_fail(d, "duplicate index %u",
						p->pkeys[i].index);
			}
		if (!ret)
			jdec_pop(d, o2);
	}
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

/* One source's counters: {"name": value, ...}. Path is at the source. */
static int dec_counter_set(struct jdec *d, const json_t *o,
			   struct report_port *p, int s)
{
	const char *name;
	json_t *v;
	size_t n;

	if (!json_is_object(o))
		return jdec_fail(d, "must be an object");
	n = json_object_size(o);
	if (n > REPORT_MAX_COUNTERS)
		return jdec_fail(d, "must have at most %d counters",
				 REPORT_MAX_COUNTERS);
	if (n == 0)
		return 0;
	p->counters[s] = calloc(n, sizeof(*p->counters[s]));
	if (!p->counters[s])
		return jdec_nomem(d);
	json_object_foreach((json_t *)o, name, v)
	{
		struct report_counter *c = &p->counters[s][p->n_counters[s]];
		size_t old = jdec_key(d, name);
		int64_t value = 0;
		int ret;

		p->n_counters[s]++; /* so report_free frees a partial one */
		ret = jdec_cstring(d, name, strlen(name), REPORT_MAX_NAME,
				   JDEC_NAME, &c->name);
		if (!ret)
			ret = jdec_count_at(d, v, &value);
		if (ret)
			return ret;
		c->value = (uint64_t)value;
		jdec_pop(d, old);
	}
	return 0;
}

static int dec_counters(struct jdec *d, const json_t *o, struct report_port *p)
{
	json_t *c = jdec_get(o, "counters");
	size_t old = jdec_key(d, "counters");
	int ret = 0;

	if (c && !json_is_object(c))
		ret = jdec_fail(d, "must be an object");
	for (int s = 0; !ret && c && s < CSRC_COUNT; s++) {
		json_t *set = jdec_get(c, csrc_keys[s]);
		size_t o2 = jdec_key(d, csrc_keys[s]);

		if (set)
			ret = dec_counter_set(d, set, p, s);
		if (!ret)
			jdec_pop(d, o2);
	}
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

static int dec_port(struct jdec *d, const json_t *o, struct report_port *p)
{
	int64_t port = 0, rate = -1;
	int ret;

	p->state = p->phys_state = -1;
	p->lid = p->sm_lid = p->lmc = p->cap_mask = -1;
	p->rate_bytes = REPORT_UNKNOWN;
	ret = jdec_object_at(d, o);
	if (!ret)
		ret = jdec_int(d, o, "port", 0, 255, 1, &port);
	p->port = (unsigned)port;
	if (!ret)
		ret = dec_int32(d, o, "state", 0, 15, 0, &p->state);
	if (!ret)
		ret = dec_int32(d, o, "phys_state", 0, 15, 0, &p->phys_state);
	if (!ret)
		ret = jdec_count(d, o, "rate_bytes_per_second", 0, &rate);
	if (rate >= 0)
		p->rate_bytes = (uint64_t)rate;
	if (!ret)
		ret = jdec_str(d, o, "link_layer", REPORT_MAX_NAME, JDEC_NAME,
			       0, &p->link_layer);
	if (!ret)
		ret = jdec_int(d, o, "lid", 0, 0xffff, 0, &p->lid);
	if (!ret)
		ret = jdec_int(d, o, "sm_lid", 0, 0xffff, 0, &p->sm_lid);
	if (!ret)
		ret = jdec_int(d, o, "lmc", 0, 7, 0, &p->lmc);
	if (!ret)
		ret = jdec_int(d, o, "cap_mask", 0, 0xffffffffLL, 0,
			       &p->cap_mask);
	if (!ret)
		ret = jdec_str(d, o, "port_guid", REPORT_MAX_NAME, JDEC_NAME, 0,
			       &p->port_guid);
	if (!ret)
		ret = jdec_str(d, o, "netdev", REPORT_MAX_NAME, JDEC_NAME, 0,
			       &p->netdev);
	if (!ret)
		ret = dec_gids_pkeys(d, o, p);
	if (!ret)
		ret = dec_counters(d, o, p);
	return ret;
}

static int dec_pcie(struct jdec *d, const json_t *o, struct report_pcie *p)
{
	json_t *c = jdec_get(o, "pcie");
	size_t old = jdec_key(d, "pcie");
	int ret = 0;

	p->cur_speed_gts = p->max_speed_gts = -1;
	p->cur_width = p->max_width = -1;
	p->aer_correctable = p->aer_nonfatal = p->aer_fatal = -1;
	if (!c)
		goto out;
	ret = jdec_object_at(d, c);
	if (!ret)
		ret = jdec_str(d, c, "address", REPORT_MAX_NAME, JDEC_NAME, 0,
			       &p->address);
	if (!ret)
		ret = jdec_num(d, c, "current_speed_gts", 0, 1000, 0,
			       &p->cur_speed_gts);
	if (!ret)
		ret = jdec_num(d, c, "max_speed_gts", 0, 1000, 0,
			       &p->max_speed_gts);
	if (!ret)
		ret = dec_int32(d, c, "current_width", 0, 64, 0, &p->cur_width);
	if (!ret)
		ret = dec_int32(d, c, "max_width", 0, 64, 0, &p->max_width);
	if (!ret)
		ret = jdec_count(d, c, "aer_correctable", 0,
				 &p->aer_correctable);
	if (!ret)
		ret = jdec_count(d, c, "aer_nonfatal", 0, &p->aer_nonfatal);
	if (!ret)
		ret = jdec_count(d, c, "aer_fatal", 0, &p->aer_fatal);
out:
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

static int dec_netdevs(struct jdec *d, const json_t *o,
		       struct report_device *dev)
{
	json_t *a;
	void *elems;
	size_t old;
	int ret;

	ret = jdec_array(d, o, "netdevs", REPORT_MAX_NETDEVS, 0,
			 sizeof(*dev->netdevs), &a, &elems, &old);
	dev->netdevs = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t o2 = jdec_index(d, i);

		dev->n_netdevs = i + 1;
		ret = jdec_string_at(d, json_array_get(a, i), REPORT_MAX_NAME,
				     JDEC_NAME, &dev->netdevs[i]);
		if (!ret)
			jdec_pop(d, o2);
	}
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

static int dec_ports(struct jdec *d, const json_t *o, struct report_device *dev)
{
	json_t *a;
	void *elems;
	size_t old;
	int ret;

	ret = jdec_array(d, o, "ports", REPORT_MAX_PORTS, 0,
			 sizeof(*dev->ports), &a, &elems, &old);
	dev->ports = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t o2 = jdec_index(d, i);

		dev->n_ports = i + 1;
		ret = dec_port(d, json_array_get(a, i), &dev->ports[i]);
		for (size_t j = 0; !ret && j < i; j++)
			if (dev->ports[j].port == dev->ports[i].port) {
				jdec_key(d, "port");
				ret = jdec_fail(d, "duplicate port %u",
						dev->ports[i].port);
			}
		if (!ret)
			jdec_pop(d, o2);
	}
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

static int dec_device(struct jdec *d, const json_t *o,
		      struct report_device *dev)
{
	int ret;

	dev->numa_node = -1;
	ret = jdec_object_at(d, o);
	if (!ret)
		ret = jdec_str(d, o, "name", REPORT_MAX_NAME, JDEC_NAME, 1,
			       &dev->name);
	for (size_t i = 0; !ret && i < REPORT_DEVICE_TEXTS; i++)
		ret = jdec_str(d, o, report_device_text_names[i],
			       REPORT_MAX_TEXT, JDEC_TEXT, 0,
			       report_device_text(dev, i));
	if (!ret)
		ret = dec_int32(d, o, "numa_node", 0, 65535, 0,
				&dev->numa_node);
	if (!ret)
		ret = dec_netdevs(d, o, dev);
	if (!ret)
		ret = dec_pcie(d, o, &dev->pcie);
	if (!ret)
		ret = dec_ports(d, o, dev);
	return ret;
}

static int dec_devices(struct jdec *d, const json_t *o, struct report *r)
{
	json_t *a;
	void *elems;
	size_t old;
	int ret;

	ret = jdec_array(d, o, "devices", REPORT_MAX_DEVICES, 1,
			 sizeof(*r->devices), &a, &elems, &old);
	r->devices = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t o2 = jdec_index(d, i);

		r->n_devices = i + 1;
		ret = dec_device(d, json_array_get(a, i), &r->devices[i]);
		for (size_t j = 0; !ret && j < i; j++)
			if (!strcmp(r->devices[j].name, r->devices[i].name)) {
				jdec_key(d, "name");
				ret = jdec_fail(d, "duplicate device '%s'",
						r->devices[i].name);
			}
		if (!ret)
			jdec_pop(d, o2);
	}
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

static int dec_report(struct jdec *d, const json_t *o, struct report *r)
{
	int64_t version = 0;
	int ret;

	if (!json_is_object(o))
		return jdec_fail(d, "must be a JSON object");
	ret = jdec_int(d, o, "version", REPORT_VERSION, REPORT_VERSION, 1,
		       &version);
	r->version = (int)version;
	if (!ret)
		ret = jdec_str(d, o, "host", REPORT_MAX_NAME, JDEC_HOST, 1,
			       &r->host);
	if (!ret)
		ret = jdec_num(d, o, "timestamp", 0, 1e11, 1, &r->timestamp);
	if (!ret)
		ret = jdec_str(d, o, "probe_version", REPORT_MAX_NAME,
			       JDEC_NAME, 0, &r->probe_version);
	if (!ret)
		ret = dec_devices(d, o, r);
	if (!ret)
		ret = report_fabric_decode(d, o, &r->fabric);
	return ret;
}

int report_decode(const char *json, size_t len, struct report **out, char *err,
		  size_t errlen)
{
	struct jdec d = {.err = err, .errlen = errlen, .top = "report"};
	struct report *r;
	json_t *root;
	int ret;

	*out = NULL;
	ret = jdec_load(&d, json, len, &root);
	if (ret)
		return ret;
	r = calloc(1, sizeof(*r));
	if (!r) {
		json_decref(root);
		return jdec_nomem(&d);
	}
	ret = dec_report(&d, root, r);
	json_decref(root);
	if (ret) {
		report_free(r);
		return ret == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	*out = r;
	return 0;
}
