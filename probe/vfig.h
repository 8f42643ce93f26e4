/* SPDX-License-Identifier: MIT */
/*
 * The test API's figures (testapi.h, TESTAPI_FIGURES) of one side of a
 * verbs test: one mapping for what the daemon sends the collector
 * (dtest.c) and the keys `ibpulse-probe run --json` prints (vout.c).
 */
#ifndef IBPULSE_VFIG_H
#define IBPULSE_VFIG_H

#include "testapi.h"
#include "vtest.h"

/*
 * vfig_of() - @fig[i] the figure i that side @s of a @test measured, NAN
 * for the others: a latency test measures no bandwidth (a 0 there would
 * read as a link's bandwidth), a bandwidth test no latency.
 */
void vfig_of(double fig[TESTAPI_FIG_COUNT], enum vt_test test,
	     const struct vt_side *s);

#endif
