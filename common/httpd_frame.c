// SPDX-License-Identifier: MIT
/*
 * The request framing of common/httpd's front (httpd_front.c), checked on
 * the bytes a client sends before libmicrohttpd reads any of them. MHD
 * 0.9.75 answers what it cannot parse itself, with HTML pages and, for a
 * Content-Length that is not a number, its status line and headers twice;
 * it cuts a header line at a bare CR. So every request head is whole and
 * sound here before MHD sees its first byte, and every body is followed to
 * its end (Content-Length bytes, or chunked to its last chunk and
 * trailers), so the next head is found where MHD will look for it. What
 * is refused gets a status and a reason the front answers in the
 * server's own error format; nothing ambiguous reaches MHD, which would
 * otherwise frame the stream differently than we did.
 */
#include "httpd_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define FRAME_CHUNK_LINE 1024 /* a chunk-size line, extensions included */

void frame_init(struct frame *f, size_t head_max)
{
	memset(f, 0, sizeof(*f));
	f->head_max = head_max;
}

static int frame_bad(struct frame *f, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int frame_bad(struct frame *f, unsigned status, const char *fmt, ...)
{
	va_list ap;

	f->in_body = f->state != FRAME_HEAD;
	f->state = FRAME_BAD;
	f->status = status;
	va_start(ap, fmt);
	vsnprintf(f->reason, sizeof(f->reason), fmt, ap);
	va_end(ap);
	return -EPROTO;
}

/* RFC 9110 tchar: the characters of a method and a field name. */
static bool frame_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The end of the head in @p (past its empty line), or 0: not yet. */
static size_t frame_head_end(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] != '\n')
			continue;
		if (i + 1 < n && p[i + 1] == '\n')
			return i + 2;
		if (i + 2 < n && p[i + 1] == '\r' && p[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* Method SP target SP HTTP/x.y, @n bytes without the line end. */
static int frame_request_line(struct frame *f, const char *p, size_t n)
{
	size_t m = 0, t;

	while (m < n && frame_tchar((unsigned char)p[m]))
		m++;
	if (!m || m >= n || p[m] != ' ')
		return frame_bad(f, 400, "%s",
				 "the request line is not "
				 "METHOD TARGET HTTP/1.x");
	t = m + 1;
	while (t < n && (unsigned char)p[t] > ' ' && (unsigned char)p[t] < 127)
		t++;
	if (t == m + 1 || t >= n || p[t] != ' ' || n - t - 1 != 8 ||
	    memcmp(p + t + 1, "HTTP/", 5))
		return frame_bad(f, 400, "%s",
				 "the request line is not "
				 "METHOD TARGET HTTP/1.x");
	if (!memcmp(p + t + 6, "1.1", 3))
		f->http11 = true;
	else if (memcmp(p + t + 6, "1.0", 3))
		return frame_bad(f, 505,
				 "%.3s is not supported: HTTP/1.0 "
				 "and HTTP/1.1 are",
				 p + t + 6);
	return 0;
}

/* Content-Length: 1*DIGIT, and a size a uint64_t holds. */
static int frame_content_length(struct frame *f, const char *v, size_t n)
{
	uint64_t x = 0;
	char shown[32];

	snprintf(shown, sizeof(shown), "%.*s", n > 24 ? 24 : (int)n, v);
	if (!n)
		return frame_bad(f, 400, "%s",
				 "Content-Length is empty: it must be a "
				 "number of bytes");
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return frame_bad(f, 400,
					 "Content-Length '%s' is not a number "
					 "of bytes (digits only)",
					 shown);
		if (x > (UINT64_MAX - 9) / 10)
			return frame_bad(f, 413,
					 "Content-Length '%s' is too "
					 "large",
					 shown);
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	f->left = x;
	return 0;
}

/* One header line @p (@n bytes, no line end): its framing fields. */
static int frame_field(struct frame *f, const char *p, size_t n)
{
	size_t k = 0, v;

	if (p[0] == ' ' || p[0] == '\t')
		return frame_bad(f, 400, "%s",
				 "a header line is folded (starts with white "
				 "space)");
	while (k < n && frame_tchar((unsigned char)p[k]))
		k++;
	if (!k || k >= n || p[k] != ':')
		return frame_bad(f, 400, "%s",
				 "a header line is not 'Name: value' (a name "
				 "of token characters, then a colon)");
	v = k + 1;
	while (v < n && (p[v] == ' ' || p[v] == '\t'))
		v++;
	while (n > v && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (k == 14 && !strncasecmp(p, "Content-Length", 14)) {
		if (f->n_cl++)
			return frame_bad(f, 400, "%s",
					 "Content-Length appears more than "
					 "once");
		return frame_content_length(f, p + v, n - v);
	}
	if (k == 17 && !strncasecmp(p, "Transfer-Encoding", 17)) {
		if (f->chunked)
			return frame_bad(f, 400, "%s",
					 "Transfer-Encoding appears more than "
					 "once");
		if (n - v != 7 || strncasecmp(p + v, "chunked", 7))
			return frame_bad(f, 400, "%s",
					 "Transfer-Encoding: only chunked is "
					 "supported");
		f->chunked = true;
	}
	return 0;
}

/*
 * The head @p[0..@n) (its empty line included): each line ends in LF or
 * CRLF; a CR anywhere else, or any other control character but TAB, is
 * refused, and so is what MHD could frame otherwise.
 */
static int frame_head(struct frame *f, const char *p, size_t n)
{
	size_t start = 0;
	bool first = true;

	f->n_cl = 0;
	f->chunked = f->http11 = false;
	f->left = 0;
	while (start < n) {
		const char *lf = memchr(p + start, '\n', n - start);
		size_t end = (size_t)(lf - p), len = end - start;
		int ret;

		if (len && p[end - 1] == '\r')
			len--;
		if (!len)
			break; /* the empty line */
		for (size_t i = start; i < start + len; i++) {
			unsigned char c = (unsigned char)p[i];

			if (c == '\r')
				return frame_bad(f, 400, "%s",
						 "a bare CR in the request "
						 "head");
			if ((c < ' ' && c != '\t') || c == 127)
				return frame_bad(f, 400, "%s",
						 "a control character in the "
						 "request head");
		}
		ret = first ? frame_request_line(f, p + start, len)
			    : frame_field(f, p + start, len);
		if (ret)
			return ret;
		first = false;
		start = end + 1;
	}
	if (f->chunked && f->n_cl)
		return frame_bad(f, 400, "%s",
				 "Content-Length and Transfer-Encoding "
				 "together");
	f->heads++;
	f->state = f->chunked ? FRAME_CHUNK_SIZE
		   : f->left  ? FRAME_BODY
			      : FRAME_HEAD;
	return 0;
}

/* A line in @p[0..@n): its length with the LF, 0 when not whole yet. */
static size_t frame_line(const char *p, size_t n)
{
	const char *lf = memchr(p, '\n', n);

	return lf ? (size_t)(lf - p) + 1 : 0;
}

/* A chunk-size line (@n bytes with its LF): hex size, extensions. */
static int frame_chunk_size(struct frame *f, const char *p, size_t n)
{
	size_t m = n - 1, i = 0;
	uint64_t x = 0;

	if (m && p[m - 1] == '\r')
		m--;
	for (; i < m; i++) {
		int d = p[i] >= '0' && p[i] <= '9'   ? p[i] - '0'
			: p[i] >= 'a' && p[i] <= 'f' ? p[i] - 'a' + 10
			: p[i] >= 'A' && p[i] <= 'F' ? p[i] - 'A' + 10
						     : -1;

		if (d < 0)
			break;
		if (x >> 60)
			return frame_bad(f, 413, "%s",
					 "a chunk size is too large");
		x = x * 16 + (uint64_t)d;
	}
	if (!i || (i < m && p[i] != ';') || memchr(p, '\r', m))
		return frame_bad(f, 400, "%s",
				 "a chunk size is not hexadecimal digits "
				 "and a line end");
	f->left = x;
	f->state = x ? FRAME_CHUNK_DATA : FRAME_TRAILER;
	return 0;
}

/* A trailer line (@n bytes with its LF): "Name: value", nothing else. */
static int frame_trailer(struct frame *f, const char *p, size_t n)
{
	size_t m = n - 1, k = 0;

	if (m && p[m - 1] == '\r')
		m--;
	while (k < m && frame_tchar((unsigned char)p[k]))
		k++;
	if (!k || k >= m || p[k] != ':')
		return frame_bad(f, 400, "%s",
				 "a trailer line is not 'Name: value'");
	for (size_t i = k; i < m; i++)
		if (((unsigned char)p[i] < ' ' && p[i] != '\t') || p[i] == 127)
			return frame_bad(f, 400, "%s",
					 "a control character in a trailer "
					 "line");
	return 0;
}

/* Past a chunk's data: exactly a line end. */
static int frame_chunk_end(struct frame *f, const char *p, size_t n,
			   size_t *used)
{
	if (n >= 1 && p[0] == '\n') {
		*used = 1;
	} else if (n >= 2 && p[0] == '\r' && p[1] == '\n') {
		*used = 2;
	} else if (n >= 2 || (n == 1 && p[0] != '\r')) {
		return frame_bad(f, 400, "%s",
				 "a chunk's data is not followed by a line "
				 "end");
	} else {
		*used = 0; /* not yet */
		return 0;
	}
	f->state = FRAME_CHUNK_SIZE;
	return 0;
}

/* One step in the current state: bytes validated (0: need more). */
static int frame_step(struct frame *f, const char *p, size_t n, size_t *used)
{
	size_t k;

	*used = 0;
	switch (f->state) {
	case FRAME_HEAD:
		k = frame_head_end(p, n);
		if (!k) {
			const char *lf = memchr(p, '\n', n);
			size_t line = lf ? (size_t)(lf - p) : n;

			if (line > f->head_max)
				return frame_bad(f, 414, "%s",
						 "the request line is too "
						 "long");
			if (n > f->head_max)
				return frame_bad(f, 431, "%s",
						 "the request head is too "
						 "large");
			return 0;
		}
		if (k > f->head_max)
			return frame_bad(f, 431, "%s",
					 "the request head is too large");
		*used = k;
		return frame_head(f, p, k);
	case FRAME_BODY:
	case FRAME_CHUNK_DATA:
		k = n < f->left ? n : (size_t)f->left;
		f->left -= k;
		*used = k;
		if (!f->left)
			f->state = f->state == FRAME_BODY ? FRAME_HEAD
							  : FRAME_CHUNK_END;
		return 0;
	case FRAME_CHUNK_END:
		return frame_chunk_end(f, p, n, used);
	case FRAME_CHUNK_SIZE:
	case FRAME_TRAILER:
		k = frame_line(p, n);
		if (!k && n > FRAME_CHUNK_LINE)
			return frame_bad(f, 400, "%s",
					 "a chunk-size or trailer line is too "
					 "long");
		if (!k)
			return 0;
		*used = k;
		if (f->state == FRAME_CHUNK_SIZE)
			return frame_chunk_size(f, p, k);
		if (k == 1 || (k == 2 && p[0] == '\r'))
			f->state = FRAME_HEAD; /* the trailers' end */
		else
			return frame_trailer(f, p, k);
		return 0;
	case FRAME_BAD:
		return -EPROTO;
	}
	return -EPROTO;
}

int frame_scan(struct frame *f, const char *p, size_t n, size_t *ok)
{
	size_t used;
	int ret;

	*ok = 0;
	do {
		ret = frame_step(f, p + *ok, n - *ok, &used);
		if (ret) /* the refused bytes are not sound */
			break;
		*ok += used;
	} while (used && *ok < n);
	return ret;
}
