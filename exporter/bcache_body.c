// SPDX-License-Identifier: MIT
/*
 * Bodies from the block cache (bcache.h): the text body is each family's
 * header and its segments' text in order; the gzip body is one gzip
 * member made of pieces. Each segment's piece is raw deflate of its text
 * (zpiece.h), primed with the text of the segment before it in the family
 * (the bytes that precede it in the body, so its back-references stay
 * valid) and ended at a byte boundary; a piece is made again only when
 * its text or that of the segment before it changed. A family's pieces
 * lie one after the other in its pack, rebuilt (pieces kept are copied,
 * the others made) when one changed, so that a body copies one run of
 * bytes per family. Families are compressed on several threads (the
 * dictionary never crosses a family). The packs are joined under one
 * header, then a final empty block and the trailer: the CRC-32 combined
 * from the pieces' and the length.
 */
#include "bcache_int.h"
#include "crcmul.h"
#include "fnv.h"
#include "zpiece.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define BC_MAX_THREADS 8
#define BC_DICT ZPIECE_WINDOW
/* More than 1/this of the text without pieces: gzip the body whole. */
#define BC_WHOLE_SHARE 4
/* Less than this to compress is done on the calling thread alone. */
#define BC_PARALLEL_BYTES (1 << 20)

static const char bc_eof[] = "# EOF\n";

int bc_family_header(struct bc_scope *s, struct bc_family *f,
		     enum expo_format format)
{
	struct buf b;
	int ret;

	(void)s;
	if (f->hdr[format])
		return 0;
	buf_init(&b, 0);
	ret = expo_header_write(&b, f->name, f->type, f->help, format);
	if (!ret) {
		f->hdr_len[format] = (uint32_t)b.len;
		f->hdr[format] = buf_steal(&b, NULL);
	}
	buf_free(&b);
	return f->hdr[format] ? 0 : (ret ? ret : -ENOMEM);
}

/* Samples @f serves (its cap applied). */
static uint64_t bc_served(const struct bc_family *f)
{
	if (f->cap_samples && f->samples > f->cap_samples)
		return f->cap_samples;
	return f->samples;
}

static int bc_capped(const struct bc_family *f)
{
	return f->cap_samples && f->samples > f->cap_samples;
}

/* The bytes of @f's text (its segments'). */
static uint64_t bc_text_len(const struct bc_family *f)
{
	uint64_t n = 0;

	for (size_t i = 0; i < f->n; i++)
		n += f->seg[i].len;
	return n;
}

/*
 * The bytes of @f's first segments holding its first bc_served() samples:
 * *@n_seg whole segments, then *@part bytes of the next.
 */
static void bc_cut(const struct bc_family *f, size_t *n_seg, size_t *part)
{
	uint64_t left = bc_served(f);
	size_t i = 0;

	*part = 0;
	for (; i < f->n && f->seg[i].samples <= left; i++)
		left -= f->seg[i].samples;
	*n_seg = i;
	if (i < f->n && left) {
		const char *t = f->seg[i].text;
		size_t k = 0;

		while (left && k < f->seg[i].len)
			if (t[k++] == '\n')
				left--;
		*part = k;
	}
}

static int bc_text(struct bc_scope *s, enum expo_format format, struct buf *out)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < s->n_fam; i++) {
		struct bc_family *f = &s->fam[i];
		size_t n = f->n, part = 0;

		if (!bc_served(f))
			continue;
		if (bc_capped(f))
			bc_cut(f, &n, &part);
		ret = bc_family_header(s, f, format);
		if (!ret)
			ret = buf_add(out, f->hdr[format], f->hdr_len[format]);
		for (size_t j = 0; !ret && j < n; j++)
			ret = buf_add(out, f->seg[j].text, f->seg[j].len);
		if (!ret && part)
			ret = buf_add(out, f->seg[n].text, part);
	}
	if (!ret && format == EXPO_OPENMETRICS)
		ret = buf_add(out, bc_eof, sizeof(bc_eof) - 1);
	return ret;
}

/* ---- compressing pieces ---- */

struct bc_zjob {
	struct bc_scope *s;
	int stable;	    /* make the pieces of reused segments only */
	atomic_size_t next; /* the next family to take */
};

struct bc_zworker {
	struct bc_zjob *j;
	unsigned char dict[BC_DICT];
	size_t dict_len;
	const struct bc_seg *dict_of; /* whose masked text dict holds */
	struct zpiece z;
	int ret;
	int64_t bytes; /* packs made minus packs freed */
	uint64_t made;
};

/* A piece of @in without a dictionary, malloc'd: family headers, EOF. */
static int bc_deflate(struct bc_zworker *w, const char *in, size_t len,
		      unsigned char **out, uint32_t *out_len)
{
	*out = malloc(zpiece_bound(len));
	if (!*out)
		return -ENOMEM;
	*out_len = (uint32_t)zpiece_write(&w->z, NULL, 0, in, len, *out);
	if (*out_len)
		return 0;
	free(*out);
	*out = NULL;
	return -ENOMEM;
}

/* The combine operator for @len bytes, cached by length. */
static uLong bc_op(struct bc_scope *s, size_t len)
{
	uint32_t op;

	if (len >= BC_OP_LEN || !s->crc_op)
		return crc32_combine_gen64((z_off64_t)len);
	op = atomic_load_explicit(&s->crc_op[len], memory_order_relaxed);
	if (!op) {
		op = (uint32_t)crc32_combine_gen64((z_off64_t)len);
		atomic_store_explicit(&s->crc_op[len], op,
				      memory_order_relaxed);
	}
	return op;
}

/*
 * The dictionary of a piece is the text of the segment before it with the
 * sample values masked (0xff, a byte no body has): the compressor then
 * refers only to names, labels and layout, and the piece stays valid for
 * as long as those and the values' lengths stay, whatever the values. A
 * host whose counters moved changes its own pieces, not the next host's.
 * @out gets the last BC_DICT bytes of @g's text so masked.
 */
static void bc_mask(const struct bc_seg *g, unsigned char *out, size_t *n)
{
	size_t len = g->len < BC_DICT ? g->len : BC_DICT;
	const char *t = g->text + g->len - len, *nl, *sp;

	/* a value runs from the last space of its line to the newline;
	 * from the end backwards: after a newline, until a space (a line
	 * without one is masked whole, and the one before it up to its
	 * last space); newlines stay */
	memcpy(out, t, len);
	*n = len;
	for (nl = memrchr(t, '\n', len); nl; nl = memrchr(t, '\n', sp - t)) {
		sp = memrchr(t, ' ', (size_t)(nl - t));
		for (const char *c = sp ? sp + 1 : t; c < nl; c++)
			if (*c != '\n')
				out[c - t] = 0xff;
		if (!sp)
			return;
	}
}

/* The identity of a dictionary: the hash of its masked text (never 0). */
static uint64_t bc_mask_id(const unsigned char *d, size_t n)
{
	return fnv1a_words(FNV1A_BASIS, d, n) | 1;
}

/* Mask @g's text into the worker's dictionary (once). */
static void bc_dict(struct bc_zworker *w, const struct bc_seg *g)
{
	if (w->dict_of != g) {
		bc_mask(g, w->dict, &w->dict_len);
		w->dict_of = g;
	}
}

/*
 * 1 when @g's piece is missing or was made after another text than @prev's
 * (the identity of @prev's masked text is worked out once per text).
 */
static int bc_stale(struct bc_zworker *w, struct bc_seg *prev,
		    const struct bc_seg *g)
{
	if (prev && !prev->mh) {
		bc_dict(w, prev);
		prev->mh = bc_mask_id(w->dict, w->dict_len);
	}
	return !g->gz_len || g->gz_dict != (prev ? prev->mh : 0);
}

/* 1 when @f's pack holds its pieces in order and nothing else. */
static int bc_pack_whole(const struct bc_family *f)
{
	size_t at = 0;

	for (size_t i = 0; i < f->n; i++) {
		if (!f->seg[i].gz_len || f->seg[i].gz_off != at)
			return 0;
		at += f->seg[i].gz_len;
	}
	return at == f->pack_len;
}

/* Make @g's piece after @prev (NULL: none) at the end of @pack. */
static int bc_piece(struct bc_zworker *w, struct bc_seg *prev, struct bc_seg *g,
		    struct buf *pack)
{
	int ret = buf_reserve(pack, zpiece_bound(g->len));

	if (ret)
		return ret;
	if (prev)
		bc_dict(w, prev);
	g->gz_len = (uint32_t)zpiece_write(
		&w->z, w->dict, prev ? w->dict_len : 0, g->text, g->len,
		(unsigned char *)pack->data + pack->len);
	if (!g->gz_len)
		return -ENOMEM;
	g->gz_dict = prev ? prev->mh : 0;
	g->crc = (uint32_t)crc32(0, (const Bytef *)g->text, (uInt)g->len);
	w->made++;
	return buf_setlen(pack, pack->len + g->gz_len);
}

/* Make the missing pieces of family @f; its pack anew. */
static int bc_family_pieces(struct bc_zworker *w, struct bc_family *f)
{
	struct bc_scope *s = w->j->s;
	struct bc_seg *prev = NULL;
	uLong crc = crc32(0, NULL, 0);
	struct buf pack;
	int ret = 0;

	if (bc_pack_whole(f))
		return 0;
	buf_init(&pack, 0);
	ret = buf_reserve(&pack, f->pack_len + f->pack_len / 4 + 4096);
	for (size_t i = 0; !ret && i < f->n; prev = &f->seg[i++]) {
		struct bc_seg *g = &f->seg[i];
		size_t at = pack.len;

		if (w->j->stable && g->fresh) {
			g->gz_len = 0;
			continue;
		}
		if (bc_stale(w, prev, g))
			ret = bc_piece(w, prev, g, &pack);
		else
			ret = buf_add(&pack, f->pack + g->gz_off, g->gz_len);
		g->gz_off = at;
		crc = crcmul_combine((uint32_t)crc, g->crc,
				     (uint32_t)bc_op(s, g->len));
	}
	if (ret)
		return ret; /* pack was freed */
	/* grown by doubling, and a piece's bound is several times its size */
	if (pack.cap - pack.len > pack.len / 16) {
		char *t = realloc(pack.data, pack.len + 1);

		if (t) {
			pack.data = t;
			pack.cap = pack.len + 1;
		}
	}
	w->bytes += (int64_t)pack.cap - (int64_t)f->pack_cap;
	free(f->pack);
	f->pack_len = pack.len;
	f->pack_cap = pack.cap;
	f->pack = (unsigned char *)buf_steal(&pack, NULL);
	f->pack_crc = (uint32_t)crc;
	return 0;
}

static void *bc_zwork(void *arg)
{
	struct bc_zworker *w = arg;
	struct bc_scope *s = w->j->s;
	size_t i;

	while (!w->ret && (i = atomic_fetch_add(&w->j->next, 1)) < s->n_fam) {
		struct bc_family *f = &s->fam[i];

		if (bc_served(f) && !bc_capped(f))
			w->ret = bc_family_pieces(w, f);
	}
	return NULL;
}

/* Bytes of text whose pieces must be made (a guess: whole families). */
static size_t bc_work(const struct bc_scope *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_fam; i++)
		for (size_t j = 0; j < s->fam[i].n; j++)
			if (!s->fam[i].seg[j].gz_len)
				n += s->fam[i].seg[j].len;
	return n;
}

static unsigned bc_nthreads(unsigned threads, size_t work)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (work < BC_PARALLEL_BYTES)
		return 1;
	if (!threads)
		threads = cpus > 0 ? (unsigned)cpus : 1;
	return threads > BC_MAX_THREADS ? BC_MAX_THREADS : threads;
}

static int bc_pieces(struct bc_scope *s, int stable)
{
	struct bc_zjob j = {.s = s, .stable = stable};
	struct bc_zworker *w;
	pthread_t tid[BC_MAX_THREADS];
	unsigned n = bc_nthreads(s->c->threads, bc_work(s)), started = 0;
	int ret = 0;

	atomic_init(&j.next, 0);
	if (!s->crc_op) /* before the threads: they share it */
		s->crc_op = calloc(BC_OP_LEN, sizeof(*s->crc_op));
	w = calloc(n, sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		w[i].j = &j;
		zpiece_init(&w[i].z);
	}
	while (started + 1 < n &&
	       !pthread_create(&tid[started], NULL, bc_zwork, &w[started + 1]))
		started++;
	bc_zwork(&w[0]);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	for (unsigned i = 0; i < n; i++) {
		if (!ret)
			ret = w[i].ret;
		bc_account(s, w[i].bytes);
		pthread_mutex_lock(&s->c->lock);
		s->c->st.compressed += w[i].made;
		pthread_mutex_unlock(&s->c->lock);
		zpiece_free(&w[i].z);
	}
	free(w);
	return ret;
}

/* ---- the gzip body ---- */

struct bc_gz {
	struct bc_scope *s;
	struct buf *out;
	uLong crc;
	uint64_t len;	      /* uncompressed */
	struct bc_zworker *w; /* for headers and capped families */
	struct bc_zjob j;
};

static int bc_gz_add(struct bc_gz *g, const unsigned char *piece,
		     size_t piece_len, uint32_t crc, size_t text_len)
{
	g->crc = crcmul_combine((uint32_t)g->crc, (uint32_t)crc,
				(uint32_t)bc_op(g->s, text_len));
	g->len += text_len;
	return buf_add(g->out, piece, piece_len);
}

/* A piece made now and not kept: a capped family's samples. */
static int bc_gz_fresh(struct bc_gz *g, const char *text, size_t len)
{
	unsigned char *p = NULL;
	uint32_t n = 0;
	int ret = bc_deflate(g->w, text, len, &p, &n);

	if (!ret)
		ret = bc_gz_add(
			g, p, n,
			(uint32_t)crc32(0, (const Bytef *)text, (uInt)len),
			len);
	free(p);
	return ret;
}

static int bc_gz_header(struct bc_gz *g, struct bc_family *f,
			enum expo_format format)
{
	int ret = bc_family_header(g->s, f, format);

	if (!ret && !f->hdr_gz[format]) {
		ret = bc_deflate(g->w, f->hdr[format], f->hdr_len[format],
				 &f->hdr_gz[format], &f->hdr_gz_len[format]);
		f->hdr_crc[format] = (uint32_t)crc32(
			0, (const Bytef *)f->hdr[format], f->hdr_len[format]);
	}
	if (!ret)
		ret = bc_gz_add(g, f->hdr_gz[format], f->hdr_gz_len[format],
				f->hdr_crc[format], f->hdr_len[format]);
	return ret;
}

/* A capped family's served text, as one piece. */
static int bc_gz_capped(struct bc_gz *g, const struct bc_family *f)
{
	size_t n, part;
	struct buf t;
	int ret = 0;

	bc_cut(f, &n, &part);
	buf_init(&t, 0);
	for (size_t j = 0; !ret && j < n; j++)
		ret = buf_add(&t, f->seg[j].text, f->seg[j].len);
	if (!ret && part)
		ret = buf_add(&t, f->seg[n].text, part);
	if (!ret)
		ret = bc_gz_fresh(g, t.data, t.len);
	buf_free(&t);
	return ret;
}

static void bc_put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static int bc_gz_families(struct bc_gz *g, enum expo_format format)
{
	struct bc_scope *s = g->s;
	int ret = 0;

	for (size_t i = 0; !ret && i < s->n_fam; i++) {
		struct bc_family *f = &s->fam[i];

		if (!bc_served(f))
			continue;
		ret = bc_gz_header(g, f, format);
		if (!ret && bc_capped(f)) {
			ret = bc_gz_capped(g, f);
			continue;
		}
		if (!ret && f->n)
			ret = bc_gz_add(g, f->pack, f->pack_len, f->pack_crc,
					bc_text_len(f));
	}
	if (!ret && format == EXPO_OPENMETRICS) {
		if (!s->eof_gz) {
			ret = bc_deflate(g->w, bc_eof, sizeof(bc_eof) - 1,
					 &s->eof_gz, &s->eof_gz_len);
			s->eof_crc = (uint32_t)crc32(0, (const Bytef *)bc_eof,
						     sizeof(bc_eof) - 1);
		}
		if (!ret)
			ret = bc_gz_add(g, s->eof_gz, s->eof_gz_len, s->eof_crc,
					sizeof(bc_eof) - 1);
	}
	return ret;
}

/* About the bytes of the gzip body (capped families: their text). */
static size_t bc_gzip_size(const struct bc_scope *s)
{
	size_t n = 10 + 2 + 8 + 64;

	for (size_t i = 0; i < s->n_fam; i++) {
		const struct bc_family *f = &s->fam[i];

		if (!bc_served(f))
			continue;
		n += 256 + (f->hdr_gz[0] ? f->hdr_gz_len[0] : 0);
		n += bc_capped(f) ? zpiece_bound(bc_text_len(f)) : f->pack_len;
	}
	return n;
}

static int bc_gzip(struct bc_scope *s, enum expo_format format, struct buf *out,
		   size_t *text_len)
{
	static const unsigned char header[10] = {
		0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 /* Unix */
	};
	/* a final fixed block with no data: BFINAL, BTYPE 01, end code */
	static const unsigned char last[2] = {0x03, 0x00};
	struct bc_gz g = {.s = s, .out = out, .crc = crc32(0, NULL, 0)};
	unsigned char trailer[8];
	int ret = bc_pieces(s, 0);

	g.j.s = s;
	g.w = ret ? NULL : calloc(1, sizeof(*g.w));
	if (!ret && !g.w)
		ret = -ENOMEM;
	if (!ret) {
		g.w->j = &g.j;
		zpiece_init(&g.w->z);
		ret = buf_reserve(out, bc_gzip_size(s));
	}
	if (!ret)
		ret = buf_add(out, header, sizeof(header));
	if (!ret)
		ret = bc_gz_families(&g, format);
	if (!ret)
		ret = buf_add(out, last, sizeof(last));
	bc_put32(trailer, (uint32_t)g.crc);
	bc_put32(trailer + 4, (uint32_t)g.len);
	if (!ret)
		ret = buf_add(out, trailer, sizeof(trailer));
	if (g.w)
		zpiece_free(&g.w->z);
	free(g.w);
	*text_len = (size_t)g.len;
	return ret;
}

/*
 * Most pieces to be made (the first scrape, or most hosts changed): pieces
 * cost more per byte than one stream (a deflate start and a dictionary
 * each), so the body is the text gzipped as one stream, as without the
 * cache (one thread, no copy of the text).
 * Pieces are made then only for the segments that were reused, which have
 * outlived one change, and only when this render changed a quarter of the
 * text at most: on a fabric whose hosts all change at every scrape the
 * pieces would be thrown away at the next.
 */
/* Deflate @len bytes of @in into @out (one stream, gzip wrapper). */
static int bc_stream(z_stream *z, const void *in, size_t len, int flush,
		     struct buf *out)
{
	int zr;

	z->next_in = (Bytef *)(uintptr_t)in;
	z->avail_in = (uInt)len;
	do {
		if (buf_reserve(out, 65536))
			return -E2BIG;
		z->next_out = (Bytef *)out->data + out->len;
		z->avail_out = (uInt)(out->cap - out->len - 1);
		zr = deflate(z, flush);
		buf_setlen(out, out->cap - 1 - z->avail_out);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
			return -EIO;
	} while (z->avail_in || (flush == Z_FINISH && zr != Z_STREAM_END));
	return 0;
}

static int bc_gzip_whole(struct bc_scope *s, enum expo_format format,
			 struct buf *out, size_t *text_len, int pieces)
{
	z_stream z = {0};
	int ret = 0;

	*text_len = 0;
	if (deflateInit2(&z, s->c->level, Z_DEFLATED, 31, 6,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	for (size_t i = 0; !ret && i < s->n_fam; i++) {
		struct bc_family *f = &s->fam[i];
		size_t n = f->n, part = 0;

		if (!bc_served(f))
			continue;
		if (bc_capped(f))
			bc_cut(f, &n, &part);
		ret = bc_family_header(s, f, format);
		if (!ret)
			ret = bc_stream(&z, f->hdr[format], f->hdr_len[format],
					Z_NO_FLUSH, out);
		*text_len += f->hdr_len[format] + part;
		for (size_t j = 0; !ret && j < n; j++) {
			ret = bc_stream(&z, f->seg[j].text, f->seg[j].len,
					Z_NO_FLUSH, out);
			*text_len += f->seg[j].len;
		}
		if (!ret && part)
			ret = bc_stream(&z, f->seg[n].text, part, Z_NO_FLUSH,
					out);
	}
	if (!ret && format == EXPO_OPENMETRICS) {
		ret = bc_stream(&z, bc_eof, sizeof(bc_eof) - 1, Z_NO_FLUSH,
				out);
		*text_len += sizeof(bc_eof) - 1;
	}
	if (!ret)
		ret = bc_stream(&z, NULL, 0, Z_FINISH, out);
	deflateEnd(&z);
	if (!ret && pieces)
		ret = bc_pieces(s, 1);
	return ret;
}

int bc_body(struct bc_scope *s, enum expo_format format, int gzip,
	    struct buf *out, size_t *text_len)
{
	size_t start = out->len, total = 0, fresh = 0;
	int ret;

	if (gzip) {
		for (size_t i = 0; i < s->n_fam; i++)
			for (size_t j = 0; j < s->fam[i].n; j++) {
				total += s->fam[i].seg[j].len;
				if (s->fam[i].seg[j].fresh)
					fresh += s->fam[i].seg[j].len;
			}
		/* pieces pay once changes are few: make them then only */
		if (bc_work(s) > total / BC_WHOLE_SHARE)
			return bc_gzip_whole(s, format, out, text_len,
					     fresh <= total / BC_WHOLE_SHARE);
		return bc_gzip(s, format, out, text_len);
	}
	ret = bc_text(s, format, out);
	*text_len = ret ? 0 : out->len - start; /* failed: @out was freed */
	return ret;
}
