// SPDX-License-Identifier: MIT
/*
 * The plan service (plansvc.h): glue between the store (registered
 * probes in, plan_entry out) and the pure planner, and the JSON answers
 * of the plan and coverage endpoints (docs/api.md).
 */
#include "plansvc.h"
#include "hex.h"
#include "now.h"
#include "log.h"
#include "store.h"
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
	double period_start, planned_at, confirmed_at;
	uint64_t ev_version; /* of the evidence the plan has seen */
	uint64_t lz_version; /* of the links needing confirmation */
	int dirty;
	/* Each planned probe's answer as it was last encoded (by index into
	 * in; NULL: not yet), until the plan or a pause changes: most plan
	 * requests are a copy (the answers hold tickets: zeroed when gone). */
	char **answers;
};

/* The routes one planning pass hands the planner (planner.h). */
struct plansvc_routes {
	struct planner_routes r;
	struct planner_flow *flows;
	struct planner_link *confirm;
};

/* The routes for this pass; r.net NULL when there are none. */
static int plansvc_routes_load(const struct plansvc *ps, struct store *st,
			       struct plansvc_routes *pr)
{
	const double *upd;
	int ret;

	memset(pr, 0, sizeof(*pr));
	if (!ps->o.routes || store_route_net(st, &pr->r.net, &upd))
		return 0; /* no tables: host-level inference only */
	pr->r.cover = ps->o.cover;
	ret = store_localize_flows(st, &pr->flows, &pr->r.n_flows);
	if (!ret)
		ret = store_localize_confirms(st, &pr->confirm,
					      &pr->r.n_confirm);
	pr->r.flows = pr->flows;
	pr->r.confirm = pr->confirm;
	return ret;
}

static void plansvc_routes_free(struct plansvc_routes *pr)
{
	free(pr->flows);
	free(pr->confirm);
	memset(pr, 0, sizeof(*pr));
}

int plansvc_new(const struct plansvc_opts *o, struct plansvc **out)
{
	struct plansvc *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return -ENOMEM;
	ps->o = *o;
	*out = ps;
	return 0;
}

/* Forget the encoded answers (the plan, a pause or the tickets changed). */
static void plansvc_forget(struct plansvc *ps)
{
	for (size_t i = 0; ps->answers && i < ps->n_in; i++)
		if (ps->answers[i]) {
			explicit_bzero(ps->answers[i], strlen(ps->answers[i]));
			free(ps->answers[i]);
			ps->answers[i] = NULL;
		}
}

static void plansvc_drop(struct plansvc *ps)
{
	plansvc_forget(ps);
	free(ps->answers);
	ps->answers = NULL;
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
	plansvc_forget(ps); /* a pause shows at once, before the replan */
}

void plansvc_invalidate(struct plansvc *ps)
{
	plansvc_drop(ps);
}

/* ---- the evidence on the probes' ports (planner.h, confirmations) ---- */

static int plansvc_cmp_host(const void *key, const void *elem)
{
	return strcmp(key, ((const struct planner_probe *)elem)->host);
}

/* The (probe, port) of evidence entry @e in ps->in; 0, or -ENOENT. */
static int plansvc_where(const struct plansvc *ps,
			 const struct evidence_port *e, uint32_t *probe,
			 uint32_t *port)
{
	const struct planner_probe *p = bsearch(
		e->host, ps->in, ps->n_in, sizeof(*ps->in), plansvc_cmp_host);

	if (!p)
		return -ENOENT;
	*probe = (uint32_t)(p - ps->in);
	*port = PLANNER_DEVICE;
	for (uint32_t j = 0; e->port && j < p->n_ports; j++)
		if (p->ports[j].port == e->port &&
		    !strcmp(p->ports[j].device, e->device))
			*port = j;
	return e->port && *port == PLANNER_DEVICE ? -ENOENT : 0;
}

/* What one planning pass knows of the evidence; strings in @l. */
struct plansvc_ev {
	struct evidence_lists l;
	const char **good, **suspect; /* the ports' lists (planner.h) */
	struct planner_confirm *cf;
	size_t n_cf;
};

/* Each port that evidence entry @e names (a device: each of its ports):
 * @fn(@arg, flat port index). */
static void plansvc_targets(const struct plansvc *ps, const size_t *off,
			    const struct evidence_port *e,
			    void (*fn)(void *, size_t), void *arg)
{
	const struct planner_probe *pr;
	uint32_t p, q;

	if (plansvc_where(ps, e, &p, &q))
		return;
	pr = &ps->in[p];
	for (uint32_t j = 0; j < pr->n_ports; j++)
		if (q == PLANNER_DEVICE
			    ? !strcmp(pr->ports[j].device, e->device)
			    : j == q)
			fn(arg, off[p] + j);
}

struct plansvc_hang {
	size_t *cnt;	    /* per port: count, then the end of its list */
	const char **names; /* the lists, port after port */
	const char *name;   /* the profile being hung */
};

static void plansvc_count(void *arg, size_t f)
{
	((struct plansvc_hang *)arg)->cnt[f]++;
}

static void plansvc_put(void *arg, size_t f)
{
	struct plansvc_hang *h = arg;

	h->names[h->cnt[f]++] = h->name;
}

/*
 * Hang list @a's profiles on the ports they name as each port's good
 * list (@good) or suspect list; the lists go in *@names (freed by the
 * caller). Two passes over the list: count, then fill. Ports are mutable:
 * the store allocated them (store_probes_load).
 */
static int plansvc_hang(struct plansvc *ps, const struct evidence_port *a,
			size_t n, int good, const char ***names)
{
	size_t total = 0, used = 0, *off = calloc(ps->n_in + 1, sizeof(*off));
	struct plansvc_hang h = {0};

	for (size_t pi = 0; off && pi < ps->n_in; pi++) {
		off[pi] = total;
		total += ps->in[pi].n_ports;
	}
	h.cnt = off ? calloc(total + 1, sizeof(*h.cnt)) : NULL;
	for (size_t i = 0; h.cnt && i < n; i++)
		plansvc_targets(ps, off, &a[i], plansvc_count, &h);
	for (size_t f = 0; h.cnt && f < total; f++) {
		size_t k = h.cnt[f];

		h.cnt[f] = used; /* now where port f's list starts */
		used += k;
	}
	h.names = h.cnt ? calloc(used + 1, sizeof(*h.names)) : NULL;
	for (size_t i = 0; h.names && i < n; i++) {
		h.name = a[i].profile;
		plansvc_targets(ps, off, &a[i], plansvc_put, &h);
	}
	/* h.cnt[f] is now the end of port f's list; its start the one
	 * before it */
	for (size_t pi = 0, f = 0; h.names && pi < ps->n_in; pi++)
		for (size_t j = 0; j < ps->in[pi].n_ports; j++, f++) {
			struct planner_port *pt =
				(struct planner_port *)&ps->in[pi].ports[j];
			size_t begin = f ? h.cnt[f - 1] : 0;

			if (good) {
				pt->good = h.names + begin;
				pt->n_good = h.cnt[f] - begin;
			} else {
				pt->suspect = h.names + begin;
				pt->n_suspect = h.cnt[f] - begin;
			}
		}
	free(off);
	free(h.cnt);
	*names = h.names;
	return h.names ? 0 : -ENOMEM;
}

static void plansvc_ev_free(struct plansvc *ps, struct plansvc_ev *e)
{
	for (size_t pi = 0; pi < ps->n_in; pi++)
		for (size_t j = 0; j < ps->in[pi].n_ports; j++) {
			struct planner_port *pt =
				(struct planner_port *)&ps->in[pi].ports[j];

			pt->good = pt->suspect = NULL;
			pt->n_good = pt->n_suspect = 0;
		}
	store_evidence_lists_free(&e->l);
	free(e->good);
	free(e->suspect);
	free(e->cf);
	memset(e, 0, sizeof(*e));
}

/* Load the evidence, hang it on the ports, list the confirmations. */
static int plansvc_ev_load(struct plansvc *ps, struct store *st, double now,
			   struct plansvc_ev *e)
{
	/* good recent history: judged good within two periods */
	int ret =
		store_evidence_lists(st, now - 2 * ps->o.planner.period, &e->l);

	if (ret)
		return ret;
	e->cf = calloc(e->l.n_confirm + 1, sizeof(*e->cf));
	ret = e->cf ? plansvc_hang(ps, e->l.good, e->l.n_good, 1, &e->good)
		    : -ENOMEM;
	if (!ret)
		ret = plansvc_hang(ps, e->l.suspect, e->l.n_suspect, 0,
				   &e->suspect);
	if (ret)
		return ret;
	for (size_t i = 0; i < e->l.n_confirm; i++) {
		const struct evidence_port *c = &e->l.confirm[i];
		struct planner_confirm *r = &e->cf[e->n_cf];

		if (plansvc_where(ps, c, &r->probe, &r->port))
			continue; /* paused or gone */
		r->device = c->device;
		r->profile = c->profile;
		e->n_cf++;
	}
	return 0;
}

/*
 * The first round a plan made @into seconds into its period may use: the
 * rounds still ahead, and none in the first plan_refresh seconds of the
 * period. A probe fetches its plan every plan_refresh seconds on its own
 * clock, so it may see the new period's plan that late: a test placed
 * earlier would pass its deadline unseen (a tenth of the tests at 2,000
 * hosts, bench/scale). Periods too short for that lead keep every round.
 */
static unsigned plansvc_first_round(const struct plansvc *ps, double into)
{
	const struct planner_opts *po = &ps->o.planner;
	unsigned rounds = planner_rounds(po);
	unsigned first = (unsigned)floor(into / po->period * rounds);
	unsigned lead = (unsigned)ceil(
		ps->o.plan_refresh / (po->period / rounds) - 1e-9);

	if (lead <= rounds / 2 && first < lead)
		first = lead;
	return first;
}

static int plansvc_replan(struct plansvc *ps, struct store *st, double now,
			  unsigned long long period)
{
	struct planner_opts opts = ps->o.planner, *po = &opts;
	double start = (double)period * po->period;
	uint64_t version = store_evidence_version(st);
	uint64_t lz_version = store_localize_version(st);
	struct plansvc_routes pr = {0};
	struct plansvc_ev ev = {0};
	double t0, t1;
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
	first = plansvc_first_round(ps, now - start);
	t0 = now_mono();
	ret = plansvc_ev_load(ps, st, now, &ev);
	if (!ret)
		ret = plansvc_routes_load(ps, st, &pr);
	opts.routes = pr.r.net ? &pr.r : NULL;
	if (!ret)
		ret = planner_run_confirm(po, ps->in, ps->n_in, period, first,
					  ev.cf, ev.n_cf, &ps->plan);
	plansvc_ev_free(ps, &ev);
	plansvc_routes_free(&pr);
	t1 = now_mono();
	if (!ret)
		ret = store_plan_save(st, ps->plan, ps->in, start);
	if (!ret)
		ret = store_localize_cover_save(st, period, &ps->plan->cover);
	if (ret) {
		plansvc_drop(ps);
		return ret;
	}
	ps->period_start = start;
	ps->planned_at = ps->confirmed_at = now;
	ps->ev_version = version;
	ps->lz_version = lz_version;
	ps->dirty = 0;
	log_info("plan: period %llu, %zu probes, %zu ports, %zu tests (%zu "
		 "confirmations), %zu unplaced, %zu/%zu group pairs, %.1f ms",
		 period, ps->n_in, ps->plan->ports, ps->plan->n_tests,
		 ps->plan->n_confirm, ps->plan->unplaced,
		 ps->plan->group_pairs_planned, ps->plan->group_pairs,
		 (t1 - t0) * 1e3);
	if (ps->plan->cover.routed)
		log_info("plan: period %llu, %zu of %zu links between switches "
			 "covered (%zu tests added, %zu steered); uncovered: "
			 "%zu duty_cycle, %zu no_route, %zu no_probe",
			 period, ps->plan->cover.n[PLANNER_COVERED],
			 ps->plan->cover.links, ps->plan->cover.added,
			 ps->plan->cover.steered,
			 ps->plan->cover.n[PLANNER_DUTY_CYCLE],
			 ps->plan->cover.n[PLANNER_NO_ROUTE],
			 ps->plan->cover.n[PLANNER_NO_PROBE]);
	return 0;
}

/*
 * Add the confirmation tests the evidence asks for to the current plan,
 * in rounds at least plan_refresh ahead (the initiators fetch it by
 * then). A failure leaves the plan as it was, but for tests appended.
 */
static int plansvc_confirm(struct plansvc *ps, struct store *st, double now)
{
	struct planner_opts opts = ps->o.planner, *po = &opts;
	uint64_t version = store_evidence_version(st);
	uint64_t lz_version = store_localize_version(st);
	size_t before = ps->plan->n_confirm;
	struct plansvc_routes pr = {0};
	struct plansvc_ev ev = {0};
	unsigned first =
		(unsigned)ceil((now + ps->o.plan_refresh - ps->period_start) /
			       ps->plan->round_seconds);
	int ret = plansvc_ev_load(ps, st, now, &ev);

	if (!ret)
		ret = plansvc_routes_load(ps, st, &pr);
	opts.routes = pr.r.net ? &pr.r : NULL;
	if (!ret && (ev.n_cf || pr.r.n_confirm) && first < ps->plan->rounds)
		ret = planner_confirm(po, ps->in, ps->n_in, ps->plan, first,
				      ev.cf, ev.n_cf);
	plansvc_ev_free(ps, &ev);
	plansvc_routes_free(&pr);
	if (!ret && ps->plan->n_confirm > before)
		ret = store_plan_add_confirm(st, ps->plan, ps->in,
					     ps->period_start);
	if (ret) {
		plansvc_drop(ps); /* replanned from scratch next time */
		return ret;
	}
	ps->confirmed_at = now;
	ps->ev_version = version;
	ps->lz_version = lz_version;
	if (ps->plan->n_confirm > before)
		plansvc_forget(ps);
	if (ps->plan->n_confirm > before)
		log_info("plan: period %llu, %zu confirmation test(s) added "
			 "(%zu in all, %zu unplaced)",
			 (unsigned long long)ps->plan->period,
			 ps->plan->n_confirm - before, ps->plan->n_confirm,
			 ps->plan->confirm_unplaced);
	return 0;
}

/* What the plan needs at @now before it answers: nothing, confirmation
 * tests added, or a new plan. */
enum plansvc_due { PLANSVC_FRESH, PLANSVC_CONFIRM, PLANSVC_REPLAN };

static enum plansvc_due plansvc_due(const struct plansvc *ps, struct store *st,
				    double now)
{
	unsigned long long period =
		(unsigned long long)floor(now / ps->o.planner.period);

	if (!ps->plan || ps->plan->period != period ||
	    (ps->dirty && now - ps->planned_at >= ps->o.replan_interval))
		return PLANSVC_REPLAN;
	if ((store_evidence_version(st) != ps->ev_version ||
	     store_localize_version(st) != ps->lz_version) &&
	    now - ps->confirmed_at >= ps->o.replan_interval)
		return PLANSVC_CONFIRM;
	return PLANSVC_FRESH;
}

static int plansvc_ensure(struct plansvc *ps, struct store *st, double now)
{
	switch (plansvc_due(ps, st, now)) {
	case PLANSVC_REPLAN:
		return plansvc_replan(
			ps, st, now,
			(unsigned long long)floor(now / ps->o.planner.period));
	case PLANSVC_CONFIRM:
		return plansvc_confirm(ps, st, now);
	default:
		return 0;
	}
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
		hex_encode(tk, sizeof(tk), x->key);
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
		.peer_tcp_port = b->resp_port,
		.peer_device = (char *)pb->device,
		.peer_hca_port = pb->port,
		.not_before = ps->period_start + t->not_before,
		.deadline = ps->period_start + t->deadline,
		.dlid = t->dlid,
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
		hex_encode(key, sizeof(key), hex[p->n_keys]);
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

/* @host's plan, as it is now, as JSON text in *@out. */
static int plansvc_encode(struct plansvc *ps, struct store *st,
			  const char *host, char **out)
{
	struct testapi_key keys[2];
	char hex[2][2 * TICKET_KEY_LEN + 1];
	struct testapi_plan p = {.host = (char *)host, .keys = keys};
	struct plansvc_text *x = NULL;
	size_t lo = 0, hi = 0;
	int ret;

	p.paused = store_paused(st, host);
	if (p.paused < 0)
		return p.paused;
	p.period_seconds = ps->o.planner.period;
	p.period_start = ps->period_start;
	p.refresh_seconds = ps->o.plan_refresh;
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

/* @host's plan, as it is now, as JSON text in *@out: a planned probe's
 * from its encoded answer when it has one. */
static int plansvc_answer(struct plansvc *ps, struct store *st,
			  const char *host, char **out)
{
	const struct planner_probe *p =
		ps->in ? bsearch(host, ps->in, ps->n_in, sizeof(*ps->in),
				 plansvc_cmp_host)
		       : NULL;
	size_t i = p ? (size_t)(p - ps->in) : 0;
	int ret;

	if (p && ps->answers && ps->answers[i]) {
		*out = strdup(ps->answers[i]);
		return *out ? 0 : -ENOMEM;
	}
	ret = plansvc_encode(ps, st, host, out);
	if (ret || !p)
		return ret;
	if (!ps->answers)
		ps->answers = calloc(ps->n_in + 1, sizeof(*ps->answers));
	if (ps->answers)
		ps->answers[i] = strdup(*out); /* NULL: encoded next time */
	return 0;
}

int plansvc_plan_json(struct plansvc *ps, struct store *st, const char *host,
		      double now, char **out)
{
	int ret = plansvc_ensure(ps, st, now);

	*out = NULL;
	return ret ? ret : plansvc_answer(ps, st, host, out);
}

int plansvc_plan_fresh(struct plansvc *ps, struct store *st, const char *host,
		       double now, char **out)
{
	*out = NULL;
	if (plansvc_due(ps, st, now) != PLANSVC_FRESH)
		return -EAGAIN;
	return plansvc_answer(ps, st, host, out);
}

int plansvc_coverage_json(struct plansvc *ps, struct store *st, double now,
			  char **out)
{
	json_t *o = NULL, *links = NULL;
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
	json_object_set_new(o, "tests_confirm",
			    json_integer((json_int_t)ps->plan->n_confirm));
	json_object_set_new(
		o, "confirm_unplaced",
		json_integer((json_int_t)ps->plan->confirm_unplaced));
	json_object_set_new(o, "group_pairs",
			    json_integer((json_int_t)ps->plan->group_pairs));
	json_object_set_new(
		o, "group_pairs_planned",
		json_integer((json_int_t)ps->plan->group_pairs_planned));
	ret = store_localize_cover_json(st, &ps->plan->cover, &links);
	if (!ret)
		json_object_set_new(o, "fabric_links", links);
	if (ret) {
		json_decref(o);
		return ret;
	}
	return plansvc_dump(o, out);
}
