// SPDX-License-Identifier: MIT
/*
 * This node's verdict (phealth.h): the collector's answer over libcurl
 * (push.h's GET), parsed with jansson; the sysfs fallback from a report
 * built as `report` builds it; the lines `ibpulse-probe health` prints.
 */
#include "phealth.h"
#include "report.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "push.h"

#define PHEALTH_MAX_ANSWER (1 << 20)
#define PHEALTH_DRAIN_PREFIX "ibpulse: "

static const char *const levels[] = {"healthy", "degraded", "failed",
				     "unknown"};

static int level_of(const char *name)
{
	for (int i = 0; name && i < 4; i++)
		if (!strcmp(name, levels[i]))
			return i;
	return -1;
}

static int add_reason(struct phealth *h, int level, int active,
		      double last_seen, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int add_reason(struct phealth *h, int level, int active,
		      double last_seen, const char *fmt, ...)
{
	struct phealth_reason *r;
	va_list ap;

	if (h->n >= PHEALTH_MAX_REASONS)
		return 0;
	r = realloc(h->r, (h->n + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	h->r = r;
	r = &h->r[h->n++];
	r->level = level;
	r->active = active;
	r->last_seen = last_seen;
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
	return 0;
}

void phealth_free(struct phealth *h)
{
	if (!h)
		return;
	free(h->r);
	h->r = NULL;
	h->n = 0;
}

int phealth_parse(const char *json, size_t len, struct phealth *h)
{
	json_error_t e;
	json_t *root = json_loadb(json, len, 0, &e), *reasons, *x;
	size_t i;
	int ret = 0;

	h->verdict = PHEALTH_UNKNOWN;
	if (!root) {
		snprintf(h->note, sizeof(h->note),
			 "the collector's answer is not JSON: %s", e.text);
		return -EINVAL;
	}
	h->verdict =
		level_of(json_string_value(json_object_get(root, "verdict")));
	reasons = json_object_get(root, "reasons");
	if (h->verdict < 0 || h->verdict == PHEALTH_UNKNOWN ||
	    !json_is_array(reasons)) {
		h->verdict = PHEALTH_UNKNOWN;
		snprintf(h->note, sizeof(h->note),
			 "the collector's answer holds no verdict");
		json_decref(root);
		return -EINVAL;
	}
	h->since = json_number_value(json_object_get(root, "since"));
	h->now = json_number_value(json_object_get(root, "now"));
	h->quiet_seconds =
		json_integer_value(json_object_get(root, "quiet_seconds"));
	json_array_foreach(reasons, i, x)
	{
		const char *text =
			json_string_value(json_object_get(x, "reason"));
		int level = level_of(
			json_string_value(json_object_get(x, "severity")));

		if (!text || level < PHEALTH_DEGRADED || level > PHEALTH_FAILED)
			continue;
		ret = add_reason(
			h, level, json_is_true(json_object_get(x, "active")),
			json_number_value(json_object_get(x, "last_seen")),
			"%s", text);
		if (ret)
			break;
	}
	json_decref(root);
	return ret;
}

/* The collector's {"error": ...}, or the start of the body. */
static void answer_error(const char *body, size_t len, char *out, size_t n)
{
	json_t *j = json_loadb(body, len, 0, NULL);
	const char *why = json_string_value(json_object_get(j, "error"));

	snprintf(out, n, "%.200s", why ? why : body);
	json_decref(j);
}

int phealth_fetch(const struct probe_settings *s, const char *host,
		  struct phealth *h)
{
	char path[256], why[256];
	struct push_opts po = {
		.token_file = s->token_file,
		.ca_file = s->ca_file,
		.connect_timeout = s->connect_timeout,
		.timeout = s->timeout,
		.max_response = PHEALTH_MAX_ANSWER,
	};
	struct push *p = NULL;
	char *url;
	const char *body;
	size_t len;
	long status;
	int ret;

	memset(h, 0, sizeof(*h));
	h->verdict = PHEALTH_UNKNOWN;
	snprintf(path, sizeof(path), "/api/v1/hosts/%s/health", host);
	url = push_api_url(s->collector_url, path);
	if (!url)
		return -ENOMEM;
	po.url = url;
	ret = push_new(&po, &p);
	if (ret) {
		snprintf(h->note, sizeof(h->note), "token_file %s: %s",
			 s->token_file ? s->token_file : "(unset)",
			 strerror(-ret));
		free(url);
		return ret;
	}
	ret = push_get(p);
	status = push_last_status(p);
	body = push_response(p, &len);
	if (!ret) {
		ret = phealth_parse(body, len, h) ? -ECONNREFUSED : 0;
	} else if (status >= 400 && status < 500) {
		/* the collector answered: it does not know this host, or
		 * refuses the token. No verdict, and no fallback either. */
		answer_error(body, len, why, sizeof(why));
		snprintf(h->note, sizeof(h->note), "%s answered %ld: %s", url,
			 status, why);
		ret = 0;
	} else {
		if (status)
			snprintf(h->note, sizeof(h->note), "%s answered %ld",
				 url, status);
		else
			snprintf(h->note, sizeof(h->note),
				 "%s cannot be reached", url);
		ret = -ECONNREFUSED;
	}
	push_free(p);
	free(url);
	return ret;
}

int phealth_local(const struct report *r, struct phealth *h)
{
	size_t active = 0, ports = 0;
	int ret = 0;

	h->local = 1;
	for (size_t i = 0; i < r->n_devices; i++)
		for (size_t j = 0; j < r->devices[i].n_ports; j++) {
			int st = r->devices[i].ports[j].state;

			ports++;
			active += st == 4 || st == 5;
		}
	if (!ports) {
		h->verdict = PHEALTH_UNKNOWN;
		return 0;
	}
	h->verdict = PHEALTH_HEALTHY;
	if (!active)
		ret = add_reason(h, PHEALTH_FAILED, 1, 0,
				 "no port of any RDMA device is ACTIVE");
	for (size_t i = 0; !ret && i < r->n_devices; i++) {
		const struct report_device *d = &r->devices[i];

		if (d->pcie.aer_fatal > 0)
			ret = add_reason(h, PHEALTH_FAILED, 1, 0,
					 "%s PCIe AER: %lld fatal error(s) "
					 "since boot",
					 d->name, (long long)d->pcie.aer_fatal);
		if (!ret && report_pcie_degraded(&d->pcie) == 1)
			ret = add_reason(h, PHEALTH_DEGRADED, 1, 0,
					 "%s PCIe link at %g GT/s x%d, below "
					 "its %g GT/s x%d",
					 d->name, d->pcie.cur_speed_gts,
					 d->pcie.cur_width,
					 d->pcie.max_speed_gts,
					 d->pcie.max_width);
		for (size_t j = 0; !ret && active && j < d->n_ports; j++) {
			const struct report_port *p = &d->ports[j];

			if (report_port_up(p->state))
				continue;
			ret = add_reason(h, PHEALTH_DEGRADED, 1, 0,
					 "%s/%u not ACTIVE: %s, %s (whether it "
					 "ever was, the collector knows)",
					 d->name, p->port,
					 report_port_state_name(p->state),
					 report_phys_state_name(p->phys_state));
		}
	}
	for (size_t i = 0; i < h->n; i++)
		if (h->r[i].level > h->verdict)
			h->verdict = h->r[i].level;
	return ret;
}

static void time_text(double t, char *out, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (t <= 0 || !gmtime_r(&s, &tm) ||
	    !strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, len, "unknown");
}

void phealth_print(FILE *f, const char *host, const struct phealth *h)
{
	char since[32];

	time_text(h->since, since, sizeof(since));
	if (h->local)
		fprintf(f, "%s: %s (%s; this node's own sysfs view only)\n",
			host, levels[h->verdict], h->note);
	else if (h->verdict == PHEALTH_UNKNOWN)
		fprintf(f, "%s: unknown (%s)\n", host, h->note);
	else
		fprintf(f, "%s: %s since %s\n", host, levels[h->verdict],
			since);
	for (size_t i = 0; i < h->n; i++) {
		const struct phealth_reason *r = &h->r[i];

		if (r->active || h->local)
			fprintf(f, "%s: %s\n", levels[r->level], r->text);
		else
			fprintf(f,
				"%s: %s (gone %.0f s ago; holds the verdict "
				"for %lld s after)\n",
				levels[r->level], r->text,
				h->now - r->last_seen, h->quiet_seconds);
	}
}

int phealth_exit_code(const struct phealth *h, int npd)
{
	switch (h->verdict) {
	case PHEALTH_HEALTHY:
		return PHEALTH_EXIT_HEALTHY;
	case PHEALTH_DEGRADED:
		return npd ? 0 : PHEALTH_EXIT_DEGRADED;
	case PHEALTH_FAILED:
		return PHEALTH_EXIT_FAILED;
	default:
		return npd ? 2 : PHEALTH_EXIT_UNKNOWN;
	}
}

const char *phealth_drain_reason(const struct phealth *h, char *buf, size_t len)
{
	const char *text = "failed";

	for (size_t i = 0; i < h->n; i++)
		if (h->r[i].level == PHEALTH_FAILED) {
			text = h->r[i].text;
			break;
		}
	snprintf(buf, len, PHEALTH_DRAIN_PREFIX "%s", text);
	return buf;
}
