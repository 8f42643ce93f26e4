// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the report decoder (common/report.c), the first
 * code to touch what arrives at the collector from the network. Beyond
 * "no crash, no leak, no UB" it checks a property: whatever decodes must
 * encode, decode again, and encode to the same text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report *r = NULL, *r2 = NULL;
	char err[256], *a = NULL, *b = NULL;

	if (report_decode((const char *)data, size, &r, err, sizeof(err))) {
		if (r || !memchr(err, '\0', sizeof(err)) || !err[0])
			abort(); /* a failure returns nothing and says why */
		return 0;
	}
	if (report_encode(r, &a))
		abort();
	if (report_decode(a, strlen(a), &r2, err, sizeof(err)))
		abort();
	if (report_encode(r2, &b) || strcmp(a, b))
		abort();
	free(a);
	free(b);
	report_free(r);
	report_free(r2);
	return 0;
}
