/* SPDX-License-Identifier: MIT */
/*
 * Parallel gzip for large /metrics bodies (after pigz): the input is cut
 * into chunks, each compressed on its own thread as raw deflate primed
 * with the previous 32 KiB as dictionary and ended with a sync flush (the
 * last chunk finishes the stream), and the pieces are joined under one
 * gzip header and trailer with the CRC-32s combined. The result is one
 * ordinary gzip stream any client can read; with one thread it is plain
 * zlib output.
 */
#ifndef IBPULSE_PGZIP_H
#define IBPULSE_PGZIP_H

#include <stddef.h>

/*
 * pgzip_compress() - gzip @len bytes at @in at zlib @level (1..9) with up
 * to @threads threads (0: one per online CPU, at most 8). On success
 * *@out (caller frees) holds *@out_len bytes. Returns 0, -ENOMEM, or
 * -EIO if zlib fails.
 */
int pgzip_compress(const char *in, size_t len, int level, unsigned threads,
		   char **out, size_t *out_len);

#endif
