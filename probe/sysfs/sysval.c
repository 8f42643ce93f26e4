// SPDX-License-Identifier: MIT
/*
 * Pure parsers for sysfs values (sysval.h). Written digit by digit rather
 * than with strtod()/strtoull() where those would accept too much
 * (leading blanks and signs, "inf", hex floats, locale decimal points):
 * sysfs output is narrow and anything else is garbage to be reported.
 */
#include "sysval.h"
#include "hex.h"

#include "name.h"
#include "report.h"

#include <errno.h>
#include <fnmatch.h>
#include <string.h>

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_space(char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* 1 when nothing but whitespace is left. */
static int only_space(const char *s)
{
	while (is_space(*s))
		s++;
	return *s == '\0';
}

/* Parse decimal digits at *@s into *@v, advancing *@s; -EINVAL on none. */
static int parse_digits(const char **s, uint64_t *v)
{
	const char *p = *s;
	uint64_t x = 0;

	if (!is_digit(*p))
		return -EINVAL;
	for (; is_digit(*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -EINVAL;
		x = x * 10 + d;
	}
	*s = p;
	*v = x;
	return 0;
}

int sysval_u64(const char *s, uint64_t *out)
{
	uint64_t v;

	if (parse_digits(&s, &v) || !only_space(s))
		return -EINVAL;
	*out = v;
	return 0;
}

int sysval_is_na(const char *s)
{
	return !strncmp(s, "N/A", 3) && (s[3] == '\0' || is_space(s[3]));
}

int sysval_i64(const char *s, int64_t *out)
{
	int neg = *s == '-';
	uint64_t v;

	if (neg)
		s++;
	if (parse_digits(&s, &v) || !only_space(s))
		return -EINVAL;
	if (v > (uint64_t)INT64_MAX + neg)
		return -EINVAL;
	if (neg)
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	else
		*out = (int64_t)v;
	return 0;
}

int sysval_num(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		const char *p = s + 2;

		if (hex_digit(*p) < 0)
			return -EINVAL;
		for (; hex_digit(*p) >= 0; p++) {
			if (v > (UINT64_MAX >> 4))
				return -EINVAL;
			v = (v << 4) | (uint64_t)hex_digit(*p);
		}
		s = p;
	} else if (parse_digits(&s, &v)) {
		return -EINVAL;
	}
	if (!only_space(s) || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int sysval_state(const char *s, int *out)
{
	uint64_t v;

	if (parse_digits(&s, &v) || *s != ':' || v > 15)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/*
 * "I[.F]" at *@s: the integer part in *@ip and the fraction scaled to
 * 10^-9 units in *@frac (at most 9 fraction digits).
 */
static int parse_decimal(const char **s, uint64_t *ip, uint64_t *frac)
{
	const char *p = *s;
	uint64_t f = 0, scale = 100000000;

	if (parse_digits(&p, ip) || *ip > 1000000000)
		return -EINVAL;
	if (*p == '.') {
		p++;
		if (!is_digit(*p))
			return -EINVAL;
		for (; is_digit(*p); p++) {
			if (!scale)
				return -EINVAL;
			f += (uint64_t)(*p - '0') * scale;
			scale /= 10;
		}
	}
	*frac = f;
	*s = p;
	return 0;
}

int sysval_rate(const char *s, uint64_t *bytes_per_sec)
{
	uint64_t ip, frac;

	if (parse_decimal(&s, &ip, &frac))
		return -EINVAL;
	if (strncmp(s, " Gb/sec", 7) != 0)
		return -EINVAL;
	s += 7;
	if (*s != '\0' && !is_space(*s))
		return -EINVAL;
	/* Gb/s in 1e-9 units is bits/s; 8 bits to the byte. */
	*bytes_per_sec = (ip * 1000000000ULL + frac) / 8;
	return 0;
}

int sysval_pcie_speed(const char *s, double *gts)
{
	uint64_t ip, frac;
	double v;

	if (parse_decimal(&s, &ip, &frac))
		return -EINVAL;
	if (strncmp(s, " GT/s", 5) != 0)
		return -EINVAL;
	s += 5;
	if (*s != '\0' && !is_space(*s))
		return -EINVAL;
	v = (double)ip + (double)frac / 1e9;
	if (v <= 0 || v > 1000)
		return -EINVAL;
	*gts = v;
	return 0;
}

int sysval_aer_total(const char *s, const char *key, int64_t *out)
{
	size_t klen = strlen(key);

	while (*s) {
		const char *eol = strchr(s, '\n');
		uint64_t v;

		if (!strncmp(s, key, klen) && s[klen] == ' ') {
			const char *p = s + klen;

			while (*p == ' ')
				p++;
			if (parse_digits(&p, &v) || v > INT64_MAX)
				return -EINVAL;
			while (*p == ' ' || *p == '\t' || *p == '\r')
				p++;
			if (*p != '\n' && *p != '\0')
				return -EINVAL;
			*out = (int64_t)v;
			return 0;
		}
		if (!eol)
			break;
		s = eol + 1;
	}
	return -ENOENT;
}

int sysval_gid(const char *s, char *out, size_t outlen, int *zero)
{
	char tmp[40];
	int nz = 0;

	if (outlen < sizeof(tmp))
		return -EINVAL;
	for (int i = 0; i < 39; i++) {
		if (i % 5 == 4) {
			if (s[i] != ':')
				return -EINVAL;
			tmp[i] = ':';
			continue;
		}
		if (hex_digit(s[i]) < 0)
			return -EINVAL;
		nz |= hex_digit(s[i]);
		tmp[i] = "0123456789abcdef"[hex_digit(s[i])];
	}
	if (!only_space(s + 39))
		return -EINVAL;
	tmp[39] = '\0';
	memcpy(out, tmp, sizeof(tmp));
	*zero = !nz;
	return 0;
}

int sysval_pkey(const char *s, uint16_t *out)
{
	uint64_t v;

	if (sysval_num(s, 0xffff, &v))
		return -EINVAL;
	*out = (uint16_t)v;
	return 0;
}

int sysval_text(const char *s, char *out, size_t outlen)
{
	size_t len = strlen(s);

	if (!outlen)
		return -EINVAL;
	while (len && is_space(s[len - 1]))
		len--;
	if (len > outlen - 1)
		len = outlen - 1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		out[i] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
	}
	out[len] = '\0';
	return len ? 0 : -EINVAL;
}

int sysval_is_name(const char *s)
{
	return name_valid(NAME_LABEL, s, REPORT_MAX_NAME);
}

int sysval_glob_any(const char *list, const char *name)
{
	char glob[128];

	if (!list)
		return 0;
	while (*list) {
		size_t n = strcspn(list, ",");
		const char *g = list;
		size_t len = n;

		while (len && is_space(*g)) {
			g++;
			len--;
		}
		while (len && is_space(g[len - 1]))
			len--;
		if (len && len < sizeof(glob)) {
			memcpy(glob, g, len);
			glob[len] = '\0';
			if (fnmatch(glob, name, 0) == 0)
				return 1;
		}
		list += n + (list[n] == ',');
	}
	return 0;
}
