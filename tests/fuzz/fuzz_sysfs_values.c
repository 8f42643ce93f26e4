// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the sysfs value parsers (probe/sysfs/sysval.c): every
 * parser on the same input, as a NUL-terminated string, as sysfs reads
 * deliver it. Checks what each parser promises: outputs untouched on
 * failure, GIDs canonical, text printable.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sysval.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s)
{
	char out[64];

	if (sysval_text(s, out, sizeof(out)) == 0 && out[0] == '\0')
		abort();
	for (size_t i = 0; out[i]; i++)
		if ((unsigned char)out[i] < 0x20 ||
		    (unsigned char)out[i] >= 0x7f)
			abort();
}

static void check_gid(const char *s)
{
	char out[40];
	int zero = -1;

	if (sysval_gid(s, out, sizeof(out), &zero))
		return;
	if (strlen(out) != 39 || (zero != 0 && zero != 1))
		abort();
	for (int i = 0; i < 39; i++)
		if (i % 5 == 4 ? out[i] != ':'
			       : !strchr("0123456789abcdef", out[i]))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	uint64_t u = 12345;
	int64_t i = 12345;
	double d = -2;
	int st = -2;
	uint16_t pk = 7;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (sysval_u64(s, &u) && u != 12345)
		abort();
	if (sysval_i64(s, &i) && i != 12345)
		abort();
	u = 12345;
	if (sysval_num(s, 0xffff, &u) ? u != 12345 : u > 0xffff)
		abort();
	if (sysval_state(s, &st) ? st != -2 : (st < 0 || st > 15))
		abort();
	u = 12345;
	if (sysval_rate(s, &u) && u != 12345)
		abort();
	if (sysval_pcie_speed(s, &d) ? d != -2 : !(d > 0 && d <= 1000))
		abort();
	i = 12345;
	sysval_aer_total(s, "TOTAL_ERR_COR", &i);
	if (sysval_pkey(s, &pk) && pk != 7)
		abort();
	check_text(s);
	check_gid(s);
	sysval_is_name(s);
	free(s);
	return 0;
}
