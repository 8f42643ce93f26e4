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

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const csrc_keys[CSRC_COUNT] = {"ib", "hw", "net"};

/* Decoder state: where the error goes and the path of the current field. */
struct rdec {
	char *err;
	size_t errlen;
	char path[256];
	size_t plen;
};

enum str_class {
	STR_TEXT, /* printable: no control characters */
	STR_NAME, /* [A-Za-z0-9_.:+-], non-empty */
	STR_HOST, /* hostname: [A-Za-z0-9.-_], starts with a letter or digit */
};

static size_t dec_push(struct rdec *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Append to the path; returns the old length for dec_pop(). */
static size_t dec_push(struct rdec *d, const char *fmt, ...)
{
	size_t old = d->plen;
	va_list ap;
	int n;

	if (d->plen >= sizeof(d->path) - 1)
		return old;
	va_start(ap, fmt);
	n = vsnprintf(d->path + d->plen, sizeof(d->path) - d->plen, fmt, ap);
	va_end(ap);
	if (n > 0)
		d->plen += (size_t)n;
	if (d->plen > sizeof(d->path) - 1)
		d->plen = sizeof(d->path) - 1;
	return old;
}

static void dec_pop(struct rdec *d, size_t old)
{
	d->plen = old;
	d->path[old] = '\0';
}

/* Enter object member @key: "a.b", or "b" at the top. */
static size_t dec_key(struct rdec *d, const char *key)
{
	return dec_push(d, "%s%s", d->plen ? "." : "", key);
}

static int dec_fail(struct rdec *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int dec_fail(struct rdec *d, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(d->err, d->errlen, "%s: %s", d->plen ? d->path : "report",
		 msg);
	return -EINVAL;
}

static int str_char_ok(enum str_class c, unsigned char ch, size_t pos)
{
	int alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9');

	switch (c) {
	case STR_TEXT:
		return ch >= 0x20 && ch != 0x7f;
	case STR_NAME:
		return alnum || ch == '_' || ch == '.' || ch == ':' ||
		       ch == '+' || ch == '-';
	case STR_HOST:
		return alnum ||
		       (pos > 0 && (ch == '.' || ch == '-' || ch == '_'));
	}
	return 0;
}

static const char *str_class_desc(enum str_class c)
{
	switch (c) {
	case STR_NAME:
		return "letters, digits and _.:+-";
	case STR_HOST:
		return "letters, digits and .-_ (starting with a letter or "
		       "digit)";
	default:
		return "printable characters";
	}
}

/* Validate the string @s of @len bytes (path already at it) and copy it. */
static int dec_cstring(struct rdec *d, const char *s, size_t len, size_t maxlen,
		       enum str_class cls, char **out)
{
	char *copy;

	if (len == 0 && cls != STR_TEXT)
		return dec_fail(d, "must not be empty");
	if (len > maxlen)
		return dec_fail(d, "must be at most %zu bytes long", maxlen);
	for (size_t i = 0; i < len; i++)
		if (!str_char_ok(cls, (unsigned char)s[i], i))
			return dec_fail(d, "must contain only %s",
					str_class_desc(cls));
	copy = strndup(s, len);
	if (!copy) {
		snprintf(d->err, d->errlen, "out of memory");
		return -ENOMEM;
	}
	free(*out);
	*out = copy;
	return 0;
}

static int dec_string_value(struct rdec *d, const json_t *v, size_t maxlen,
			    enum str_class cls, char **out)
{
	if (!json_is_string(v))
		return dec_fail(d, "must be a string");
	return dec_cstring(d, json_string_value(v), json_string_length(v),
			   maxlen, cls, out);
}

/* Look up @key in @o; absent and null both mean "unknown" (NULL). */
static json_t *dec_get(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_null(v) ? NULL : v;
}

static int dec_str(struct rdec *d, const json_t *o, const char *key,
		   size_t maxlen, enum str_class cls, int required, char **out)
{
	json_t *v = dec_get(o, key);
	size_t old = dec_key(d, key);
	int ret = 0;

	if (v)
		ret = dec_string_value(d, v, maxlen, cls, out);
	else if (required)
		ret = dec_fail(d, "is required");
	dec_pop(d, old);
	return ret;
}

static int dec_int_value(struct rdec *d, const json_t *v, int64_t min,
			 int64_t max, int64_t *out)
{
	json_int_t x;

	if (json_is_integer(v)) {
		x = json_integer_value(v);
		if (x >= min && x <= max) {
			*out = x;
			return 0;
		}
	}
	if (min == 0 && max == INT64_MAX)
		return dec_fail(d, "must be a non-negative integer");
	return dec_fail(d, "must be an integer in [%lld, %lld]", (long long)min,
			(long long)max);
}

/* An optional integer leaves *@out as it was (the caller's "unknown"). */
static int dec_int(struct rdec *d, const json_t *o, const char *key,
		   int64_t min, int64_t max, int required, int64_t *out)
{
	json_t *v = dec_get(o, key);
	size_t old = dec_key(d, key);
	int ret = 0;

	if (v)
		ret = dec_int_value(d, v, min, max, out);
	else if (required)
		ret = dec_fail(d, "is required");
	dec_pop(d, old);
	return ret;
}

/* Same for the narrower fields of the struct. */
static int dec_int32(struct rdec *d, const json_t *o, const char *key,
		     int64_t min, int64_t max, int required, int *out)
{
	int64_t v = *out;
	int ret = dec_int(d, o, key, min, max, required, &v);

	*out = (int)v;
	return ret;
}

static int dec_num(struct rdec *d, const json_t *o, const char *key, double min,
		   double max, int required, double *out)
{
	json_t *v = dec_get(o, key);
	size_t old = dec_key(d, key);
	int ret = 0;

	if (!v) {
		if (required)
			ret = dec_fail(d, "is required");
	} else if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
		   json_number_value(v) < min || json_number_value(v) > max) {
		ret = dec_fail(d, "must be a number in [%g, %g]", min, max);
	} else {
		*out = json_number_value(v);
	}
	dec_pop(d, old);
	return ret;
}

/*
 * Fetch an optional array member of at most @max elements and allocate
 * @size bytes per element (zeroed) for it. *@arr is NULL and *@n 0 when the
 * member is absent. Leaves the path at @key on success so the caller can
 * append [i]; the caller pops to *@old.
 */
static int dec_array(struct rdec *d, const json_t *o, const char *key,
		     size_t max, int required, size_t size, json_t **arr,
		     void **elems, size_t *old)
{
	json_t *a = dec_get(o, key);
	size_t n;

	*old = dec_key(d, key);
	*arr = NULL;
	*elems = NULL;
	if (!a)
		return required ? dec_fail(d, "is required") : 0;
	if (!json_is_array(a))
		return dec_fail(d, "must be an array");
	n = json_array_size(a);
	if (n > max)
		return dec_fail(d, "must have at most %zu elements", max);
	*arr = a;
	if (n == 0)
		return 0;
	*elems = calloc(n, size);
	if (!*elems) {
		snprintf(d->err, d->errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int dec_object_at(struct rdec *d, const json_t *v)
{
	return json_is_object(v) ? 0 : dec_fail(d, "must be an object");
}

static int dec_gid(struct rdec *d, const json_t *o, struct report_gid *g)
{
	int64_t idx = 0;
	int ret;

	ret = dec_object_at(d, o);
	if (!ret)
		ret = dec_int(d, o, "index", 0, 65535, 1, &idx);
	g->index = (unsigned)idx;
	if (!ret)
		ret = dec_str(d, o, "gid", REPORT_MAX_NAME, STR_NAME, 1,
			      &g->gid);
	if (!ret)
		ret = dec_str(d, o, "type", REPORT_MAX_NAME, STR_TEXT, 0,
			      &g->type);
	if (!ret)
		ret = dec_str(d, o, "netdev", REPORT_MAX_NAME, STR_NAME, 0,
			      &g->netdev);
	return ret;
}

static int dec_pkey(struct rdec *d, const json_t *o, struct report_pkey *k)
{
	int64_t idx = 0, pkey = 0;
	int ret;

	ret = dec_object_at(d, o);
	if (!ret)
		ret = dec_int(d, o, "index", 0, 65535, 1, &idx);
	if (!ret)
		ret = dec_int(d, o, "pkey", 0, 65535, 1, &pkey);
	k->index = (unsigned)idx;
	k->pkey = (uint16_t)pkey;
	return ret;
}

static int dec_gids_pkeys(struct rdec *d, const json_t *o,
			  struct report_port *p)
{
	json_t *a;
	void *elems;
	size_t old, i;
	int ret;

	ret = dec_array(d, o, "gids", REPORT_MAX_GIDS, 0, sizeof(*p->gids), &a,
			&elems, &old);
	p->gids = elems;
	for (i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t o2 = dec_push(d, "[%zu]", i);

		p->n_gids = i + 1;
		ret = dec_gid(d, json_array_get(a, i), &p->gids[i]);
		for (size_t j = 0; !ret && j < i; j++)
			if (p->gids[j].index == p->gids[i].index) {
				dec_key(d, "index");
				ret = dec_fail(d, "duplicate index %u",
					       p->gids[i].index);
			}
		if (!ret)
			dec_pop(d, o2);
	}
	dec_pop(d, old);
	if (ret)
		return ret;
	ret = dec_array(d, o, "pkeys", REPORT_MAX_PKEYS, 0, sizeof(*p->pkeys),
			&a, &elems, &old);
	p->pkeys = elems;
	for (i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t o2 = dec_push(d, "[%zu]", i);

		p->n_pkeys = i + 1;
		ret = dec_pkey(d, json_array_get(a, i), &p->pkeys[i]);
		for (size_t j = 0; !ret && j < i; j++)
			if (p->pkeys[j].index == p->pkeys[i].index) {
				dec_key(d, "index");
				ret = dec_fail(d, "duplicate index %u",
					       p->pkeys[i].index);
			}
		if (!ret)
			dec_pop(d, o2);
	}
	if (!ret)
		dec_pop(d, old);
	return ret;
}

/* One source's counters: {"name": value, ...}. Path is at the source. */
static int dec_counter_set(struct rdec *d, const json_t *o,
			   struct report_port *p, int s)
{
	const char *name;
	json_t *v;
	size_t n;

	if (!json_is_object(o))
		return dec_fail(d, "must be an object");
	n = json_object_size(o);
	if (n > REPORT_MAX_COUNTERS)
		return dec_fail(d, "must have at most %d counters",
				REPORT_MAX_COUNTERS);
	if (n == 0)
		return 0;
	p->counters[s] = calloc(n, sizeof(*p->counters[s]));
	if (!p->counters[s]) {
		snprintf(d->err, d->errlen, "out of memory");
		return -ENOMEM;
	}
	json_object_foreach((json_t *)o, name, v)
	{
		struct report_counter *c = &p->counters[s][p->n_counters[s]];
		size_t old = dec_key(d, name);
		int64_t value = 0;
		int ret;

		p->n_counters[s]++; /* so report_free frees a partial one */
		ret = dec_cstring(d, name, strlen(name), REPORT_MAX_NAME,
				  STR_NAME, &c->name);
		if (!ret)
			ret = dec_int_value(d, v, 0, INT64_MAX, &value);
		if (ret)
			return ret;
		c->value = (uint64_t)value;
		dec_pop(d, old);
	}
	return 0;
}

static int dec_counters(struct rdec *d, const json_t *o, struct report_port *p)
{
	json_t *c = dec_get(o, "counters");
	size_t old = dec_key(d, "counters");
	int ret = 0;

	if (c && !json_is_object(c))
		ret = dec_fail(d, "must be an object");
	for (int s = 0; !ret && c && s < CSRC_COUNT; s++) {
		json_t *set = dec_get(c, csrc_keys[s]);
		size_t o2 = dec_key(d, csrc_keys[s]);

		if (set)
			ret = dec_counter_set(d, set, p, s);
		if (!ret)
			dec_pop(d, o2);
	}
	if (!ret)
		dec_pop(d, old);
	return ret;
}

static int dec_port(struct rdec *d, const json_t *o, struct report_port *p)
{
	int64_t port = 0, rate = -1;
	int ret;

	p->state = p->phys_state = -1;
	p->lid = p->sm_lid = p->lmc = p->cap_mask = -1;
	p->rate_bytes = REPORT_UNKNOWN;
	ret = dec_object_at(d, o);
	if (!ret)
		ret = dec_int(d, o, "port", 0, 255, 1, &port);
	p->port = (unsigned)port;
	if (!ret)
		ret = dec_int32(d, o, "state", 0, 15, 0, &p->state);
	if (!ret)
		ret = dec_int32(d, o, "phys_state", 0, 15, 0, &p->phys_state);
	if (!ret)
		ret = dec_int(d, o, "rate_bytes_per_second", 0, INT64_MAX, 0,
			      &rate);
	if (rate >= 0)
		p->rate_bytes = (uint64_t)rate;
	if (!ret)
		ret = dec_str(d, o, "link_layer", REPORT_MAX_NAME, STR_NAME, 0,
			      &p->link_layer);
	if (!ret)
		ret = dec_int(d, o, "lid", 0, 0xffff, 0, &p->lid);
	if (!ret)
		ret = dec_int(d, o, "sm_lid", 0, 0xffff, 0, &p->sm_lid);
	if (!ret)
		ret = dec_int(d, o, "lmc", 0, 7, 0, &p->lmc);
	if (!ret)
		ret = dec_int(d, o, "cap_mask", 0, 0xffffffffLL, 0,
			      &p->cap_mask);
	if (!ret)
		ret = dec_str(d, o, "port_guid", REPORT_MAX_NAME, STR_NAME, 0,
			      &p->port_guid);
	if (!ret)
		ret = dec_str(d, o, "netdev", REPORT_MAX_NAME, STR_NAME, 0,
			      &p->netdev);
	if (!ret)
		ret = dec_gids_pkeys(d, o, p);
	if (!ret)
		ret = dec_counters(d, o, p);
	return ret;
}

static int dec_pcie(struct rdec *d, const json_t *o, struct report_pcie *p)
{
	json_t *c = dec_get(o, "pcie");
	size_t old = dec_key(d, "pcie");
	int ret = 0;

	p->cur_speed_gts = p->max_speed_gts = -1;
	p->cur_width = p->max_width = -1;
	p->aer_correctable = p->aer_nonfatal = p->aer_fatal = -1;
	if (!c)
		goto out;
	ret = dec_object_at(d, c);
	if (!ret)
		ret = dec_str(d, c, "address", REPORT_MAX_NAME, STR_NAME, 0,
			      &p->address);
	if (!ret)
		ret = dec_num(d, c, "current_speed_gts", 0, 1000, 0,
			      &p->cur_speed_gts);
	if (!ret)
		ret = dec_num(d, c, "max_speed_gts", 0, 1000, 0,
			      &p->max_speed_gts);
	if (!ret)
		ret = dec_int32(d, c, "current_width", 0, 64, 0, &p->cur_width);
	if (!ret)
		ret = dec_int32(d, c, "max_width", 0, 64, 0, &p->max_width);
	if (!ret)
		ret = dec_int(d, c, "aer_correctable", 0, INT64_MAX, 0,
			      &p->aer_correctable);
	if (!ret)
		ret = dec_int(d, c, "aer_nonfatal", 0, INT64_MAX, 0,
			      &p->aer_nonfatal);
	if (!ret)
		ret = dec_int(d, c, "aer_fatal", 0, INT64_MAX, 0,
			      &p->aer_fatal);
out:
	if (!ret)
		dec_pop(d, old);
	return ret;
}

static int dec_netdevs(struct rdec *d, const json_t *o,
		       struct report_device *dev)
{
	json_t *a;
	void *elems;
	size_t old;
	int ret;

	ret = dec_array(d, o, "netdevs", REPORT_MAX_NETDEVS, 0,
			sizeof(*dev->netdevs), &a, &elems, &old);
	dev->netdevs = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t o2 = dec_push(d, "[%zu]", i);

		dev->n_netdevs = i + 1;
		ret = dec_string_value(d, json_array_get(a, i), REPORT_MAX_NAME,
				       STR_NAME, &dev->netdevs[i]);
		if (!ret)
			dec_pop(d, o2);
	}
	if (!ret)
		dec_pop(d, old);
	return ret;
}

static int dec_ports(struct rdec *d, const json_t *o, struct report_device *dev)
{
	json_t *a;
	void *elems;
	size_t old;
	int ret;

	ret = dec_array(d, o, "ports", REPORT_MAX_PORTS, 0, sizeof(*dev->ports),
			&a, &elems, &old);
	dev->ports = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t o2 = dec_push(d, "[%zu]", i);

		dev->n_ports = i + 1;
		ret = dec_port(d, json_array_get(a, i), &dev->ports[i]);
		for (size_t j = 0; !ret && j < i; j++)
			if (dev->ports[j].port == dev->ports[i].port) {
				dec_key(d, "port");
				ret = dec_fail(d, "duplicate port %u",
					       dev->ports[i].port);
			}
		if (!ret)
			dec_pop(d, o2);
	}
	if (!ret)
		dec_pop(d, old);
	return ret;
}

static int dec_device(struct rdec *d, const json_t *o,
		      struct report_device *dev)
{
	static const struct {
		const char *key;
		size_t off;
	} texts[] = {
		{"node_guid", offsetof(struct report_device, node_guid)},
		{"sys_image_guid",
		 offsetof(struct report_device, sys_image_guid)},
		{"fw_ver", offsetof(struct report_device, fw_ver)},
		{"hca_type", offsetof(struct report_device, hca_type)},
		{"board_id", offsetof(struct report_device, board_id)},
		{"node_desc", offsetof(struct report_device, node_desc)},
	};
	int ret;

	dev->numa_node = -1;
	ret = dec_object_at(d, o);
	if (!ret)
		ret = dec_str(d, o, "name", REPORT_MAX_NAME, STR_NAME, 1,
			      &dev->name);
	for (size_t i = 0; !ret && i < sizeof(texts) / sizeof(texts[0]); i++)
		ret = dec_str(d, o, texts[i].key, REPORT_MAX_TEXT, STR_TEXT, 0,
			      (char **)((char *)dev + texts[i].off));
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

static int dec_devices(struct rdec *d, const json_t *o, struct report *r)
{
	json_t *a;
	void *elems;
	size_t old;
	int ret;

	ret = dec_array(d, o, "devices", REPORT_MAX_DEVICES, 1,
			sizeof(*r->devices), &a, &elems, &old);
	r->devices = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t o2 = dec_push(d, "[%zu]", i);

		r->n_devices = i + 1;
		ret = dec_device(d, json_array_get(a, i), &r->devices[i]);
		for (size_t j = 0; !ret && j < i; j++)
			if (!strcmp(r->devices[j].name, r->devices[i].name)) {
				dec_key(d, "name");
				ret = dec_fail(d, "duplicate device '%s'",
					       r->devices[i].name);
			}
		if (!ret)
			dec_pop(d, o2);
	}
	if (!ret)
		dec_pop(d, old);
	return ret;
}

static int dec_report(struct rdec *d, const json_t *o, struct report *r)
{
	int64_t version = 0;
	int ret;

	if (!json_is_object(o))
		return dec_fail(d, "must be a JSON object");
	ret = dec_int(d, o, "version", REPORT_VERSION, REPORT_VERSION, 1,
		      &version);
	r->version = (int)version;
	if (!ret)
		ret = dec_str(d, o, "host", REPORT_MAX_NAME, STR_HOST, 1,
			      &r->host);
	if (!ret)
		ret = dec_num(d, o, "timestamp", 0, 1e11, 1, &r->timestamp);
	if (!ret)
		ret = dec_str(d, o, "probe_version", REPORT_MAX_NAME, STR_NAME,
			      0, &r->probe_version);
	if (!ret)
		ret = dec_devices(d, o, r);
	return ret;
}

int report_decode(const char *json, size_t len, struct report **out, char *err,
		  size_t errlen)
{
	struct rdec d = {.err = err, .errlen = errlen};
	json_error_t jerr;
	struct report *r;
	json_t *root;
	int ret;

	*out = NULL;
	if (errlen)
		err[0] = '\0';
	root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, errlen, "invalid JSON at line %d column %d: %s",
			 jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		json_decref(root);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
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
