// SPDX-License-Identifier: MIT
/*
 * The daemon and the collector (docs/api.md): the counters push (the
 * newest report only), POST /api/v1/register, GET /api/v1/plan and
 * POST /api/v1/results in batches from the spool, the bodies by the test
 * API codec (common/testapi.h). Result pushes tell
 * the event loop whether to retry (connection errors, 5xx, 429: backoff)
 * or carry on; a result the collector refuses with another 4xx is moved
 * aside, found by sending the refused batch one result at a time.
 */
#include "daemon_int.h"
#include "hex.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "testapi.h"

#define PLAN_MAX_BODY (8u << 20)
#define NET_PREFIX_LEN 19 /* "fe80:0000:0000:0000": GID 0's subnet prefix */
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

int daemon_net_setup(struct daemon *d)
{
	int ret;

	if (!d->s->collector_url)
		return 0;
	/* the collector's base URL: collector_url without /api/v1/report */
	d->base_url = push_api_url(d->s->collector_url, "");
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

/* @p of device @dev as registered; arrays allocated, strings borrowed. */
static int net_reg_port(const char *dev, const struct report_port *p,
			struct testapi_reg_port *o, char *prefix)
{
	const char *gid0 = p->n_gids ? p->gids[0].gid : NULL;

	/* The encoder only reads the strings (testapi.h). */
	*o = (struct testapi_reg_port){.device = (char *)dev,
				       .port = p->port,
				       .state = p->state,
				       .link_layer = p->link_layer,
				       .lid = p->lid};
	if (gid0 && strlen(gid0) >= NET_PREFIX_LEN) {
		memcpy(prefix, gid0, NET_PREFIX_LEN);
		prefix[NET_PREFIX_LEN] = '\0';
		o->subnet_prefix = prefix;
	}
	o->pkeys = calloc(p->n_pkeys + 1, sizeof(*o->pkeys));
	o->gids = calloc(p->n_gids + 1, sizeof(*o->gids));
	if (!o->pkeys || !o->gids)
		return -ENOMEM;
	for (size_t k = 0; k < p->n_pkeys; k++)
		o->pkeys[o->n_pkeys++] = p->pkeys[k].pkey;
	for (size_t k = 0; k < p->n_gids; k++)
		if (p->gids[k].gid)
			o->gids[o->n_gids++] = p->gids[k].gid;
	return 0;
}

/* Our labels, profiles and the newest report's ports into @r. */
static int net_reg_fill(struct daemon *d, struct testapi_reg *r,
			char (*prefix)[NET_PREFIX_LEN + 1])
{
	const struct probe_settings *s = d->s;
	int ret = 0;

	for (size_t i = 0; i < s->n_labels; i++)
		r->labels[r->n_labels++] = (struct testapi_label){
			.key = (char *)s->labels[i].key,
			.value = (char *)s->labels[i].value};
	for (size_t i = 0; i < s->n_profiles; i++)
		r->profiles[r->n_profiles++] = (char *)s->profiles[i].name;
	for (size_t i = 0; !ret && d->latest && i < d->latest->n_devices; i++) {
		const struct report_device *dv = &d->latest->devices[i];

		for (size_t j = 0; !ret && j < dv->n_ports; j++, r->n_ports++)
			ret = net_reg_port(dv->name, &dv->ports[j],
					   &r->ports[r->n_ports],
					   prefix[r->n_ports]);
	}
	return ret;
}

static char *net_register_body(struct daemon *d)
{
	const struct probe_settings *s = d->s;
	struct testapi_reg r = {.host = d->host,
				.address = s->responder_address
						   ? s->responder_address
						   : d->host,
				.port = d->resp_port};
	char(*prefix)[NET_PREFIX_LEN + 1] = NULL, *text = NULL;
	size_t np = 0;

	for (size_t i = 0; d->latest && i < d->latest->n_devices; i++)
		np += d->latest->devices[i].n_ports;
	r.labels = calloc(s->n_labels + 1, sizeof(*r.labels));
	r.profiles = calloc(s->n_profiles + 1, sizeof(*r.profiles));
	r.ports = calloc(np + 1, sizeof(*r.ports));
	prefix = calloc(np + 1, sizeof(*prefix));
	if (r.labels && r.profiles && r.ports && prefix &&
	    !net_reg_fill(d, &r, prefix))
		testapi_reg_encode(&r, &text);
	for (size_t i = 0; r.ports && i < r.n_ports; i++) {
		free(r.ports[i].pkeys);
		free(r.ports[i].gids);
	}
	free(r.labels);
	free(r.profiles);
	free(r.ports);
	free(prefix);
	return text;
}

static const char *net_str(const char *s)
{
	return s ? s : "";
}

/*
 * The entry's ticket (docs/api.md): its claims are the entry's own fields
 * and the ticket object's period and slot in milliseconds; the key is the
 * MAC key of the test's REQUEST. No ticket: the test goes without one
 * (a collector that mints none), and the peer admits it only by secret.
 */
static void net_plan_ticket(const char *host, const struct testapi_plan_test *t,
			    struct dtest_job *j)
{
	const struct testapi_ticket *tk = &t->ticket;
	struct ticket_claims *c = &j->ticket.c;

	if (!t->has_ticket)
		return;
	if (hex_decode(tk->key, j->ticket.key, TICKET_KEY_LEN) ||
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
	c->period = (uint64_t)tk->period;
	c->not_before_ms = (uint64_t)tk->not_before_ms;
	c->deadline_ms = (uint64_t)tk->deadline_ms;
	j->has_ticket = true;
}

/* One plan entry into @e; -EINVAL (logged) when unusable here. */
static int net_plan_entry(struct daemon *d, const char *host,
			  const struct testapi_plan_test *t, struct dplan *e)
{
	const struct probe_profile *pr = probe_profile_find(d->s, t->profile);
	struct dtest_job *j = &e->job;

	memset(e, 0, sizeof(*e));
	if (!pr) {
		log_once("plan-entry", 600, LOG_LVL_WARN,
			 "plan entry %s: unknown profile '%s': skipped", t->id,
			 t->profile);
		return -EINVAL;
	}
	snprintf(j->plan_id, sizeof(j->plan_id), "%s", t->id);
	j->profile = *pr;
	snprintf(j->device, sizeof(j->device), "%s", net_str(t->local_device));
	j->ib_port = t->local_port;
	snprintf(j->peer_host, sizeof(j->peer_host), "%s",
		 net_str(t->peer_host));
	snprintf(j->peer_address, sizeof(j->peer_address), "%s",
		 t->peer_address);
	snprintf(j->peer_tcp_port, sizeof(j->peer_tcp_port), "%u",
		 t->peer_tcp_port);
	snprintf(j->peer_device, sizeof(j->peer_device), "%s",
		 net_str(t->peer_device));
	j->peer_ib_port = t->peer_hca_port;
	j->dlid = t->dlid;
	j->deadline = t->deadline;
	e->start_at = t->not_before;
	net_plan_ticket(host, t, j);
	return 0;
}

/*
 * This host's responder keys from the plan: the tickets of the tests we
 * answer are checked with them. Kept across plans (dticket.h), so a
 * ticket from a plan fetched just before a period turned still works.
 */
static void net_plan_keys(struct daemon *d, const struct testapi_plan *p)
{
	double per = p->period_seconds;
	uint8_t key[TICKET_KEY_LEN];
	size_t n = 0;

	for (size_t i = 0; i < p->n_keys; i++) {
		if (per < 1 || hex_decode(p->keys[i].key, key, sizeof(key)))
			continue;
		pthread_mutex_lock(&d->lock);
		dticket_add_key(&d->tickets, (uint64_t)p->keys[i].period,
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

/* What the decoder left out of the plan (testapi.h), logged. */
static void net_plan_notes(const struct testapi_plan *p)
{
	if (p->n_skipped)
		log_once("plan-entry", 600, LOG_LVL_WARN,
			 "plan: %zu part(s) left out, the first because %s",
			 p->n_skipped, p->skipped);
	if (p->n_no_ticket)
		log_once("plan-ticket", 600, LOG_LVL_WARN,
			 "plan: %zu test(s) go without their ticket, the "
			 "first because %s",
			 p->n_no_ticket, p->no_ticket);
}

/* Our entries from plan @p, keeping what ran, as the daemon's plan. */
static void net_plan_take(struct daemon *d, const struct testapi_plan *p,
			  struct dplan *n)
{
	const char *host = p->host ? p->host : d->host;
	size_t cnt = 0;

	for (size_t i = 0; i < p->n_tests && cnt < DAEMON_MAX_PLAN; i++) {
		if (net_plan_entry(d, host, &p->tests[i], &n[cnt]))
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
	net_plan_keys(d, p);
	psched_pause(&d->sched, PSCHED_PAUSE_PLAN, p->paused);
	pthread_mutex_lock(&d->lock);
	memcpy(d->plan, n, cnt * sizeof(*n));
	d->n_plan = cnt;
	d->have_plan = true;
	d->plan_stale = false;
	d->plan_period = p->period_seconds;
	d->plan_refresh = p->refresh_seconds;
	pthread_mutex_unlock(&d->lock);
	pthread_cond_signal(&d->wake);
	log_debug("plan: %zu test(s)", cnt);
}

/* Replace the plan with the collector's answer, keeping what ran. */
static int net_plan_parse(struct daemon *d, const char *body, size_t len)
{
	struct dplan *n = calloc(DAEMON_MAX_PLAN, sizeof(*n));
	struct testapi_plan *p = NULL;
	char err[256];
	int ret = n ? testapi_plan_decode(body, len, &p, err, sizeof(err))
		    : -ENOMEM;

	if (ret == -EINVAL) {
		log_err("plan: not a plan (%s)", err);
		ret = -EPROTO;
	}
	if (!ret) {
		net_plan_notes(p);
		net_plan_take(d, p, n);
	}
	testapi_plan_free(p);
	free(n);
	return ret;
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
	int ret = testapi_results_begin(b, d->host);

	for (size_t i = 0; !ret && i < n; i++) {
		char *data;
		size_t len;

		if (spool_read(d->spool, ids[i], &data, &len))
			continue;
		ret = testapi_results_item(b, data, len);
		free(data);
	}
	if (!ret)
		ret = testapi_results_end(b, dr.spool_full, dr.expired);
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
