// SPDX-License-Identifier: MIT
/*
 * The request gate of common/httpd (httpd_check_request() in httpd.h):
 * what libmicrohttpd 0.9.75 lets through and RFC 9112 says to refuse,
 * checked on the request head before any handler runs.
 *
 * MHD 0.9.75 keeps the first of two Content-Length headers (the bytes the
 * second announced then parse as another request), prefers chunked when
 * both Content-Length and Transfer-Encoding come (a proxy in front may
 * have used the length: request smuggling), reads an unknown coding until
 * the peer closes, and accepts HTTP/1.1 without Host. It also ends a
 * header value at a NUL without a word: the head is parsed in place, CR
 * and LF overwritten with NULs, and each value points into that buffer,
 * so a value whose line goes on past its terminating NUL had one. MHD
 * 1.0 refuses NULs itself, and lays the buffer out differently: the NUL
 * check is compiled for the 0.9.7x releases only.
 */
#include "httpd.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define GATE_NUL_CHECK (MHD_VERSION >= 0x00097100 && MHD_VERSION < 0x00097600)

struct gate_scan {
	unsigned content_length, transfer_encoding, host, authorization;
	const char *te;
	bool bad_line;	      /* a value with a NUL, or a folded line */
	const char *prev_end; /* the previous value's end */
};

#if GATE_NUL_CHECK
/* Between one value's end and the next key: the line end, 1 or 2 NULs. */
static bool gate_line_end_ok(const char *end, const char *next_key)
{
	uintptr_t a = (uintptr_t)end, b = (uintptr_t)next_key;

	if (b <= a || b - a > 2)
		return false;
	for (const char *p = end; p < next_key; p++)
		if (*p)
			return false;
	return true;
}
#endif

static enum MHD_Result gate_header(void *cls, enum MHD_ValueKind kind,
				   const char *key, size_t key_size,
				   const char *value, size_t value_size)
{
	struct gate_scan *s = cls;

	(void)kind;
	(void)key_size;
	if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH))
		s->content_length++;
	else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
		s->transfer_encoding++;
		s->te = value;
	} else if (!strcasecmp(key, MHD_HTTP_HEADER_HOST))
		s->host++;
	else if (!strcasecmp(key, MHD_HTTP_HEADER_AUTHORIZATION))
		s->authorization++;
	if (!value)
		return MHD_YES;
	if (memchr(value, 0, value_size) || memchr(value, '\r', value_size))
		s->bad_line = true;
#if GATE_NUL_CHECK
	if (s->prev_end && !gate_line_end_ok(s->prev_end, key))
		s->bad_line = true;
#endif
	s->prev_end = value + value_size;
	return MHD_YES;
}

/* "chunked", with optional white space around it. */
static bool gate_chunked(const char *te)
{
	size_t n;

	te += strspn(te, " \t");
	n = strcspn(te, " \t");
	return n == 7 && !strncasecmp(te, "chunked", 7) &&
	       !te[n + strspn(te + n, " \t")];
}

int httpd_check_request(struct MHD_Connection *c, const char *version,
			char *err, size_t errlen)
{
	struct gate_scan s = {0};

	MHD_get_connection_values_n(c, MHD_HEADER_KIND, gate_header, &s);
#if GATE_NUL_CHECK
	/* the last value: its line end and the empty line, all NULs */
	if (s.prev_end && (s.prev_end[0] || s.prev_end[1]))
		s.bad_line = true;
#endif
	if (s.bad_line)
		snprintf(err, errlen,
			 "a header value holds a NUL byte or a CR (or a line "
			 "is folded)");
	else if (s.content_length > 1)
		snprintf(err, errlen, "Content-Length appears %u times",
			 s.content_length);
	else if (s.transfer_encoding > 1)
		snprintf(err, errlen, "Transfer-Encoding appears %u times",
			 s.transfer_encoding);
	else if (s.transfer_encoding && s.content_length)
		snprintf(err, errlen,
			 "Content-Length and Transfer-Encoding together");
	else if (s.transfer_encoding && !gate_chunked(s.te))
		snprintf(err, errlen,
			 "Transfer-Encoding: only chunked is supported");
	else if (s.host > 1)
		snprintf(err, errlen, "Host appears %u times", s.host);
	else if (s.authorization > 1)
		snprintf(err, errlen,
			 "Authorization appears %u times: send one credential",
			 s.authorization);
	else if (!s.host && version && !strcmp(version, MHD_HTTP_VERSION_1_1))
		snprintf(err, errlen,
			 "an HTTP/1.1 request needs a Host header");
	else
		return 0;
	return -EPROTO;
}
