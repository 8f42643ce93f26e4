/* SPDX-License-Identifier: MIT */
/*
 * The collector's HTTP side (common/httpd: libmicrohttpd with a thread
 * pool, the connection guard and the request gate): POST /api/v1/report,
 * GET /healthz and
 * POST /api/v1/hosts/NAME/retire, and the admin views (coverage,
 * regressions, route). Handlers authenticate, read the body
 * under a byte limit, validate it with report_decode(), hand the report to
 * the writer and suspend the connection; the writer's done() resumes it
 * and the answer (2xx only once the rows are committed) goes out.
 * Status codes and bodies: docs/api.md.
 */
#ifndef IBPULSE_COLLECTOR_HTTP_H
#define IBPULSE_COLLECTOR_HTTP_H

#include <stddef.h>

#include "httpd_conf.h"

struct auth;
struct http;
struct writer;

struct http_opts {
	const struct httpd_conf *conf; /* listen, port, limits, TLS files */
	size_t connection_memory;
	size_t max_body_bytes;
	struct auth *auth;	 /* host tokens; enrolment adds to them */
	const char *admin_token; /* NULL: retire API disabled */
};

/* Start serving (reading the TLS files @o->conf names); jobs go to @w.
 * Returns 0 or a negative errno (logged). */
int http_new(const struct http_opts *o, struct writer *w, struct http **out);
/* The port actually bound (useful with port 0). */
unsigned http_port(const struct http *h);
/* Stop accepting new connections; open ones are still served. */
void http_quiesce(struct http *h);
/*
 * http_drain() - wait up to @timeout_ms for every suspended request to be
 * answered (call after writer_stop()). Returns the number still pending.
 */
unsigned http_drain(struct http *h, unsigned timeout_ms);
/* Stop the daemon and free. NULL is fine. */
void http_free(struct http *h);

#endif
