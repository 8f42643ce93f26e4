// SPDX-License-Identifier: MIT
/*
 * A piece of a gzip body: one fixed-Huffman deflate block primed with a
 * dictionary, then an empty stored block (zpiece.h). The tables are RFC
 * 1951 3.2.5-3.2.6; the distance code lookup is zlib's (trees.c).
 */
#include "zpiece.h"

#include <stdlib.h>
#include <string.h>

#define ZP_MIN 4   /* shortest match looked for (deflate allows 3) */
#define ZP_MAX 258 /* longest deflate allows */
/* positions are numbered across pieces; start over before they wrap */
#define ZP_BASE_LIMIT (UINT32_MAX - (64u << 20))

struct zp_bits {
	uint64_t acc;
	unsigned n;
	unsigned char *o;
};

static void zp_put(struct zp_bits *b, uint32_t v, unsigned bits)
{
	b->acc |= (uint64_t)v << b->n;
	b->n += bits;
	if (b->n >= 32) {
		for (int i = 0; i < 4; i++)
			*b->o++ = (unsigned char)(b->acc >> (8 * i));
		b->acc >>= 32;
		b->n -= 32;
	}
}

/* Pad to a byte boundary and write out what is pending. */
static void zp_align(struct zp_bits *b)
{
	for (; b->n > 0; b->n = b->n > 8 ? b->n - 8 : 0) {
		*b->o++ = (unsigned char)b->acc;
		b->acc >>= 8;
	}
}

static uint16_t zp_rev(unsigned code, unsigned len)
{
	unsigned r = 0;

	for (unsigned i = 0; i < len; i++, code >>= 1)
		r = (r << 1) | (code & 1);
	return (uint16_t)r;
}

static void zp_lengths(struct zpiece *z)
{
	unsigned base = 3;

	for (unsigned code = 0; code < 29; code++) {
		unsigned extra = code < 8 || code == 28 ? 0 : (code - 4) / 4;

		z->len_base[code] = (uint16_t)(code == 28 ? 258 : base);
		for (unsigned l = 0; l < (1u << extra) && base + l <= ZP_MAX;
		     l++)
			z->len_sym[base + l] = (uint16_t)(code | extra << 8);
		base += 1u << extra;
	}
	z->len_sym[258] = 28; /* 285, not 284 with all extra bits set */
}

static void zp_distances(struct zpiece *z)
{
	unsigned dist = 0;

	for (unsigned code = 0; code < 30; code++) {
		unsigned extra = code < 4 ? 0 : code / 2 - 1;

		z->dist_base[code] = (uint16_t)(dist + 1);
		z->dist_rev[code] = (uint8_t)zp_rev(code, 5);
		if (code < 16) {
			for (unsigned n = 0; n < (1u << extra); n++)
				z->dist_code[dist++] = (uint8_t)code;
		} else {
			for (unsigned n = 0; n < (1u << (extra - 7)); n++)
				z->dist_code[256 + (dist >> 7) + n] =
					(uint8_t)code;
			dist += 1u << extra;
		}
	}
}

void zpiece_init(struct zpiece *z)
{
	memset(z, 0, sizeof(*z));
	for (unsigned s = 0; s < 288; s++) {
		unsigned code, bits;

		if (s < 144) {
			code = 0x30 + s;
			bits = 8;
		} else if (s < 256) {
			code = 0x190 + (s - 144);
			bits = 9;
		} else if (s < 280) {
			code = s - 256;
			bits = 7;
		} else {
			code = 0xc0 + (s - 280);
			bits = 8;
		}
		z->lit_code[s] = zp_rev(code, bits);
		z->lit_bits[s] = (uint8_t)bits;
	}
	zp_lengths(z);
	zp_distances(z);
}

void zpiece_free(struct zpiece *z)
{
	if (!z)
		return;
	free(z->win);
	z->win = NULL;
	z->win_cap = 0;
}

size_t zpiece_bound(size_t len)
{
	/* 9 bits a literal at most; a block header and end, a stored block */
	return len + len / 8 + 16;
}

static uint32_t zp_read32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t zp_hash(const unsigned char *p)
{
	return (zp_read32(p) * 2654435761u) >> (32 - ZPIECE_HASH_BITS);
}

static void zp_literal(const struct zpiece *z, struct zp_bits *b,
		       unsigned char c)
{
	zp_put(b, z->lit_code[c], z->lit_bits[c]);
}

static void zp_match(const struct zpiece *z, struct zp_bits *b, unsigned len,
		     unsigned dist)
{
	unsigned ls = z->len_sym[len], lc = ls & 0xff, le = ls >> 8;
	unsigned dc = dist <= 256 ? z->dist_code[dist - 1]
				  : z->dist_code[256 + ((dist - 1) >> 7)];
	unsigned de = dc < 4 ? 0 : dc / 2 - 1;

	/* length code and extra bits: 8 + 5 bits at most, then distance */
	zp_put(b,
	       z->lit_code[257 + lc] | (len - z->len_base[lc])
					       << z->lit_bits[257 + lc],
	       z->lit_bits[257 + lc] + le);
	zp_put(b, z->dist_rev[dc] | (dist - z->dist_base[dc]) << 5, 5 + de);
}

/* Copy @dict's tail and @in into the window; the text's offset in it. */
static size_t zp_window(struct zpiece *z, const unsigned char **dict,
			size_t *dict_len, const void *in, size_t len)
{
	if (*dict_len > ZPIECE_WINDOW) {
		*dict += *dict_len - ZPIECE_WINDOW;
		*dict_len = ZPIECE_WINDOW;
	}
	if (len >= ZP_BASE_LIMIT - ZPIECE_WINDOW)
		return SIZE_MAX;
	if (*dict_len + len > z->win_cap) {
		size_t cap = *dict_len + len + 4096;
		unsigned char *w = realloc(z->win, cap);

		if (!w)
			return SIZE_MAX;
		z->win = w;
		z->win_cap = cap;
	}
	if (*dict_len)
		memcpy(z->win, *dict, *dict_len);
	if (len)
		memcpy(z->win + *dict_len, in, len);
	if (z->base > ZP_BASE_LIMIT - *dict_len - len) {
		memset(z->head, 0, sizeof(z->head));
		z->base = 0;
	}
	return *dict_len;
}

static void zp_insert(struct zpiece *z, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		z->head[zp_hash(z->win + i)] = z->base + (uint32_t)i + 1;
}

/* The greedy matcher over win[start, end), literals and matches to @b. */
static void zp_block(struct zpiece *z, struct zp_bits *b, size_t start,
		     size_t end)
{
	const unsigned char *w = z->win;
	size_t pos = start, lit = start;

	while (pos + ZP_MIN <= end) {
		uint32_t h = zp_hash(w + pos), cand = z->head[h];
		size_t c, n;

		z->head[h] = z->base + (uint32_t)pos + 1;
		c = cand > z->base ? cand - z->base - 1 : pos;
		if (c >= pos || pos - c > ZPIECE_WINDOW ||
		    zp_read32(w + c) != zp_read32(w + pos)) {
			pos++;
			continue;
		}
		for (n = ZP_MIN; pos + n < end && n < ZP_MAX; n++)
			if (w[c + n] != w[pos + n])
				break;
		for (; lit < pos; lit++)
			zp_literal(z, b, w[lit]);
		zp_match(z, b, (unsigned)n, (unsigned)(pos - c));
		/* the positions inside the match, for the matches to come */
		zp_insert(z, pos + 1,
			  pos + n + ZP_MIN <= end ? pos + n : end - ZP_MIN + 1);
		pos += n;
		lit = pos;
	}
	for (; lit < end; lit++)
		zp_literal(z, b, w[lit]);
}

size_t zpiece_write(struct zpiece *z, const void *dict, size_t dict_len,
		    const void *in, size_t len, unsigned char *out)
{
	const unsigned char *d = dict;
	struct zp_bits b = {.o = out};
	size_t start = zp_window(z, &d, &dict_len, in, len);

	if (start == SIZE_MAX)
		return 0;
	if (len) {
		/* every dictionary position whose 4 bytes are in the window */
		zp_insert(z, 0,
			  dict_len + len < ZP_MIN ? 0
			  : len >= ZP_MIN	  ? dict_len
					  : dict_len + len - ZP_MIN + 1);
		zp_put(&b, 2, 3); /* not final, fixed codes */
		zp_block(z, &b, start, start + len);
		zp_put(&b, z->lit_code[256], z->lit_bits[256]);
		z->base += (uint32_t)(dict_len + len);
	}
	zp_put(&b, 0, 3); /* an empty stored block: the byte boundary */
	zp_align(&b);
	memcpy(b.o, "\x00\x00\xff\xff", 4);
	return (size_t)(b.o + 4 - out);
}
