// SPDX-License-Identifier: MIT
/* Growable arrays (vec.h). */
#include "vec.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int vec_grow(void *arr, size_t *cap, size_t n, size_t elem)
{
	void *p, *q;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	if (c < n + 1)
		c = n + 1;
	if (c > SIZE_MAX / elem)
		return -ENOMEM;
	memcpy(&p, arr, sizeof(p));
	q = realloc(p, c * elem);
	if (!q)
		return -ENOMEM;
	memcpy(arr, &q, sizeof(q));
	*cap = c;
	/* q is not lost: the memcpy above stored it in the caller's pointer */
	/* cppcheck-suppress memleak */
	return 0;
}
