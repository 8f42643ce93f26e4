/* SPDX-License-Identifier: MIT */
/*
 * Printing a report for people, the way ibstat does (`ibpulse-probe
 * devices`).
 */
#ifndef IBPULSE_PRINT_H
#define IBPULSE_PRINT_H

#include <stdio.h>

#include "report.h"

/*
 * probe_print_devices() - the ibstat-like listing of @r to @f: identity,
 * PCIe state (DEGRADED when below its maximum), per port state, rate,
 * addresses, the P_Key and GID tables and, with @counters, the counters.
 */
void probe_print_devices(FILE *f, const struct report *r, int counters);

#endif
