// SPDX-License-Identifier: MIT
/*
 * The health verdict's reasons and its sticky window: see health.h. Each
 * builder turns the facts of one port, device, counter, suspect or
 * regression into at most one reason with a line of text and a JSON
 * object of evidence; health_merge() applies the quiet window.
 */
#include "health.h"
#include "vec.h"
#include "baseline.h"
#include "counters.h"
#include "report.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name, *key;
} health_kinds[HK_COUNT] = {
	[HK_PORT_DOWN] = {"port_down", "port_down"},
	[HK_LINK_DEGRADED] = {"link_degraded", "link_degraded"},
	[HK_PCIE_DEGRADED] = {"pcie_degraded", "pcie_degraded"},
	[HK_AER_FATAL] = {"aer_fatal", "aer_fatal"},
	[HK_SUSPECT_BANDWIDTH] = {"suspect", "suspect_bandwidth"},
	[HK_SUSPECT_LATENCY] = {"suspect", "suspect_latency"},
	[HK_REGRESSION] = {"regression", "regression"},
	[HK_LINK_DOWNED] = {"link_downed", "link_downed"},
	[HK_CARRIER_CHANGES] = {"carrier_changes", "carrier_changes"},
	[HK_LINK_ERROR_RECOVERY] = {"link_error_recovery",
				    "link_error_recovery"},
	[HK_SYMBOL_ERROR] = {"symbol_error", "symbol_error"},
	[HK_BUFFER_OVERRUN] = {"buffer_overrun", "buffer_overrun"},
	[HK_COUNTER_SATURATED] = {"counter_saturated", "counter_saturated"},
};

const struct health_counter health_counters[] = {
	{HK_LINK_DOWNED, CSRC_IB, "link_downed"},
	{HK_CARRIER_CHANGES, CSRC_NET, "carrier_changes"},
	{HK_LINK_ERROR_RECOVERY, CSRC_IB, "link_error_recovery"},
	{HK_SYMBOL_ERROR, CSRC_IB, "symbol_error"},
	{HK_BUFFER_OVERRUN, CSRC_IB, "excessive_buffer_overrun_errors"},
};
const size_t health_n_counters =
	sizeof(health_counters) / sizeof(health_counters[0]);

static const char *const health_levels[] = {"healthy", "degraded", "failed"};

const char *health_kind_name(enum health_kind k)
{
	return k < HK_COUNT ? health_kinds[k].name : "?";
}

const char *health_kind_key(enum health_kind k)
{
	return k < HK_COUNT ? health_kinds[k].key : "?";
}

const char *health_level_name(int level)
{
	return level >= 0 && level <= HEALTH_FAILED ? health_levels[level]
						    : "unknown";
}

int health_level_parse(const char *text, int *out)
{
	if (!text)
		return -EINVAL;
	if (!strcmp(text, "ignore")) {
		*out = HEALTH_HEALTHY;
		return 0;
	}
	for (int i = 0; i <= HEALTH_FAILED; i++)
		if (!strcmp(text, health_levels[i])) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

int health_opts_check(struct health_opts *o, char *err, size_t errlen)
{
	for (int k = 0; k < HK_COUNT; k++) {
		if (!health_level_parse(o->level_text[k], &o->level[k]))
			continue;
		snprintf(err, errlen,
			 "[health] %s: '%s' is not one of failed, degraded, "
			 "ignore",
			 health_kind_key(k),
			 o->level_text[k] ? o->level_text[k] : "");
		return -EINVAL;
	}
	return 0;
}

/* ---- the list ---- */

void health_list_free(struct health_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].evidence);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int health_list_level(const struct health_list *l)
{
	int level = HEALTH_HEALTHY;

	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].level > level)
			level = l->v[i].level;
	return level;
}

struct health_reason *health_list_add(struct health_list *l)
{
	if (vec_grow(&l->v, &l->cap, l->n, sizeof(*l->v)))
		return NULL;
	memset(&l->v[l->n], 0, sizeof(l->v[0]));
	return &l->v[l->n++];
}

static const struct health_reason *list_find(const struct health_list *l,
					     const char *key)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, key))
			return &l->v[i];
	return NULL;
}

int health_merge(struct health_list *cur, struct health_list *old, double now,
		 double quiet)
{
	size_t n_cur = cur->n;

	for (size_t i = 0; i < n_cur; i++) {
		const struct health_reason *o = list_find(old, cur->v[i].key);

		cur->v[i].first_seen = o ? o->first_seen : now;
		cur->v[i].last_seen = now;
		cur->v[i].active = 1;
		cur->v[i].dirty = 1;
	}
	for (size_t i = 0; i < old->n; i++) {
		struct health_reason *o = &old->v[i], *r;
		int seen = 0;

		for (size_t j = 0; j < n_cur && !seen; j++)
			seen = !strcmp(cur->v[j].key, o->key);
		if (seen || !(now - o->last_seen < quiet))
			continue;
		r = health_list_add(cur);
		if (!r)
			return -ENOMEM;
		*r = *o;
		r->evidence = strdup(o->evidence ? o->evidence : "{}");
		if (!r->evidence) {
			cur->n--;
			return -ENOMEM;
		}
		r->dirty = o->active != 0;
		r->active = 0;
	}
	return health_list_level(cur);
}

uint64_t health_increase(uint64_t then, uint64_t now)
{
	return now >= then ? now - then : now;
}

/* ---- building one reason ---- */

/*
 * Append a reason of kind @k at its configured level (nothing when it
 * is ignored); @ev (a new JSON object, taken over) its evidence; the
 * text from @fmt. *@out (may be NULL) gets the reason.
 */
static int add(const struct health_opts *o, struct health_list *l,
	       enum health_kind k, const char *device, int port, json_t *ev,
	       const char *key, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));

static int add(const struct health_opts *o, struct health_list *l,
	       enum health_kind k, const char *device, int port, json_t *ev,
	       const char *key, const char *fmt, ...)
{
	struct health_reason *r;
	va_list ap;
	int ret = 0;

	if (!ev)
		return -ENOMEM;
	if (o->level[k] == HEALTH_HEALTHY)
		goto out;
	r = health_list_add(l);
	if (!r ||
	    !(r->evidence = json_dumps(ev, JSON_COMPACT | JSON_SORT_KEYS))) {
		if (r)
			l->n--;
		ret = -ENOMEM;
		goto out;
	}
	r->kind = k;
	r->level = o->level[k];
	snprintf(r->key, sizeof(r->key), "%s", key);
	snprintf(r->device, sizeof(r->device), "%s", device ? device : "");
	r->port = port;
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
out:
	json_decref(ev);
	return ret;
}

/* bytes/s as the text shows a link rate: Gb/s, as sysfs says it. */
static double gbits(int64_t bytes)
{
	return (double)bytes * 8 / 1e9;
}

static int port_down(const struct health_opts *o, const struct health_port *p,
		     struct health_list *l)
{
	char key[HEALTH_KEY_MAX];
	int missing = p->missing_since >= 0;

	snprintf(key, sizeof(key), "port_down/%s/%d", p->device, p->port);
	if (missing)
		return add(o, l, HK_PORT_DOWN, p->device, p->port,
			   json_pack("{s:s, s:f, s:f}", "state", "missing",
				     "missing_since", p->missing_since,
				     "active_seen", p->active_seen),
			   key,
			   "%s/%d is gone from the host's reports (it was "
			   "ACTIVE)",
			   p->device, p->port);
	return add(
		o, l, HK_PORT_DOWN, p->device, p->port,
		json_pack("{s:s, s:s, s:i, s:i, s:f, s:f}", "state",
			  report_port_state_name(p->state), "phys_state",
			  report_phys_state_name(p->phys_state), "state_id",
			  p->state, "phys_state_id", p->phys_state,
			  "active_seen", p->active_seen, "down_since",
			  p->down_since >= 0 ? p->down_since : p->active_seen),
		key, "%s/%d port down: %s, %s (it was ACTIVE)", p->device,
		p->port, report_port_state_name(p->state),
		report_phys_state_name(p->phys_state));
}

int health_port_reasons(const struct health_opts *o,
			const struct health_port *p, struct health_list *l)
{
	int active = report_port_up(p->state);
	char key[HEALTH_KEY_MAX];
	int ret = 0;

	if (p->active_seen >= 0 && (p->missing_since >= 0 || !active))
		return port_down(o, p, l);
	if (!active)
		return 0;
	if (p->rate_bytes >= 0 && p->best_rate > p->rate_bytes) {
		snprintf(key, sizeof(key), "link_degraded/%s/%d/rate",
			 p->device, p->port);
		ret = add(o, l, HK_LINK_DEGRADED, p->device, p->port,
			  json_pack("{s:I, s:I}", "rate_bytes_per_second",
				    (json_int_t)p->rate_bytes,
				    "best_rate_bytes_per_second",
				    (json_int_t)p->best_rate),
			  key,
			  "%s/%d runs at %g Gb/s, below the %g Gb/s it ran at",
			  p->device, p->port, gbits(p->rate_bytes),
			  gbits(p->best_rate));
	}
	if (!ret && p->switch_degraded && p->switch_desc) {
		snprintf(key, sizeof(key), "link_degraded/%s/%d/switch",
			 p->device, p->port);
		ret = add(o, l, HK_LINK_DEGRADED, p->device, p->port,
			  json_pack("{s:s, s:s, s:i}", "degraded",
				    p->switch_degraded, "switch",
				    p->switch_desc, "switch_port",
				    p->switch_port),
			  key, "%s/%d link degraded at switch %s port %d: %s",
			  p->device, p->port, p->switch_desc, p->switch_port,
			  p->switch_degraded);
	}
	return ret;
}

int health_pcie_reasons(const struct health_opts *o, const char *device,
			const struct report_pcie *pc, struct health_list *l)
{
	char key[HEALTH_KEY_MAX];
	int ret = 0;

	if (report_pcie_degraded(pc) == 1) {
		snprintf(key, sizeof(key), "pcie_degraded/%s", device);
		ret = add(o, l, HK_PCIE_DEGRADED, device, -1,
			  json_pack("{s:f, s:f, s:i, s:i}", "current_speed_gts",
				    pc->cur_speed_gts, "max_speed_gts",
				    pc->max_speed_gts, "current_width",
				    pc->cur_width, "max_width", pc->max_width),
			  key,
			  "%s PCIe link at %g GT/s x%d, below its %g GT/s x%d",
			  device, pc->cur_speed_gts, pc->cur_width,
			  pc->max_speed_gts, pc->max_width);
	}
	if (!ret && pc->aer_fatal > 0) {
		snprintf(key, sizeof(key), "aer_fatal/%s", device);
		ret = add(o, l, HK_AER_FATAL, device, -1,
			  json_pack("{s:I}", "aer_fatal",
				    (json_int_t)pc->aer_fatal),
			  key, "%s PCIe AER: %lld fatal error(s) since boot",
			  device, (long long)pc->aer_fatal);
	}
	return ret;
}

/* Where a counter was read, for the key and the text. */
static void counter_where(const struct health_count *c, char *key, size_t klen,
			  char *at, size_t alen, const char *what)
{
	if (c->sw_guid) {
		snprintf(key, klen, "%s/%s/%d/switch/%s/%d", what, c->device,
			 c->port, c->sw_guid, c->sw_port);
		snprintf(at, alen, " at switch %s port %d",
			 c->sw_desc ? c->sw_desc : c->sw_guid, c->sw_port);
	} else {
		snprintf(key, klen, "%s/%s/%d", what, c->device, c->port);
		at[0] = '\0';
	}
}

static json_t *counter_evidence(const struct health_count *c, json_t *o)
{
	if (o && c->sw_guid &&
	    (json_object_set_new(o, "switch_guid", json_string(c->sw_guid)) ||
	     json_object_set_new(o, "switch",
				 json_string(c->sw_desc ? c->sw_desc : "")) ||
	     json_object_set_new(o, "switch_port", json_integer(c->sw_port)))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int health_counter_reason(const struct health_opts *o,
			  const struct health_count *c, struct health_list *l)
{
	const struct counter_def *def = counters_lookup(CSRC_IB, c->name);
	const struct health_rule *rule = &o->rule[c->kind];
	uint64_t inc = health_increase(c->then, c->now);
	char key[HEALTH_KEY_MAX], at[HEALTH_TEXT_MAX / 2];

	if (def && def->width && counters_saturated(def, c->now)) {
		counter_where(c, key, sizeof(key), at, sizeof(at), "saturated");
		snprintf(key + strlen(key), sizeof(key) - strlen(key), "/%s",
			 c->name);
		return add(
			o, l, HK_COUNTER_SATURATED, c->device, c->port,
			counter_evidence(c, json_pack("{s:s, s:I}", "counter",
						      c->name, "value",
						      (json_int_t)c->now)),
			key,
			"%s/%d %s saturated at %llu%s: its errors no longer "
			"show (reset it: perfquery -R)",
			c->device, c->port, c->name, (unsigned long long)c->now,
			at);
	}
	if (inc <= (uint64_t)rule->max)
		return 0;
	counter_where(c, key, sizeof(key), at, sizeof(at),
		      health_kind_name(c->kind));
	return add(o, l, c->kind, c->device, c->port,
		   counter_evidence(
			   c, json_pack("{s:s, s:I, s:f, s:I, s:I}", "counter",
					c->name, "increase", (json_int_t)inc,
					"seconds", c->seconds, "max",
					(json_int_t)rule->max, "window_seconds",
					(json_int_t)rule->window)),
		   key, "%s/%d %s +%llu within %lld s%s (more than %lld)",
		   c->device, c->port, c->name, (unsigned long long)inc,
		   rule->window, at, rule->max);
}

/* A figure as the text shows it: GB/s or microseconds. */
static void figure(char *out, size_t len, const char *metric, double v)
{
	if (baseline_metric_of(metric) == BASELINE_LATENCY)
		snprintf(out, len, "%.2f us", v * 1e6);
	else
		snprintf(out, len, "%.1f GB/s", v / 1e9);
}

int health_suspect_reason(const struct health_opts *o,
			  const struct health_suspect *s, struct health_list *l)
{
	enum health_kind k = baseline_metric_of(s->metric) == BASELINE_LATENCY
				     ? HK_SUSPECT_LATENCY
				     : HK_SUSPECT_BANDWIDTH;
	int dev = !strcmp(s->kind, "device");
	char key[HEALTH_KEY_MAX], what[96], fig[32], base[32];

	snprintf(key, sizeof(key), "suspect/%s/%s/%d/%s/%s", s->kind, s->device,
		 dev ? 0 : s->port, s->profile, s->metric);
	if (dev)
		snprintf(what, sizeof(what), "%s (the HCA)", s->device);
	else
		snprintf(what, sizeof(what), "%s/%d", s->device, s->port);
	figure(fig, sizeof(fig), s->metric, s->figure);
	figure(base, sizeof(base), s->metric, s->baseline);
	return add(o, l, k, s->device, dev ? -1 : s->port,
		   json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:I, s:I, "
			     "s:I, s:I}",
			     "element", s->kind, "profile", s->profile,
			     "metric", s->metric, "since", s->since, "figure",
			     s->figure, "baseline", s->baseline, "worst",
			     s->worst, "bad_results",
			     (json_int_t)s->bad_results, "judged_results",
			     (json_int_t)s->judged_results, "peers_bad",
			     (json_int_t)s->peers_bad, "peers_exonerating",
			     (json_int_t)s->peers_exonerating),
		   key,
		   "%s suspect for %s %s: %s against a baseline of %s (%lld "
		   "bad of %lld results, %lld peers)",
		   what, s->profile, s->metric, fig, base, s->bad_results,
		   s->judged_results, s->peers_bad);
}

int health_regression_reason(const struct health_opts *o,
			     const struct health_regression *r,
			     struct health_list *l)
{
	char key[HEALTH_KEY_MAX], fig[32], base[32];

	snprintf(key, sizeof(key), "regression/%lld", r->id);
	figure(fig, sizeof(fig), r->metric, r->figure);
	figure(base, sizeof(base), r->metric, r->baseline);
	return add(o, l, HK_REGRESSION, r->local_device, r->local_port,
		   json_pack("{s:I, s:s, s:s, s:i, s:s, s:s, s:f, s:f, s:f, "
			     "s:f}",
			     "regression", (json_int_t)r->id, "peer_host",
			     r->peer_host, "peer_device", r->peer_device,
			     "peer_port", r->peer_port, "profile", r->profile,
			     "metric", r->metric, "opened", r->opened, "figure",
			     r->figure, "baseline", r->baseline, "last",
			     r->last),
		   key,
		   "%s/%d <-> %s %s/%d %s %s regression: %s against a "
		   "baseline of %s",
		   r->local_device, r->local_port, r->peer_host, r->peer_device,
		   r->peer_port, r->profile, r->metric, fig, base);
}
