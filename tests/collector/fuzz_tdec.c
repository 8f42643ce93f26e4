// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the test API decoders (common/testapi.h), which
 * read what probes send to /api/v1/register and /api/v1/results and what
 * the collector answers to GET /api/v1/plan. Beyond "no crash, no leak, no
 * UB": a failure returns nothing and says why, a decoded result has only
 * known outcomes and non-negative figures, and a decoded plan holds only
 * entries with what a test needs and keys of 64 hex digits.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testapi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_results(const char *text, size_t size)
{
	struct testapi_results *r = NULL;
	char err[256];

	if (testapi_results_decode(text, size, &r, err, sizeof(err))) {
		if (r || !memchr(err, '\0', sizeof(err)) || !err[0])
			abort();
		return;
	}
	for (size_t i = 0; i < r->n; i++) {
		if (!testapi_outcome_name(r->v[i].outcome) || !r->v[i].id)
			abort();
		for (int k = 0; k < TESTAPI_FIG_COUNT; k++)
			if (r->v[i].fig[k] < 0)
				abort();
	}
	testapi_results_free(r);
}

static void fuzz_register(const char *text, size_t size)
{
	struct testapi_reg *g = NULL;
	char err[256];

	if (testapi_reg_decode(text, size, &g, err, sizeof(err))) {
		if (g || !memchr(err, '\0', sizeof(err)) || !err[0])
			abort();
		return;
	}
	if (!g->host || !g->address || !g->port)
		abort();
	testapi_reg_free(g);
}

static void fuzz_plan(const char *text, size_t size)
{
	struct testapi_plan *p = NULL;
	char err[256];

	if (testapi_plan_decode(text, size, &p, err, sizeof(err))) {
		if (p || !memchr(err, '\0', sizeof(err)) || !err[0])
			abort();
		return;
	}
	if (p->n_tests > TESTAPI_MAX_PLAN || p->n_keys > TESTAPI_MAX_KEYS ||
	    (p->n_skipped && !p->skipped[0]) ||
	    (p->n_no_ticket && !p->no_ticket[0]))
		abort();
	for (size_t i = 0; i < p->n_tests; i++) {
		const struct testapi_plan_test *t = &p->tests[i];

		if (!t->id || !t->profile || !t->peer_address ||
		    !t->peer_tcp_port || (t->has_ticket != !!t->ticket.key) ||
		    (t->has_ticket && strlen(t->ticket.key) != TESTAPI_KEY_HEX))
			abort();
	}
	for (size_t i = 0; i < p->n_keys; i++)
		if (strlen(p->keys[i].key) != TESTAPI_KEY_HEX)
			abort();
	testapi_plan_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_results((const char *)data, size);
	fuzz_register((const char *)data, size);
	fuzz_plan((const char *)data, size);
	return 0;
}
