// SPDX-License-Identifier: MIT
/* Growable buffer with a ceiling: see buf.h. */
#include "buf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

void buf_free(struct buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

/* A failed append: the buffer is freed, empty and valid (see buf.h). */
static int buf_fail(struct buf *b, int err)
{
	buf_free(b);
	return err;
}

int buf_reserve(struct buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (extra > SIZE_MAX - b->len - 1)
		return buf_fail(b, -E2BIG);
	need = b->len + extra;
	if (b->max && need > b->max)
		return buf_fail(b, -E2BIG);
	if (need + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need + 1)
		cap = cap > SIZE_MAX / 2 ? need + 1 : cap * 2;
	p = realloc(b->data, cap);
	if (!p)
		return buf_fail(b, -ENOMEM);
	b->data = p;
	b->cap = cap;
	return 0;
}

int buf_add(struct buf *b, const void *data, size_t len)
{
	int ret = buf_reserve(b, len);

	if (ret)
		return ret;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int buf_addc(struct buf *b, char c)
{
	if (b->len + 1 < b->cap && (!b->max || b->len + 1 <= b->max)) {
		b->data[b->len++] = c;
		b->data[b->len] = '\0';
		return 0;
	}
	return buf_add(b, &c, 1);
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n, ret;

	va_copy(ap2, ap);
	n = vsnprintf(b->data ? b->data + b->len : NULL,
		      b->data ? b->cap - b->len : 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return buf_fail(b, -EINVAL);
	if (b->data && (size_t)n < b->cap - b->len) {
		if (b->max && b->len + (size_t)n > b->max)
			return buf_fail(b, -E2BIG);
		b->len += (size_t)n;
		return 0;
	}
	ret = buf_reserve(b, (size_t)n);
	if (ret)
		return ret;
	vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return ret;
}

char *buf_steal(struct buf *b, size_t *len)
{
	char *p = b->data;

	if (!p) {
		p = calloc(1, 1);
		if (len)
			*len = 0;
		return p;
	}
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

size_t buf_room(const struct buf *b)
{
	return b->max ? b->max - b->len : SIZE_MAX - b->len - 1;
}

void buf_adopt(struct buf *b, char *data, size_t cap)
{
	free(b->data);
	b->data = data;
	b->cap = cap;
	b->len = 0;
	if (data)
		data[0] = '\0';
	else
		b->cap = 0;
}

int buf_setlen(struct buf *b, size_t len)
{
	if (!b->data ? len : len >= b->cap)
		return -EINVAL;
	b->len = len;
	if (b->data)
		b->data[len] = '\0';
	return 0;
}
