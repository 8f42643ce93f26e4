/* SPDX-License-Identifier: MIT */
/*
 * What the three HTTP daemons (collector, exporter, the probe's own
 * /metrics) share when they serve libmicrohttpd: the listen socket (made
 * here, so `::` is dual-stack and a bind failure names the address and
 * port), the front that accepts plain HTTP and checks each request's
 * framing before MHD reads it (common/httpd_front.c, httpd_frame.c: what
 * MHD would answer itself, in HTML or malformed, is answered in the
 * server's own error format), the connection guard (common/httpd_conn.c:
 * a total limit that closes never-served and idle connections before it
 * refuses a new one, header, idle and request deadlines), the request gate
 * that refuses ambiguous framing before any handler sees it, MHD's own
 * messages as rate-limited warnings in our log, and the plain answers the
 * metrics servers give.
 *
 * libmicrohttpd 0.9.75's own connection limit is per worker thread, and a
 * worker that reaches its share stops polling its listen socket and its
 * wake-up channel until its next timeout (up to connection_timeout): new
 * clients wait in the backlog and MHD_stop_daemon() hangs. So MHD's limit
 * is set well above max_connections and the guard enforces the real one.
 */
#ifndef IBPULSE_HTTPD_H
#define IBPULSE_HTTPD_H

#include <microhttpd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "httpd_conf.h"

struct httpd;

struct httpd_opts {
	const char *what;   /* the listen setting's name, for messages */
	const char *listen; /* numeric IPv4 or IPv6 address; :: is both */
	unsigned port;	    /* 0: a free one */
	unsigned threads;   /* 1: the polling thread answers; more: a pool */
	unsigned max_connections; /* open connections at most (the guard's) */
	unsigned per_ip_limit;	  /* connections per client address; 0: any */
	unsigned idle_timeout;	  /* s without traffic, or without a request
				   * after the previous answer */
	unsigned header_timeout;  /* s from accept to a whole request head */
	unsigned request_timeout; /* s from the head to the last byte sent;
				   * 0: none */
	size_t connection_memory; /* bytes per connection; 0: MHD's 32 KiB */
	const char *tls_cert_pem; /* both or neither: serve HTTPS */
	const char *tls_key_pem;
	bool json_errors;    /* the gate answers {"error": ...} */
	bool suspend_resume; /* MHD_ALLOW_SUSPEND_RESUME */
	MHD_AccessHandlerCallback handler;
	void *handler_cls;
	MHD_RequestCompletedCallback completed; /* NULL: none */
	void *completed_cls;
};

/*
 * httpd_start() - listen on @o->listen:@o->port and serve. @o's strings
 * must outlive the server. Returns 0, -EINVAL (bad address or TLS
 * setting), -EADDRINUSE and friends (bind failed: logged with the address
 * and port), -ENOTSUP (TLS without TLS support) or -ENOMEM.
 */
int httpd_start(const struct httpd_opts *o, struct httpd **out);

/* The TCP port actually bound. */
unsigned httpd_bound_port(const struct httpd *h);

/* Stop accepting (close the listen socket); connections go on. */
void httpd_quiesce(struct httpd *h);

/* Close every connection and stop; quick even with stuck clients. NULL ok. */
void httpd_stop(struct httpd *h);

/*
 * httpd_addr() - @listen (a numeric IPv4 or IPv6 address) and @port as a
 * socket address in @ss; *@v6 tells which. -EINVAL, logged with @what
 * (the setting's name: "listen", "metrics_listen"), when @listen is not
 * numeric.
 */
int httpd_addr(const char *what, const char *listen, unsigned port,
	       struct sockaddr_storage *ss, bool *v6);

/*
 * httpd_check_request() - the gate every request passes before its
 * handler: 0, or -EPROTO with the reason in @err when the request's
 * framing is ambiguous (two Content-Length, Content-Length with
 * Transfer-Encoding, a Transfer-Encoding other than chunked), it is
 * HTTP/1.1 without exactly one Host, it has two Authorization headers,
 * or a header value holds a NUL or a CR. Such a request is answered 400
 * with "Connection: close". Over plain HTTP the front (httpd_front.c)
 * has refused malformed framing before MHD read it; over TLS MHD reads
 * the socket and this gate is the only check.
 */
int httpd_check_request(struct MHD_Connection *c, const char *version,
			char *err, size_t errlen);

/* For MHD_OPTION_EXTERNAL_LOGGER: each message a warning, once a minute. */
void httpd_log(void *cls, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * httpd_send() - answer @c with @body (malloc'd, @len bytes; freed here in
 * every case) of @type, with Content-Encoding @encoding (NULL: none).
 * Vary names Accept and Accept-Encoding (the metrics servers negotiate
 * both); a 405 carries "Allow: GET, HEAD".
 */
enum MHD_Result httpd_send(struct MHD_Connection *c, unsigned status,
			   const char *type, char *body, size_t len,
			   const char *encoding);

/* A short text/plain answer: "@msg\n". */
enum MHD_Result httpd_text(struct MHD_Connection *c, unsigned status,
			   const char *msg);

/*
 * httpd_text_hdr() - httpd_text() with one more header (@name: @value),
 * e.g. WWW-Authenticate on a 401 or Retry-After on a 503.
 */
enum MHD_Result httpd_text_hdr(struct MHD_Connection *c, unsigned status,
			       const char *msg, const char *name,
			       const char *value);

/*
 * httpd_get_gate() - the start every GET-only handler shares: 1 when the
 * request is whole and its method GET or HEAD (answer it now); 0 with
 * *@ret what the handler returns (MHD_YES to read on, or the 405 sent).
 * Answering only once the whole request is in keeps keep-alive working:
 * a response queued on the first call makes MHD close the connection.
 */
int httpd_get_gate(struct MHD_Connection *c, const char *method,
		   size_t *upload_data_size, void **con_cls,
		   enum MHD_Result *ret);

/* A request header's value, NULL when absent. */
const char *httpd_header(struct MHD_Connection *c, const char *name);

/*
 * httpd_read_pem() - the PEM file at @path (at most 1 MiB) in *@out,
 * NUL-terminated, for the caller to free. Logs and returns a negative
 * errno when it cannot be read or is empty.
 */
int httpd_read_pem(const char *path, char **out);

/*
 * httpd_conf_apply() - @o's listen address, port, threads, connection
 * limits and timeouts from the settings block @c (httpd_conf.h), and with
 * tls_cert set its PEM texts, read into *@cert and *@key (the caller frees
 * them after httpd_stop(); NULL without TLS). Returns 0 or
 * httpd_read_pem()'s error.
 */
int httpd_conf_apply(const struct httpd_conf *c, struct httpd_opts *o,
		     char **cert, char **key);

#endif
