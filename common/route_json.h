/* SPDX-License-Identifier: MIT */
/*
 * A path (route.h) as JSON: the one shape both the collector's
 * GET /api/v1/route and `ibpulse-probe fabric --route --json` answer
 * (docs/api.md, "Routes"): the two LIDs, both end ports, one object per
 * switch in order with the ports the path enters and leaves it by, and
 * the adaptive-routing caveat.
 */
#ifndef IBPULSE_ROUTE_JSON_H
#define IBPULSE_ROUTE_JSON_H

#include <jansson.h>

#include "route.h"

/*
 * route_path_json() - @p, a path route_path() found on @n, as a new JSON
 * object (the caller decrefs), NULL when out of memory.
 */
json_t *route_path_json(const struct route_net *n, const struct route_path *p);

/* "ca", "switch", "router". */
const char *route_type_name(enum route_node_type t);

#endif
