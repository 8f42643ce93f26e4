// SPDX-License-Identifier: MIT
/*
 * Prometheus exposition writer (text 0.0.4 and OpenMetrics 1.0): see
 * expo.h. The per-sample path assembles a line in a stack buffer and adds
 * it to the output with one buf_add(); escaping runs only on label values
 * and HELP text, which callers build once per scrape.
 */
#include "expo.h"
#include "vec.h"
#include "fnv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPO_LINE_MAX 1024

static const char utf8_replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

void expo_init(struct expo *e, struct buf *out, enum expo_format format)
{
	memset(e, 0, sizeof(*e));
	e->out = out;
	e->format = format;
}

void expo_free(struct expo *e)
{
	if (!e)
		return;
	free(e->seen);
	e->seen = NULL;
	e->n_seen = e->cap_seen = 0;
	free(e->drops);
	e->drops = NULL;
	e->n_drops = e->cap_drops = 0;
}

void expo_set_family_cap(struct expo *e, size_t cap)
{
	e->family_cap = cap;
}

void expo_set_hooks(struct expo *e, const struct expo_hooks *h, void *ctx)
{
	e->hooks = h;
	e->hooks_ctx = ctx;
}

int expo_segment(struct expo *e, uint64_t key, uint64_t fp)
{
	int ret;

	if (e->err || !e->hooks)
		return e->err;
	ret = e->hooks->segment(e->hooks_ctx, e, key, fp);
	if (ret < 0)
		e->err = ret;
	return ret;
}

/* Record what the cap left out of the current family; 0 or -ENOMEM. */
static int expo_flush_drops(struct expo *e)
{
	struct expo_drop *d;

	if (!e->family_dropped)
		return 0;
	if (vec_grow(&e->drops, &e->cap_drops, e->n_drops, sizeof(*d)))
		return -ENOMEM;
	d = &e->drops[e->n_drops++];
	memcpy(d->family, e->drop_name, sizeof(d->family));
	d->n = e->family_dropped;
	e->family_dropped = 0;
	return 0;
}

int expo_add_drop(struct expo *e, const char *family, uint64_t n)
{
	int ret;

	if (e->err)
		return e->err;
	e->family_dropped = n;
	snprintf(e->drop_name, sizeof(e->drop_name), "%s", family);
	ret = expo_flush_drops(e);
	return ret ? (e->err = ret) : 0;
}

const struct expo_drop *expo_drops(struct expo *e, size_t *n)
{
	if (!e->err && expo_flush_drops(e))
		e->err = -ENOMEM;
	*n = e->n_drops;
	return e->drops;
}

const char *expo_content_type(enum expo_format format)
{
	if (format == EXPO_OPENMETRICS)
		return "application/openmetrics-text; version=1.0.0; "
		       "charset=utf-8";
	return "text/plain; version=0.0.4; charset=utf-8";
}

static int expo_is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int expo_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int expo_metric_name_valid(const char *name)
{
	if (!name || !(expo_is_alpha(*name) || *name == ':'))
		return 0;
	for (name++; *name; name++)
		if (!expo_is_alpha(*name) && !expo_is_digit(*name) &&
		    *name != ':')
			return 0;
	return 1;
}

int expo_label_name_valid(const char *name)
{
	if (!name || !expo_is_alpha(*name) || !strncmp(name, "__", 2))
		return 0;
	for (name++; *name; name++)
		if (!expo_is_alpha(*name) && !expo_is_digit(*name))
			return 0;
	return 1;
}

/*
 * Length of the valid UTF-8 sequence starting at @s (at most @n bytes),
 * or 0 when it is not valid (overlong forms, surrogates and code points
 * past U+10FFFF included).
 */
static size_t expo_utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/*
 * Escape @s into @b: backslash and newline always, the double quote when
 * @quote, invalid UTF-8 replaced. Runs of bytes that need nothing are
 * copied in one piece.
 */
static int expo_escape(struct buf *b, const char *s, size_t len, int quote)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;
	int ret = 0;

	while (i < len && !ret) {
		unsigned char c = p[i];
		const char *rep = NULL;
		size_t rep_len = 2, skip = 1;

		if (c == '\\')
			rep = "\\\\";
		else if (c == '\n')
			rep = "\\n";
		else if (c == '"' && quote)
			rep = "\\\"";
		else if (c >= 0x80) {
			skip = expo_utf8_len(p + i, len - i);
			if (!skip) {
				rep = utf8_replacement;
				rep_len = 3;
				skip = 1;
			}
		}
		if (!rep) {
			i += skip;
			continue;
		}
		ret = buf_add(b, s + run, i - run);
		if (!ret)
			ret = buf_add(b, rep, rep_len);
		i += skip;
		run = i;
	}
	if (!ret)
		ret = buf_add(b, s + run, len - run);
	return ret;
}

int expo_escape_label_value(struct buf *b, const char *s, size_t len)
{
	return expo_escape(b, s, len, 1);
}

int expo_escape_help(struct buf *b, const char *s, enum expo_format format)
{
	return expo_escape(b, s, strlen(s), format == EXPO_OPENMETRICS);
}

int expo_label(struct buf *b, const char *name, const char *value)
{
	int ret;

	if (!expo_label_name_valid(name))
		return -EINVAL;
	if (!value)
		value = "";
	ret = b->len ? buf_addc(b, ',') : 0;
	if (!ret)
		ret = buf_adds(b, name);
	if (!ret)
		ret = buf_add(b, "=\"", 2);
	if (!ret)
		ret = expo_escape_label_value(b, value, strlen(value));
	if (!ret)
		ret = buf_addc(b, '"');
	return ret;
}

int expo_label_int(struct buf *b, const char *name, int64_t v, int hex)
{
	char num[32] = "";

	if (v >= 0 && hex)
		snprintf(num, sizeof(num), "0x%0*" PRIx64, hex, v);
	else if (v >= 0)
		snprintf(num, sizeof(num), "%" PRId64, v);
	return expo_label(b, name, num);
}

size_t expo_format_u64(char *dst, uint64_t v)
{
	char tmp[24];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		dst[i] = tmp[n - 1 - i];
	dst[n] = '\0';
	return n;
}

size_t expo_format_double(char *dst, double v)
{
	int n = 0;

	if (isnan(v))
		return (size_t)snprintf(dst, EXPO_NUM_MAX, "NaN");
	if (isinf(v))
		return (size_t)snprintf(dst, EXPO_NUM_MAX,
					v > 0 ? "+Inf" : "-Inf");
	if (v == trunc(v) && fabs(v) <= 9007199254740992.0) { /* 2^53 */
		if (v >= 0)
			return expo_format_u64(dst, (uint64_t)v);
		dst[0] = '-';
		return 1 + expo_format_u64(dst + 1, (uint64_t)-v);
	}
	/* The shortest that reads back as the same double. */
	for (int prec = 15; prec <= 17; prec++) {
		n = snprintf(dst, EXPO_NUM_MAX, "%.*g", prec, v);
		if (strtod(dst, NULL) == v)
			break;
	}
	return (size_t)n;
}

static uint64_t expo_hash(const char *s)
{
	return fnv1a_str(FNV1A_BASIS, s);
}

static int expo_mark_seen(struct expo *e, const char *name)
{
	uint64_t h = expo_hash(name);

	for (size_t i = 0; i < e->n_seen; i++)
		if (e->seen[i] == h)
			return -EEXIST;
	if (vec_grow(&e->seen, &e->cap_seen, e->n_seen, sizeof(*e->seen)))
		return -ENOMEM;
	e->seen[e->n_seen++] = h;
	return 0;
}

static int expo_ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len > n && !memcmp(s + len - n, suffix, n);
}

int expo_family(struct expo *e, const char *name, enum expo_type type,
		const char *help)
{
	size_t len;
	int ret;

	if (e->err)
		return e->err;
	len = name ? strlen(name) : 0;
	if (!expo_metric_name_valid(name) ||
	    (type == EXPO_COUNTER && !expo_ends_with(name, len, "_total")) ||
	    (type == EXPO_INFO && !expo_ends_with(name, len, "_info")))
		return e->err = -EINVAL;
	ret = expo_mark_seen(e, name);
	if (!ret)
		ret = expo_flush_drops(e);
	if (ret)
		return e->err = ret;
	e->family_samples = 0;
	e->name = name;
	e->name_len = len;
	e->type = type;
	e->help = help;
	e->header_pending = !e->hooks;
	if (e->hooks && (ret = e->hooks->family(e->hooks_ctx, e)))
		return e->err = ret;
	return 0;
}

int expo_header_write(struct buf *b, const char *name, enum expo_type type,
		      const char *help, enum expo_format format)
{
	static const char *const types[][2] = {
		[EXPO_COUNTER] = {"counter", "counter"},
		[EXPO_GAUGE] = {"gauge", "gauge"},
		[EXPO_INFO] = {"gauge", "info"},
	};
	size_t flen = strlen(name);
	int om = format == EXPO_OPENMETRICS;
	int ret = 0;

	if (om && type == EXPO_COUNTER)
		flen -= strlen("_total");
	else if (om && type == EXPO_INFO)
		flen -= strlen("_info");
	if (help) {
		ret = buf_add(b, "# HELP ", 7);
		if (!ret)
			ret = buf_add(b, name, flen);
		if (!ret)
			ret = buf_addc(b, ' ');
		if (!ret)
			ret = expo_escape_help(b, help, format);
		if (!ret)
			ret = buf_addc(b, '\n');
	}
	if (!ret)
		ret = buf_add(b, "# TYPE ", 7);
	if (!ret)
		ret = buf_add(b, name, flen);
	if (!ret)
		ret = buf_addc(b, ' ');
	if (!ret)
		ret = buf_adds(b, types[type][om]);
	if (!ret)
		ret = buf_addc(b, '\n');
	return ret;
}

/* HELP and TYPE, written before the family's first sample. */
static int expo_header(struct expo *e)
{
	e->header_pending = 0;
	return expo_header_write(e->out, e->name, e->type, e->help, e->format);
}

static int expo_line(struct expo *e, const char *labels, const char *extra,
		     const char *num, size_t num_len)
{
	size_t ll = labels ? strlen(labels) : 0;
	size_t el = extra ? strlen(extra) : 0;
	size_t need = e->name_len + ll + el + num_len + 5;
	char line[EXPO_LINE_MAX], *p = line;
	int ret;

	if (e->err)
		return e->err;
	if (!e->hooks && e->family_cap && e->family_samples >= e->family_cap) {
		/* the caller may reuse @name's storage for the next family */
		if (!e->family_dropped++)
			snprintf(e->drop_name, sizeof(e->drop_name), "%.*s",
				 (int)e->name_len, e->name);
		return 0;
	}
	if (e->header_pending) {
		ret = expo_header(e);
		if (ret)
			return e->err = ret;
	}
	if (need > sizeof(line)) {
		p = malloc(need);
		if (!p)
			return e->err = -ENOMEM;
	}
	need = 0;
	memcpy(p, e->name, e->name_len);
	need += e->name_len;
	if (ll || el) {
		p[need++] = '{';
		if (ll)
			memcpy(p + need, labels, ll);
		need += ll;
		if (ll && el)
			p[need++] = ',';
		if (el)
			memcpy(p + need, extra, el);
		need += el;
		p[need++] = '}';
	}
	p[need++] = ' ';
	memcpy(p + need, num, num_len);
	need += num_len;
	p[need++] = '\n';
	ret = buf_add(e->out, p, need);
	if (p != line)
		free(p);
	if (ret)
		return e->err = ret;
	e->samples++;
	e->family_samples++;
	return 0;
}

int expo_sample_u64(struct expo *e, const char *labels, const char *extra,
		    uint64_t v)
{
	char num[EXPO_NUM_MAX];
	size_t n = expo_format_u64(num, v);

	return expo_line(e, labels, extra, num, n);
}

int expo_sample(struct expo *e, const char *labels, const char *extra, double v)
{
	char num[EXPO_NUM_MAX];
	size_t n = expo_format_double(num, v);

	return expo_line(e, labels, extra, num, n);
}

int expo_finish(struct expo *e)
{
	int ret;

	if (e->err)
		return e->err;
	ret = expo_flush_drops(e);
	if (ret)
		return e->err = ret;
	if (e->format == EXPO_OPENMETRICS && !e->hooks) {
		ret = buf_add(e->out, "# EOF\n", 6);
		if (ret)
			return e->err = ret;
	}
	e->name = NULL;
	return 0;
}
