/* SPDX-License-Identifier: MIT */
/*
 * The fabric in a scrape (schema/004_fabric.sql, written from fabric
 * pollers' reports): switch ports join the snapshot's ports and their
 * counters its rows, so they come out in the port families under the same
 * names (ibpulse_port_symbol_error_total...) with node_guid, node_desc and
 * port labels instead of host and device, saturation included; and the
 * links: ibpulse_link_info joining both ends (host/device/port where the
 * end is a host's HCA the probes report, node_guid/node_desc/port
 * otherwise), ibpulse_link_degraded and the lane gauges, and each node's
 * last report. Nodes not reported within drop_after are left out; the
 * shard of a node is that of its GUID, of an HCA end that of its host.
 */
#ifndef IBPULSE_FABRIC_SNAP_H
#define IBPULSE_FABRIC_SNAP_H

#include <stddef.h>

#include "expo.h"
#include "snapshot.h"

struct fabric_snap;
struct sqlite3;

/*
 * fabric_read() - add the fabric to @sn (switch ports and their counters;
 * sn->fabric gets the links). 0, -ENOMEM, or -EIO with SQLite's message
 * in @err. A database without the fabric tables adds nothing.
 */
int fabric_read(struct sqlite3 *db, const struct snap_opts *o,
		struct snapshot *sn, char *err, size_t errlen);
void fabric_snap_free(struct fabric_snap *f);

/* The link families of @sn->fabric (render.c calls it). */
int fabric_render(struct expo *e, const struct snapshot *sn);

#endif
