// SPDX-License-Identifier: MIT
/*
 * The daemon and the collector (docs/api-daemon-draft.md): the counters
 * push (the newest report only), POST /api/v1/register, GET /api/v1/plan
 * and POST /api/v1/results in batches from the spool. Result pushes tell
 * the event loop whether to retry (connection errors, 5xx, 429: backoff)
 * or carry on; a result the collector refuses with another 4xx is moved
 * aside, found by sending the refused batch one result at a time.
 */
#include "daemon_int.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"

#define PLAN_MAX_BODY (8u << 20)
#define RESULTS_MAX_BODY (32u << 20)

static int net_push_new(struct daemon *d, const char *path, size_t max_resp,
			struct push **out)
{
	struct probe_settings *s = d->s;
	char url[2048];
	struct push_opts o = {
		.url = url,
		.token_file = s->token_file,
		.ca_file = s->ca_file,
		.connect_timeout = s->connect_timeout,
		.timeout = s->timeout,
		.max_response = max_resp,
	};

	snprintf(url, sizeof(url), "%s%s", d->base_url, path);
	return push_new(&o, out);
}

/* The collector's base URL: collector_url without /api/v1/report. */
static char *net_base(const char *url)
{
	static const char tail[] = "/api/v1/report";
	size_t n = strlen(url);

	if (n >= strlen(tail) && !strcmp(url + n - strlen(tail), tail))
		n -= strlen(tail);
	while (n && url[n - 1] == '/')
		n--;
	return strndup(url, n);
}

int daemon_net_setup(struct daemon *d)
{
	int ret;

	if (!d->s->collector_url)
		return 0;
	d->base_url = net_base(d->s->collector_url);
	if (!d->base_url)
		return -ENOMEM;
	ret = net_push_new(d, "/api/v1/report", 0, &d->p_report);
	if (!ret)
		ret = net_push_new(d, "/api/v1/register", PLAN_MAX_BODY,
				   &d->p_register);
	if (!ret)
		ret = net_push_new(d, "/api/v1/plan", PLAN_MAX_BODY,
				   &d->p_plan);
	if (!ret)
		ret = net_push_new(d, "/api/v1/results", 0, &d->p_results);
	if (ret)
		daemon_net_teardown(d);
	return ret;
}

void daemon_net_teardown(struct daemon *d)
{
	push_free(d->p_report);
	push_free(d->p_register);
	push_free(d->p_plan);
	push_free(d->p_results);
	d->p_report = d->p_register = d->p_plan = d->p_results = NULL;
	free(d->base_url);
	d->base_url = NULL;
}

int daemon_push_counters(struct daemon *d)
{
	char *text = NULL;
	int ret;

	if (!d->p_report)
		return -ENOTCONN;
	ret = report_encode(d->latest, &text);
	if (!ret)
		ret = push_send(d->p_report, text, strlen(text));
	free(text);
	return ret;
}

static json_t *net_port_json(const char *dev, const struct report_port *p)
{
	json_t *o = json_pack("{s:s, s:i, s:i}", "device", dev, "port",
			      (int)p->port, "state", p->state);
	json_t *pk = json_array(), *g = json_array();

	if (p->link_layer)
		json_object_set_new(o, "link_layer",
				    json_string(p->link_layer));
	if (p->lid >= 0)
		json_object_set_new(o, "lid", json_integer(p->lid));
	if (p->n_gids && p->gids[0].gid && strlen(p->gids[0].gid) >= 19)
		json_object_set_new(o, "subnet_prefix",
				    json_stringn(p->gids[0].gid, 19));
	for (size_t k = 0; k < p->n_pkeys; k++)
		json_array_append_new(pk, json_integer(p->pkeys[k].pkey));
	for (size_t k = 0; k < p->n_gids; k++)
		if (p->gids[k].gid)
			json_array_append_new(g, json_string(p->gids[k].gid));
	json_object_set_new(o, "pkeys", pk);
	json_object_set_new(o, "gids", g);
	return o;
}

static char *net_register_body(struct daemon *d)
{
	const struct probe_settings *s = d->s;
	json_t *labels = json_object(), *profiles = json_array();
	json_t *ports = json_array(), *o;
	char *text;

	for (size_t i = 0; i < s->n_labels; i++)
		json_object_set_new(labels, s->labels[i].key,
				    json_string(s->labels[i].value));
	for (size_t i = 0; i < s->n_profiles; i++)
		json_array_append_new(profiles,
				      json_string(s->profiles[i].name));
	for (size_t i = 0; d->latest && i < d->latest->n_devices; i++) {
		const struct report_device *dv = &d->latest->devices[i];

		for (size_t j = 0; j < dv->n_ports; j++)
			json_array_append_new(
				ports, net_port_json(dv->name, &dv->ports[j]));
	}
	o = json_pack("{s:i, s:s, s:{s:s, s:i}, s:o, s:o, s:o}", "version", 1,
		      "host", d->host, "responder", "address",
		      s->responder_address ? s->responder_address : d->host,
		      "port", (int)d->resp_port, "labels", labels, "profiles",
		      profiles, "ports", ports);
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return text;
}

static const char *jstr(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "";
}

static json_int_t jint(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/*
 * The entry's ticket (docs/api.md): its claims are the entry's own fields
 * and the ticket object's period and slot in milliseconds; the key is the
 * MAC key of the test's REQUEST. No ticket: the test goes without one
 * (a collector that mints none), and the peer admits it only by secret.
 */
static void net_plan_ticket(const char *host, json_t *t, struct dtest_job *j)
{
	json_t *tk = json_object_get(t, "ticket");
	struct ticket_claims *c = &j->ticket.c;
	json_int_t per = jint(tk, "period"), nb = jint(tk, "not_before_ms");
	json_int_t dl = jint(tk, "deadline_ms");

	if (!json_is_object(tk))
		return;
	if (per < 0 || nb <= 0 || dl <= nb ||
	    ticket_unhex(jstr(tk, "key"), j->ticket.key, TICKET_KEY_LEN) ||
	    strlen(host) > TICKET_STR_MAX ||
	    strlen(j->plan_id) > TICKET_STR_MAX) {
		log_once("plan-ticket", 600, LOG_LVL_WARN,
			 "plan entry %s: unusable ticket: the test goes "
			 "without one",
			 j->plan_id);
		return;
	}
	snprintf(c->plan_id, sizeof(c->plan_id), "%s", j->plan_id);
	snprintf(c->initiator, sizeof(c->initiator), "%s", host);
	snprintf(c->initiator_device, sizeof(c->initiator_device), "%s",
		 j->device);
	c->initiator_port = j->ib_port;
	snprintf(c->responder_device, sizeof(c->responder_device), "%s",
		 j->peer_device);
	c->responder_port = j->peer_ib_port;
	c->period = (uint64_t)per;
	c->not_before_ms = (uint64_t)nb;
	c->deadline_ms = (uint64_t)dl;
	j->has_ticket = true;
}

/* One plan entry into @e; -EINVAL (logged) when unusable here. */
static int net_plan_entry(struct daemon *d, const char *host, json_t *t,
			  struct dplan *e)
{
	json_t *local = json_object_get(t, "local");
	json_t *peer = json_object_get(t, "peer");
	const struct probe_profile *pr =
		probe_profile_find(d->s, jstr(t, "profile"));
	struct dtest_job *j = &e->job;
	json_int_t pport = json_integer_value(json_object_get(peer, "port"));

	memset(e, 0, sizeof(*e));
	if (!pr || !json_is_object(local) || !json_is_object(peer) ||
	    pport < 1 || pport > 65535 || !jstr(peer, "address")[0]) {
		log_once("plan-entry", 600, LOG_LVL_WARN,
			 "plan entry %s: unknown profile '%s' or incomplete "
			 "local/peer: skipped",
			 jstr(t, "id"), jstr(t, "profile"));
		return -EINVAL;
	}
	snprintf(j->plan_id, sizeof(j->plan_id), "%s", jstr(t, "id"));
	j->profile = *pr;
	snprintf(j->device, sizeof(j->device), "%s", jstr(local, "device"));
	j->ib_port =
		(unsigned)json_integer_value(json_object_get(local, "port"));
	snprintf(j->peer_host, sizeof(j->peer_host), "%s", jstr(peer, "host"));
	snprintf(j->peer_address, sizeof(j->peer_address), "%s",
		 jstr(peer, "address"));
	snprintf(j->peer_port, sizeof(j->peer_port), "%d", (int)pport);
	snprintf(j->peer_device, sizeof(j->peer_device), "%s",
		 jstr(peer, "device"));
	j->peer_ib_port =
		(unsigned)json_integer_value(json_object_get(peer, "port_num"));
	j->deadline = json_number_value(json_object_get(t, "deadline"));
	e->start_at = json_number_value(json_object_get(t, "not_before"));
	net_plan_ticket(host, t, j);
	return 0;
}

/*
 * This host's responder keys from the plan: the tickets of the tests we
 * answer are checked with them. Kept across plans (dticket.h), so a
 * ticket from a plan fetched just before a period turned still works.
 */
static void net_plan_keys(struct daemon *d, json_t *root)
{
	double per = json_number_value(json_object_get(root, "period_seconds"));
	json_t *keys = json_object_get(root, "responder_keys"), *k;
	uint8_t key[TICKET_KEY_LEN];
	size_t i, n = 0;

	json_array_foreach(keys, i, k)
	{
		json_int_t p = jint(k, "period");

		if (p < 0 || per < 1 ||
		    ticket_unhex(jstr(k, "key"), key, sizeof(key)))
			continue;
		pthread_mutex_lock(&d->lock);
		dticket_add_key(&d->tickets, (uint64_t)p,
				(uint64_t)(per * 1000 + 0.5), key);
		pthread_mutex_unlock(&d->lock);
		n++;
	}
	explicit_bzero(key, sizeof(key));
	if (!n)
		log_once("plan-keys", 3600, LOG_LVL_WARN,
			 "plan: no responder keys from the collector: peers' "
			 "planned tests will be refused here (an older "
			 "collector?)");
}

/* Replace the plan with the collector's answer, keeping what ran. */
static int net_plan_parse(struct daemon *d, const char *body, size_t len)
{
	json_error_t jerr;
	json_t *root = json_loadb(body, len, 0, &jerr), *tests, *t;
	struct dplan *n = calloc(DAEMON_MAX_PLAN, sizeof(*n));
	const char *host = jstr(root, "host");
	size_t i, cnt = 0;

	tests = json_object_get(root, "tests");
	if (!n || !json_is_array(tests)) {
		log_err("plan: not a plan (%s)",
			root ? "no tests array" : jerr.text);
		json_decref(root);
		free(n);
		return -EPROTO;
	}
	json_array_foreach(tests, i, t)
	{
		if (cnt == DAEMON_MAX_PLAN ||
		    net_plan_entry(d, host[0] ? host : d->host, t, &n[cnt]))
			continue;
		/* not_before holds the collector's jitter inside the slot. */
		pthread_mutex_lock(&d->lock);
		for (size_t k = 0; k < d->n_plan; k++)
			if (d->plan[k].done &&
			    !strcmp(d->plan[k].job.plan_id, n[cnt].job.plan_id))
				n[cnt].done = true;
		pthread_mutex_unlock(&d->lock);
		cnt++;
	}
	net_plan_keys(d, root);
	psched_pause(&d->sched, PSCHED_PAUSE_PLAN,
		     json_is_true(json_object_get(root, "paused")));
	pthread_mutex_lock(&d->lock);
	memcpy(d->plan, n, cnt * sizeof(*n));
	d->n_plan = cnt;
	d->have_plan = true;
	d->plan_stale = false;
	d->plan_period =
		json_number_value(json_object_get(root, "period_seconds"));
	pthread_mutex_unlock(&d->lock);
	pthread_cond_signal(&d->wake);
	log_debug("plan: %zu test(s)", cnt);
	json_decref(root);
	free(n);
	return 0;
}

int daemon_register(struct daemon *d)
{
	char *body = net_register_body(d);
	const char *resp;
	size_t len;
	int ret;

	if (!body)
		return -ENOMEM;
	ret = push_send(d->p_register, body, strlen(body));
	free(body);
	if (ret)
		return push_last_status(d->p_register) == 404 ? -EPROTO : ret;
	log_info("registered with %s", d->base_url);
	resp = push_response(d->p_register, &len);
	return net_plan_parse(d, resp, len);
}

int daemon_fetch_plan(struct daemon *d)
{
	const char *resp;
	size_t len;
	int ret = push_get(d->p_plan);

	if (ret)
		return ret;
	resp = push_response(d->p_plan, &len);
	return net_plan_parse(d, resp, len);
}

/* The POST body for @n spooled results (missing files are skipped). */
static int net_results_body(struct daemon *d, char (*ids)[SPOOL_ID_LEN + 1],
			    size_t n, struct buf *b)
{
	struct spool_dropped dr = spool_dropped(d->spool);
	int ret = buf_printf(b, "{\"version\":1,\"host\":\"%s\",\"results\":[",
			     d->host);

	for (size_t i = 0, k = 0; !ret && i < n; i++) {
		char *data;
		size_t len;

		if (spool_read(d->spool, ids[i], &data, &len))
			continue;
		ret = buf_adds(b, k++ ? "," : "");
		if (!ret)
			ret = buf_add(b, data, len);
		free(data);
	}
	if (!ret)
		ret = buf_printf(b,
				 "],\"dropped\":{\"spool_full\":%" PRIu64
				 ",\"expired\":%" PRIu64 "}}",
				 dr.spool_full, dr.expired);
	return ret;
}

/* Send @n results; 0 on 2xx, 1 refused (4xx, not 429), else -errno. */
static int net_send_results(struct daemon *d, char (*ids)[SPOOL_ID_LEN + 1],
			    size_t n)
{
	struct buf b;
	long st;
	int ret;

	buf_init(&b, RESULTS_MAX_BODY);
	ret = net_results_body(d, ids, n, &b);
	if (!ret)
		ret = push_send(d->p_results, b.data, b.len);
	buf_free(&b);
	if (!ret) {
		for (size_t i = 0; i < n; i++)
			spool_remove(d->spool, ids[i]);
		pthread_mutex_lock(&d->lock);
		d->results_sent += n;
		pthread_mutex_unlock(&d->lock);
		return 0;
	}
	st = push_last_status(d->p_results);
	if (ret == PUSH_ERR_CLIENT && st != 429 && st != 408)
		return 1;
	return ret < 0 ? ret : -EIO;
}

static void net_reject(struct daemon *d, const char *id)
{
	const char *resp = push_response(d->p_results, NULL);
	json_t *j = json_loads(resp, 0, NULL);
	const char *why = json_string_value(json_object_get(j, "error"));
	char reason[512];

	snprintf(reason, sizeof(reason), "HTTP %ld: %s\n",
		 push_last_status(d->p_results), why ? why : resp);
	spool_reject(d->spool, id, reason);
	json_decref(j);
}

int daemon_push_results(struct daemon *d)
{
	size_t max = (size_t)d->s->results_batch, n;
	char(*ids)[SPOOL_ID_LEN + 1] = calloc(max, sizeof(*ids));
	int ret;

	if (!ids)
		return -ENOMEM;
	n = spool_oldest(d->spool, ids, max);
	ret = n ? net_send_results(d, ids, n) : 0;
	/* A refused batch: find the culprits one result at a time. */
	for (size_t i = 0; ret == 1 && i < n; i++) {
		int one = n == 1 ? 1 : net_send_results(d, &ids[i], 1);

		if (one == 1)
			net_reject(d, ids[i]);
		else if (one < 0)
			ret = one;
	}
	free(ids);
	if (ret < 0)
		return ret;
	return spool_count(d->spool) ? 1 : 0;
}
