/* SPDX-License-Identifier: MIT */
/*
 * GET /api/v1/route?src_lid=A&dst_lid=B (docs/api.md, "Routes"): its
 * parameters, checked on the HTTP thread (route_api_args()), and its
 * answer, made on the writer thread from the store's route net
 * (route_api_answer()): the path as common/route_json.h shapes it, plus
 * when the collector stored the oldest forwarding table the path went
 * through. An unknown LID or a path the tables do not complete is a 404
 * with the reason. Internal to the collector; http.c calls the first,
 * writer.c the second.
 */
#ifndef IBPULSE_COLLECTOR_ROUTE_API_H
#define IBPULSE_COLLECTOR_ROUTE_API_H

#include <stddef.h>

struct route_net;
struct store;

/*
 * route_api_args() - the query's src_lid and dst_lid (NULL: absent) into
 * *@src and *@dst. 0, or -EINVAL with the reason naming the parameter in
 * @err (the 400 answer).
 */
int route_api_args(const char *src_text, const char *dst_text, unsigned *src,
		   unsigned *dst, char *err, size_t errlen);

/*
 * route_api_json() - the answer for @src -> @dst on @n into *@answer (JSON
 * text; the caller frees). @lft_updated: by node index, when each switch's
 * table was stored (0 unknown). 0; -ENOENT with the reason in @err (no
 * port holds a LID, the tables do not reach it); -ENOMEM.
 */
int route_api_json(const struct route_net *n, const double *lft_updated,
		   unsigned src, unsigned dst, char **answer, char *err,
		   size_t errlen);

/* The same from @st's routes (store_route.h), in the open transaction. */
int route_api_answer(struct store *st, unsigned src, unsigned dst,
		     char **answer, char *err, size_t errlen);

#endif
