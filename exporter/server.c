// SPDX-License-Identifier: MIT
/*
 * The exporter's HTTP side: see server.h. Each request is answered in the
 * worker thread that parsed it, on the second call of the handler (once
 * MHD has the whole request, so the connection can be kept alive); the
 * body is complete in memory before it is queued.
 */
#include "server.h"
#include "httpd.h"
#include "log.h"
#include "negotiate.h"
#include "pgzip.h"
#include "scrape.h"
#include "shard.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

struct server {
	const struct exporter_settings *cfg;
	struct MHD_Daemon *mhd;
	struct scrape_stats stats;
	unsigned port;
};

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *user_agent(struct MHD_Connection *c)
{
	const char *ua = httpd_header(c, MHD_HTTP_HEADER_USER_AGENT);

	return ua ? ua : "?";
}

static enum MHD_Result server_metrics(struct server *s,
				      struct MHD_Connection *c)
{
	struct scrape_req rq = {.now = wall_now()};
	char err[512], *body, *gz;
	size_t len, gz_len;
	struct buf out;
	int ret;

	if (shard_parse(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						    "shard"),
			MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						    "shards"),
			&rq.shard, &rq.shards, err, sizeof(err)))
		return httpd_text(c, MHD_HTTP_BAD_REQUEST, err);
	rq.format = negotiate_format(httpd_header(c, MHD_HTTP_HEADER_ACCEPT));
	rq.gzip = negotiate_gzip(
		httpd_header(c, MHD_HTTP_HEADER_ACCEPT_ENCODING));
	buf_init(&out, 0);
	ret = scrape_build(s->cfg, &s->stats, &rq, &out, err, sizeof(err));
	if (ret) {
		buf_free(&out);
		return httpd_text(c,
				  ret == -EIO || ret == -ENOENT
					  ? MHD_HTTP_SERVICE_UNAVAILABLE
					  : MHD_HTTP_INTERNAL_SERVER_ERROR,
				  err);
	}
	body = buf_steal(&out, &len);
	if (!body)
		return MHD_NO;
	gz_len = len;
	if (rq.gzip) {
		ret = pgzip_compress(body, len, (int)s->cfg->gzip_level,
				     (unsigned)s->cfg->gzip_threads, &gz,
				     &gz_len);
		free(body);
		if (ret)
			return httpd_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
					  "gzip failed");
		body = gz;
	}
	log_debug("/metrics shard %u/%u for %s: %s%s, %zu bytes (%zu sent)",
		  rq.shard, rq.shards, user_agent(c),
		  rq.format == EXPO_OPENMETRICS ? "openmetrics" : "text",
		  rq.gzip ? " gzip" : "", len, gz_len);
	return httpd_send(c, MHD_HTTP_OK, expo_content_type(rq.format), body,
			  gz_len, rq.gzip ? "gzip" : NULL);
}

static enum MHD_Result server_health(struct server *s, struct MHD_Connection *c)
{
	char err[512];

	if (scrape_health(s->cfg, err, sizeof(err)))
		return httpd_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, err);
	return httpd_text(c, MHD_HTTP_OK, "ok");
}

static enum MHD_Result server_handle(void *cls, struct MHD_Connection *c,
				     const char *url, const char *method,
				     const char *version,
				     const char *upload_data,
				     size_t *upload_data_size, void **con_cls)
{
	struct server *s = cls;
	enum MHD_Result ret;

	if (!httpd_get_gate(c, method, upload_data_size, con_cls, &ret))
		return ret;
	if (!strcmp(url, "/metrics"))
		return server_metrics(s, c);
	if (!strcmp(url, "/healthz"))
		return server_health(s, c);
	if (!strcmp(url, "/"))
		return httpd_text(c, MHD_HTTP_OK,
				  "ibpulse exporter: /metrics "
				  "(?shard=I&shards=N), /healthz");
	return httpd_text(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics");
}

int server_new(const struct exporter_settings *cfg, struct server **out)
{
	struct sockaddr_storage ss;
	struct server *s;
	bool v6;

	if (httpd_addr("listen", cfg->listen, (unsigned)cfg->port, &ss, &v6))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = cfg;
	scrape_stats_init(&s->stats);
	s->mhd = MHD_start_daemon(
		httpd_flags(v6, false), 0, NULL, NULL, server_handle, s,
		MHD_OPTION_EXTERNAL_LOGGER, httpd_log, NULL,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)cfg->threads,
		MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned)cfg->connection_timeout, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned)cfg->max_connections, MHD_OPTION_END);
	if (!s->mhd) {
		log_err("cannot listen on %s port %lld: %s", cfg->listen,
			cfg->port, strerror(errno));
		server_free(s);
		return -EADDRINUSE;
	}
	s->port = httpd_port(s->mhd, (unsigned)cfg->port);
	*out = s;
	return 0;
}

unsigned server_port(const struct server *s)
{
	return s->port;
}

void server_free(struct server *s)
{
	if (!s)
		return;
	if (s->mhd)
		MHD_stop_daemon(s->mhd);
	scrape_stats_destroy(&s->stats);
	free(s);
}
