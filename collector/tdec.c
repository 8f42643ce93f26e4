// SPDX-License-Identifier: MIT
/*
 * The test API decoders (tdec.h): registration and results bodies, JSON
 * to structs with jansson, every field validated and named by its path on
 * failure. Absent and null both mean "unknown" for optional fields.
 */
#include "tdec.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tdec_fig_names[TFIG_COUNT] = {
	[TFIG_BW_AVG] = "bw_avg_bytes_per_second",
	[TFIG_BW_PEAK] = "bw_peak_bytes_per_second",
	[TFIG_BW_MIN] = "bw_min_bytes_per_second",
	[TFIG_MSG_RATE] = "msg_rate_per_second",
	[TFIG_LAT_MIN] = "lat_min_seconds",
	[TFIG_LAT_MEDIAN] = "lat_median_seconds",
	[TFIG_LAT_MEAN] = "lat_mean_seconds",
	[TFIG_LAT_P99] = "lat_p99_seconds",
	[TFIG_LAT_P999] = "lat_p999_seconds",
	[TFIG_LAT_MAX] = "lat_max_seconds",
	[TFIG_LAT_STDEV] = "lat_stdev_seconds",
	[TFIG_CPU] = "cpu_seconds",
};

static const char *const tdec_outcomes[] = {
	"ok", "control_error", "verbs_error", "timeout", "refused", "aborted",
};

/* Decoder state: where the error goes and the path of the current field. */
struct tdx {
	char *err;
	size_t errlen;
	char path[256];
	size_t plen;
};

enum tdx_class {
	TX_TEXT, /* printable */
	TX_NAME, /* [A-Za-z0-9_.:+-], non-empty */
	TX_HOST, /* [A-Za-z0-9.-_], starts with a letter or digit */
};

static size_t tx_push(struct tdx *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static size_t tx_push(struct tdx *d, const char *fmt, ...)
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

static void tx_pop(struct tdx *d, size_t old)
{
	d->plen = old;
	d->path[old] = '\0';
}

static size_t tx_key(struct tdx *d, const char *key)
{
	return tx_push(d, "%s%s", d->plen ? "." : "", key);
}

static int tx_fail(struct tdx *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int tx_fail(struct tdx *d, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(d->err, d->errlen, "%s: %s", d->plen ? d->path : "body", msg);
	return -EINVAL;
}

static int tx_nomem(struct tdx *d)
{
	snprintf(d->err, d->errlen, "out of memory");
	return -ENOMEM;
}

static int tx_char_ok(enum tdx_class c, unsigned char ch, size_t pos)
{
	int alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9');

	switch (c) {
	case TX_TEXT:
		return ch >= 0x20 && ch != 0x7f;
	case TX_NAME:
		return alnum || ch == '_' || ch == '.' || ch == ':' ||
		       ch == '+' || ch == '-';
	case TX_HOST:
		return alnum ||
		       (pos > 0 && (ch == '.' || ch == '-' || ch == '_'));
	}
	return 0;
}

/* Validate the string value @v (path at it) and copy it into *@out. */
static int tx_strv(struct tdx *d, const json_t *v, size_t maxlen,
		   enum tdx_class cls, char **out)
{
	const char *s = json_string_value(v);
	size_t len = json_string_length(v);

	if (!json_is_string(v))
		return tx_fail(d, "must be a string");
	if (len == 0 && cls != TX_TEXT)
		return tx_fail(d, "must not be empty");
	if (len > maxlen)
		return tx_fail(d, "must be at most %zu bytes long", maxlen);
	for (size_t i = 0; i < len; i++)
		if (!tx_char_ok(cls, (unsigned char)s[i], i))
			return tx_fail(d, "must contain only %s",
				       cls == TX_TEXT ? "printable characters"
				       : cls == TX_NAME
					       ? "letters, digits and _.:+-"
					       : "letters, digits and .-_");
	free(*out);
	*out = strndup(s, len);
	return *out ? 0 : tx_nomem(d);
}

static json_t *tx_get(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_null(v) ? NULL : v;
}

static int tx_str(struct tdx *d, const json_t *o, const char *key,
		  size_t maxlen, enum tdx_class cls, int required, char **out)
{
	json_t *v = tx_get(o, key);
	size_t old = tx_key(d, key);
	int ret = 0;

	if (v)
		ret = tx_strv(d, v, maxlen, cls, out);
	else if (required)
		ret = tx_fail(d, "is required");
	if (!ret)
		tx_pop(d, old);
	return ret;
}

static int tx_intv(struct tdx *d, const json_t *v, int64_t min, int64_t max,
		   int64_t *out)
{
	if (json_is_integer(v) && json_integer_value(v) >= min &&
	    json_integer_value(v) <= max) {
		*out = json_integer_value(v);
		return 0;
	}
	return tx_fail(d, "must be an integer in [%lld, %lld]", (long long)min,
		       (long long)max);
}

/* An absent optional integer leaves *@out unchanged. */
static int tx_int(struct tdx *d, const json_t *o, const char *key, int64_t min,
		  int64_t max, int required, int64_t *out)
{
	json_t *v = tx_get(o, key);
	size_t old = tx_key(d, key);
	int ret = 0;

	if (v)
		ret = tx_intv(d, v, min, max, out);
	else if (required)
		ret = tx_fail(d, "is required");
	if (!ret)
		tx_pop(d, old);
	return ret;
}

static int tx_uint(struct tdx *d, const json_t *o, const char *key, int64_t max,
		   int required, unsigned *out)
{
	int64_t v = *out;
	int ret = tx_int(d, o, key, 1, max, required, &v);

	*out = (unsigned)v;
	return ret;
}

static int tx_num(struct tdx *d, const json_t *o, const char *key, double min,
		  double max, int required, double *out)
{
	json_t *v = tx_get(o, key);
	size_t old = tx_key(d, key);
	double x = json_number_value(v);

	if (!v)
		return required ? tx_fail(d, "is required")
				: (tx_pop(d, old), 0);
	if (!json_is_number(v) || !isfinite(x) || x < min || x > max)
		return tx_fail(d, "must be a number in [%g, %g]", min, max);
	*out = x;
	tx_pop(d, old);
	return 0;
}

/* The object member @key (may be absent unless @required). */
static int tx_obj(struct tdx *d, const json_t *o, const char *key, int required,
		  json_t **out)
{
	json_t *v = tx_get(o, key);
	size_t old = tx_key(d, key);

	*out = v;
	if (!v)
		return required ? tx_fail(d, "is required")
				: (tx_pop(d, old), 0);
	if (!json_is_object(v))
		return tx_fail(d, "must be an object");
	tx_pop(d, old);
	return 0;
}

/* ---- results ---- */

static int tx_endpoint(struct tdx *d, const json_t *o, const char *key,
		       int with_host, char **host, char **dev, unsigned *port)
{
	json_t *e;
	size_t old;
	int ret = tx_obj(d, o, key, !with_host, &e);

	if (ret || !e)
		return ret;
	old = tx_key(d, key);
	/* "" is how a probe says "unknown" for a peer named nowhere. */
	if (with_host && !(json_is_string(tx_get(e, "host")) &&
			   !json_string_length(tx_get(e, "host"))))
		ret = tx_str(d, e, "host", TDEC_MAX_NAME, TX_NAME, 0, host);
	if (!ret && !(json_is_string(tx_get(e, "device")) &&
		      !json_string_length(tx_get(e, "device"))))
		ret = tx_str(d, e, "device", TDEC_MAX_NAME, TX_NAME, 0, dev);
	if (!ret)
		ret = tx_uint(d, e, "port", 255, 0, port);
	if (!ret)
		tx_pop(d, old);
	return ret;
}

static int tx_outcome(struct tdx *d, const json_t *o, struct tresult *r)
{
	int ret =
		tx_str(d, o, "outcome", TDEC_MAX_NAME, TX_NAME, 1, &r->outcome);

	if (!ret && !tdec_outcome_ok(r->outcome)) {
		tx_key(d, "outcome");
		return tx_fail(d, "must be one of ok, control_error, "
				  "verbs_error, timeout, refused, aborted");
	}
	return ret;
}

static int tx_params(struct tdx *d, const json_t *o, struct tresult *r)
{
	json_t *p;
	int ret = tx_obj(d, o, "params", 0, &p);

	if (ret || !p)
		return ret;
	r->params = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
	if (!r->params)
		return tx_nomem(d);
	if (strlen(r->params) > TDEC_MAX_PARAMS) {
		tx_key(d, "params");
		return tx_fail(d, "must be at most %d bytes as JSON",
			       TDEC_MAX_PARAMS);
	}
	return 0;
}

/*
 * Free text from the probe (an error message, a busy reason): control
 * characters become spaces rather than cost the result, which the probe
 * could never resend in another form.
 */
static int tx_prose(struct tdx *d, const json_t *o, const char *key, char **out)
{
	json_t *v = tx_get(o, key);
	size_t old = tx_key(d, key);

	if (v && !json_is_string(v))
		return tx_fail(d, "must be a string");
	if (v && json_string_length(v) > TDEC_MAX_ERROR)
		return tx_fail(d, "must be at most %d bytes long",
			       TDEC_MAX_ERROR);
	tx_pop(d, old);
	if (!v)
		return 0;
	*out = malloc(json_string_length(v) + 1);
	if (!*out)
		return tx_nomem(d);
	memcpy(*out, json_string_value(v), json_string_length(v));
	(*out)[json_string_length(v)] = '\0';
	/* Embedded NULs (\u0000) are control characters too. */
	for (size_t i = 0; i < json_string_length(v); i++)
		if ((unsigned char)(*out)[i] < 0x20 || (*out)[i] == 0x7f)
			(*out)[i] = ' ';
	return 0;
}

static int tx_busy(struct tdx *d, const json_t *o, struct tresult *r)
{
	json_t *v = tx_get(o, "busy");

	if (v && !json_is_boolean(v)) {
		tx_key(d, "busy");
		return tx_fail(d, "must be true or false");
	}
	r->busy = json_is_true(v);
	return tx_prose(d, o, "busy_reason", &r->busy_reason);
}

static int tx_result(struct tdx *d, const json_t *o, struct tresult *r)
{
	int ret = 0;

	r->duration = NAN;
	for (int i = 0; i < TFIG_COUNT; i++)
		r->fig[i] = NAN;
	if (!json_is_object(o))
		return tx_fail(d, "must be an object");
	ret = tx_str(d, o, "id", TDEC_MAX_NAME, TX_NAME, 1, &r->id);
	if (!ret)
		ret = tx_str(d, o, "plan_id", TDEC_MAX_NAME, TX_NAME, 0,
			     &r->plan_id);
	if (!ret)
		ret = tx_str(d, o, "profile", TDEC_MAX_NAME, TX_NAME, 1,
			     &r->profile);
	if (!ret)
		ret = tx_str(d, o, "test", TDEC_MAX_NAME, TX_NAME, 1, &r->test);
	if (!ret)
		ret = tx_num(d, o, "started", 0, 1e11, 1, &r->started);
	if (!ret)
		ret = tx_num(d, o, "duration_seconds", 0, 1e6, 0, &r->duration);
	if (!ret)
		ret = tx_endpoint(d, o, "local", 0, NULL, &r->local_device,
				  &r->local_port);
	if (!ret)
		ret = tx_endpoint(d, o, "peer", 1, &r->peer_host,
				  &r->peer_device, &r->peer_port);
	if (!ret)
		ret = tx_outcome(d, o, r);
	if (!ret)
		ret = tx_prose(d, o, "error", &r->error);
	if (!ret)
		ret = tx_str(d, o, "wc_status", TDEC_MAX_NAME, TX_NAME, 0,
			     &r->wc_status);
	if (!ret)
		ret = tx_busy(d, o, r);
	for (int i = 0; !ret && i < TFIG_COUNT; i++)
		ret = tx_num(d, o, tdec_fig_names[i], 0, 1e15, 0, &r->fig[i]);
	if (!ret)
		ret = tx_params(d, o, r);
	return ret;
}

/* Fetch the array @key of at most @max elements; calloc @size each. */
static int tx_array(struct tdx *d, const json_t *o, const char *key, size_t max,
		    int required, size_t size, json_t **arr, void **elems)
{
	json_t *a = tx_get(o, key);
	size_t old = tx_key(d, key), n = json_array_size(a);

	*arr = NULL;
	*elems = NULL;
	if (!a)
		return required ? tx_fail(d, "is required")
				: (tx_pop(d, old), 0);
	if (!json_is_array(a))
		return tx_fail(d, "must be an array");
	if (n > max)
		return tx_fail(d, "must have at most %zu elements", max);
	tx_pop(d, old);
	*arr = a;
	if (n && !(*elems = calloc(n, size)))
		return tx_nomem(d);
	return 0;
}

static int tx_dropped(struct tdx *d, const json_t *o, struct tresults *r)
{
	json_t *dr;
	size_t old;
	int ret = tx_obj(d, o, "dropped", 0, &dr);

	if (ret || !dr)
		return ret;
	r->has_dropped = 1;
	old = tx_key(d, "dropped");
	ret = tx_int(d, dr, "spool_full", 0, INT64_MAX, 0, &r->spool_full);
	if (!ret)
		ret = tx_int(d, dr, "expired", 0, INT64_MAX, 0, &r->expired);
	if (!ret)
		tx_pop(d, old);
	return ret;
}

static int tx_results(struct tdx *d, const json_t *o, struct tresults *r)
{
	int64_t version = 0;
	json_t *a = NULL;
	void *elems = NULL;
	int ret;

	if (!json_is_object(o))
		return tx_fail(d, "must be a JSON object");
	ret = tx_int(d, o, "version", 1, 1, 1, &version);
	if (!ret)
		ret = tx_str(d, o, "host", TDEC_MAX_NAME, TX_HOST, 1, &r->host);
	if (!ret)
		ret = tx_array(d, o, "results", TDEC_MAX_RESULTS, 1,
			       sizeof(*r->v), &a, &elems);
	r->v = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t old = tx_push(d, "results[%zu]", i);

		r->n = i + 1;
		ret = tx_result(d, json_array_get(a, i), &r->v[i]);
		if (!ret)
			tx_pop(d, old);
	}
	if (!ret)
		ret = tx_dropped(d, o, r);
	return ret;
}

/* Parse @json as an object for @fn; common to both decoders. */
static int tx_run(const char *json, size_t len, char *err, size_t errlen,
		  int (*fn)(struct tdx *, const json_t *, void *), void *obj)
{
	struct tdx d = {.err = err, .errlen = errlen};
	json_error_t jerr;
	json_t *root;
	int ret;

	if (errlen)
		err[0] = '\0';
	root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, errlen, "invalid JSON at line %d column %d: %s",
			 jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	ret = fn(&d, root, obj);
	json_decref(root);
	return ret == -ENOMEM ? -ENOMEM : ret ? -EINVAL : 0;
}

static int tx_results_cb(struct tdx *d, const json_t *o, void *obj)
{
	return tx_results(d, o, obj);
}

int tdec_results(const char *json, size_t len, struct tresults **out, char *err,
		 size_t errlen)
{
	struct tresults *r = calloc(1, sizeof(*r));
	int ret;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	ret = tx_run(json, len, err, errlen, tx_results_cb, r);
	if (ret) {
		tdec_results_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void tdec_results_free(struct tresults *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		struct tresult *t = &r->v[i];

		free(t->id);
		free(t->plan_id);
		free(t->profile);
		free(t->test);
		free(t->local_device);
		free(t->peer_host);
		free(t->peer_device);
		free(t->outcome);
		free(t->error);
		free(t->wc_status);
		free(t->busy_reason);
		free(t->params);
	}
	free(r->v);
	free(r->host);
	free(r);
}

int tdec_outcome_ok(const char *outcome)
{
	for (size_t i = 0; i < sizeof(tdec_outcomes) / sizeof(*tdec_outcomes);
	     i++)
		if (!strcmp(outcome, tdec_outcomes[i]))
			return 1;
	return 0;
}

/* ---- registration ---- */

static int tx_pkeys(struct tdx *d, const json_t *o, struct treg_port *p)
{
	json_t *a = NULL;
	void *elems = NULL;
	int ret = tx_array(d, o, "pkeys", TDEC_MAX_PKEYS, 0, sizeof(uint16_t),
			   &a, &elems);

	p->pkeys = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t old =
			tx_push(d, "%s%s[%zu]", d->plen ? "." : "", "pkeys", i);
		int64_t v = 0;

		ret = tx_intv(d, json_array_get(a, i), 0, 65535, &v);
		p->pkeys[i] = (uint16_t)v;
		p->n_pkeys = i + 1;
		if (!ret)
			tx_pop(d, old);
	}
	return ret;
}

static int tx_port(struct tdx *d, const json_t *o, struct treg_port *p)
{
	int64_t state = -1;
	int ret;

	p->lid = -1;
	if (!json_is_object(o))
		return tx_fail(d, "must be an object");
	ret = tx_str(d, o, "device", TDEC_MAX_NAME, TX_NAME, 1, &p->device);
	if (!ret)
		ret = tx_uint(d, o, "port", 255, 1, &p->port);
	if (!ret)
		ret = tx_int(d, o, "state", -1, 7, 0, &state);
	p->state = (int)state;
	if (!ret)
		ret = tx_str(d, o, "link_layer", TDEC_MAX_NAME, TX_TEXT, 0,
			     &p->link_layer);
	if (!ret)
		ret = tx_int(d, o, "lid", 0, 65535, 0, &p->lid);
	if (!ret)
		ret = tx_str(d, o, "subnet_prefix", TDEC_MAX_NAME, TX_NAME, 0,
			     &p->subnet_prefix);
	if (!ret)
		ret = tx_pkeys(d, o, p);
	return ret;
}

static int tx_ports(struct tdx *d, const json_t *o, struct treg *r)
{
	json_t *a = NULL;
	void *elems = NULL;
	int ret = tx_array(d, o, "ports", TDEC_MAX_PORTS, 0, sizeof(*r->ports),
			   &a, &elems);

	r->ports = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t old = tx_push(d, "ports[%zu]", i);
		struct treg_port *p = &r->ports[i];

		r->n_ports = i + 1;
		ret = tx_port(d, json_array_get(a, i), p);
		for (size_t j = 0; !ret && j < i; j++)
			if (p->port == r->ports[j].port &&
			    !strcmp(p->device, r->ports[j].device)) {
				tx_key(d, "port");
				ret = tx_fail(d, "duplicate port %s/%u",
					      p->device, p->port);
			}
		if (!ret)
			tx_pop(d, old);
	}
	return ret;
}

static int tx_labels(struct tdx *d, const json_t *o, struct treg *r)
{
	json_t *l, *v;
	const char *key;
	size_t i = 0;
	int ret = tx_obj(d, o, "labels", 0, &l);

	if (ret || !l)
		return ret;
	if (json_object_size(l) > TDEC_MAX_LABELS) {
		tx_key(d, "labels");
		return tx_fail(d, "must have at most %d labels",
			       TDEC_MAX_LABELS);
	}
	r->labels = calloc(json_object_size(l) + 1, sizeof(*r->labels));
	if (!r->labels)
		return tx_nomem(d);
	json_object_foreach(l, key, v)
	{
		size_t old = tx_push(d, "labels.%s", key);
		json_t *k = json_string(key);

		r->n_labels = i + 1;
		ret = k ? tx_strv(d, k, TDEC_MAX_NAME, TX_NAME,
				  &r->labels[i].key)
			: tx_nomem(d);
		json_decref(k);
		if (!ret)
			ret = tx_strv(d, v, 256, TX_TEXT, &r->labels[i].value);
		if (ret)
			return ret;
		tx_pop(d, old);
		i++;
	}
	return 0;
}

static int tx_profiles(struct tdx *d, const json_t *o, struct treg *r)
{
	json_t *a = NULL;
	void *elems = NULL;
	int ret = tx_array(d, o, "profiles", TDEC_MAX_PROFILES, 0,
			   sizeof(char *), &a, &elems);

	r->profiles = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t old = tx_push(d, "profiles[%zu]", i);

		r->n_profiles = i + 1;
		ret = tx_strv(d, json_array_get(a, i), TDEC_MAX_NAME, TX_NAME,
			      &r->profiles[i]);
		if (!ret)
			tx_pop(d, old);
	}
	return ret;
}

static int tx_register(struct tdx *d, const json_t *o, void *obj)
{
	struct treg *r = obj;
	int64_t version = 0;
	json_t *resp;
	int ret;

	if (!json_is_object(o))
		return tx_fail(d, "must be a JSON object");
	ret = tx_int(d, o, "version", 1, 1, 1, &version);
	if (!ret)
		ret = tx_str(d, o, "host", TDEC_MAX_NAME, TX_HOST, 1, &r->host);
	if (!ret)
		ret = tx_obj(d, o, "responder", 1, &resp);
	if (!ret) {
		size_t old = tx_key(d, "responder");

		ret = tx_str(d, resp, "address", 255, TX_NAME, 1, &r->address);
		if (!ret)
			ret = tx_uint(d, resp, "port", 65535, 1, &r->port);
		if (!ret)
			tx_pop(d, old);
	}
	if (!ret)
		ret = tx_labels(d, o, r);
	if (!ret)
		ret = tx_profiles(d, o, r);
	if (!ret)
		ret = tx_ports(d, o, r);
	return ret;
}

int tdec_register(const char *json, size_t len, struct treg **out, char *err,
		  size_t errlen)
{
	struct treg *r = calloc(1, sizeof(*r));
	int ret;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	ret = tx_run(json, len, err, errlen, tx_register, r);
	if (ret) {
		tdec_register_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void tdec_register_free(struct treg *r)
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
