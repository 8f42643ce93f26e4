// SPDX-License-Identifier: MIT
/*
 * libmicrohttpd start-up shared by the collector, the exporter and the
 * probe's /metrics: listen address, flags, MHD's messages in our log, the
 * bound port, and the plain answers the metrics servers give.
 */
#include "httpd.h"
#include "log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int httpd_addr(const char *what, const char *listen, unsigned port,
	       struct sockaddr_storage *ss, bool *v6)
{
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, listen, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*v6 = false;
		return 0;
	}
	if (inet_pton(AF_INET6, listen, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*v6 = true;
		return 0;
	}
	log_err("%s '%s': not a numeric IPv4 or IPv6 address (such as "
		"0.0.0.0, ::, 127.0.0.1)",
		what, listen);
	return -EINVAL;
}

unsigned httpd_flags(bool v6, bool tls)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
			 MHD_USE_ERROR_LOG;

	if (v6)
		flags |= MHD_USE_IPv6;
	if (tls)
		flags |= MHD_USE_TLS;
	return flags;
}

void httpd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	log_once(line, 60, LOG_LVL_WARN, "http: %s", line);
}

unsigned httpd_port(struct MHD_Daemon *d, unsigned fallback)
{
	const union MHD_DaemonInfo *info =
		MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);

	return info && info->port ? info->port : fallback;
}

enum MHD_Result httpd_send(struct MHD_Connection *c, unsigned status,
			   const char *type, char *body, size_t len,
			   const char *encoding)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (encoding)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING,
					encoding);
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY,
				"Accept, Accept-Encoding");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result httpd_text(struct MHD_Connection *c, unsigned status,
			   const char *msg)
{
	size_t len = strlen(msg);
	char *body = malloc(len + 2);

	if (!body)
		return MHD_NO;
	memcpy(body, msg, len);
	body[len] = '\n';
	body[len + 1] = '\0';
	return httpd_send(c, status, "text/plain; charset=utf-8", body, len + 1,
			  NULL);
}

int httpd_get_gate(struct MHD_Connection *c, const char *method,
		   size_t *upload_data_size, void **con_cls,
		   enum MHD_Result *ret)
{
	*ret = MHD_YES;
	if (!*con_cls) {
		*con_cls = c; /* any non-NULL: headers seen */
		return 0;
	}
	if (*upload_data_size) { /* GET has no body; drop any */
		*upload_data_size = 0;
		return 0;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		*ret = httpd_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "method not allowed: use GET");
		return 0;
	}
	return 1;
}

const char *httpd_header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}
