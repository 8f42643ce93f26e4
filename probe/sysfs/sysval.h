/* SPDX-License-Identifier: MIT */
/*
 * Parsers for the values sysfs prints ("4: ACTIVE", "100 Gb/sec (4X EDR)",
 * "0x000c", "16.0 GT/s PCIe", an aer_dev_* table...). They are pure
 * functions on strings, with no file access, so they can be unit-tested
 * and fuzzed. Each returns 0 and stores the value, or -EINVAL (garbage,
 * out of range) and leaves *out untouched. Trailing whitespace (the
 * newline every sysfs file ends with) is accepted everywhere.
 */
#ifndef IBPULSE_SYSVAL_H
#define IBPULSE_SYSVAL_H

#include <stddef.h>
#include <stdint.h>

/* A decimal unsigned 64-bit counter: "12345\n". */
int sysval_u64(const char *s, uint64_t *out);
/*
 * 1 when @s is a value the kernel prints for a counter it cannot read,
 * "N/A (no PMA)" (ib_core's sysfs when the device has no performance
 * management agent): unavailable, not garbage. 0 otherwise.
 */
int sysval_is_na(const char *s);
/* A decimal signed integer: "-1" (numa_node), "16" (link width). */
int sysval_i64(const char *s, int64_t *out);
/* An integer in any C base: "0x000c" (lid), "0x2651e848", "0". */
int sysval_num(const char *s, uint64_t max, uint64_t *out);
/* "4: ACTIVE" -> 4, "5: LinkUp" -> 5: the number before the colon. */
int sysval_state(const char *s, int *out);
/*
 * "100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)", "10 Gb/sec (1X FDR10)"
 * -> bytes per second (100 Gb/s is 12,500,000,000 B/s), exactly.
 */
int sysval_rate(const char *s, uint64_t *bytes_per_sec);
/* "16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s PCIe" -> GT/s; "Unknown" fails. */
int sysval_pcie_speed(const char *s, double *gts);
/*
 * The count on the line "@key N" of an aer_dev_* table
 * ("TOTAL_ERR_COR 3"); -ENOENT when the line is missing.
 */
int sysval_aer_total(const char *s, const char *key, int64_t *out);
/*
 * A GID as sysfs prints it: 8 groups of 4 hex digits separated by colons.
 * Copies the canonical lower-case text (39 characters) into @out
 * (at least 40 bytes) and sets *@zero when every digit is 0.
 */
int sysval_gid(const char *s, char *out, size_t outlen, int *zero);
/* "0xffff" -> 0xffff. */
int sysval_pkey(const char *s, uint16_t *out);
/*
 * Copy text for the report: trailing whitespace removed, control and
 * non-ASCII bytes replaced by '?', truncated to @outlen - 1 bytes.
 * Returns -EINVAL for an empty result.
 */
int sysval_text(const char *s, char *out, size_t outlen);
/* 1 when @s is a report "name": name.h's NAME_LABEL, 1-64 bytes. */
int sysval_is_name(const char *s);
/*
 * 1 when @name matches one of the comma-separated fnmatch(3) globs in
 * @list ("*pause*,*pfc*"); blanks around globs are ignored. An empty or
 * NULL list matches nothing.
 */
int sysval_glob_any(const char *list, const char *name);

#endif
