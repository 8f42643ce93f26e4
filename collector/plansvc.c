// SPDX-License-Identifier: MIT
/*
 * The plan service (plansvc.h): glue between the store (registered
 * probes in, plan_entry out) and the pure planner, and the JSON answers
 * of the plan and coverage endpoints (docs/api.md).
 */
#include "plansvc.h"
#include "log.h"
#include "store_tests.h"
#include "ticket.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct plansvc {
	struct plansvc_opts o;
	struct tprobes *probes;
	struct planner_probe *in; /* the probes planned (not paused) */
	size_t n_in;
	struct planner_plan *plan;
	double period_start, planned_at;
	int dirty;
};

int plansvc_new(const struct plansvc_opts *o, struct plansvc **out)
{
	struct plansvc *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return -ENOMEM;
	ps->o = *o;
	*out = ps;
	return 0;
}

static void plansvc_drop(struct plansvc *ps)
{
	planner_plan_free(ps->plan);
	store_probes_free(ps->probes);
	free(ps->in);
	ps->plan = NULL;
	ps->probes = NULL;
	ps->in = NULL;
	ps->n_in = 0;
}

void plansvc_free(struct plansvc *ps)
{
	if (!ps)
		return;
	plansvc_drop(ps);
	free(ps);
}

void plansvc_touch(struct plansvc *ps)
{
	ps->dirty = 1;
}

void plansvc_invalidate(struct plansvc *ps)
{
	plansvc_drop(ps);
}

static int plansvc_replan(struct plansvc *ps, struct store *st, double now,
			  unsigned long long period)
{
	const struct planner_opts *po = &ps->o.planner;
	double start = (double)period * po->period;
	struct timespec t0, t1;
	unsigned first;
	int ret;

	plansvc_drop(ps);
	ret = store_probes_load(st, ps->o.group_label, ps->o.rail_label,
				&ps->probes);
	if (ret)
		return ret;
	ps->in = calloc(ps->probes->n + 1, sizeof(*ps->in));
	if (!ps->in)
		return -ENOMEM;
	for (size_t i = 0; i < ps->probes->n; i++)
		if (!ps->probes->paused[i])
			ps->in[ps->n_in++] = ps->probes->p[i];
	first = (unsigned)floor((now - start) / po->period *
				planner_rounds(po));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = planner_run(po, ps->in, ps->n_in, period, first, &ps->plan);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!ret)
		ret = store_plan_save(st, ps->plan, ps->in, start);
	if (ret) {
		plansvc_drop(ps);
		return ret;
	}
	ps->period_start = start;
	ps->planned_at = now;
	ps->dirty = 0;
	log_info("plan: period %llu, %zu probes, %zu ports, %zu tests, %zu "
		 "unplaced, %zu/%zu group pairs, %.1f ms",
		 period, ps->n_in, ps->plan->ports, ps->plan->n_tests,
		 ps->plan->unplaced, ps->plan->group_pairs_planned,
		 ps->plan->group_pairs,
		 (t1.tv_sec - t0.tv_sec) * 1e3 +
			 (t1.tv_nsec - t0.tv_nsec) / 1e6);
	return 0;
}

static int plansvc_ensure(struct plansvc *ps, struct store *st, double now)
{
	unsigned long long period =
		(unsigned long long)floor(now / ps->o.planner.period);

	if (ps->plan && ps->plan->period == period &&
	    (!ps->dirty || now - ps->planned_at < ps->o.replan_interval))
		return 0;
	return plansvc_replan(ps, st, now, period);
}

static int plansvc_cmp_host(const void *key, const void *elem)
{
	return strcmp(key, ((const struct planner_probe *)elem)->host);
}

static uint64_t plansvc_ms(double t)
{
	return (uint64_t)llround(t * 1000);
}

/*
 * The initiator's ticket for test @t with id @id, added to @o: its
 * period and slot in milliseconds (the claims the initiator sends) and
 * the ticket itself, the MAC key of the test's REQUEST. No master key, or
 * names a ticket cannot hold: no ticket (the test then needs the secret).
 */
static void plansvc_ticket(const struct plansvc *ps,
			   const struct planner_test *t, const char *id,
			   json_t *o)
{
	const struct planner_probe *a = &ps->in[t->a], *b = &ps->in[t->b];
	struct ticket_claims c = {.initiator_port = a->ports[t->a_port].port,
				  .responder_port = b->ports[t->b_port].port,
				  .period = ps->plan->period};
	uint8_t key[TICKET_KEY_LEN], tk[TICKET_KEY_LEN];
	char hex[2 * TICKET_KEY_LEN + 1];

	if (!ps->o.ticket_key)
		return;
	snprintf(c.plan_id, sizeof(c.plan_id), "%s", id);
	snprintf(c.initiator, sizeof(c.initiator), "%s", a->host);
	snprintf(c.initiator_device, sizeof(c.initiator_device), "%s",
		 a->ports[t->a_port].device);
	snprintf(c.responder_device, sizeof(c.responder_device), "%s",
		 b->ports[t->b_port].device);
	c.not_before_ms = plansvc_ms(ps->period_start + t->not_before);
	c.deadline_ms = plansvc_ms(ps->period_start + t->deadline);
	if (ticket_responder_key(ps->o.ticket_key, ps->o.ticket_key_len,
				 b->host, c.period, key) ||
	    ticket_mint(key, &c, tk))
		return;
	ticket_hex(tk, sizeof(tk), hex);
	json_object_set_new(o, "ticket",
			    json_pack("{s:I, s:I, s:I, s:s}", "period",
				      (json_int_t)c.period, "not_before_ms",
				      (json_int_t)c.not_before_ms,
				      "deadline_ms", (json_int_t)c.deadline_ms,
				      "key", hex));
	explicit_bzero(key, sizeof(key));
	explicit_bzero(tk, sizeof(tk));
	explicit_bzero(hex, sizeof(hex));
}

static json_t *plansvc_test_json(const struct plansvc *ps,
				 const struct planner_test *t)
{
	const struct planner_probe *a = &ps->in[t->a], *b = &ps->in[t->b];
	const struct planner_port *pa = &a->ports[t->a_port];
	const struct planner_port *pb = &b->ports[t->b_port];
	char id[64];
	json_t *o;

	snprintf(id, sizeof(id), "p%.0f-%016llx", ps->period_start,
		 (unsigned long long)t->key);
	o = json_pack("{s:s, s:s, s:{s:s, s:i}, s:{s:s, s:s, s:i, s:s, "
		      "s:i}, s:f, s:f}",
		      "id", id, "profile", t->profile, "local", "device",
		      pa->device, "port", (int)pa->port, "peer", "host",
		      b->host, "address", b->address, "port", (int)b->resp_port,
		      "device", pb->device, "port_num", (int)pb->port,
		      "not_before", ps->period_start + t->not_before,
		      "deadline", ps->period_start + t->deadline);
	if (o)
		plansvc_ticket(ps, t, id, o);
	return o;
}

/*
 * @host's own responder keys, this period's and the next's: the plan a
 * responder fetched before the period turned still checks the tickets
 * initiators get after it.
 */
static json_t *plansvc_keys_json(const struct plansvc *ps, const char *host)
{
	json_t *keys = json_array();
	uint8_t key[TICKET_KEY_LEN];
	char hex[2 * TICKET_KEY_LEN + 1];

	for (uint64_t p = ps->plan->period;
	     keys && ps->o.ticket_key && p <= ps->plan->period + 1; p++) {
		if (ticket_responder_key(ps->o.ticket_key, ps->o.ticket_key_len,
					 host, p, key))
			break;
		ticket_hex(key, sizeof(key), hex);
		json_array_append_new(keys,
				      json_pack("{s:I, s:s}", "period",
						(json_int_t)p, "key", hex));
	}
	explicit_bzero(key, sizeof(key));
	explicit_bzero(hex, sizeof(hex));
	return keys;
}

/* The tests @host initiates, appended to @tests. */
static int plansvc_host_tests(const struct plansvc *ps, const char *host,
			      json_t *tests)
{
	const struct planner_probe *p = bsearch(
		host, ps->in, ps->n_in, sizeof(*ps->in), plansvc_cmp_host);
	const struct planner_plan *pl = ps->plan;
	size_t lo = 0, hi = pl->n_tests;
	uint32_t idx;

	if (!p)
		return 0;
	idx = (uint32_t)(p - ps->in);
	while (lo < hi) { /* first test with a >= idx */
		size_t mid = lo + (hi - lo) / 2;

		if (pl->tests[mid].a < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < pl->n_tests && pl->tests[lo].a == idx; lo++)
		if (json_array_append_new(
			    tests, plansvc_test_json(ps, &pl->tests[lo])))
			return -ENOMEM;
	return 0;
}

static int plansvc_dump(json_t *o, char **out)
{
	*out = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return *out ? 0 : -ENOMEM;
}

int plansvc_plan_json(struct plansvc *ps, struct store *st, const char *host,
		      double now, char **out)
{
	int paused, ret = plansvc_ensure(ps, st, now);
	json_t *o, *tests;

	*out = NULL;
	if (ret)
		return ret;
	paused = store_paused(st, host);
	if (paused < 0)
		return paused;
	tests = json_array();
	o = json_pack("{s:i, s:s, s:f, s:f, s:b, s:o, s:o}", "version", 1,
		      "host", host, "period_seconds", ps->o.planner.period,
		      "period_start", ps->period_start, "paused", paused,
		      "tests", tests, "responder_keys",
		      plansvc_keys_json(ps, host));
	if (o && !paused && plansvc_host_tests(ps, host, tests)) {
		json_decref(o);
		return -ENOMEM;
	}
	return plansvc_dump(o, out);
}

int plansvc_coverage_json(struct plansvc *ps, struct store *st, double now,
			  char **out)
{
	json_t *o = NULL;
	int ret = plansvc_ensure(ps, st, now);

	*out = NULL;
	if (!ret)
		ret = store_coverage(st, ps->plan->period,
				     now - ps->o.planner.period, &o);
	if (ret)
		return ret;
	json_object_set_new(o, "period_seconds",
			    json_real(ps->o.planner.period));
	json_object_set_new(o, "period_start", json_real(ps->period_start));
	json_object_set_new(o, "ports_planned",
			    json_integer((json_int_t)ps->plan->ports));
	json_object_set_new(o, "tests_unplaced",
			    json_integer((json_int_t)ps->plan->unplaced));
	json_object_set_new(o, "group_pairs",
			    json_integer((json_int_t)ps->plan->group_pairs));
	json_object_set_new(
		o, "group_pairs_planned",
		json_integer((json_int_t)ps->plan->group_pairs_planned));
	return plansvc_dump(o, out);
}
