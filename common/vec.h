/* SPDX-License-Identifier: MIT */
/*
 * Growable arrays, one way (issue 18: about fifteen hand-written
 * doublings before): a struct keeps a T *v, a count and a capacity, and
 * asks vec_grow() for room before it adds.
 */
#ifndef IBPULSE_VEC_H
#define IBPULSE_VEC_H

#include <stddef.h>

/*
 * vec_grow() - room for element @n (so @n + 1 elements) in the array whose
 * pointer is at @arr (a T ** passed as void *: read and written with
 * memcpy, never as a void *), *@cap allocated elements of @elem bytes;
 * doubles, from 16. Returns 0, or -ENOMEM with the array and *@cap as
 * they were.
 */
int vec_grow(void *arr, size_t *cap, size_t n, size_t elem);

#endif
