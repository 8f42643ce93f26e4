// SPDX-License-Identifier: MIT
/*
 * libmicrohttpd start-up shared by the collector, the exporter and the
 * probe's /metrics: listen address, flags, MHD's messages in our log and
 * the bound port.
 */
#include "httpd.h"
#include "log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
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
