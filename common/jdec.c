// SPDX-License-Identifier: MIT
/*
 * Field-path JSON decoding (jdec.h): the path bookkeeping, the error
 * messages and the typed checks that the report decoder and the test API
 * decoders share, so both name a bad field the same way.
 */
#include "jdec.h"
#include "name.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int jdec_load(struct jdec *d, const char *json, size_t len, json_t **root)
{
	json_error_t jerr;

	d->plen = 0;
	d->path[0] = '\0';
	if (d->errlen)
		d->err[0] = '\0';
	*root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!*root) {
		snprintf(d->err, d->errlen,
			 "invalid JSON at line %d column %d: %s", jerr.line,
			 jerr.column, jerr.text);
		return -EINVAL;
	}
	return 0;
}

size_t jdec_push(struct jdec *d, const char *fmt, ...)
{
	size_t old = d->plen;
	va_list ap;
	int n;

	if (d->plen >= sizeof(d->path) - 1)
		return old;
	va_start(ap, fmt);
	n = vsnprintf(d->path + d->plen, sizeof(d->path) - d->plen, fmt, ap);
	va_end(ap);
	if (n > 0)
		d->plen += (size_t)n;
	if (d->plen > sizeof(d->path) - 1)
		d->plen = sizeof(d->path) - 1;
	return old;
}

size_t jdec_key(struct jdec *d, const char *key)
{
	return jdec_push(d, "%s%s", d->plen ? "." : "", key);
}

size_t jdec_index(struct jdec *d, size_t i)
{
	return jdec_push(d, "[%zu]", i);
}

void jdec_pop(struct jdec *d, size_t old)
{
	d->plen = old;
	d->path[old] = '\0';
}

int jdec_fail(struct jdec *d, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(d->err, d->errlen, "%s: %s", d->plen ? d->path : d->top, msg);
	return -EINVAL;
}

int jdec_nomem(struct jdec *d)
{
	snprintf(d->err, d->errlen, "out of memory");
	return -ENOMEM;
}

json_t *jdec_get(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_null(v) ? NULL : v;
}

int jdec_object_at(struct jdec *d, const json_t *v)
{
	return json_is_object(v) ? 0 : jdec_fail(d, "must be an object");
}

int jdec_cstring(struct jdec *d, const char *s, size_t len, size_t maxlen,
		 enum jdec_class cls, char **out)
{
	char *copy;

	if (len == 0 && cls != JDEC_TEXT)
		return jdec_fail(d, "must not be empty");
	if (len > maxlen)
		return jdec_fail(d, "must be at most %zu bytes long", maxlen);
	for (size_t i = 0; i < len; i++)
		if (!name_char_ok((enum name_class)cls, (unsigned char)s[i], i))
			return jdec_fail(d, "must contain only %s",
					 name_class_desc((enum name_class)cls));
	copy = strndup(s, len);
	if (!copy)
		return jdec_nomem(d);
	free(*out);
	*out = copy;
	return 0;
}

int jdec_string_at(struct jdec *d, const json_t *v, size_t maxlen,
		   enum jdec_class cls, char **out)
{
	if (!json_is_string(v))
		return jdec_fail(d, "must be a string");
	return jdec_cstring(d, json_string_value(v), json_string_length(v),
			    maxlen, cls, out);
}

static int jdec_int_in(const json_t *v, int64_t min, int64_t max, int64_t *out)
{
	json_int_t x;

	if (!json_is_integer(v))
		return 0;
	x = json_integer_value(v);
	if (x < min || x > max)
		return 0;
	*out = x;
	return 1;
}

int jdec_int_at(struct jdec *d, const json_t *v, int64_t min, int64_t max,
		int64_t *out)
{
	if (jdec_int_in(v, min, max, out))
		return 0;
	return jdec_fail(d, "must be an integer in [%lld, %lld]",
			 (long long)min, (long long)max);
}

int jdec_count_at(struct jdec *d, const json_t *v, int64_t *out)
{
	if (jdec_int_in(v, 0, INT64_MAX, out))
		return 0;
	return jdec_fail(d, "must be a non-negative integer");
}

int jdec_str(struct jdec *d, const json_t *o, const char *key, size_t maxlen,
	     enum jdec_class cls, int required, char **out)
{
	json_t *v = jdec_get(o, key);
	size_t old = jdec_key(d, key);
	int ret = 0;

	if (v)
		ret = jdec_string_at(d, v, maxlen, cls, out);
	else if (required)
		ret = jdec_fail(d, "is required");
	jdec_pop(d, old);
	return ret;
}

int jdec_int(struct jdec *d, const json_t *o, const char *key, int64_t min,
	     int64_t max, int required, int64_t *out)
{
	json_t *v = jdec_get(o, key);
	size_t old = jdec_key(d, key);
	int ret = 0;

	if (v)
		ret = jdec_int_at(d, v, min, max, out);
	else if (required)
		ret = jdec_fail(d, "is required");
	jdec_pop(d, old);
	return ret;
}

int jdec_count(struct jdec *d, const json_t *o, const char *key, int required,
	       int64_t *out)
{
	json_t *v = jdec_get(o, key);
	size_t old = jdec_key(d, key);
	int ret = 0;

	if (v)
		ret = jdec_count_at(d, v, out);
	else if (required)
		ret = jdec_fail(d, "is required");
	jdec_pop(d, old);
	return ret;
}

int jdec_num(struct jdec *d, const json_t *o, const char *key, double min,
	     double max, int required, double *out)
{
	json_t *v = jdec_get(o, key);
	size_t old = jdec_key(d, key);
	double x = json_number_value(v);
	int ret = 0;

	if (!v) {
		if (required)
			ret = jdec_fail(d, "is required");
	} else if (!json_is_number(v) || !isfinite(x) || x < min || x > max) {
		ret = jdec_fail(d, "must be a number in [%g, %g]", min, max);
	} else {
		*out = x;
	}
	jdec_pop(d, old);
	return ret;
}

int jdec_obj(struct jdec *d, const json_t *o, const char *key, int required,
	     json_t **out)
{
	json_t *v = jdec_get(o, key);
	size_t old = jdec_key(d, key);
	int ret = 0;

	*out = v;
	if (!v) {
		if (required)
			ret = jdec_fail(d, "is required");
	} else {
		ret = jdec_object_at(d, v);
	}
	jdec_pop(d, old);
	return ret;
}

int jdec_array(struct jdec *d, const json_t *o, const char *key, size_t max,
	       int required, size_t size, json_t **arr, void **elems,
	       size_t *old)
{
	json_t *a = jdec_get(o, key);
	size_t n;

	*old = jdec_key(d, key);
	*arr = NULL;
	*elems = NULL;
	if (!a)
		return required ? jdec_fail(d, "is required") : 0;
	if (!json_is_array(a))
		return jdec_fail(d, "must be an array");
	n = json_array_size(a);
	if (n > max)
		return jdec_fail(d, "must have at most %zu elements", max);
	*arr = a;
	if (n == 0)
		return 0;
	*elems = calloc(n, size);
	return *elems ? 0 : jdec_nomem(d);
}
