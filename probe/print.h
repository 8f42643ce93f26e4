/* SPDX-License-Identifier: MIT */
/*
 * Printing a report for people, the way ibstat does (`ibpulse-probe
 * devices`), and the PCIe-degraded rule it shows.
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

/* 1 when the PCIe link runs below its maximum speed or width. */
int probe_pcie_degraded(const struct report_pcie *p);

#endif
