/* SPDX-License-Identifier: MIT */
/*
 * The exporter's HTTP server (libmicrohttpd, internal polling thread and a
 * small thread pool, idle connection timeout): GET /metrics (sharding with
 * ?shard=I&shards=N, 400 with a reason for bad values; content negotiation;
 * gzip), GET /healthz (200 when the database opens with its schema, 503
 * otherwise), 405 for other methods, 404 for other paths.
 */
#ifndef IBPULSE_SERVER_H
#define IBPULSE_SERVER_H

#include "exporter_settings.h"

struct server;

/*
 * server_new() - listen on cfg->listen:cfg->port (0: a free port) and
 * start serving. @cfg must outlive the server. Returns 0 or a negative
 * errno (the reason is logged).
 */
int server_new(const struct exporter_settings *cfg, struct server **out);

/* The TCP port actually bound. */
unsigned server_port(const struct server *s);

/* Stop serving (waits for requests in progress) and free. NULL is fine. */
void server_free(struct server *s);

#endif
