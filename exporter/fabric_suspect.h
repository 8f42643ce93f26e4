/* SPDX-License-Identifier: MIT */
/*
 * Where in the fabric, for one scrape (schema/009_localize.sql; the
 * collector localizes, collector/store/store_localize.c): the open link and
 * switch suspects and the link coverage of the last planned period.
 * Families (docs/metrics.md, "Where in the fabric"):
 *   ibpulse_fabric_link_suspect{a_node_guid, a_node_desc, a_port,
 *     b_node_guid, b_node_desc, b_port, profile} 1, a the end the traffic
 *     leaves; ibpulse_fabric_link_suspect_confidence (same labels);
 *   ibpulse_switch_suspect{node_guid, node_desc, profile} 1;
 *   ibpulse_fabric_links_covered; ibpulse_fabric_links_uncovered{reason}.
 * Served by shard 0 (they belong to no host). A database without schema 9
 * serves none of them.
 */
#ifndef IBPULSE_EXPORTER_FABRIC_SUSPECT_H
#define IBPULSE_EXPORTER_FABRIC_SUSPECT_H

#include "expo.h"
#include "snapshot.h"

struct fsus;
struct sqlite3;

/*
 * fsus_read() - read what one scrape serves into *@out (fsus_free()). 0,
 * -ENOMEM, or -EIO with SQLite's message in @err.
 */
int fsus_read(struct sqlite3 *db, const struct snap_opts *o, struct fsus **out,
	      char *err, size_t errlen);
void fsus_free(struct fsus *f);

/* Write the families; NULL @f writes nothing. Returns e->err. */
int fsus_render(struct expo *e, const struct fsus *f);

#endif
