/* SPDX-License-Identifier: MIT */
/*
 * What the three HTTP daemons (collector, exporter, the probe's own
 * /metrics) share when they start libmicrohttpd: the numeric listen
 * address as a socket address, the daemon flags, MHD's own messages as
 * rate-limited warnings in our log, and the port actually bound (port 0
 * asks the kernel for one).
 */
#ifndef IBPULSE_HTTPD_H
#define IBPULSE_HTTPD_H

#include <microhttpd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/socket.h>

/*
 * httpd_addr() - @listen (a numeric IPv4 or IPv6 address) and @port as a
 * socket address in @ss; *@v6 tells which. -EINVAL, logged with @what
 * (the setting's name: "listen", "metrics_listen"), when @listen is not
 * numeric.
 */
int httpd_addr(const char *what, const char *listen, unsigned port,
	       struct sockaddr_storage *ss, bool *v6);

/*
 * httpd_flags() - an internal polling thread (epoll where MHD has it),
 * MHD's error log routed through httpd_log(), IPv6 and TLS as asked.
 */
unsigned httpd_flags(bool v6, bool tls);

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

/* The port @d listens on, or @fallback when MHD cannot tell. */
unsigned httpd_port(struct MHD_Daemon *d, unsigned fallback);

#endif
