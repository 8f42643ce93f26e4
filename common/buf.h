/* SPDX-License-Identifier: MIT */
/*
 * A growable byte buffer with a hard ceiling (after curl's dynbuf): appends
 * past the ceiling fail with -E2BIG, so a runaway producer (a huge request
 * body, a scrape of a huge database) fails cleanly instead of eating the
 * machine. The content is always NUL-terminated.
 *
 * A failed append frees the buffer, as curl's Curl_dyn_*() do: whatever
 * the error (-E2BIG, -ENOMEM, -EINVAL), the content is gone and the buffer
 * is empty (data NULL, len 0) and valid, its ceiling kept. So a caller
 * stops at the first error, never uses what it had appended before it,
 * and never goes on appending as if the earlier appends were there. A
 * caller that wants what fits asks buf_room() first.
 */
#ifndef IBPULSE_BUF_H
#define IBPULSE_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data;
	size_t len;
	size_t cap;
	size_t max; /* ceiling on len; 0 means no ceiling */
};

void buf_init(struct buf *b, size_t max);
/* Free the memory; the buffer can be reused after buf_init(). NULL is fine. */
void buf_free(struct buf *b);
/* Empty the buffer, keeping its memory. */
void buf_reset(struct buf *b);
/* Append bytes; 0, -ENOMEM, or -E2BIG past the ceiling (freed on error). */
int buf_add(struct buf *b, const void *data, size_t len);
/*
 * Make room for @extra more bytes (and the NUL); 0, -E2BIG or -ENOMEM
 * (and freed, as a failed append).
 */
int buf_reserve(struct buf *b, size_t extra);
/* How many more bytes the ceiling lets in. */
size_t buf_room(const struct buf *b);
int buf_adds(struct buf *b, const char *s);
int buf_addc(struct buf *b, char c);
int buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/*
 * buf_setlen() - the content is its first @len bytes: to cut it back (a
 * caller's undo), or to take bytes a producer wrote into room that
 * buf_reserve() made (zlib). 0, or -EINVAL when @len is past that room.
 */
int buf_setlen(struct buf *b, size_t len);
/*
 * buf_adopt() - the buffer takes @data, @cap bytes from malloc() (a pooled
 * allocation), as its empty content; what it held is freed.
 */
void buf_adopt(struct buf *b, char *data, size_t cap);
/* Hand the data to the caller (who frees it) and reset the buffer. */
char *buf_steal(struct buf *b, size_t *len);

#endif
