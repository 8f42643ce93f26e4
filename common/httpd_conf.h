/* SPDX-License-Identifier: MIT */
/*
 * The HTTP server's settings, the same keys in the collector's and the
 * exporter's files (issue 18): one block in each one's settings struct,
 * its rows of the program's conf table made by HTTPD_CONF_OPTS(), checked
 * by httpd_conf_check() and turned into httpd_start()'s options by
 * httpd_conf_apply() (httpd.h). The probe's metrics endpoint has keys of
 * its own (metrics_listen...).
 */
#ifndef IBPULSE_HTTPD_CONF_H
#define IBPULSE_HTTPD_CONF_H

#include <stddef.h>

#include "conf.h"

struct httpd_conf {
	char *listen;			   /* numeric address to bind */
	long long port;			   /* 0: ephemeral */
	long long threads;		   /* worker threads */
	long long connection_timeout;	   /* seconds idle before close */
	long long header_timeout;	   /* seconds to send a request head */
	long long request_timeout;	   /* seconds per request, 0: none */
	long long max_connections;	   /* open at most (idle ones yield) */
	long long per_ip_connection_limit; /* 0: none */
	char *tls_cert, *tls_key;	   /* PEM files: serve HTTPS */
};

/*
 * The conf_opt rows (conf.h) of the block @field (a struct httpd_conf) of
 * settings struct @type, in section @sec: the default TCP port @def_port
 * and most connections @def_max_conn (text), and what the worker threads do
 * (@threads_help).
 */
/* one row a group of lines, as a conf table reads */
/* clang-format off */
#define HTTPD_CONF_OPTS(sec, type, field, def_port, def_max_conn,             \
			threads_help)                                          \
	{sec, "listen", CONF_STR, offsetof(type, field.listen), "127.0.0.1",  \
	 0, 0, "numeric IPv4 or IPv6 address to listen on (:: for every "      \
	 "address of both families; then set up auth and TLS)"},               \
	{sec, "port", CONF_INT, offsetof(type, field.port), def_port, 0,      \
	 65535, "TCP port; 0 picks a free one (logged, and written to the "    \
	 "port file)"},                                                        \
	{sec, "threads", CONF_INT, offsetof(type, field.threads), "4", 1,     \
	 256, threads_help},                                                   \
	{sec, "connection_timeout", CONF_INT,                                  \
	 offsetof(type, field.connection_timeout), "30", 1, 3600,              \
	 "seconds a connection may stay idle (no traffic, or no new request "  \
	 "after an answer) before it is closed"},                              \
	{sec, "header_timeout", CONF_INT,                                      \
	 offsetof(type, field.header_timeout), "10", 1, 3600,                  \
	 "seconds a new connection has to send a whole request head "          \
	 "(however slowly its bytes come)"},                                   \
	{sec, "request_timeout", CONF_INT,                                     \
	 offsetof(type, field.request_timeout), "60", 0, 3600,                 \
	 "seconds a request may take from its head to the last byte of the "   \
	 "answer (0: no limit)"},                                              \
	{sec, "max_connections", CONF_INT,                                     \
	 offsetof(type, field.max_connections), def_max_conn, 1, 1000000,      \
	 "open connections at most; when full, one that never completed a "    \
	 "request (oldest first), else an idle keep-alive one, is closed to "  \
	 "admit a new one"},                                                   \
	{sec, "per_ip_connection_limit", CONF_INT,                             \
	 offsetof(type, field.per_ip_connection_limit), "16", 0, 65535,        \
	 "concurrent connections per client address (0: unlimited)"},         \
	{sec, "tls_cert", CONF_STR, offsetof(type, field.tls_cert), NULL, 0,  \
	 0, "PEM certificate: serve HTTPS (needs tls_key)"},                   \
	{sec, "tls_key", CONF_STR, offsetof(type, field.tls_key), NULL, 0, 0, \
	 "PEM private key for tls_cert"}
/* clang-format on */

/* 0, or -EINVAL with the reason in @err: no listen address, or only one
 * of tls_cert and tls_key. */
int httpd_conf_check(const struct httpd_conf *c, char *err, size_t errlen);

#endif
