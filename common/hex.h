/* SPDX-License-Identifier: MIT */
/*
 * Hex text of bytes, one codec (issue 18: the tickets and the enrolment
 * tokens each had theirs): lower case out, either case in.
 */
#ifndef IBPULSE_HEX_H
#define IBPULSE_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Lower-case hex of @n bytes @b into @out (2n + 1 bytes, NUL-ended). */
void hex_encode(const uint8_t *b, size_t n, char *out);

/* The value of hex digit @c (either case), or -1. */
int hex_digit(char c);

/* Exactly 2n hex digits @hex (NUL-ended) into @n bytes @b: 0, or -EINVAL
 * (another length, or a character that is not a hex digit). */
int hex_decode(const char *hex, uint8_t *b, size_t n);

#endif
