// SPDX-License-Identifier: MIT
/*
 * Pushing the fabric to the collector: after a sweep, the picture goes out
 * as one or more ordinary reports (POST /api/v1/report, docs/api.md) with
 * no devices and a fabric section of at most `chunk_ports` ports each, so
 * every body stays under the collector's max_body_bytes. Each report is
 * complete for the nodes it carries; the collector keys them by node GUID,
 * so two pollers of one subnet do not duplicate a switch. The forwarding
 * tables go out with their switches in the cycle that read them (and
 * again until a push of them succeeds).
 */
#include "fabric_push.h"
#include "now.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "push.h"
#include "report.h"
#include "report_fabric.h"

struct fabric_push {
	struct push *push;
	char host[REPORT_MAX_NAME + 1];
	size_t chunk_ports;
	char *url;
};

int fabric_push_new(const struct fabric_settings *s, struct fabric_push **out,
		    char *err, size_t errlen)
{
	struct push_opts po = {
		.url = s->collector_url,
		.token_file = s->token_file,
		.ca_file = s->ca_file,
		.connect_timeout = s->connect_timeout,
		.timeout = s->push_timeout,
	};
	struct fabric_push *p = calloc(1, sizeof(*p));
	int ret;

	if (!p)
		return -ENOMEM;
	p->chunk_ports = (size_t)s->chunk_ports;
	if (s->host)
		snprintf(p->host, sizeof(p->host), "%s", s->host);
	else if (gethostname(p->host, sizeof(p->host) - 1))
		snprintf(p->host, sizeof(p->host), "localhost");
	ret = push_new(&po, &p->push);
	if (ret) {
		snprintf(err, errlen, "collector %s: %s", s->collector_url,
			 ret == -EINVAL ? "empty or malformed token file"
					: strerror(-ret));
		free(p);
		return ret;
	}
	*out = p;
	return 0;
}

void fabric_push_free(struct fabric_push *p)
{
	if (!p)
		return;
	push_free(p->push);
	free(p);
}

/* One report holding chunk @i of the picture. */
static int push_chunk(struct fabric_push *p, const struct fabric *f,
		      bool routes, size_t i)
{
	struct report r = {
		.version = REPORT_VERSION,
		.host = p->host,
		.timestamp = now_wall(),
		.probe_version = (char *)IBPULSE_VERSION,
	};
	char *text = NULL;
	int ret;

	ret = fabric_report_chunk(f, p->chunk_ports, routes, i, &r.fabric);
	if (!ret)
		ret = report_encode(&r, &text);
	report_fabric_free(r.fabric);
	if (!ret)
		ret = push_send(p->push, text, strlen(text));
	free(text);
	return ret;
}

int fabric_push_send(struct fabric_push *p, const struct fabric *f, bool routes)
{
	size_t n = fabric_report_chunks(f, p->chunk_ports, routes), sent = 0;
	int first = 0;

	for (size_t i = 0; i < n; i++) {
		int ret = push_chunk(p, f, routes, i);

		if (!ret)
			sent++;
		else if (!first)
			first = ret;
		if (ret == PUSH_ERR_NET)
			break; /* nobody there: the next sweep tries again */
	}
	log_debug("fabric: pushed %zu of %zu reports%s", sent, n,
		  routes ? " with the forwarding tables" : "");
	return first;
}
