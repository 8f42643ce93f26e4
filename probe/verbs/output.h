/* SPDX-License-Identifier: MIT */
/*
 * Printing a verbs test result: a perftest-like table for people and a
 * JSON document (both sides, units in the key names: bytes per second,
 * seconds) for machines. Internal to probe/verbs.
 */
#ifndef IBPULSE_VERBS_OUTPUT_H
#define IBPULSE_VERBS_OUTPUT_H

#include <stdio.h>

#include "vtest.h"

void vout_table(FILE *f, enum vt_test test, const struct vt_result *res);
/* One JSON object, pretty (@compact 0) or on one line; 0 or -ENOMEM. */
int vout_json(FILE *f, enum vt_test test, const char *role,
	      const struct vt_result *res, int compact);

#endif
