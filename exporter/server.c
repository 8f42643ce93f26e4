// SPDX-License-Identifier: MIT
/*
 * The exporter's HTTP side: see server.h. Each request is answered in the
 * worker thread that parsed it, on the second call of the handler (once
 * MHD has the whole request, so the connection can be kept alive). The
 * body comes from the single flight (scrape.h): complete in memory before
 * it is queued, shared with the concurrent scrapes of the same database
 * state, and sent from that one buffer to each of them.
 */
#include "server.h"
#include "now.h"
#include "httpd.h"
#include "log.h"
#include "negotiate.h"
#include "scrape.h"
#include "shard.h"
#include "webauth.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define SERVER_RETRY_AFTER "5" /* seconds, on a 503 of the memory ceiling */

struct server {
	const struct exporter_settings *cfg;
	struct httpd *http;
	struct scrape_stats stats;
	struct scrape_flights *flights;
	char *tls_cert, *tls_key;
	unsigned port;
};

static const char *user_agent(struct MHD_Connection *c)
{
	const char *ua = httpd_header(c, MHD_HTTP_HEADER_USER_AGENT);

	return ua ? ua : "?";
}

static void server_body_free(void *cls)
{
	scrape_body_put(cls);
}

/* 200 with @b; the response holds the reference until MHD has sent it. */
static enum MHD_Result server_send_body(struct MHD_Connection *c,
					struct scrape_body *b,
					enum expo_format format)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer_with_free_callback_cls(
		b->len, (void *)b->data, server_body_free, b);
	if (!r) {
		scrape_body_put(b);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				expo_content_type(format));
	if (b->gzip)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING,
					"gzip");
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY,
				"Accept, Accept-Encoding");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result server_metrics(struct server *s,
				      struct MHD_Connection *c)
{
	struct scrape_req rq = {.now = now_wall()};
	struct scrape_body *b = NULL;
	char err[512];
	int ret, shared;

	if (shard_parse(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						    "shard"),
			MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						    "shards"),
			&rq.shard, &rq.shards, err, sizeof(err)))
		return httpd_text(c, MHD_HTTP_BAD_REQUEST, err);
	rq.format = negotiate_format(httpd_header(c, MHD_HTTP_HEADER_ACCEPT));
	rq.gzip = negotiate_gzip(
		httpd_header(c, MHD_HTTP_HEADER_ACCEPT_ENCODING));
	ret = scrape_get(s->flights, &rq, &b, &shared, err, sizeof(err));
	if (ret == -ENOBUFS)
		return httpd_text_hdr(c, MHD_HTTP_SERVICE_UNAVAILABLE, err,
				      MHD_HTTP_HEADER_RETRY_AFTER,
				      SERVER_RETRY_AFTER);
	if (ret)
		return httpd_text(c,
				  ret == -EIO || ret == -ENOENT
					  ? MHD_HTTP_SERVICE_UNAVAILABLE
					  : MHD_HTTP_INTERNAL_SERVER_ERROR,
				  err);
	log_debug("/metrics shard %u/%u for %s: %s%s, %zu bytes sent%s",
		  rq.shard, rq.shards, user_agent(c),
		  rq.format == EXPO_OPENMETRICS ? "openmetrics" : "text",
		  rq.gzip ? " gzip" : "", b->len,
		  shared ? " (shared with a concurrent scrape)" : "");
	return server_send_body(c, b, rq.format);
}

static enum MHD_Result server_health(struct server *s, struct MHD_Connection *c)
{
	char err[512];

	if (scrape_ready(s->cfg, &s->stats, err, sizeof(err)))
		return httpd_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, err);
	return httpd_text(c, MHD_HTTP_OK, "ok");
}

/* Basic or Bearer, when credentials are configured. */
static enum webauth_result server_auth(struct server *s,
				       struct MHD_Connection *c)
{
	struct webauth *a = s->cfg->auth;
	const char *h = httpd_header(c, MHD_HTTP_HEADER_AUTHORIZATION);
	enum webauth_result r = WEBAUTH_DENIED;
	char *user, *pass = NULL;

	if (!webauth_enabled(a))
		return WEBAUTH_OK;
	if (!h)
		return WEBAUTH_DENIED;
	if (!strncasecmp(h, "Bearer ", 7)) {
		h += 7;
		h += strspn(h, " ");
		return webauth_check_bearer(a, h, strlen(h));
	}
	user = MHD_basic_auth_get_username_password(c, &pass);
	if (user && pass)
		r = webauth_check_basic(a, user, pass);
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	MHD_free(user);
	return r;
}

static enum MHD_Result server_denied(struct server *s, struct MHD_Connection *c,
				     enum webauth_result r)
{
	if (r == WEBAUTH_BUSY)
		return httpd_text_hdr(c, MHD_HTTP_TOO_MANY_REQUESTS,
				      "another password is being checked; "
				      "retry",
				      MHD_HTTP_HEADER_RETRY_AFTER, "1");
	return httpd_text_hdr(c, MHD_HTTP_UNAUTHORIZED,
			      "credentials required (basic auth or a bearer "
			      "token)",
			      MHD_HTTP_HEADER_WWW_AUTHENTICATE,
			      webauth_users(s->cfg->auth)
				      ? "Basic realm=\"ibpulse\""
				      : "Bearer realm=\"ibpulse\"");
}

static enum MHD_Result server_handle(void *cls, struct MHD_Connection *c,
				     const char *url, const char *method,
				     const char *version,
				     const char *upload_data,
				     size_t *upload_data_size, void **con_cls)
{
	struct server *s = cls;
	enum webauth_result auth;
	enum MHD_Result ret;

	if (!httpd_get_gate(c, method, upload_data_size, con_cls, &ret))
		return ret;
	if (!strcmp(url, "/healthz")) /* for load balancers: no credentials */
		return server_health(s, c);
	auth = server_auth(s, c);
	if (auth != WEBAUTH_OK)
		return server_denied(s, c, auth);
	if (!strcmp(url, "/metrics"))
		return server_metrics(s, c);
	if (!strcmp(url, "/"))
		return httpd_text(c, MHD_HTTP_OK,
				  "ibpulse exporter: /metrics "
				  "(?shard=I&shards=N), /healthz");
	return httpd_text(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics");
}

int server_new(const struct exporter_settings *cfg, struct server **out)
{
	struct httpd_opts o = {.what = "listen", .handler = server_handle};
	struct server *s;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = cfg;
	scrape_stats_init(&s->stats);
	ret = scrape_stats_cache(&s->stats, cfg);
	if (!ret)
		ret = scrape_flights_new(cfg, &s->stats, &s->flights);
	if (!ret)
		ret = httpd_conf_apply(&cfg->http, &o, &s->tls_cert,
				       &s->tls_key);
	o.handler_cls = s;
	if (!ret)
		ret = httpd_start(&o, &s->http);
	if (ret) {
		server_free(s);
		return ret;
	}
	s->port = httpd_bound_port(s->http);
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
	httpd_stop(s->http); /* every body is given back before it returns */
	scrape_flights_free(s->flights);
	scrape_stats_destroy(&s->stats);
	free(s->tls_cert);
	free(s->tls_key);
	free(s);
}
