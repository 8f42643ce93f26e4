/* SPDX-License-Identifier: MIT */
/*
 * Fixtures shared by the test API codec's unit tests (test_testapi.c,
 * test_testapi_refuse.c): good bodies of each kind as structs (strings
 * borrowed from static storage) and as encoded text (caller frees).
 */
#ifndef IBPULSE_TESTAPI_FX_H
#define IBPULSE_TESTAPI_FX_H

#include <stddef.h>

#include "testapi.h"

#define KEY_A "8c9183dc5b0f3c5e111142228333944455556666777788889999aaaabbbbcccc"
#define KEY_B "65cf9de2000011112222333344445555666677778888999900001111aaaabbbb"
#define KEY_C "65cf9de2000011112222333344445555666677778888999900001111aaaabbbc"

/* A bandwidth result with every value known. */
void fx_good_result(struct testapi_result *r);
/* A failed test: what a probe knows of one that never started. */
void fx_failed_result(struct testapi_result *r);
/* node01 with two ports of mlx5_0 (@ports: room for two). */
void fx_good_reg(struct testapi_reg *r, struct testapi_reg_port *ports);
/* Two tests (the first with a ticket) and two keys (@t, @k: two each). */
void fx_good_plan(struct testapi_plan *p, struct testapi_plan_test *t,
		  struct testapi_key *k);

/* The results body of @r[0..n-1] from node01 (spool_full 3). */
char *fx_results_body(const struct testapi_result *r, size_t n);
char *fx_reg_body(void);
char *fx_plan_body(void);

#endif
