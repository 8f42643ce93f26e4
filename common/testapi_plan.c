// SPDX-License-Identifier: MIT
/*
 * The plan body of the test API (testapi.h, GET /api/v1/plan, also the
 * answer to POST /api/v1/register): the collector encodes a host's tests
 * with their tickets and the host's responder keys; the probe decodes it.
 *
 * The envelope is checked as strictly as the other bodies. Inside it, an
 * entry or a key that breaks a rule costs only itself: a plan is many
 * independent tests, and the probe runs the good ones rather than none
 * (as it did before the plan had a decoder of its own). A bad ticket
 * costs only the ticket: the test then goes without one, and a responder
 * that knows the shared secret can still admit it.
 */
#include "testapi_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- encoding ---- */

static void pl_set_num(json_t *o, const char *key, double v)
{
	if (isfinite(v))
		json_object_set_new(o, key, json_real(v));
}

static json_t *pl_ticket_json(const struct testapi_ticket *t)
{
	return json_pack("{s:I, s:I, s:I, s:s}", "period",
			 (json_int_t)t->period, "not_before_ms",
			 (json_int_t)t->not_before_ms, "deadline_ms",
			 (json_int_t)t->deadline_ms, "key", t->key);
}

static json_t *pl_test_json(const struct testapi_plan_test *t)
{
	json_t *o = json_object(), *local = json_object(),
	       *peer = json_object();

	if (!o || !local || !peer) {
		json_decref(o);
		json_decref(local);
		json_decref(peer);
		return NULL;
	}
	testapi_set_str(o, "id", t->id);
	testapi_set_str(o, "profile", t->profile);
	testapi_set_str(local, "device", t->local_device);
	if (t->local_port)
		json_object_set_new(local, "port", json_integer(t->local_port));
	json_object_set_new(o, "local", local);
	testapi_set_str(peer, "host", t->peer_host);
	testapi_set_str(peer, "address", t->peer_address);
	if (t->peer_tcp_port)
		json_object_set_new(peer, "port",
				    json_integer(t->peer_tcp_port));
	testapi_set_str(peer, "device", t->peer_device);
	if (t->peer_hca_port)
		json_object_set_new(peer, "port_num",
				    json_integer(t->peer_hca_port));
	if (t->dlid)
		json_object_set_new(peer, TESTAPI_PARAM_DLID,
				    json_integer(t->dlid));
	json_object_set_new(o, "peer", peer);
	pl_set_num(o, "not_before", t->not_before);
	pl_set_num(o, "deadline", t->deadline);
	if (t->has_ticket &&
	    json_object_set_new(o, "ticket", pl_ticket_json(&t->ticket))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int testapi_plan_encode(const struct testapi_plan *p, char **out)
{
	json_t *tests = json_array(), *keys = json_array();

	for (size_t i = 0; tests && i < p->n_tests; i++)
		if (json_array_append_new(tests, pl_test_json(&p->tests[i]))) {
			json_decref(tests);
			tests = NULL;
		}
	for (size_t i = 0; keys && i < p->n_keys; i++)
		if (json_array_append_new(
			    keys, json_pack("{s:I, s:s}", "period",
					    (json_int_t)p->keys[i].period,
					    "key", p->keys[i].key))) {
			json_decref(keys);
			keys = NULL;
		}
	/* json_pack's "o" takes both, even when it fails. */
	json_t *o = json_pack(
		"{s:i, s:s, s:f, s:f, s:b, s:o, s:o}", "version",
		TESTAPI_VERSION, "host", p->host, "period_seconds",
		p->period_seconds, "period_start", p->period_start, "paused",
		p->paused, "tests", tests, "responder_keys", keys);

	if (o && p->refresh_seconds > 0)
		pl_set_num(o, "refresh_seconds", p->refresh_seconds);
	return testapi_dump(o, out);
}

/* ---- decoding ---- */

static void pl_key_free(char **key)
{
	if (*key)
		explicit_bzero(*key, strlen(*key));
	free(*key);
	*key = NULL;
}

static void pl_test_free(struct testapi_plan_test *t)
{
	free(t->id);
	free(t->profile);
	free(t->local_device);
	free(t->peer_host);
	free(t->peer_address);
	free(t->peer_device);
	pl_key_free(&t->ticket.key);
	memset(t, 0, sizeof(*t));
}

/*
 * Decode a part of the plan that may be left out: @fn on @v (at the path
 * @d is at) with its error written to @why rather than to the caller's
 * buffer, which only a refused plan fills. The path is left as it was.
 * Returns what @fn returned.
 */
static int pl_aside(struct jdec *d, testapi_body_fn fn, const json_t *v,
		    void *obj, char *why)
{
	char *err = d->err;
	size_t errlen = d->errlen, old = d->plen;
	int ret;

	d->err = why;
	d->errlen = TESTAPI_ERR_MAX;
	ret = fn(d, v, obj);
	jdec_pop(d, old);
	d->err = err;
	d->errlen = errlen;
	return ret;
}

/* Count a part left out; the first one's reason is kept in @first. */
static void pl_left_out(size_t *n, char *first, const char *why)
{
	if (!(*n)++)
		snprintf(first, TESTAPI_ERR_MAX, "%s", why);
}

/* The ticket of entry @o into @obj (a struct testapi_plan_test). */
static int pl_ticket(struct jdec *d, const json_t *o, void *obj)
{
	struct testapi_ticket *t = &((struct testapi_plan_test *)obj)->ticket;
	json_t *tk;
	int ret = jdec_obj(d, o, "ticket", 1, &tk);

	if (ret)
		return ret;
	jdec_key(d, "ticket");
	ret = jdec_int(d, tk, "period", 0, INT64_MAX, 1, &t->period);
	if (!ret)
		ret = jdec_int(d, tk, "not_before_ms", 1, INT64_MAX, 1,
			       &t->not_before_ms);
	if (!ret)
		ret = jdec_int(d, tk, "deadline_ms", 1, INT64_MAX, 1,
			       &t->deadline_ms);
	if (!ret && t->deadline_ms <= t->not_before_ms) {
		jdec_key(d, "deadline_ms");
		ret = jdec_fail(d, "must be after not_before_ms");
	}
	if (!ret)
		ret = testapi_hex_key(d, tk, "key", &t->key);
	return ret;
}

static int pl_peer(struct jdec *d, const json_t *o, struct testapi_plan_test *t)
{
	json_t *e;
	int ret = jdec_obj(d, o, "peer", 1, &e);

	if (ret)
		return ret;
	jdec_key(d, "peer");
	ret = jdec_str(d, e, "host", TESTAPI_MAX_NAME, JDEC_HOST, 0,
		       &t->peer_host);
	if (!ret)
		ret = jdec_str(d, e, "address", TESTAPI_MAX_ADDRESS, JDEC_NAME,
			       1, &t->peer_address);
	if (!ret)
		ret = testapi_uint(d, e, "port", 65535, 1, &t->peer_tcp_port);
	if (!ret)
		ret = jdec_str(d, e, "device", TESTAPI_MAX_NAME, JDEC_NAME, 0,
			       &t->peer_device);
	if (!ret)
		ret = testapi_uint(d, e, "port_num", 255, 0, &t->peer_hca_port);
	if (!ret)
		ret = testapi_uint(d, e, TESTAPI_PARAM_DLID, TESTAPI_LID_MAX, 0,
				   &t->dlid);
	return ret;
}

static int pl_local(struct jdec *d, const json_t *o,
		    struct testapi_plan_test *t)
{
	json_t *e;
	int ret = jdec_obj(d, o, "local", 1, &e);

	if (ret)
		return ret;
	jdec_key(d, "local");
	ret = jdec_str(d, e, "device", TESTAPI_MAX_NAME, JDEC_NAME, 0,
		       &t->local_device);
	if (!ret)
		ret = testapi_uint(d, e, "port", 255, 0, &t->local_port);
	return ret;
}

/*
 * Entry @o into @obj (a struct testapi_plan_test). The path may be left
 * inside the entry: pl_aside() restores it.
 */
static int pl_entry(struct jdec *d, const json_t *o, void *obj)
{
	struct testapi_plan_test *t = obj;
	size_t old = d->plen;
	int ret;

	if (!json_is_object(o))
		return jdec_fail(d, "must be an object");
	ret = jdec_str(d, o, "id", TESTAPI_MAX_NAME, JDEC_NAME, 1, &t->id);
	if (!ret)
		ret = jdec_str(d, o, "profile", TESTAPI_MAX_NAME, JDEC_NAME, 1,
			       &t->profile);
	if (!ret)
		ret = pl_local(d, o, t);
	if (!ret) {
		jdec_pop(d, old);
		ret = pl_peer(d, o, t);
	}
	if (!ret) {
		jdec_pop(d, old);
		ret = jdec_num(d, o, "not_before", 0, TESTAPI_MAX_TIME, 0,
			       &t->not_before);
	}
	if (!ret)
		ret = jdec_num(d, o, "deadline", 0, TESTAPI_MAX_TIME, 0,
			       &t->deadline);
	return ret;
}

/*
 * Entry @v's ticket into @t, or left out alone: the test then goes without
 * one. Only -ENOMEM fails.
 */
static int pl_entry_ticket(struct jdec *d, const json_t *v,
			   struct testapi_plan_test *t, struct testapi_plan *p)
{
	char why[TESTAPI_ERR_MAX];
	int ret = pl_aside(d, pl_ticket, v, t, why);

	t->has_ticket = !ret;
	if (!ret)
		return 0;
	pl_key_free(&t->ticket.key);
	if (ret == -ENOMEM)
		return ret;
	pl_left_out(&p->n_no_ticket, p->no_ticket, why);
	return 0;
}

/*
 * Element @i of the tests array (at path "tests"): decoded into the next
 * free entry, or left out with its reason. Only -ENOMEM fails.
 */
static int pl_tests_one(struct jdec *d, const json_t *v, size_t i,
			struct testapi_plan *p)
{
	struct testapi_plan_test *t = &p->tests[p->n_tests];
	char why[TESTAPI_ERR_MAX];
	size_t old = jdec_index(d, i);
	int ret;

	if (p->n_tests == TESTAPI_MAX_PLAN) {
		snprintf(why, sizeof(why), "%.200s: more than %d entries",
			 d->path, TESTAPI_MAX_PLAN);
		jdec_pop(d, old);
		pl_left_out(&p->n_skipped, p->skipped, why);
		return 0;
	}
	ret = pl_aside(d, pl_entry, v, t, why);
	if (!ret && jdec_get(v, "ticket"))
		ret = pl_entry_ticket(d, v, t, p);
	jdec_pop(d, old);
	if (!ret) {
		p->n_tests++;
		return 0;
	}
	pl_test_free(t);
	if (ret == -ENOMEM)
		return jdec_nomem(d);
	pl_left_out(&p->n_skipped, p->skipped, why);
	return 0;
}

static int pl_tests(struct jdec *d, const json_t *o, struct testapi_plan *p)
{
	json_t *a = jdec_get(o, "tests");
	size_t n = json_array_size(a), old = jdec_key(d, "tests");
	int ret = 0;

	if (!json_is_array(a))
		return jdec_fail(d, a ? "must be an array" : "is required");
	p->tests = calloc((n < TESTAPI_MAX_PLAN ? n : TESTAPI_MAX_PLAN) + 1,
			  sizeof(*p->tests));
	if (!p->tests)
		return jdec_nomem(d);
	for (size_t i = 0; !ret && i < n; i++)
		ret = pl_tests_one(d, json_array_get(a, i), i, p);
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

/* A responder key @v into @obj (a struct testapi_key). */
static int pl_key(struct jdec *d, const json_t *v, void *obj)
{
	struct testapi_key *k = obj;
	int ret = jdec_object_at(d, v);

	if (!ret)
		ret = jdec_int(d, v, "period", 0, INT64_MAX, 1, &k->period);
	if (!ret)
		ret = testapi_hex_key(d, v, "key", &k->key);
	return ret;
}

/* Element @i of responder_keys, or left out with its reason. */
static int pl_keys_one(struct jdec *d, const json_t *v, size_t i,
		       struct testapi_plan *p)
{
	struct testapi_key *k = &p->keys[p->n_keys];
	char why[TESTAPI_ERR_MAX];
	size_t old = jdec_index(d, i);
	int ret;

	if (p->n_keys == TESTAPI_MAX_KEYS) {
		snprintf(why, sizeof(why), "%.200s: more than %d keys", d->path,
			 TESTAPI_MAX_KEYS);
		jdec_pop(d, old);
		pl_left_out(&p->n_skipped, p->skipped, why);
		return 0;
	}
	ret = pl_aside(d, pl_key, v, k, why);
	jdec_pop(d, old);
	if (!ret) {
		p->n_keys++;
		return 0;
	}
	pl_key_free(&k->key);
	k->period = 0;
	if (ret == -ENOMEM)
		return jdec_nomem(d);
	pl_left_out(&p->n_skipped, p->skipped, why);
	return 0;
}

static int pl_keys(struct jdec *d, const json_t *o, struct testapi_plan *p)
{
	json_t *a = jdec_get(o, "responder_keys");
	size_t n = json_array_size(a), old = jdec_key(d, "responder_keys");
	int ret = 0;

	if (!a) {
		jdec_pop(d, old);
		return 0;
	}
	if (!json_is_array(a))
		return jdec_fail(d, "must be an array");
	p->has_keys = 1;
	p->keys = calloc(TESTAPI_MAX_KEYS, sizeof(*p->keys));
	if (!p->keys)
		return jdec_nomem(d);
	for (size_t i = 0; !ret && i < n; i++)
		ret = pl_keys_one(d, json_array_get(a, i), i, p);
	if (!ret)
		jdec_pop(d, old);
	return ret;
}

static int pl_plan(struct jdec *d, const json_t *o, void *obj)
{
	struct testapi_plan *p = obj;
	json_t *paused;
	int ret = testapi_version(d, o);

	if (!ret)
		ret = jdec_str(d, o, "host", TESTAPI_MAX_NAME, JDEC_HOST, 0,
			       &p->host);
	if (!ret)
		ret = jdec_num(d, o, "period_seconds", 0, TESTAPI_MAX_TIME, 0,
			       &p->period_seconds);
	if (!ret)
		ret = jdec_num(d, o, "period_start", 0, TESTAPI_MAX_TIME, 0,
			       &p->period_start);
	if (!ret)
		ret = jdec_num(d, o, "refresh_seconds", 0, 86400, 0,
			       &p->refresh_seconds);
	paused = jdec_get(o, "paused");
	if (!ret && paused && !json_is_boolean(paused)) {
		jdec_key(d, "paused");
		ret = jdec_fail(d, "must be true or false");
	}
	p->paused = json_is_true(paused);
	if (!ret)
		ret = pl_tests(d, o, p);
	if (!ret)
		ret = pl_keys(d, o, p);
	return ret;
}

static void pl_free(void *p)
{
	testapi_plan_free(p);
}

int testapi_plan_decode(const char *json, size_t len, struct testapi_plan **out,
			char *err, size_t errlen)
{
	void *p;
	int ret = testapi_decode(json, len, err, errlen, sizeof(**out), pl_plan,
				 pl_free, &p);

	*out = p;
	return ret;
}

void testapi_plan_free(struct testapi_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_tests; i++)
		pl_test_free(&p->tests[i]);
	for (size_t i = 0; i < p->n_keys; i++)
		pl_key_free(&p->keys[i].key);
	free(p->tests);
	free(p->keys);
	free(p->host);
	free(p);
}
