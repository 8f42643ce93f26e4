// SPDX-License-Identifier: MIT
/*
 * crc32_combine_op(crc1, crc2, op) is op(x) * crc1(x) mod P(x), plus crc2,
 * in zlib's reflected form (bit 31 is x^0). Carry-less, in the plain form
 * (bit i is x^i): both factors bit-reversed, one 32 x 32 multiply, then
 * Barrett's reduction with mu = x^64 / P (two more multiplies), reversed
 * back. Exact for polynomials over GF(2); tests/exporter/test_crcmul.c
 * checks it against zlib.
 */
#include "crcmul.h"

#include <stdatomic.h>
#include <zlib.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define CRC_P 0x104C11DB7ULL  /* x^32 + ... , plain form */
#define CRC_MU 0x104D101DFULL /* floor(x^64 / P) */

static uint32_t rev32(uint32_t v)
{
	v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
	v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
	v = ((v >> 4) & 0x0F0F0F0Fu) | ((v & 0x0F0F0F0Fu) << 4);
	return __builtin_bswap32(v);
}

__attribute__((target("pclmul,sse4.1"))) static uint64_t clmul(uint64_t a,
							       uint64_t b)
{
	__m128i p = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)a),
					 _mm_cvtsi64_si128((long long)b), 0);

	return (uint64_t)_mm_cvtsi128_si64(p);
}

__attribute__((target("pclmul,sse4.1"))) static uint32_t mul_fast(uint32_t a,
								  uint32_t b)
{
	uint64_t c = clmul(rev32(a), rev32(b)); /* degree 62 at most */
	uint64_t q = clmul(c >> 32, CRC_MU) >> 32;

	return rev32((uint32_t)(c ^ clmul(q, CRC_P)));
}

static _Atomic int fast = -1; /* the threads of a body share it */

int crcmul_fast(void)
{
	int f = atomic_load_explicit(&fast, memory_order_relaxed);

	if (f < 0) {
		__builtin_cpu_init();
		f = __builtin_cpu_supports("pclmul") &&
		    __builtin_cpu_supports("sse4.1");
		atomic_store_explicit(&fast, f, memory_order_relaxed);
	}
	return f;
}

uint32_t crcmul_combine(uint32_t crc1, uint32_t crc2, uint32_t op)
{
	if (crcmul_fast())
		return mul_fast(op, crc1) ^ crc2;
	return (uint32_t)crc32_combine_op(crc1, crc2, op);
}

#else

int crcmul_fast(void)
{
	return 0;
}

uint32_t crcmul_combine(uint32_t crc1, uint32_t crc2, uint32_t op)
{
	return (uint32_t)crc32_combine_op(crc1, crc2, op);
}

#endif
