// SPDX-License-Identifier: MIT
/*
 * The daemon's Kubernetes node condition ([health] kube_condition,
 * docs/health.md): every health_interval it asks the collector for this
 * host's verdict (phealth.h) and publishes it on its Node (kube.h): the
 * condition when it changed, its heartbeat every KUBE_HEARTBEAT seconds,
 * and the taint with kube_taint. Without an answer from the collector
 * the condition is Unknown and the taint stays as it is.
 */
#include "daemon_int.h"

#include <errno.h>
#include <string.h>

#include "kube.h"
#include "log.h"
#include "phealth.h"

#define KUBE_HEARTBEAT 300.0 /* seconds between unchanged updates */

/* The message of @h: its worst reason, or why there is no verdict. */
static void kube_message(const struct phealth *h, char *out, size_t len)
{
	const struct phealth_reason *best = NULL;

	for (size_t i = 0; i < h->n; i++)
		if (!best || h->r[i].level > best->level)
			best = &h->r[i];
	if (best)
		snprintf(out, len, "%s", best->text);
	else if (h->verdict == PHEALTH_UNKNOWN)
		snprintf(out, len, "no verdict: %.300s", h->note);
	else
		snprintf(out, len, "the ibpulse collector judges this node %s",
			 h->verdict == PHEALTH_HEALTHY ? "healthy"
						       : "degraded");
}

void daemon_kube_tick(struct daemon *d, double now)
{
	struct probe_settings *s = d->s;
	struct phealth h;
	char msg[PHEALTH_TEXT_MAX + 64];
	int ret;

	if (!d->kube) {
		struct kube_opts o = {
			.api = s->kube_api,
			.token_file = s->kube_token_file,
			.ca_file = s->kube_ca_file,
			.node = s->kube_node ? s->kube_node : d->host,
			.timeout = s->timeout,
		};

		if (kube_new(&o, &d->kube))
			return;
	}
	if (phealth_fetch(s, d->host, &h)) {
		phealth_free(&h); /* a part of an answer is no verdict */
		h.verdict = PHEALTH_UNKNOWN;
	}
	kube_message(&h, msg, sizeof(msg));
	ret = kube_publish(d->kube, h.verdict, msg, s->kube_taint,
			   now - d->kube_beat >= KUBE_HEARTBEAT);
	if (!ret)
		d->kube_beat = now;
	phealth_free(&h);
}

void daemon_kube_free(struct daemon *d)
{
	kube_free(d->kube);
	d->kube = NULL;
}
