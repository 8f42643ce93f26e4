// SPDX-License-Identifier: MIT
/*
 * The probe's /metrics over HTTP (pmetrics.h): libmicrohttpd with its own
 * single polling thread, bounded connections and an idle timeout, started
 * as the collector and the exporter start theirs (common/httpd.h). Each
 * scrape builds a fresh report through the caller's callback, renders it
 * in the format the Accept header prefers and gzips it when the client
 * accepts gzip (common/negotiate.h, and common/pgzip.h with one thread,
 * as the exporter does).
 */
#include "pmetrics.h"

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
	struct MHD_Daemon *mhd;
	pmetrics_build_fn build;
	void *arg;
	unsigned port;
};

static double pms_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read sysfs, render, compress if asked: the body in *@body. */
static int pms_body(struct pmetrics_server *s, enum expo_format format,
		    int gzip, char **body, size_t *len)
{
	struct pmetrics_spool sp = {0};
	struct report *r = NULL;
	double t0 = pms_mono();
	struct buf out;
	char *text;
	int ret;

	ret = s->build(s->arg, &r, &sp);
	if (ret)
		return ret;
	buf_init(&out, PMETRICS_MAX_BODY);
	ret = pmetrics_render(r, &sp, pms_mono() - t0, format, &out, NULL);
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

int pmetrics_server_new(const char *listen, pmetrics_build_fn build, void *arg,
			struct pmetrics_server **out)
{
	struct sockaddr_storage ss;
	struct pmetrics_server *s;
	char addr[64], err[256];
	unsigned port;
	bool v6;

	*out = NULL;
	if (pmetrics_listen_parse(listen, addr, sizeof(addr), &port, err,
				  sizeof(err))) {
		log_err("%s", err);
		return -EINVAL;
	}
	if (httpd_addr("metrics_listen", *addr ? addr : "0.0.0.0", port, &ss,
		       &v6))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->build = build;
	s->arg = arg;
	s->mhd = MHD_start_daemon(
		httpd_flags(v6, false), 0, NULL, NULL, pms_handle, s,
		MHD_OPTION_EXTERNAL_LOGGER, httpd_log, NULL,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PMETRICS_TIMEOUT,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)PMETRICS_MAX_CONNECTIONS,
		MHD_OPTION_END);
	if (!s->mhd) {
		log_err("metrics_listen %s: cannot listen: %s", listen,
			strerror(errno));
		free(s);
		return -EADDRINUSE;
	}
	s->port = httpd_port(s->mhd, port);
	log_info("serving /metrics on %s%s%s:%u", v6 ? "[" : "",
		 *addr ? addr : "*", v6 ? "]" : "", s->port);
	*out = s;
	return 0;
}

unsigned pmetrics_server_port(const struct pmetrics_server *s)
{
	return s->port;
}

void pmetrics_server_free(struct pmetrics_server *s)
{
	if (!s)
		return;
	if (s->mhd)
		MHD_stop_daemon(s->mhd);
	free(s);
}
