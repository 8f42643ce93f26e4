// SPDX-License-Identifier: MIT
/* The HTTP settings block (httpd_conf.h) into httpd_start()'s options. */
#include "httpd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int httpd_conf_check(const struct httpd_conf *c, char *err, size_t errlen)
{
	if (!c->listen || !*c->listen) {
		snprintf(err, errlen, "listen must be set");
		return -EINVAL;
	}
	if (!c->tls_cert != !c->tls_key) {
		snprintf(err, errlen, "tls_cert and tls_key go together");
		return -EINVAL;
	}
	return 0;
}

int httpd_conf_apply(const struct httpd_conf *c, struct httpd_opts *o,
		     char **cert, char **key)
{
	int ret = 0;

	o->listen = c->listen;
	o->port = (unsigned)c->port;
	o->threads = (unsigned)c->threads;
	o->max_connections = (unsigned)c->max_connections;
	o->per_ip_limit = (unsigned)c->per_ip_connection_limit;
	o->idle_timeout = (unsigned)c->connection_timeout;
	o->header_timeout = (unsigned)c->header_timeout;
	o->request_timeout = (unsigned)c->request_timeout;
	*cert = *key = NULL;
	if (c->tls_cert) {
		ret = httpd_read_pem(c->tls_cert, cert);
		if (!ret)
			ret = httpd_read_pem(c->tls_key, key);
	}
	if (ret) {
		free(*cert);
		free(*key);
		*cert = *key = NULL;
	}
	o->tls_cert_pem = *cert;
	o->tls_key_pem = *key;
	return ret;
}
