// SPDX-License-Identifier: MIT
/*
 * The probe's /metrics over HTTP (pmetrics.h): libmicrohttpd with its own
 * single polling thread, bounded connections and timeouts, started as the
 * collector and the exporter start theirs (common/httpd.h; an unset
 * address is `::`, every address of both families). Each
 * scrape builds a fresh report through the caller's callback, renders it
 * in the format the Accept header prefers and gzips it when the client
 * accepts gzip (common/negotiate.h, and common/pgzip.h with one thread,
 * as the exporter does).
 */
#include "pmetrics.h"
#include "now.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "httpd.h"
#include "log.h"
#include "negotiate.h"
#include "pgzip.h"

struct pmetrics_server {
	struct httpd *http;
	pmetrics_build_fn build;
	pmetrics_extra_fn extra;
	void *arg;
	unsigned port;
};

/* Read sysfs, render, compress if asked: the body in *@body. */
static int pms_body(struct pmetrics_server *s, enum expo_format format,
		    int gzip, char **body, size_t *len)
{
	struct pmetrics_spool sp = {0};
	struct report *r = NULL;
	double t0 = now_mono();
	struct buf out;
	char *text;
	int ret;

	ret = s->build(s->arg, &r, &sp);
	if (ret)
		return ret;
	buf_init(&out, PMETRICS_MAX_BODY);
	ret = pmetrics_render_extra(r, &sp, now_mono() - t0, format, &out, NULL,
				    s->extra, s->arg);
	report_free(r);
	if (ret) {
		buf_free(&out);
		return ret;
	}
	text = buf_steal(&out, len);
	if (!text)
		return -ENOMEM;
	if (!gzip) {
		*body = text;
		return 0;
	}
	ret = pgzip_compress(text, *len, 1, 1, body, len);
	free(text);
	return ret;
}

static enum MHD_Result pms_metrics(struct pmetrics_server *s,
				   struct MHD_Connection *c)
{
	enum expo_format format =
		negotiate_format(httpd_header(c, MHD_HTTP_HEADER_ACCEPT));
	int gzip = negotiate_gzip(
		httpd_header(c, MHD_HTTP_HEADER_ACCEPT_ENCODING));
	char *body;
	size_t len;
	int ret;

	ret = pms_body(s, format, gzip, &body, &len);
	if (ret) {
		log_once("pmetrics-scrape", 600, LOG_LVL_ERR, "/metrics: %s",
			 strerror(-ret));
		return httpd_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "reading the counters failed");
	}
	return httpd_send(c, MHD_HTTP_OK, expo_content_type(format), body, len,
			  gzip ? "gzip" : NULL);
}

static enum MHD_Result pms_handle(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct pmetrics_server *s = cls;
	enum MHD_Result ret;

	(void)version;
	(void)upload_data;
	if (!httpd_get_gate(c, method, upload_data_size, con_cls, &ret))
		return ret;
	if (!strcmp(url, "/metrics"))
		return pms_metrics(s, c);
	return httpd_text(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics");
}

int pmetrics_server_new(const char *listen, pmetrics_build_fn build,
			pmetrics_extra_fn extra, void *arg,
			struct pmetrics_server **out)
{
	struct httpd_opts o = {
		.what = "metrics_listen",
		.threads = 1,
		.max_connections = PMETRICS_MAX_CONNECTIONS,
		.idle_timeout = PMETRICS_TIMEOUT,
		.header_timeout = PMETRICS_TIMEOUT,
		.request_timeout = 6 * PMETRICS_TIMEOUT,
		.handler = pms_handle,
	};
	struct pmetrics_server *s;
	char addr[64], err[256];
	unsigned port;
	int ret;

	*out = NULL;
	if (pmetrics_listen_parse(listen, addr, sizeof(addr), &port, err,
				  sizeof(err))) {
		log_err("%s", err);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->build = build;
	s->extra = extra;
	s->arg = arg;
	/* unset: every address of both families (:: is dual-stack) */
	o.listen = *addr ? addr : "::";
	o.port = port;
	o.handler_cls = s;
	ret = httpd_start(&o, &s->http);
	if (ret) {
		free(s);
		return ret;
	}
	s->port = httpd_bound_port(s->http);
	log_info("serving /metrics on %s%s%s:%u",
		 strchr(o.listen, ':') ? "[" : "", o.listen,
		 strchr(o.listen, ':') ? "]" : "", s->port);
	*out = s;
	return 0;
}

void pmetrics_server_free(struct pmetrics_server *s)
{
	if (!s)
		return;
	httpd_stop(s->http);
	free(s);
}
