/* SPDX-License-Identifier: MIT */
/*
 * Deflate of one piece of a gzip body (bcache_body.c): raw deflate (RFC
 * 1951) of a text primed with a dictionary, the bytes that come before it
 * in the stream, in one block of the fixed Huffman codes, ended by an
 * empty stored block at a byte boundary (what zlib's Z_SYNC_FLUSH writes),
 * so pieces concatenate into one stream.
 *
 * Why not zlib: the block cache's pieces are a few hundred bytes each
 * (one host's lines of one family), tens of thousands per scrape. For
 * each, zlib clears its hash table, hashes the whole dictionary, and
 * builds three Huffman trees, only to choose the fixed codes for most such
 * small blocks; that bookkeeping, not the matching, was most of a gzip
 * scrape's CPU. Here one hash table serves every piece (positions are
 * numbered across pieces, so stale entries are simply too old and nothing
 * is cleared) and matches are greedy, one candidate per hash (LZ4's way):
 * a piece repeats the names and labels of its dictionary, which that
 * finds. tests/exporter/test_zpiece.c checks every piece against zlib's
 * inflate and the size against zlib's own pieces.
 */
#ifndef IBPULSE_ZPIECE_H
#define IBPULSE_ZPIECE_H

#include <stddef.h>
#include <stdint.h>

#define ZPIECE_WINDOW 32768 /* deflate's window: the useful dictionary */
#define ZPIECE_HASH_BITS 13

struct zpiece {
	uint32_t head[1u << ZPIECE_HASH_BITS]; /* hash -> numbered position */
	uint32_t base;			       /* numbering of win[0] */
	unsigned char *win;		       /* dictionary then text */
	size_t win_cap;
	/* the fixed codes, bit-reversed for an LSB-first stream */
	uint16_t lit_code[288];
	uint8_t lit_bits[288];
	uint16_t len_sym[259]; /* length -> symbol - 257 | extra bits << 8 */
	uint16_t len_base[29];
	uint8_t dist_code[512]; /* distance - 1 -> code (zlib's layout) */
	uint16_t dist_base[30];
	uint8_t dist_rev[30]; /* the 5-bit code, reversed */
};

/* Ready @z (no allocation yet). zpiece_free() frees what it holds. */
void zpiece_init(struct zpiece *z);
void zpiece_free(struct zpiece *z);

/* The most bytes zpiece_write() may write for @len bytes of text. */
size_t zpiece_bound(size_t len);

/*
 * zpiece_write() - the piece for @in (@len bytes) after @dict (@dict_len
 * bytes; only the last ZPIECE_WINDOW count) into @out, which has room for
 * zpiece_bound(@len) bytes. Returns the bytes written, or 0 when out of
 * memory (a piece is never empty).
 */
size_t zpiece_write(struct zpiece *z, const void *dict, size_t dict_len,
		    const void *in, size_t len, unsigned char *out);

#endif
