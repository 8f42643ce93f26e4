// SPDX-License-Identifier: MIT
/*
 * The test API codec (testapi.h): the figure and outcome tables, the
 * helpers the codec's files share (testapi_int.h), and the results body
 * both ways: the probe encodes one result at a time (it spools each) and
 * wraps a batch in the envelope; the collector decodes the batch with every
 * field validated and named by its path on failure. Absent and null both
 * mean "unknown" for optional fields.
 */
#include "testapi_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

#define TESTAPI_FIG_DEF_(e, k, high) [e] = {.key = k, .larger_is_worse = high},
const struct testapi_fig_def testapi_figs[TESTAPI_FIG_COUNT] = {
	TESTAPI_FIGURES(TESTAPI_FIG_DEF_)};
#undef TESTAPI_FIG_DEF_

static const char *const testapi_outcomes[TESTAPI_OUTCOMES] = {
	[TESTAPI_OK] = "ok",
	[TESTAPI_CONTROL_ERROR] = "control_error",
	[TESTAPI_VERBS_ERROR] = "verbs_error",
	[TESTAPI_TIMEOUT] = "timeout",
	[TESTAPI_REFUSED] = "refused",
	[TESTAPI_ABORTED] = "aborted",
};

const char *testapi_outcome_name(enum testapi_outcome o)
{
	return (unsigned)o < TESTAPI_OUTCOMES ? testapi_outcomes[o] : NULL;
}

int testapi_outcome_parse(const char *name, enum testapi_outcome *out)
{
	for (int i = 0; i < TESTAPI_OUTCOMES; i++)
		if (!strcmp(name, testapi_outcomes[i])) {
			*out = (enum testapi_outcome)i;
			return 0;
		}
	return -EINVAL;
}

/* ---- shared helpers (testapi_int.h) ---- */

int testapi_decode(const char *json, size_t len, char *err, size_t errlen,
		   size_t size, testapi_body_fn fn, void (*free_fn)(void *),
		   void **out)
{
	struct jdec d = {.err = err, .errlen = errlen, .top = "body"};
	void *obj = calloc(1, size);
	json_t *root;
	int ret;

	*out = NULL;
	if (!obj)
		return -ENOMEM;
	ret = jdec_load(&d, json, len, &root);
	if (!ret) {
		ret = fn(&d, root, obj);
		json_decref(root);
	}
	if (ret) {
		free_fn(obj);
		return ret == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	*out = obj;
	return 0;
}

int testapi_uint(struct jdec *d, const json_t *o, const char *key, int64_t max,
		 int required, unsigned *out)
{
	int64_t v = *out;
	int ret = jdec_int(d, o, key, 1, max, required, &v);

	*out = (unsigned)v;
	return ret;
}

int testapi_version(struct jdec *d, const json_t *o)
{
	int64_t version = 0;

	if (!json_is_object(o))
		return jdec_fail(d, "must be a JSON object");
	return jdec_int(d, o, "version", TESTAPI_VERSION, TESTAPI_VERSION, 1,
			&version);
}

int testapi_hex_key(struct jdec *d, const json_t *o, const char *key,
		    char **out)
{
	int ret = jdec_str(d, o, key, TESTAPI_KEY_HEX, JDEC_NAME, 1, out);
	size_t n = ret ? 0 : strlen(*out);

	if (ret)
		return ret;
	if (n != TESTAPI_KEY_HEX ||
	    strspn(*out, "0123456789abcdefABCDEF") != n) {
		jdec_key(d, key);
		return jdec_fail(d, "must be %d hex digits", TESTAPI_KEY_HEX);
	}
	return 0;
}

void testapi_set_str(json_t *o, const char *key, const char *s)
{
	if (s && s[0])
		json_object_set_new(o, key, json_string(s));
}

void testapi_set_str_or_null(json_t *o, const char *key, const char *s)
{
	json_object_set_new(o, key, s && s[0] ? json_string(s) : json_null());
}

int testapi_dump(json_t *o, char **out)
{
	*out = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return *out ? 0 : -ENOMEM;
}

/* ---- results: encoding ---- */

void testapi_result_init(struct testapi_result *r)
{
	memset(r, 0, sizeof(*r));
	r->started = r->duration = NAN;
	for (int i = 0; i < TESTAPI_FIG_COUNT; i++)
		r->fig[i] = NAN;
}

/* A required string: sent as it is (even "", which the decoder refuses). */
static void rx_set_req(json_t *o, const char *key, const char *s)
{
	if (s)
		json_object_set_new(o, key, json_string(s));
}

/* A number member, left out when unknown (jansson holds no NaN or inf). */
static void rx_set_num(json_t *o, const char *key, double v)
{
	if (isfinite(v))
		json_object_set_new(o, key, json_real(v));
}

static json_t *rx_endpoint(const char *host, const char *dev, unsigned port)
{
	json_t *o = json_object();

	/* Unknown members are left out (the decoder's rule). */
	testapi_set_str(o, "host", host);
	testapi_set_str(o, "device", dev);
	if (o && port)
		json_object_set_new(o, "port", json_integer(port));
	return o;
}

/* The figures and params: the tail of a result. */
static int rx_tail(json_t *o, const struct testapi_result *r)
{
	json_t *p;

	for (int i = 0; i < TESTAPI_FIG_COUNT; i++)
		rx_set_num(o, testapi_figs[i].key, r->fig[i]);
	if (!r->params)
		return 0;
	p = json_loads(r->params, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(p)) {
		json_decref(p);
		return -EINVAL;
	}
	return json_object_set_new(o, "params", p) ? -ENOMEM : 0;
}

int testapi_result_encode(const struct testapi_result *r, char **out)
{
	json_t *o = json_object();
	int ret;

	*out = NULL;
	if (!o || !testapi_outcome_name(r->outcome)) {
		json_decref(o);
		return o ? -EINVAL : -ENOMEM;
	}
	rx_set_req(o, "id", r->id);
	testapi_set_str_or_null(o, "plan_id", r->plan_id);
	rx_set_req(o, "profile", r->profile);
	rx_set_req(o, "test", r->test);
	rx_set_num(o, "started", r->started);
	rx_set_num(o, "duration_seconds", r->duration);
	json_object_set_new(o, "local",
			    rx_endpoint(NULL, r->local_device, r->local_port));
	json_object_set_new(
		o, "peer",
		rx_endpoint(r->peer_host, r->peer_device, r->peer_port));
	json_object_set_new(o, "outcome",
			    json_string(testapi_outcome_name(r->outcome)));
	testapi_set_str_or_null(o, "error", r->error);
	testapi_set_str_or_null(o, "wc_status", r->wc_status);
	json_object_set_new(o, "busy", json_boolean(r->busy));
	testapi_set_str(o, "busy_reason", r->busy_reason);
	ret = rx_tail(o, r);
	if (ret) {
		json_decref(o);
		return ret;
	}
	return testapi_dump(o, out);
}

int testapi_results_begin(struct buf *b, const char *host)
{
	json_t *h = json_string(host);
	char *text = h ? json_dumps(h, JSON_ENCODE_ANY) : NULL;
	int ret = text ? buf_printf(b,
				    "{\"version\":%d,\"host\":%s,\"results\":[",
				    TESTAPI_VERSION, text)
		       : -ENOMEM;

	free(text);
	json_decref(h);
	return ret;
}

int testapi_results_item(struct buf *b, const char *json, size_t len)
{
	int ret = 0;

	if (b->len && b->data[b->len - 1] != '[')
		ret = buf_addc(b, ',');
	return ret ? ret : buf_add(b, json, len);
}

int testapi_results_end(struct buf *b, uint64_t spool_full, uint64_t expired)
{
	return buf_printf(b,
			  "],\"dropped\":{\"spool_full\":%" PRIu64
			  ",\"expired\":%" PRIu64 "}}",
			  spool_full, expired);
}

/* ---- results: decoding ---- */

static int rx_endpoint_dec(struct jdec *d, const json_t *o, const char *key,
			   int with_host, char **host, char **dev,
			   unsigned *port)
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
		ret = jdec_str(d, e, "host", TESTAPI_MAX_NAME, JDEC_NAME, 0,
			       host);
	if (!ret && !(json_is_string(jdec_get(e, "device")) &&
		      !json_string_length(jdec_get(e, "device"))))
		ret = jdec_str(d, e, "device", TESTAPI_MAX_NAME, JDEC_NAME, 0,
			       dev);
	if (!ret)
		ret = testapi_uint(d, e, "port", 255, 0, port);
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

static int rx_outcome(struct jdec *d, const json_t *o, struct testapi_result *r)
{
	char *name = NULL, list[128] = "";
	int ret = jdec_str(d, o, "outcome", TESTAPI_MAX_NAME, JDEC_NAME, 1,
			   &name);

	if (!ret && testapi_outcome_parse(name, &r->outcome)) {
		for (int i = 0; i < TESTAPI_OUTCOMES; i++)
			snprintf(list + strlen(list),
				 sizeof(list) - strlen(list), "%s%s",
				 i ? ", " : "", testapi_outcomes[i]);
		jdec_key(d, "outcome");
		ret = jdec_fail(d, "must be one of %s", list);
	}
	free(name);
	return ret;
}

static int rx_params(struct jdec *d, const json_t *o, struct testapi_result *r)
{
	size_t old;
	json_t *p;
	int ret = jdec_obj(d, o, "params", 0, &p);

	if (ret || !p)
		return ret;
	old = jdec_key(d, "params");
	ret = testapi_params_check(d, p);
	jdec_pop(d, old);
	if (ret)
		return ret;
	r->params = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
	if (!r->params)
		return jdec_nomem(d);
	if (strlen(r->params) > TESTAPI_MAX_PARAMS) {
		jdec_key(d, "params");
		return jdec_fail(d, "must be at most %d bytes as JSON",
				 TESTAPI_MAX_PARAMS);
	}
	return 0;
}

/*
 * Free text from the probe (an error message, a busy reason): control
 * characters become spaces rather than cost the result, which the probe
 * could never resend in another form.
 */
static int rx_prose(struct jdec *d, const json_t *o, const char *key,
		    char **out)
{
	json_t *v = jdec_get(o, key);
	size_t old = jdec_key(d, key), n = json_string_length(v);

	if (v && !json_is_string(v))
		return jdec_fail(d, "must be a string");
	if (v && n > TESTAPI_MAX_ERROR)
		return jdec_fail(d, "must be at most %d bytes long",
				 TESTAPI_MAX_ERROR);
	jdec_pop(d, old);
	if (!v)
		return 0;
	*out = malloc(n + 1);
	if (!*out)
		return jdec_nomem(d);
	memcpy(*out, json_string_value(v), n);
	(*out)[n] = '\0';
	/* Embedded NULs (\u0000) are control characters too. */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)(*out)[i] < 0x20 || (*out)[i] == 0x7f)
			(*out)[i] = ' ';
	return 0;
}

static int rx_busy(struct jdec *d, const json_t *o, struct testapi_result *r)
{
	json_t *v = jdec_get(o, "busy");

	if (v && !json_is_boolean(v)) {
		jdec_key(d, "busy");
		return jdec_fail(d, "must be true or false");
	}
	r->busy = json_is_true(v);
	return rx_prose(d, o, "busy_reason", &r->busy_reason);
}

/* What the result is of: names, times and both ends. */
static int rx_head(struct jdec *d, const json_t *o, struct testapi_result *r)
{
	int ret = jdec_str(d, o, "id", TESTAPI_MAX_NAME, JDEC_NAME, 1, &r->id);

	if (!ret)
		ret = jdec_str(d, o, "plan_id", TESTAPI_MAX_NAME, JDEC_NAME, 0,
			       &r->plan_id);
	if (!ret)
		ret = jdec_str(d, o, "profile", TESTAPI_MAX_NAME, JDEC_NAME, 1,
			       &r->profile);
	if (!ret)
		ret = jdec_str(d, o, "test", TESTAPI_MAX_NAME, JDEC_NAME, 1,
			       &r->test);
	if (!ret)
		ret = jdec_num(d, o, "started", 0, TESTAPI_MAX_TIME, 1,
			       &r->started);
	if (!ret)
		ret = jdec_num(d, o, "duration_seconds", 0,
			       TESTAPI_MAX_DURATION, 0, &r->duration);
	if (!ret)
		ret = rx_endpoint_dec(d, o, "local", 0, NULL, &r->local_device,
				      &r->local_port);
	if (!ret)
		ret = rx_endpoint_dec(d, o, "peer", 1, &r->peer_host,
				      &r->peer_device, &r->peer_port);
	return ret;
}

static int rx_result(struct jdec *d, const json_t *o, struct testapi_result *r)
{
	int ret;

	testapi_result_init(r);
	if (!json_is_object(o))
		return jdec_fail(d, "must be an object");
	ret = rx_head(d, o, r);
	if (!ret)
		ret = rx_outcome(d, o, r);
	if (!ret)
		ret = rx_prose(d, o, "error", &r->error);
	if (!ret)
		ret = jdec_str(d, o, "wc_status", TESTAPI_MAX_NAME, JDEC_NAME,
			       0, &r->wc_status);
	if (!ret)
		ret = rx_busy(d, o, r);
	for (int i = 0; !ret && i < TESTAPI_FIG_COUNT; i++)
		ret = jdec_num(d, o, testapi_figs[i].key, 0, TESTAPI_MAX_FIGURE,
			       0, &r->fig[i]);
	if (!ret)
		ret = rx_params(d, o, r);
	return ret;
}

static int rx_dropped(struct jdec *d, const json_t *o,
		      struct testapi_results *r)
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

static int rx_results(struct jdec *d, const json_t *o, void *obj)
{
	struct testapi_results *r = obj;
	json_t *a = NULL;
	void *elems = NULL;
	size_t aold = 0;
	int ret = testapi_version(d, o);

	if (!ret)
		ret = jdec_str(d, o, "host", TESTAPI_MAX_NAME, JDEC_HOST, 1,
			       &r->host);
	if (!ret)
		ret = jdec_array(d, o, "results", TESTAPI_MAX_RESULTS, 1,
				 sizeof(*r->v), &a, &elems, &aold);
	r->v = elems;
	for (size_t i = 0; !ret && a && i < json_array_size(a); i++) {
		size_t old = jdec_index(d, i);

		r->n = i + 1;
		ret = rx_result(d, json_array_get(a, i), &r->v[i]);
		if (!ret)
			jdec_pop(d, old);
	}
	if (!ret)
		jdec_pop(d, aold);
	if (!ret)
		ret = rx_dropped(d, o, r);
	return ret;
}

static void rx_free(void *r)
{
	testapi_results_free(r);
}

int testapi_results_decode(const char *json, size_t len,
			   struct testapi_results **out, char *err,
			   size_t errlen)
{
	void *r;
	int ret = testapi_decode(json, len, err, errlen, sizeof(**out),
				 rx_results, rx_free, &r);

	*out = r;
	return ret;
}

void testapi_results_free(struct testapi_results *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		struct testapi_result *t = &r->v[i];

		free(t->id);
		free(t->plan_id);
		free(t->profile);
		free(t->test);
		free(t->local_device);
		free(t->peer_host);
		free(t->peer_device);
		free(t->error);
		free(t->wc_status);
		free(t->busy_reason);
		free(t->params);
	}
	free(r->v);
	free(r->host);
	free(r);
}

/* ---- results: the collector's checks on a decoded batch ---- */

int testapi_results_window(const struct testapi_results *r, double now,
			   double max_age, double max_ahead, char *err,
			   size_t errlen)
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

const char *testapi_peer_key(const struct testapi_result *t, char *buf,
			     size_t size)
{
	int n;

	if (!t->peer_host || !t->peer_device || !t->peer_port)
		return NULL;
	n = snprintf(buf, size, "%s\x1f%s\x1f%u", t->peer_host, t->peer_device,
		     t->peer_port);
	return n > 0 && (size_t)n < size ? buf : NULL;
}
