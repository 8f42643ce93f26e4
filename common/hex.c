// SPDX-License-Identifier: MIT
/* Hex text of bytes (hex.h). */
#include "hex.h"

#include <errno.h>
#include <string.h>

void hex_encode(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int hex_decode(const char *hex, uint8_t *b, size_t n)
{
	if (strlen(hex) != 2 * n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		b[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}
