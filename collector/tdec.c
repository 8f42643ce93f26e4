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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jdec.h"

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

static int tx_uint(struct jdec *d, const json_t *o, const char *key,
		   int64_t max, int required, unsigned *out)
{
	int64_t v = *out;
	int ret = jdec_int(d, o, key, 1, max, required, &v);

	*out = (unsigned)v;
	return ret;
}

/* ---- results ---- */

static int tx_endpoint(struct jdec *d, const json_t *o, const char *key,
		       int with_host, char **host, char **dev, unsigned *port)
{
	json_t *e;
	size_t old;
	int ret = jdec_obj(d, o, key, !with_host, &e);

	if (ret || !e)
		return ret;
	old = jdec_key(d, key);
	/* "" is how a probe says "unknown" for a peer named nowhere. */
	if (with_host && !(json_is_string(jdec_get(e, "host")) &&
			   !json_string_length(jdec_get(e, "host"))))
		ret = jdec_str(d, e, "host", TDEC_MAX_NAME, JDEC_NAME, 0, host);
	if (!ret && !(json_is_string(jdec_get(e, "device")) &&
		      !json_string_length(jdec_get(e, "device"))))
		ret = jdec_str(d, e, "device", TDEC_MAX_NAME, JDEC_NAME, 0,
			       dev);
	if (!ret)
		ret = tx_uint(d, e, "port", 255, 0, port);
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

static int tx_outcome(struct jdec *d, const json_t *o, struct tresult *r)
{
	int ret = jdec_str(d, o, "outcome", TDEC_MAX_NAME, JDEC_NAME, 1,
			   &r->outcome);

	if (!ret && !tdec_outcome_ok(r->outcome)) {
		jdec_key(d, "outcome");
		return jdec_fail(d, "must be one of ok, control_error, "
				    "verbs_error, timeout, refused, aborted");
	}
	return ret;
}

static int tx_params(struct jdec *d, const json_t *o, struct tresult *r)
{
	json_t *p;
	int ret = jdec_obj(d, o, "params", 0, &p);

	if (ret || !p)
		return ret;
	r->params = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
	if (!r->params)
		return jdec_nomem(d);
	if (strlen(r->params) > TDEC_MAX_PARAMS) {
		jdec_key(d, "params");
		return jdec_fail(d, "must be at most %d bytes as JSON",
				 TDEC_MAX_PARAMS);
	}
	return 0;
}

/*
 * Free text from the probe (an error message, a busy reason): control
 * characters become spaces rather than cost the result, which the probe
 * could never resend in another form.
 */
static int tx_prose(struct jdec *d, const json_t *o, const char *key,
		    char **out)
{
	json_t *v = jdec_get(o, key);
	size_t old = jdec_key(d, key);

	if (v && !json_is_string(v))
		return jdec_fail(d, "must be a string");
	if (v && json_string_length(v) > TDEC_MAX_ERROR)
		return jdec_fail(d, "must be at most %d bytes long",
				 TDEC_MAX_ERROR);
	jdec_pop(d, old);
	if (!v)
		return 0;
	*out = malloc(json_string_length(v) + 1);
	if (!*out)
		return jdec_nomem(d);
	memcpy(*out, json_string_value(v), json_string_length(v));
	(*out)[json_string_length(v)] = '\0';
	/* Embedded NULs (\u0000) are control characters too. */
	for (size_t i = 0; i < json_string_length(v); i++)
		if ((unsigned char)(*out)[i] < 0x20 || (*out)[i] == 0x7f)
			(*out)[i] = ' ';
	return 0;
}

static int tx_busy(struct jdec *d, const json_t *o, struct tresult *r)
{
	json_t *v = jdec_get(o, "busy");

	if (v && !json_is_boolean(v)) {
		jdec_key(d, "busy");
		return jdec_fail(d, "must be true or false");
	}
	r->busy = json_is_true(v);
	return tx_prose(d, o, "busy_reason", &r->busy_reason);
}

static int tx_result(struct jdec *d, const json_t *o, struct tresult *r)
{
	int ret = 0;

	r->duration = NAN;
	for (int i = 0; i < TFIG_COUNT; i++)
		r->fig[i] = NAN;
	if (!json_is_object(o))
		return jdec_fail(d, "must be an object");
	ret = jdec_str(d, o, "id", TDEC_MAX_NAME, JDEC_NAME, 1, &r->id);
	if (!ret)
		ret = jdec_str(d, o, "plan_id", TDEC_MAX_NAME, JDEC_NAME, 0,
			       &r->plan_id);
	if (!ret)
		ret = jdec_str(d, o, "profile", TDEC_MAX_NAME, JDEC_NAME, 1,
			       &r->profile);
	if (!ret)
		ret = jdec_str(d, o, "test", TDEC_MAX_NAME, JDEC_NAME, 1,
			       &r->test);
	if (!ret)
		ret = jdec_num(d, o, "started", 0, 1e11, 1, &r->started);
	if (!ret)
		ret = jdec_num(d, o, "duration_seconds", 0, 1e6, 0,
			       &r->duration);
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
		ret = jdec_str(d, o, "wc_status", TDEC_MAX_NAME, JDEC_NAME, 0,
			       &r->wc_status);
	if (!ret)
		ret = tx_busy(d, o, r);
	for (int i = 0; !ret && i < TFIG_COUNT; i++)
		ret = jdec_num(d, o, tdec_fig_names[i], 0, 1e15, 0, &r->fig[i]);
	if (!ret)
		ret = tx_params(d, o, r);
	return ret;
}

static int tx_dropped(struct jdec *d, const json_t *o, struct tresults *r)
{
	json_t *dr;
	size_t old;
	int ret = jdec_obj(d, o, "dropped", 0, &dr);

	if (ret || !dr)
		return ret;
	r->has_dropped = 1;
	old = jdec_key(d, "dropped");
	ret = jdec_int(d, dr, "spool_full", 0, INT64_MAX, 0, &r->spool_full);
	if (!ret)
		ret = jdec_int(d, dr, "expired", 0, INT64_MAX, 0, &r->expired);
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

static int tx_results(struct jdec *d, const json_t *o, struct tresults *r)
{
	int64_t version = 0;
	json_t *a = NULL;
	void *elems = NULL;
	size_t aold = 0;
	int ret;

	if (!json_is_object(o))
		return jdec_fail(d, "must be a JSON object");
	ret = jdec_int(d, o, "version", 1, 1, 1, &version);
	if (!ret)
		ret = jdec_str(d, o, "host", TDEC_MAX_NAME, JDEC_HOST, 1,
			       &r->host);
	if (!ret)
		ret = jdec_array(d, o, "results", TDEC_MAX_RESULTS, 1,
				 sizeof(*r->v), &a, &elems, &aold);
	r->v = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t old = jdec_index(d, i);

		r->n = i + 1;
		ret = tx_result(d, json_array_get(a, i), &r->v[i]);
		if (!ret)
			jdec_pop(d, old);
	}
	if (!ret)
		jdec_pop(d, aold);
	if (!ret)
		ret = tx_dropped(d, o, r);
	return ret;
}

int tdec_results_window(const struct tresults *r, double now, double max_age,
			double max_ahead, char *err, size_t errlen)
{
	for (size_t i = 0; i < r->n; i++) {
		double s = r->v[i].started;

		if (s > now + max_ahead) {
			snprintf(
				err, errlen,
				"results[%zu].started: %.3f is %.0f s ahead "
				"of the collector's clock (%.3f); at most %.0f "
				"s are accepted (results_max_ahead)",
				i, s, s - now, now, max_ahead);
			return -EINVAL;
		}
		if (s < now - max_age) {
			snprintf(err, errlen,
				 "results[%zu].started: %.3f is %.0f s behind "
				 "the collector's clock (%.3f); at most %.0f s "
				 "are accepted (results_max_age)",
				 i, s, now - s, now, max_age);
			return -EINVAL;
		}
	}
	return 0;
}

const char *tdec_peer_key(const struct tresult *t, char *buf, size_t size)
{
	int n;

	if (!t->peer_host || !t->peer_device || !t->peer_port)
		return NULL;
	n = snprintf(buf, size, "%s\x1f%s\x1f%u", t->peer_host, t->peer_device,
		     t->peer_port);
	return n > 0 && (size_t)n < size ? buf : NULL;
}

/* Parse @json as an object for @fn; common to both decoders. */
static int tx_run(const char *json, size_t len, char *err, size_t errlen,
		  int (*fn)(struct jdec *, const json_t *, void *), void *obj)
{
	struct jdec d = {.err = err, .errlen = errlen, .top = "body"};
	json_t *root;
	int ret = jdec_load(&d, json, len, &root);

	if (ret)
		return ret;
	ret = fn(&d, root, obj);
	json_decref(root);
	return ret == -ENOMEM ? -ENOMEM : ret ? -EINVAL : 0;
}

static int tx_results_cb(struct jdec *d, const json_t *o, void *obj)
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

static int tx_pkeys(struct jdec *d, const json_t *o, struct treg_port *p)
{
	json_t *a = NULL;
	void *elems = NULL;
	size_t aold = 0;
	int ret = jdec_array(d, o, "pkeys", TDEC_MAX_PKEYS, 0, sizeof(uint16_t),
			     &a, &elems, &aold);

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

static int tx_port(struct jdec *d, const json_t *o, struct treg_port *p)
{
	int64_t state = -1;
	int ret;

	p->lid = -1;
	if (!json_is_object(o))
		return jdec_fail(d, "must be an object");
	ret = jdec_str(d, o, "device", TDEC_MAX_NAME, JDEC_NAME, 1, &p->device);
	if (!ret)
		ret = tx_uint(d, o, "port", 255, 1, &p->port);
	if (!ret)
		ret = jdec_int(d, o, "state", -1, 7, 0, &state);
	p->state = (int)state;
	if (!ret)
		ret = jdec_str(d, o, "link_layer", TDEC_MAX_NAME, JDEC_TEXT, 0,
			       &p->link_layer);
	if (!ret)
		ret = jdec_int(d, o, "lid", 0, 65535, 0, &p->lid);
	if (!ret)
		ret = jdec_str(d, o, "subnet_prefix", TDEC_MAX_NAME, JDEC_NAME,
			       0, &p->subnet_prefix);
	if (!ret)
		ret = tx_pkeys(d, o, p);
	return ret;
}

static int tx_ports(struct jdec *d, const json_t *o, struct treg *r)
{
	json_t *a = NULL;
	void *elems = NULL;
	size_t aold = 0;
	int ret = jdec_array(d, o, "ports", TDEC_MAX_PORTS, 0,
			     sizeof(*r->ports), &a, &elems, &aold);

	r->ports = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t old = jdec_index(d, i);
		struct treg_port *p = &r->ports[i];

		r->n_ports = i + 1;
		ret = tx_port(d, json_array_get(a, i), p);
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

static int tx_labels(struct jdec *d, const json_t *o, struct treg *r)
{
	json_t *l, *v;
	const char *key;
	size_t i = 0;
	int ret = jdec_obj(d, o, "labels", 0, &l);

	if (ret || !l)
		return ret;
	if (json_object_size(l) > TDEC_MAX_LABELS) {
		jdec_key(d, "labels");
		return jdec_fail(d, "must have at most %d labels",
				 TDEC_MAX_LABELS);
	}
	r->labels = calloc(json_object_size(l) + 1, sizeof(*r->labels));
	if (!r->labels)
		return jdec_nomem(d);
	json_object_foreach(l, key, v)
	{
		size_t old = jdec_push(d, "labels.%s", key);
		json_t *k = json_string(key);

		r->n_labels = i + 1;
		ret = k ? jdec_string_at(d, k, TDEC_MAX_NAME, JDEC_NAME,
					 &r->labels[i].key)
			: jdec_nomem(d);
		json_decref(k);
		if (!ret)
			ret = jdec_string_at(d, v, 256, JDEC_TEXT,
					     &r->labels[i].value);
		if (ret)
			return ret;
		jdec_pop(d, old);
		i++;
	}
	return 0;
}

static int tx_profiles(struct jdec *d, const json_t *o, struct treg *r)
{
	json_t *a = NULL;
	void *elems = NULL;
	size_t aold = 0;
	int ret = jdec_array(d, o, "profiles", TDEC_MAX_PROFILES, 0,
			     sizeof(char *), &a, &elems, &aold);

	r->profiles = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t old = jdec_index(d, i);

		r->n_profiles = i + 1;
		ret = jdec_string_at(d, json_array_get(a, i), TDEC_MAX_NAME,
				     JDEC_NAME, &r->profiles[i]);
		if (!ret)
			jdec_pop(d, old);
	}
	if (!ret)
		jdec_pop(d, aold);
	return ret;
}

static int tx_register(struct jdec *d, const json_t *o, void *obj)
{
	struct treg *r = obj;
	int64_t version = 0;
	json_t *resp;
	int ret;

	if (!json_is_object(o))
		return jdec_fail(d, "must be a JSON object");
	ret = jdec_int(d, o, "version", 1, 1, 1, &version);
	if (!ret)
		ret = jdec_str(d, o, "host", TDEC_MAX_NAME, JDEC_HOST, 1,
			       &r->host);
	if (!ret)
		ret = jdec_obj(d, o, "responder", 1, &resp);
	if (!ret) {
		size_t old = jdec_key(d, "responder");

		ret = jdec_str(d, resp, "address", 255, JDEC_NAME, 1,
			       &r->address);
		if (!ret)
			ret = tx_uint(d, resp, "port", 65535, 1, &r->port);
		if (!ret)
			jdec_pop(d, old);
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
