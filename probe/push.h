/* SPDX-License-Identifier: MIT */
/*
 * Pushing a report to the collector: an HTTP POST with libcurl, the host's
 * bearer token, connect and total timeouts, TLS verification on (a CA file
 * may be given), and one easy handle reused between pushes so the
 * connection is kept alive.
 */
#ifndef IBPULSE_PUSH_H
#define IBPULSE_PUSH_H

#include <errno.h>
#include <stddef.h>

/* push_send() errors: what the caller should do differs. */
#define PUSH_ERR_NET (-ECONNREFUSED) /* no answer: retry later */
#define PUSH_ERR_CLIENT (-EPROTO)    /* 4xx: the report or token is wrong */
#define PUSH_ERR_SERVER (-EAGAIN)    /* 5xx (503: storage): retry later */

struct push_opts {
	const char *url;		 /* required */
	const char *token_file;		 /* NULL: no Authorization header */
	const char *ca_file;		 /* NULL: the system's CA store */
	double connect_timeout, timeout; /* seconds */
	size_t max_response;		 /* body kept; 0: 4 KiB */
};

struct push;

/*
 * push_new() - set up a pusher: reads the token file (trailing whitespace
 * removed). Returns 0, -ENOENT/-EACCES for an unreadable token file,
 * -EINVAL for an empty or malformed token, -ENOMEM. Free with push_free().
 * curl_global_init() must have been called.
 */
int push_new(const struct push_opts *o, struct push **out);
void push_free(struct push *p);

/*
 * push_send() - POST @len bytes of JSON @body. Returns 0 on 2xx, else one
 * of PUSH_ERR_* with the curl error or the HTTP status and the
 * collector's reason logged.
 */
int push_send(struct push *p, const char *body, size_t len);

/*
 * push_get() - GET the URL; like push_send() otherwise. The body is in
 * push_response() (up to max_response bytes).
 */
int push_get(struct push *p);

/* The body of the last answer, NUL-terminated; valid until the next call. */
const char *push_response(const struct push *p, size_t *len);

/* The HTTP status of the last push_send(), 0 if no response. */
long push_last_status(const struct push *p);

/*
 * push_api_url() - the collector's endpoint @path ("/api/v1/plan") from
 * the report URL @report_url (collector_url: its /api/v1/report and
 * trailing slashes are dropped, @path appended). New string (caller
 * frees), NULL when out of memory.
 */
char *push_api_url(const char *report_url, const char *path);

#endif
