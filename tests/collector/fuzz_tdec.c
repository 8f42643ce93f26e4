// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the test API decoders (collector/tdec.c), which
 * read what probes send to /api/v1/register and /api/v1/results. Beyond
 * "no crash, no leak, no UB": a failure returns nothing and says why, and
 * a decoded result has only known outcomes and non-negative figures.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tdec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tresults *r = NULL;
	struct treg *g = NULL;
	char err[256];

	if (tdec_results((const char *)data, size, &r, err, sizeof(err))) {
		if (r || !memchr(err, '\0', sizeof(err)) || !err[0])
			abort();
	} else {
		for (size_t i = 0; i < r->n; i++) {
			if (!tdec_outcome_ok(r->v[i].outcome) || !r->v[i].id)
				abort();
			for (int k = 0; k < TFIG_COUNT; k++)
				if (r->v[i].fig[k] < 0)
					abort();
		}
		tdec_results_free(r);
	}
	if (tdec_register((const char *)data, size, &g, err, sizeof(err))) {
		if (g || !memchr(err, '\0', sizeof(err)) || !err[0])
			abort();
	} else {
		if (!g->host || !g->address || !g->port)
			abort();
		tdec_register_free(g);
	}
	return 0;
}
