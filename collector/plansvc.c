// SPDX-License-Identifier: MIT
/*
 * The plan service (plansvc.h): glue between the store (registered
 * probes in, plan_entry out) and the pure planner, and the JSON answers
 * of the plan and coverage endpoints (docs/api.md).
 */
#include "plansvc.h"
#include "log.h"
#include "store_tests.h"
#include "testapi.h"
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

/* What one planned test's entry owns until the plan is encoded. */
struct plansvc_text {
	char id[64];
	char key[2 * TICKET_KEY_LEN + 1]; /* the ticket: a secret */
};

/*
 * The initiator's ticket for test @t, into @e: its period and slot in
 * milliseconds (the claims the initiator sends) and the ticket itself, the
 * MAC key of the test's REQUEST, in hex in @x->key. No master key, or
 * names a ticket cannot hold: no ticket (the test then needs the secret).
 */
static void plansvc_ticket(const struct plansvc *ps,
			   const struct planner_test *t,
			   struct testapi_plan_test *e, struct plansvc_text *x)
{
	const struct planner_probe *a = &ps->in[t->a], *b = &ps->in[t->b];
	struct ticket_claims c = {.initiator_port = a->ports[t->a_port].port,
				  .responder_port = b->ports[t->b_port].port,
				  .period = ps->plan->period};
	uint8_t key[TICKET_KEY_LEN], tk[TICKET_KEY_LEN];

	if (!ps->o.ticket_key)
		return;
	snprintf(c.plan_id, sizeof(c.plan_id), "%s", x->id);
	snprintf(c.initiator, sizeof(c.initiator), "%s", a->host);
	snprintf(c.initiator_device, sizeof(c.initiator_device), "%s",
		 a->ports[t->a_port].device);
	snprintf(c.responder_device, sizeof(c.responder_device), "%s",
		 b->ports[t->b_port].device);
	c.not_before_ms = plansvc_ms(ps->period_start + t->not_before);
	c.deadline_ms = plansvc_ms(ps->period_start + t->deadline);
	if (!ticket_responder_key(ps->o.ticket_key, ps->o.ticket_key_len,
				  b->host, c.period, key) &&
	    !ticket_mint(key, &c, tk)) {
		ticket_hex(tk, sizeof(tk), x->key);
		e->has_ticket = 1;
		e->ticket = (struct testapi_ticket){
			.period = (int64_t)c.period,
			.not_before_ms = (int64_t)c.not_before_ms,
			.deadline_ms = (int64_t)c.deadline_ms,
			.key = x->key};
	}
	explicit_bzero(key, sizeof(key));
	explicit_bzero(tk, sizeof(tk));
}

/* Planned test @t as the plan entry @e; its strings in @x. */
static void plansvc_entry(const struct plansvc *ps,
			  const struct planner_test *t,
			  struct testapi_plan_test *e, struct plansvc_text *x)
{
	const struct planner_probe *a = &ps->in[t->a], *b = &ps->in[t->b];
	const struct planner_port *pa = &a->ports[t->a_port];
	const struct planner_port *pb = &b->ports[t->b_port];

	snprintf(x->id, sizeof(x->id), "p%.0f-%016llx", ps->period_start,
		 (unsigned long long)t->key);
	/* The encoder only reads these (testapi.h). */
	*e = (struct testapi_plan_test){
		.id = x->id,
		.profile = (char *)t->profile,
		.local_device = (char *)pa->device,
		.local_port = pa->port,
		.peer_host = (char *)b->host,
		.peer_address = (char *)b->address,
		.peer_port = b->resp_port,
		.peer_device = (char *)pb->device,
		.peer_port_num = pb->port,
		.not_before = ps->period_start + t->not_before,
		.deadline = ps->period_start + t->deadline,
	};
	plansvc_ticket(ps, t, e, x);
}

/*
 * @host's own responder keys, this period's and the next's, into @p (hex
 * in @hex): the plan a responder fetched before the period turned still
 * checks the tickets initiators get after it.
 */
static void plansvc_keys(const struct plansvc *ps, const char *host,
			 struct testapi_plan *p,
			 char (*hex)[2 * TICKET_KEY_LEN + 1])
{
	uint8_t key[TICKET_KEY_LEN];

	for (uint64_t k = ps->plan->period;
	     ps->o.ticket_key && k <= ps->plan->period + 1; k++) {
		if (ticket_responder_key(ps->o.ticket_key, ps->o.ticket_key_len,
					 host, k, key))
			break;
		ticket_hex(key, sizeof(key), hex[p->n_keys]);
		p->keys[p->n_keys].period = (int64_t)k;
		p->keys[p->n_keys].key = hex[p->n_keys];
		p->n_keys++;
	}
	explicit_bzero(key, sizeof(key));
}

/* The range [*lo, *hi) of the plan's tests that @host initiates. */
static void plansvc_host_tests(const struct plansvc *ps, const char *host,
			       size_t *lo, size_t *hi)
{
	const struct planner_probe *p = bsearch(
		host, ps->in, ps->n_in, sizeof(*ps->in), plansvc_cmp_host);
	const struct planner_plan *pl = ps->plan;
	uint32_t idx;

	*lo = *hi = 0;
	if (!p)
		return;
	idx = (uint32_t)(p - ps->in);
	*hi = pl->n_tests;
	while (*lo < *hi) { /* first test with a >= idx */
		size_t mid = *lo + (*hi - *lo) / 2;

		if (pl->tests[mid].a < idx)
			*lo = mid + 1;
		else
			*hi = mid;
	}
	for (*hi = *lo; *hi < pl->n_tests && pl->tests[*hi].a == idx; (*hi)++)
		;
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
	struct testapi_key keys[2];
	char hex[2][2 * TICKET_KEY_LEN + 1];
	struct testapi_plan p = {.host = (char *)host, .keys = keys};
	struct plansvc_text *x = NULL;
	size_t lo = 0, hi = 0;
	int ret = plansvc_ensure(ps, st, now);

	*out = NULL;
	if (ret)
		return ret;
	p.paused = store_paused(st, host);
	if (p.paused < 0)
		return p.paused;
	p.period_seconds = ps->o.planner.period;
	p.period_start = ps->period_start;
	if (!p.paused)
		plansvc_host_tests(ps, host, &lo, &hi);
	p.tests = calloc(hi - lo + 1, sizeof(*p.tests));
	x = calloc(hi - lo + 1, sizeof(*x));
	ret = p.tests && x ? 0 : -ENOMEM;
	for (size_t i = lo; !ret && i < hi; i++)
		plansvc_entry(ps, &ps->plan->tests[i], &p.tests[p.n_tests++],
			      &x[i - lo]);
	if (!ret) {
		plansvc_keys(ps, host, &p, hex);
		ret = testapi_plan_encode(&p, out);
	}
	if (x)
		explicit_bzero(x, (hi - lo + 1) * sizeof(*x));
	explicit_bzero(hex, sizeof(hex));
	free(x);
	free(p.tests);
	return ret;
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
