/* SPDX-License-Identifier: MIT */
/*
 * Subnet Management MADs as bytes (InfiniBand Architecture chapter 14): a
 * LID-routed SubnGet(LinearForwardingTable) for one block of 64 LIDs,
 * checking its response and decoding the 64 egress ports. Like pma.h,
 * every field goes through libibmad's field tables (IB_MAD_*_F,
 * IB_LINEAR_FORW_TBL_F), never a hand-written offset, and nothing here
 * does I/O: the window (fwin.c) sends what this builds and the unit tests
 * run it against byte fixtures. Internal to probe/fabric.
 */
#ifndef IBPULSE_FABRIC_SMP_H
#define IBPULSE_FABRIC_SMP_H

#include <stdint.h>

#define SMP_MAD_SIZE 256
#define SMP_LFT_BLOCK 64 /* LIDs per LinearForwardingTable block */

/*
 * smp_encode_lft_get() - a LID-routed SubnGet(LinearForwardingTable) of
 * block @block (LIDs @block * 64 .. + 63) with TransactionID @tid into
 * @mad (SMP_MAD_SIZE bytes, cleared first). M_Key 0.
 */
void smp_encode_lft_get(uint8_t *mad, unsigned block, uint64_t tid);

/*
 * smp_check_lft() - 0 when @mad is a SubnGetResp(LinearForwardingTable)
 * of @block with status 0; else pma_status_errno()'s codes for the status
 * word, or -EPROTO (not that response). *@status gets the status word.
 */
int smp_check_lft(const uint8_t *mad, unsigned block, unsigned *status);

/* The 64 egress ports of a checked response, LID block * 64 first. */
void smp_decode_lft(const uint8_t *mad, uint8_t *ports);

#endif
