/* SPDX-License-Identifier: MIT */
/*
 * Inside the test API codec (testapi.h): the helpers its three files
 * (testapi.c, testapi_reg.c, testapi_plan.c) share, on jdec and jansson.
 * Nothing outside those files includes it.
 */
#ifndef IBPULSE_TESTAPI_INT_H
#define IBPULSE_TESTAPI_INT_H

#include <jansson.h>

#include "jdec.h"
#include "testapi.h"

/* A body decoder: @o is the parsed root, @obj the struct to fill. */
typedef int (*testapi_body_fn)(struct jdec *d, const json_t *o, void *obj);

/*
 * testapi_decode() - a zeroed struct of @size in *@out, filled by @fn from
 * the root of @json; on failure freed with @free_fn and *@out NULL.
 * Returns 0, -EINVAL with "<path>: <reason>" in @err, or -ENOMEM.
 */
int testapi_decode(const char *json, size_t len, char *err, size_t errlen,
		   size_t size, testapi_body_fn fn, void (*free_fn)(void *),
		   void **out);

/* An integer member in [1, @max] (a port number) into *@out. */
int testapi_uint(struct jdec *d, const json_t *o, const char *key, int64_t max,
		 int required, unsigned *out);

/* "version": TESTAPI_VERSION, required, and @o an object. */
int testapi_version(struct jdec *d, const json_t *o);

/* A string member of TESTAPI_KEY_HEX hex digits (a ticket or key). */
int testapi_hex_key(struct jdec *d, const json_t *o, const char *key,
		    char **out);

/* Set @key of @o to @s, or leave it out when @s is NULL or "". */
void testapi_set_str(json_t *o, const char *key, const char *s);

/* Set @key of @o to @s, or to null when @s is NULL or "". */
void testapi_set_str_or_null(json_t *o, const char *key, const char *s);

/*
 * testapi_params_check() - the typed params fields a result may carry
 * (testapi.h) must hold their ranges when present: "dlid" an integer in
 * [1, TESTAPI_LID_MAX]. 0 or -EINVAL with the path in @d.
 */
int testapi_params_check(struct jdec *d, const json_t *p);

/* @o as compact JSON text in *@out (freed here); 0 or -ENOMEM. */
int testapi_dump(json_t *o, char **out);

#endif
