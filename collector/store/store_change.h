/* SPDX-License-Identifier: MIT */
/*
 * Per-host change markers for the exporter (schema/008_exporter_changes.sql):
 * when a report changes any of a host's device, port, GID, P_Key or series
 * rows, the host's host_change.seq gets a fresh value of the ever-growing
 * change_seq, in the same transaction. The exporter re-reads and re-renders
 * only the hosts whose seq moved. A database without the tables (the
 * schema files were not all applied) makes every call a no-op.
 */
#ifndef IBPULSE_COLLECTOR_STORE_CHANGE_H
#define IBPULSE_COLLECTOR_STORE_CHANGE_H

#include <stdint.h>

struct store;

/* Prepare the statements when the tables exist. 0 or a negative errno. */
int store_change_open(struct store *st);
void store_change_close(struct store *st);

/*
 * store_change_host() - mark host @host_id changed (inside the caller's
 * transaction). Returns 0 or a negative errno.
 */
int store_change_host(struct store *st, int64_t host_id);

#endif
