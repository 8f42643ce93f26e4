/* SPDX-License-Identifier: MIT */
/*
 * Printing a verbs test result: a perftest-like table for people and a
 * JSON document (both sides, units in the key names: bytes per second,
 * seconds) for machines: `ibpulse-probe run` and `serve` (cmd_verbs.c).
 */
#ifndef IBPULSE_VOUT_H
#define IBPULSE_VOUT_H

#include <stdio.h>

#include "vtest.h"

/*
 * vout_sum() - both directions of a bidirectional test added up (peaks and
 * minimums too: each side's own, so not a joint peak or minimum).
 */
void vout_sum(const struct vt_side *a, const struct vt_side *b,
	      struct vt_side *sum);
void vout_table(FILE *f, enum vt_test test, const struct vt_result *res);
/* One JSON object, pretty (@compact 0) or on one line; 0 or -ENOMEM. */
int vout_json(FILE *f, enum vt_test test, const char *role,
	      const struct vt_result *res, int compact);

#endif
