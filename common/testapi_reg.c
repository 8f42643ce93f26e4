// SPDX-License-Identifier: MIT
/*
 * The registration body of the test API (testapi.h, POST
 * /api/v1/register): the probe encodes who it is (responder, labels,
 * profiles, ports); the collector decodes it with every field validated
 * and named by its path on failure.
 */
#include "testapi_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- encoding ---- */

static json_t *rg_port_json(const struct testapi_reg_port *p)
{
	json_t *o = json_pack("{s:s, s:i, s:i}", "device", p->device, "port",
			      (int)p->port, "state", p->state);
	json_t *pk = json_array(), *g = json_array();

	if (!o || !pk || !g) {
		json_decref(o);
		json_decref(pk);
		json_decref(g);
		return NULL;
	}
	testapi_set_str(o, "link_layer", p->link_layer);
	if (p->lid >= 0)
		json_object_set_new(o, "lid", json_integer(p->lid));
	testapi_set_str(o, "subnet_prefix", p->subnet_prefix);
	for (size_t k = 0; k < p->n_pkeys; k++)
		json_array_append_new(pk, json_integer(p->pkeys[k]));
	for (size_t k = 0; k < p->n_gids; k++)
		if (p->gids[k])
			json_array_append_new(g, json_string(p->gids[k]));
	json_object_set_new(o, "pkeys", pk);
	json_object_set_new(o, "gids", g);
	return o;
}

int testapi_reg_encode(const struct testapi_reg *r, char **out)
{
	json_t *labels = json_object(), *profiles = json_array();
	json_t *ports = json_array();

	for (size_t i = 0; labels && i < r->n_labels; i++)
		json_object_set_new(labels, r->labels[i].key,
				    json_string(r->labels[i].value));
	for (size_t i = 0; profiles && i < r->n_profiles; i++)
		json_array_append_new(profiles, json_string(r->profiles[i]));
	for (size_t i = 0; ports && i < r->n_ports; i++)
		if (json_array_append_new(ports, rg_port_json(&r->ports[i]))) {
			json_decref(ports);
			ports = NULL;
		}
	/* json_pack's "o" takes the three, even when it fails. */
	return testapi_dump(
		json_pack("{s:i, s:s, s:{s:s, s:i}, s:o, s:o, s:o}", "version",
			  TESTAPI_VERSION, "host", r->host, "responder",
			  "address", r->address, "port", (int)r->port, "labels",
			  labels, "profiles", profiles, "ports", ports),
		out);
}

/* ---- decoding ---- */

static int rg_pkeys(struct jdec *d, const json_t *o, struct testapi_reg_port *p)
{
	json_t *a = NULL;
	void *elems = NULL;
	size_t aold = 0;
	int ret = jdec_array(d, o, "pkeys", TESTAPI_MAX_PKEYS, 0,
			     sizeof(uint16_t), &a, &elems, &aold);

	p->pkeys = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t old = jdec_index(d, i);
		int64_t v = 0;

		ret = jdec_int_at(d, json_array_get(a, i), 0, 65535, &v);
		p->pkeys[i] = (uint16_t)v;
		p->n_pkeys = i + 1;
		if (!ret)
			jdec_pop(d, old);
	}
	if (!ret)
		jdec_pop(d, aold);
	return ret;
}

static int rg_port(struct jdec *d, const json_t *o, struct testapi_reg_port *p)
{
	int64_t state = -1;
	int ret;

	p->lid = -1;
	if (!json_is_object(o))
		return jdec_fail(d, "must be an object");
	ret = jdec_str(d, o, "device", TESTAPI_MAX_NAME, JDEC_NAME, 1,
		       &p->device);
	if (!ret)
		ret = testapi_uint(d, o, "port", 255, 1, &p->port);
	if (!ret)
		ret = jdec_int(d, o, "state", -1, 7, 0, &state);
	p->state = (int)state;
	if (!ret)
		ret = jdec_str(d, o, "link_layer", TESTAPI_MAX_NAME, JDEC_TEXT,
			       0, &p->link_layer);
	if (!ret)
		ret = jdec_int(d, o, "lid", 0, 65535, 0, &p->lid);
	if (!ret)
		ret = jdec_str(d, o, "subnet_prefix", TESTAPI_MAX_NAME,
			       JDEC_NAME, 0, &p->subnet_prefix);
	if (!ret)
		ret = rg_pkeys(d, o, p);
	return ret;
}

static int rg_ports(struct jdec *d, const json_t *o, struct testapi_reg *r)
{
	json_t *a = NULL;
	void *elems = NULL;
	size_t aold = 0;
	int ret = jdec_array(d, o, "ports", TESTAPI_MAX_PORTS, 0,
			     sizeof(*r->ports), &a, &elems, &aold);

	r->ports = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t old = jdec_index(d, i);
		struct testapi_reg_port *p = &r->ports[i];

		r->n_ports = i + 1;
		ret = rg_port(d, json_array_get(a, i), p);
		for (size_t j = 0; !ret && j < i; j++)
			if (p->port == r->ports[j].port &&
			    !strcmp(p->device, r->ports[j].device)) {
				jdec_key(d, "port");
				ret = jdec_fail(d, "duplicate port %s/%u",
						p->device, p->port);
			}
		if (!ret)
			jdec_pop(d, old);
	}
	if (!ret)
		jdec_pop(d, aold);
	return ret;
}

static int rg_labels(struct jdec *d, const json_t *o, struct testapi_reg *r)
{
	json_t *l, *v;
	const char *key;
	size_t i = 0;
	int ret = jdec_obj(d, o, "labels", 0, &l);

	if (ret || !l)
		return ret;
	if (json_object_size(l) > TESTAPI_MAX_LABELS) {
		jdec_key(d, "labels");
		return jdec_fail(d, "must have at most %d labels",
				 TESTAPI_MAX_LABELS);
	}
	r->labels = calloc(json_object_size(l) + 1, sizeof(*r->labels));
	if (!r->labels)
		return jdec_nomem(d);
	json_object_foreach(l, key, v)
	{
		size_t old = jdec_push(d, "labels.%s", key);
		json_t *k = json_string(key);

		r->n_labels = i + 1;
		ret = k ? jdec_string_at(d, k, TESTAPI_MAX_NAME, JDEC_NAME,
					 &r->labels[i].key)
			: jdec_nomem(d);
		json_decref(k);
		if (!ret)
			ret = jdec_string_at(d, v, TESTAPI_MAX_LABEL_VALUE,
					     JDEC_TEXT, &r->labels[i].value);
		if (ret)
			return ret;
		jdec_pop(d, old);
		i++;
	}
	return 0;
}

static int rg_profiles(struct jdec *d, const json_t *o, struct testapi_reg *r)
{
	json_t *a = NULL;
	void *elems = NULL;
	size_t aold = 0;
	int ret = jdec_array(d, o, "profiles", TESTAPI_MAX_PROFILES, 0,
			     sizeof(char *), &a, &elems, &aold);

	r->profiles = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t old = jdec_index(d, i);

		r->n_profiles = i + 1;
		ret = jdec_string_at(d, json_array_get(a, i), TESTAPI_MAX_NAME,
				     JDEC_NAME, &r->profiles[i]);
		if (!ret)
			jdec_pop(d, old);
	}
	if (!ret)
		jdec_pop(d, aold);
	return ret;
}

static int rg_register(struct jdec *d, const json_t *o, void *obj)
{
	struct testapi_reg *r = obj;
	json_t *resp;
	int ret = testapi_version(d, o);

	if (!ret)
		ret = jdec_str(d, o, "host", TESTAPI_MAX_NAME, JDEC_HOST, 1,
			       &r->host);
	if (!ret)
		ret = jdec_obj(d, o, "responder", 1, &resp);
	if (!ret) {
		size_t old = jdec_key(d, "responder");

		ret = jdec_str(d, resp, "address", TESTAPI_MAX_ADDRESS,
			       JDEC_NAME, 1, &r->address);
		if (!ret)
			ret = testapi_uint(d, resp, "port", 65535, 1, &r->port);
		if (!ret)
			jdec_pop(d, old);
	}
	if (!ret)
		ret = rg_labels(d, o, r);
	if (!ret)
		ret = rg_profiles(d, o, r);
	if (!ret)
		ret = rg_ports(d, o, r);
	return ret;
}

static void rg_free(void *r)
{
	testapi_reg_free(r);
}

int testapi_reg_decode(const char *json, size_t len, struct testapi_reg **out,
		       char *err, size_t errlen)
{
	void *r;
	int ret = testapi_decode(json, len, err, errlen, sizeof(**out),
				 rg_register, rg_free, &r);

	*out = r;
	return ret;
}

void testapi_reg_free(struct testapi_reg *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_labels; i++) {
		free(r->labels[i].key);
		free(r->labels[i].value);
	}
	for (size_t i = 0; i < r->n_profiles; i++)
		free(r->profiles[i]);
	for (size_t i = 0; i < r->n_ports; i++) {
		free(r->ports[i].device);
		free(r->ports[i].link_layer);
		free(r->ports[i].subnet_prefix);
		free(r->ports[i].pkeys);
	}
	free(r->labels);
	free(r->profiles);
	free(r->ports);
	free(r->host);
	free(r->address);
	free(r);
}
