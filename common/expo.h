/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus exposition writer: text format 0.0.4 and OpenMetrics 1.0,
 * written by hand into a struct buf because a scrape of a large fabric is
 * hundreds of thousands of lines and most of its cost is here.
 *
 * Usage: expo_init(), then for each family expo_family() followed by its
 * samples (expo_sample_u64() / expo_sample()), then expo_finish(). Families
 * are written whole, one HELP and one TYPE each; a family with no samples
 * writes nothing. Names are given as samples are named in both formats:
 * counters end in "_total", info metrics in "_info"; for OpenMetrics the
 * writer strips those suffixes from the family name in HELP/TYPE, types
 * info families "info" (0.0.4 has no such type: gauge) and ends the body
 * with "# EOF".
 *
 * Labels are passed pre-escaped as "a=\"x\",b=\"y\"" (no braces), built
 * with expo_label(), so a port's host/device/port labels are escaped once
 * per scrape, not once per sample. Label values and HELP text are escaped
 * as each format requires and invalid UTF-8 is replaced with U+FFFD, so
 * one host with a garbage node_desc cannot fail the scrape of the fabric.
 *
 * Errors are sticky: after the first failure (-E2BIG at the buffer's
 * ceiling, -EINVAL for a bad name, -EEXIST for a family written twice)
 * every call returns it and writes nothing.
 *
 * A cap on samples per family (expo_set_family_cap()) keeps one runaway
 * family from passing the body's ceiling and failing the whole response:
 * samples past the cap are not written, and counted per family
 * (expo_drops()).
 *
 * Segments: a renderer may cut a family's samples into segments
 * (expo_segment(), e.g. one per host) and say what each was made from.
 * Without hooks this changes nothing. With hooks (expo_set_hooks(), the
 * exporter's block cache) the writer writes sample lines only: the hooks'
 * owner writes HELP/TYPE, applies the cap, and may answer that it holds a
 * segment already, so that the renderer skips its samples.
 */
#ifndef IBPULSE_EXPO_H
#define IBPULSE_EXPO_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

enum expo_format {
	EXPO_TEXT = 0,	  /* text/plain; version=0.0.4 */
	EXPO_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
};

enum expo_type {
	EXPO_COUNTER, /* name ends in _total */
	EXPO_GAUGE,
	EXPO_INFO, /* name ends in _info, value 1 */
};

/* Longest formatted number (expo_format_double, expo_format_u64) + NUL. */
#define EXPO_NUM_MAX 32
/* Longest family name kept in a drop record. */
#define EXPO_DROP_NAME 128

/* Samples of one family that the cap left out. */
struct expo_drop {
	char family[EXPO_DROP_NAME];
	uint64_t n;
};

struct expo;

/* Who assembles a body from segments (exporter/bcache.h). */
struct expo_hooks {
	/* A family starts (validated; e->name, e->type, e->help are set). */
	int (*family)(void *ctx, struct expo *e);
	/* A segment starts: 1 when its samples are not to be written, 0 when
	 * they are, or a negative errno. */
	int (*segment)(void *ctx, struct expo *e, uint64_t key, uint64_t fp);
};

struct expo {
	struct buf *out;
	enum expo_format format;
	int err;	/* first error; sticky */
	size_t samples; /* samples written so far */
	/* the current family; @name is the caller's, kept until the next */
	const char *name;
	size_t name_len;
	enum expo_type type;
	const char *help;
	int header_pending;
	/* hashes of the families started so far, to refuse a second TYPE */
	uint64_t *seen;
	size_t n_seen, cap_seen;
	/* the per-family cap (0: none), the current family's counts */
	size_t family_cap, family_samples;
	uint64_t family_dropped;
	char drop_name[EXPO_DROP_NAME]; /* @name at the family's first drop */
	struct expo_drop *drops;	/* families that lost samples */
	size_t n_drops, cap_drops;
	const struct expo_hooks *hooks; /* NULL: a plain body */
	void *hooks_ctx;
};

/* Start writing into @out (not owned) in @format. */
void expo_init(struct expo *e, struct buf *out, enum expo_format format);
/* Free what the writer holds (not the buffer). NULL is fine. */
void expo_free(struct expo *e);

/*
 * expo_family() - start a family. @name must stay valid until the next
 * expo_family() or expo_finish(); @help may be NULL (no HELP line).
 * Returns 0, -EINVAL for a name that is not a valid metric name or lacks
 * the suffix its type needs, -EEXIST if the family was started before.
 */
int expo_family(struct expo *e, const char *name, enum expo_type type,
		const char *help);

/*
 * expo_sample_u64() / expo_sample() - one sample of the current family.
 * @labels and @extra are pre-escaped label lists (expo_label()), each NULL
 * or "" for none; @extra follows @labels (a per-sample label such as
 * counter="x" after a port's labels). Integers are printed exactly;
 * doubles as integers when integral up to 2^53, else in the shortest of
 * %.15g..%.17g that reads back exactly; NaN, +Inf, -Inf as Prometheus
 * spells them.
 */
int expo_sample_u64(struct expo *e, const char *labels, const char *extra,
		    uint64_t v);
int expo_sample(struct expo *e, const char *labels, const char *extra,
		double v);

/*
 * expo_set_hooks() - hand families and segments to @h (see above): from
 * now on the writer writes sample lines only, uncapped, and no "# EOF".
 */
void expo_set_hooks(struct expo *e, const struct expo_hooks *h, void *ctx);

/*
 * expo_segment() - the samples that follow, up to the next segment or
 * family, are the segment @key of the current family, made from exactly
 * what @fp (not 0) fingerprints: the same @key and @fp always give the same
 * samples. @fp 0: unknown. Keys are unique within a family. Returns 1 when
 * the caller must skip the segment's samples (the hooks hold them), 0 when
 * it writes them, or the sticky error. Without hooks: 0.
 */
int expo_segment(struct expo *e, uint64_t key, uint64_t fp);

/* End the body (OpenMetrics: "# EOF"). Returns the sticky error or 0. */
int expo_finish(struct expo *e);

/*
 * expo_set_family_cap() - write at most @cap samples per family from now
 * on (0: no cap, the default). A sample past the cap returns 0 and is
 * counted, not written.
 */
void expo_set_family_cap(struct expo *e, size_t cap);

/*
 * expo_drops() - the families whose samples the cap left out so far, in
 * the order they were written, with the counts; the current family is
 * included. *@n gets their number. Valid until the next expo_*() call.
 */
const struct expo_drop *expo_drops(struct expo *e, size_t *n);

/*
 * expo_add_drop() - record that @n samples of @family were left out (the
 * hooks' owner applies the cap). 0 or the sticky error.
 */
int expo_add_drop(struct expo *e, const char *family, uint64_t n);

/*
 * expo_label() - append name="value" to the label list in @b, with a comma
 * first when @b is not empty. @value is escaped (\\ \" \n, invalid UTF-8
 * replaced); NULL is written as "". Returns 0, -EINVAL for an invalid
 * label name (@b as it was), or buf_add()'s error (@b freed: buf.h).
 */
int expo_label(struct buf *b, const char *name, const char *value);
/*
 * expo_label_int() - expo_label() with the number @v: decimal, or with
 * @hex > 0 as 0x and @hex digits at least; a negative @v (unknown) is "".
 */
int expo_label_int(struct buf *b, const char *name, int64_t v, int hex);

/*
 * expo_header_write() - append the HELP (when @help) and TYPE lines of
 * family @name (a valid name with its type's suffix) as @format has them.
 */
int expo_header_write(struct buf *b, const char *name, enum expo_type type,
		      const char *help, enum expo_format format);

/* Append @s (@len bytes) escaped as a label value (no quotes). */
int expo_escape_label_value(struct buf *b, const char *s, size_t len);

/* Append @s escaped as HELP text of @format (OpenMetrics also escapes "). */
int expo_escape_help(struct buf *b, const char *s, enum expo_format format);

/* Format into @dst (at least EXPO_NUM_MAX bytes); return the length. */
size_t expo_format_u64(char *dst, uint64_t v);
size_t expo_format_double(char *dst, double v);

/* 1 if @name is a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*). */
int expo_metric_name_valid(const char *name);
/* 1 if @name is a valid label name ([a-zA-Z_][a-zA-Z0-9_]*, not __*). */
int expo_label_name_valid(const char *name);

/* The Content-Type header value for @format. */
const char *expo_content_type(enum expo_format format);

#endif
