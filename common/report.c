// SPDX-License-Identifier: MIT
/*
 * The counters report (report.h): freeing, state names and the JSON
 * encoder (jansson), which omits unknown values and clamps uint64 values
 * above INT64_MAX. The validating decoder is in report_decode.c. The JSON
 * shape is documented in docs/api.md, "Report body".
 */
#include "report.h"
#include "report_fabric.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const csrc_keys[CSRC_COUNT] = {"ib", "hw", "net"};

/* ------------------------------------------------------------------ free */

void report_port_clear(struct report_port *p)
{
	free(p->link_layer);
	free(p->port_guid);
	free(p->netdev);
	for (size_t i = 0; i < p->n_gids; i++) {
		free(p->gids[i].gid);
		free(p->gids[i].type);
		free(p->gids[i].netdev);
	}
	free(p->gids);
	free(p->pkeys);
	for (int s = 0; s < CSRC_COUNT; s++) {
		for (size_t i = 0; i < p->n_counters[s]; i++)
			free(p->counters[s][i].name);
		free(p->counters[s]);
	}
	memset(p, 0, sizeof(*p));
}

const char *const report_device_text_names[REPORT_DEVICE_TEXTS] = {
	"node_guid", "sys_image_guid", "fw_ver",
	"hca_type",  "board_id",       "node_desc",
};

char **report_device_text(struct report_device *d, size_t i)
{
	char **const texts[REPORT_DEVICE_TEXTS] = {
		&d->node_guid, &d->sys_image_guid, &d->fw_ver,
		&d->hca_type,  &d->board_id,	   &d->node_desc,
	};

	return texts[i];
}

static void report_device_clear(struct report_device *d)
{
	free(d->name);
	for (size_t i = 0; i < REPORT_DEVICE_TEXTS; i++)
		free(*report_device_text(d, i));
	for (size_t i = 0; i < d->n_netdevs; i++)
		free(d->netdevs[i]);
	free(d->netdevs);
	free(d->pcie.address);
	for (size_t i = 0; i < d->n_ports; i++)
		report_port_clear(&d->ports[i]);
	free(d->ports);
}

void report_free(struct report *r)
{
	if (!r)
		return;
	free(r->host);
	free(r->probe_version);
	for (size_t i = 0; i < r->n_devices; i++)
		report_device_clear(&r->devices[i]);
	free(r->devices);
	report_fabric_free(r->fabric);
	free(r);
}

/* ----------------------------------------------------------- state names */

const char *report_port_state_name(int state)
{
	/* enum ib_port_state; the kernel's ports/N/state prints these. */
	static const char *const names[] = {"NOP",   "DOWN",   "INIT",
					    "ARMED", "ACTIVE", "ACTIVE_DEFER"};

	if (state < 0 || state >= (int)(sizeof(names) / sizeof(names[0])))
		return "?";
	return names[state];
}

const char *report_phys_state_name(int phys_state)
{
	/* IBA PortPhysicalState; ports/N/phys_state prints these. */
	static const char *const names[] = {
		"?",
		"Sleep",
		"Polling",
		"Disabled",
		"PortConfigurationTraining",
		"LinkUp",
		"LinkErrorRecovery",
		"Phy Test",
	};

	if (phys_state < 1 ||
	    phys_state >= (int)(sizeof(names) / sizeof(names[0])))
		return "?";
	return names[phys_state];
}

/* ------------------------------------------------------ derived values */

int report_pcie_degraded(const struct report_pcie *p)
{
	int speed = p->cur_speed_gts >= 0 && p->max_speed_gts > 0;
	int width = p->cur_width >= 0 && p->max_width > 0;

	if (!speed && !width)
		return -1;
	return (speed && p->cur_speed_gts < p->max_speed_gts) ||
	       (width && p->cur_width < p->max_width);
}

char *report_netdevs_join(const struct report_device *d, char *out, size_t size)
{
	size_t off = 0;

	if (!size)
		return out;
	out[0] = '\0';
	for (size_t i = 0; i < d->n_netdevs && off < size; i++)
		off += (size_t)snprintf(out + off, size - off, "%s%s",
					i ? "," : "", d->netdevs[i]);
	return out;
}

/* ---------------------------------------------------------------- encode */

/*
 * The encoder's helpers add one member to @o when the value is known and
 * return 0, or -1 when jansson failed (out of memory, a string that is not
 * UTF-8). The callers OR the results and convert once.
 */
static int enc_str(json_t *o, const char *key, const char *s)
{
	if (!s)
		return 0;
	return json_object_set_new(o, key, json_string(s));
}

static int enc_int(json_t *o, const char *key, int64_t v)
{
	if (v < 0)
		return 0;
	return json_object_set_new(o, key, json_integer((json_int_t)v));
}

/* uint64 values above INT64_MAX do not fit json_int_t: clamp. */
static json_int_t enc_u64(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX : (json_int_t)v;
}

static int enc_pcie(json_t *dev, const struct report_pcie *p)
{
	json_t *o = json_object();
	int bad = !o;

	if (bad)
		return -1;
	bad |= enc_str(o, "address", p->address);
	if (p->cur_speed_gts >= 0 && isfinite(p->cur_speed_gts))
		bad |= json_object_set_new(o, "current_speed_gts",
					   json_real(p->cur_speed_gts));
	if (p->max_speed_gts >= 0 && isfinite(p->max_speed_gts))
		bad |= json_object_set_new(o, "max_speed_gts",
					   json_real(p->max_speed_gts));
	bad |= enc_int(o, "current_width", p->cur_width);
	bad |= enc_int(o, "max_width", p->max_width);
	bad |= enc_int(o, "aer_correctable", p->aer_correctable);
	bad |= enc_int(o, "aer_nonfatal", p->aer_nonfatal);
	bad |= enc_int(o, "aer_fatal", p->aer_fatal);
	if (json_object_size(o) == 0) {
		json_decref(o);
		return bad;
	}
	return bad | json_object_set_new(dev, "pcie", o);
}

static json_t *enc_gids(const struct report_port *p)
{
	json_t *a = json_array();
	int bad = !a;

	for (size_t i = 0; !bad && i < p->n_gids; i++) {
		const struct report_gid *g = &p->gids[i];
		json_t *o = json_object();

		bad |= json_array_append_new(a, o);
		if (bad)
			break;
		bad |= json_object_set_new(o, "index", json_integer(g->index));
		bad |= enc_str(o, "gid", g->gid);
		bad |= enc_str(o, "type", g->type);
		bad |= enc_str(o, "netdev", g->netdev);
	}
	if (bad) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static json_t *enc_pkeys(const struct report_port *p)
{
	json_t *a = json_array();
	int bad = !a;

	for (size_t i = 0; !bad && i < p->n_pkeys; i++) {
		json_t *o = json_object();

		bad |= json_array_append_new(a, o);
		if (bad)
			break;
		bad |= json_object_set_new(o, "index",
					   json_integer(p->pkeys[i].index));
		bad |= json_object_set_new(o, "pkey",
					   json_integer(p->pkeys[i].pkey));
	}
	if (bad) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static json_t *enc_counters(const struct report_port *p)
{
	json_t *c = json_object();
	int bad = !c;

	for (int s = 0; !bad && s < CSRC_COUNT; s++) {
		json_t *o;

		if (!p->n_counters[s])
			continue;
		o = json_object();
		bad |= json_object_set_new(c, csrc_keys[s], o);
		for (size_t i = 0; !bad && i < p->n_counters[s]; i++) {
			const struct report_counter *k = &p->counters[s][i];

			bad |= json_object_set_new(
				o, k->name, json_integer(enc_u64(k->value)));
		}
	}
	if (bad) {
		json_decref(c);
		return NULL;
	}
	return c;
}

static json_t *enc_port(const struct report_port *p)
{
	json_t *o = json_object();
	int bad = !o;

	if (bad)
		return NULL;
	bad |= json_object_set_new(o, "port", json_integer(p->port));
	bad |= enc_int(o, "state", p->state);
	bad |= enc_int(o, "phys_state", p->phys_state);
	if (p->rate_bytes != REPORT_UNKNOWN)
		bad |= json_object_set_new(
			o, "rate_bytes_per_second",
			json_integer(enc_u64(p->rate_bytes)));
	bad |= enc_str(o, "link_layer", p->link_layer);
	bad |= enc_int(o, "lid", p->lid);
	bad |= enc_int(o, "sm_lid", p->sm_lid);
	bad |= enc_int(o, "lmc", p->lmc);
	bad |= enc_int(o, "cap_mask", p->cap_mask);
	bad |= enc_str(o, "port_guid", p->port_guid);
	bad |= enc_str(o, "netdev", p->netdev);
	bad |= json_object_set_new(o, "gids", enc_gids(p));
	bad |= json_object_set_new(o, "pkeys", enc_pkeys(p));
	bad |= json_object_set_new(o, "counters", enc_counters(p));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *enc_device(const struct report_device *d)
{
	json_t *o = json_object(), *nd = json_array(), *ports = json_array();
	int bad = !o || !nd || !ports;

	if (bad)
		goto out;
	bad |= enc_str(o, "name", d->name);
	for (size_t i = 0; i < REPORT_DEVICE_TEXTS; i++)
		bad |= enc_str(
			o, report_device_text_names[i],
			*report_device_text((struct report_device *)d, i));
	bad |= enc_int(o, "numa_node", d->numa_node);
	for (size_t i = 0; i < d->n_netdevs; i++)
		bad |= json_array_append_new(nd, json_string(d->netdevs[i]));
	bad |= json_object_set(o, "netdevs", nd);
	bad |= enc_pcie(o, &d->pcie);
	for (size_t i = 0; i < d->n_ports; i++)
		bad |= json_array_append_new(ports, enc_port(&d->ports[i]));
	bad |= json_object_set(o, "ports", ports);
out:
	json_decref(nd);
	json_decref(ports);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int report_encode(const struct report *r, char **out)
{
	json_t *o = json_object(), *devs = json_array();
	int bad = !o || !devs;
	char *s;

	*out = NULL;
	if (bad)
		goto fail;
	bad |= json_object_set_new(o, "version", json_integer(r->version));
	bad |= enc_str(o, "host", r->host);
	bad |= json_object_set_new(o, "timestamp", json_real(r->timestamp));
	bad |= enc_str(o, "probe_version", r->probe_version);
	for (size_t i = 0; i < r->n_devices; i++)
		bad |= json_array_append_new(devs, enc_device(&r->devices[i]));
	bad |= json_object_set(o, "devices", devs);
	if (r->fabric) {
		json_t *f = report_fabric_encode(r->fabric);

		bad |= !f || json_object_set_new(o, "fabric", f);
	}
	if (bad)
		goto fail;
	s = json_dumps(o, JSON_COMPACT);
	if (!s)
		goto fail;
	json_decref(o);
	json_decref(devs);
	*out = s;
	return 0;
fail:
	/* jansson does not say why; a non-UTF-8 string is the likely one. */
	json_decref(o);
	json_decref(devs);
	return -EINVAL;
}
