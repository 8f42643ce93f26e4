// SPDX-License-Identifier: MIT
/*
 * Accept and Accept-Encoding parsing: see negotiate.h. The headers are
 * walked in place (no copies, no strtok): a list of comma-separated
 * elements, each a value followed by ;-separated parameters.
 */
#include "negotiate.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct span {
	const char *s;
	size_t len;
};

static int is_space(char c)
{
	return c == ' ' || c == '\t';
}

static struct span span_trim(const char *s, size_t len)
{
	while (len && is_space(*s)) {
		s++;
		len--;
	}
	while (len && is_space(s[len - 1]))
		len--;
	return (struct span){s, len};
}

static int span_is(struct span a, const char *word)
{
	return a.len == strlen(word) && !strncasecmp(a.s, word, a.len);
}

/*
 * Cut the next @sep-separated piece off *@p (which ends at @end); returns
 * 0 when nothing is left.
 */
static int span_next(const char **p, const char *end, char sep,
		     struct span *out)
{
	const char *q;

	if (*p >= end)
		return 0;
	q = memchr(*p, sep, (size_t)(end - *p));
	if (!q)
		q = end;
	*out = span_trim(*p, (size_t)(q - *p));
	*p = q < end ? q + 1 : end;
	return 1;
}

/* A q-value: 0..1; a malformed one counts as 0 (the range is ignored). */
static double parse_q(struct span v)
{
	char tmp[16], *endp;
	double q;

	if (!v.len || v.len >= sizeof(tmp))
		return 0;
	memcpy(tmp, v.s, v.len);
	tmp[v.len] = '\0';
	q = strtod(tmp, &endp);
	if (*endp || q != q || q < 0)
		return 0;
	return q > 1 ? 1 : q;
}

/*
 * Split one element "value;k=v;k=v" into its value, its q (1 when
 * absent) and its version parameter (len 0 when absent).
 */
static struct span parse_elem(struct span e, double *q, struct span *version)
{
	const char *p = e.s, *end = e.s + e.len;
	struct span value = {e.s, 0}, param;
	int first = 1;

	*q = 1;
	*version = (struct span){NULL, 0};
	while (span_next(&p, end, ';', &param)) {
		const char *eq;
		struct span k, v;

		if (first) {
			value = param;
			first = 0;
			continue;
		}
		eq = memchr(param.s, '=', param.len);
		if (!eq)
			continue;
		k = span_trim(param.s, (size_t)(eq - param.s));
		v = span_trim(eq + 1, param.len - (size_t)(eq - param.s) - 1);
		if (v.len >= 2 && v.s[0] == '"' && v.s[v.len - 1] == '"')
			v = (struct span){v.s + 1, v.len - 2};
		if (span_is(k, "q"))
			*q = parse_q(v);
		else if (span_is(k, "version"))
			*version = v;
	}
	return value;
}

enum expo_format negotiate_format(const char *accept)
{
	const char *p, *end;
	double om_q = 0, text_q = 0;
	struct span e;

	if (!accept)
		return EXPO_TEXT;
	p = accept;
	end = accept + strlen(accept);
	while (span_next(&p, end, ',', &e)) {
		struct span version, type;
		double q;

		type = parse_elem(e, &q, &version);
		if (span_is(type, "application/openmetrics-text")) {
			if ((!version.len || span_is(version, "1.0.0")) &&
			    q > om_q)
				om_q = q;
		} else if (span_is(type, "text/plain")) {
			if ((!version.len || span_is(version, "0.0.4")) &&
			    q > text_q)
				text_q = q;
		} else if (span_is(type, "text/*") || span_is(type, "*/*")) {
			if (q > text_q)
				text_q = q;
		}
	}
	return om_q > 0 && om_q >= text_q ? EXPO_OPENMETRICS : EXPO_TEXT;
}

int negotiate_gzip(const char *accept_encoding)
{
	double gzip_q = -1, any_q = -1;
	const char *p, *end;
	struct span e;

	if (!accept_encoding)
		return 0;
	p = accept_encoding;
	end = accept_encoding + strlen(accept_encoding);
	while (span_next(&p, end, ',', &e)) {
		struct span version, coding;
		double q;

		coding = parse_elem(e, &q, &version);
		if (span_is(coding, "gzip") || span_is(coding, "x-gzip")) {
			if (q > gzip_q)
				gzip_q = q;
		} else if (span_is(coding, "*")) {
			any_q = q;
		}
	}
	if (gzip_q >= 0)
		return gzip_q > 0;
	return any_q > 0;
}
