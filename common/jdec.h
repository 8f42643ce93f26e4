// SPDX-License-Identifier: MIT
/*
 * Field-path JSON decoding on jansson, shared by the report decoder
 * (report_decode.c) and the test API codec (testapi.c): a decoder
 * keeps the path of the field it is at ("devices[0].ports[1].lid") and every
 * check that fails writes "<path>: <reason>" into the caller's error buffer,
 * so a 400 answer names the field an operator has to fix.
 *
 * Contract: each getter enters its member, checks it, copies it out and
 * leaves the path as it found it (jdec_array() is the one exception: it
 * stays at the array so the caller can append indexes, and hands back the
 * length to pop to). Every function returns 0, -EINVAL with the error
 * written, or -ENOMEM with "out of memory" written. Absent and JSON null
 * both mean "unknown": an optional member that is missing leaves *out as
 * the caller set it. Strings are copied with strndup; the caller frees
 * them (a previous value in *out is freed when replaced).
 */
#ifndef IBPULSE_JDEC_H
#define IBPULSE_JDEC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "name.h"

/* Decoder state: where the error goes and the path of the current field. */
struct jdec {
	char *err;
	size_t errlen;
	const char *top; /* names the document in errors about its root */
	char path[256];
	size_t plen;
};

/* The character set a string member must keep to: name.h's rules. */
enum jdec_class {
	JDEC_TEXT = NAME_TEXT,	/* printable: no control characters */
	JDEC_NAME = NAME_LABEL, /* [A-Za-z0-9_.:+-], non-empty */
	JDEC_HOST = NAME_HOST,	/* [A-Za-z0-9.-_], starts alphanumeric */
};

/**
 * jdec_load() - parse @len bytes of @json into *@root for decoder @d
 * @d: decoder with err, errlen and top set; its path is reset
 *
 * Duplicate keys are refused. Clears the error buffer first. On success the
 * caller owns *@root (json_decref). Returns 0 or -EINVAL with the error
 * "invalid JSON at line L column C: ..." written.
 */
int jdec_load(struct jdec *d, const char *json, size_t len, json_t **root);

/**
 * jdec_push() - append printf-style text to the path
 *
 * Returns the previous path length, for jdec_pop(). A path that would not
 * fit is cut at the buffer's end.
 */
size_t jdec_push(struct jdec *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Enter object member @key: "a.b", or "b" at the top. Returns for pop. */
size_t jdec_key(struct jdec *d, const char *key);

/* Enter array element @i: "a[i]". Returns for jdec_pop(). */
size_t jdec_index(struct jdec *d, size_t i);

/* Go back to the path length @old that a push returned. */
void jdec_pop(struct jdec *d, size_t old);

/**
 * jdec_fail() - write "<path>: <message>" (or "<top>: ..." at the root)
 *
 * Returns -EINVAL so a check can `return jdec_fail(d, ...)`.
 */
int jdec_fail(struct jdec *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Write "out of memory"; returns -ENOMEM. */
int jdec_nomem(struct jdec *d);

/* Member @key of @o, or NULL when it is absent or null. */
json_t *jdec_get(const json_t *o, const char *key);

/* Check that @v (the value at the current path) is an object. */
int jdec_object_at(struct jdec *d, const json_t *v);

/* Check the @len bytes at @s against @maxlen and @cls; copy to *@out. */
int jdec_cstring(struct jdec *d, const char *s, size_t len, size_t maxlen,
		 enum jdec_class cls, char **out);

/* The same for the value @v at the current path, which must be a string. */
int jdec_string_at(struct jdec *d, const json_t *v, size_t maxlen,
		   enum jdec_class cls, char **out);

/* @v must be an integer in [@min, @max] ("must be an integer in [a, b]"). */
int jdec_int_at(struct jdec *d, const json_t *v, int64_t min, int64_t max,
		int64_t *out);

/* @v must be an integer >= 0 ("must be a non-negative integer"). */
int jdec_count_at(struct jdec *d, const json_t *v, int64_t *out);

/* Member getters: enter @key, check as the _at forms, leave again. */
int jdec_str(struct jdec *d, const json_t *o, const char *key, size_t maxlen,
	     enum jdec_class cls, int required, char **out);
int jdec_int(struct jdec *d, const json_t *o, const char *key, int64_t min,
	     int64_t max, int required, int64_t *out);
int jdec_count(struct jdec *d, const json_t *o, const char *key, int required,
	       int64_t *out);

/* A finite number in [@min, @max] ("must be a number in [%g, %g]"). */
int jdec_num(struct jdec *d, const json_t *o, const char *key, double min,
	     double max, int required, double *out);

/* An object member; *@out is NULL when it is absent and not @required. */
int jdec_obj(struct jdec *d, const json_t *o, const char *key, int required,
	     json_t **out);

/**
 * jdec_array() - fetch array member @key of at most @max elements
 * @size: bytes per element to allocate (zeroed) into *@elems
 * @old: where to return the path length to pop to
 *
 * *@arr and *@elems are NULL when the member is absent (or the array is
 * empty, for *@elems). Leaves the path at @key so the caller can
 * jdec_index() each element, and pops to *@old when done. The caller
 * frees *@elems.
 */
int jdec_array(struct jdec *d, const json_t *o, const char *key, size_t max,
	       int required, size_t size, json_t **arr, void **elems,
	       size_t *old);

#endif
