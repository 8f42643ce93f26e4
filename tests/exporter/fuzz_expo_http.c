// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for what the exporter takes from the network or the
 * database as text: the Accept and Accept-Encoding parsers, the shard
 * parameters, and label escaping (common/expo.c). Checks what each
 * promises: a parsed shard is within range, an escaped label value is
 * valid UTF-8 with no raw newline or quote and only \\ \" \n escapes, and
 * a formatted double reads back as the same number.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expo.h"
#include "negotiate.h"
#include "shard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Length of the valid UTF-8 sequence at @s, 0 if invalid (independent
 * of expo.c's own check, on purpose). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned cp;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
	if (!len || len > n || s[0] > 0xf4)
		return 0;
	cp = s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < (len == 2   ? 0x80u
		  : len == 3 ? 0x800u
			     : 0x10000u) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static void check_label(const char *s)
{
	const unsigned char *p;
	struct buf b;
	size_t n;

	buf_init(&b, 0);
	if (expo_label(&b, "v", s))
		abort();
	if (b.len < 4 || memcmp(b.data, "v=\"", 3) || b.data[b.len - 1] != '"')
		abort();
	p = (const unsigned char *)b.data + 3;
	n = b.len - 4;
	for (size_t i = 0; i < n;) {
		size_t l;

		if (p[i] == '\n' || p[i] == '"')
			abort();
		if (p[i] == '\\') {
			if (i + 1 >= n || !strchr("\\\"n", p[i + 1]))
				abort();
			i += 2;
			continue;
		}
		l = utf8_seq(p + i, n - i);
		if (!l)
			abort();
		i += l;
	}
	buf_free(&b);
}

static void check_shard(const char *s)
{
	char copy[256], err[128];
	unsigned i, n;
	char *amp;

	if (strlen(s) >= sizeof(copy))
		return;
	memcpy(copy, s, strlen(s) + 1);
	amp = strchr(copy, '&');
	if (!amp)
		return;
	*amp = '\0';
	if (!shard_parse(copy, amp + 1, &i, &n, err, sizeof(err)) &&
	    (n < 1 || n > SHARD_MAX || i >= n))
		abort();
}

static void check_double(const uint8_t *data, size_t size)
{
	char num[EXPO_NUM_MAX];
	double v, back;

	if (size < sizeof(v))
		return;
	memcpy(&v, data, sizeof(v));
	if (expo_format_double(num, v) >= sizeof(num))
		abort();
	back = strtod(num, NULL);
	if (isnan(v) ? !isnan(back) : back != v)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	(void)negotiate_format(s);
	(void)negotiate_gzip(s);
	check_shard(s);
	check_label(s);
	check_double(data, size);
	free(s);
	return 0;
}
