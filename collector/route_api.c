// SPDX-License-Identifier: MIT
/*
 * The route endpoint's logic (route_api.h): LIDs from the query string
 * through common/route.h's parser, the path through route_path(), the
 * body through route_path_json() with "tables_stored" added. Every
 * failure of the walk (a LID nobody holds, a hole, a loop, a link to
 * nowhere, a table never read) is the 404's reason, as route.h words it.
 */
#include "route_api.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "route.h"
#include "route_json.h"
#include "store.h"

static int one_arg(const char *name, const char *text, unsigned *out, char *err,
		   size_t errlen)
{
	if (!text) {
		snprintf(err, errlen,
			 "%s: is required (a unicast LID, 1-%u, decimal or "
			 "0x-hex)",
			 name, (unsigned)ROUTE_LID_MAX);
		return -EINVAL;
	}
	if (route_lid_parse(text, out)) {
		snprintf(err, errlen,
			 "%s: '%.32s' is not a unicast LID (1-%u, decimal or "
			 "0x-hex)",
			 name, text, (unsigned)ROUTE_LID_MAX);
		return -EINVAL;
	}
	return 0;
}

int route_api_args(const char *src_text, const char *dst_text, unsigned *src,
		   unsigned *dst, char *err, size_t errlen)
{
	int ret = one_arg("src_lid", src_text, src, err, errlen);

	return ret ? ret : one_arg("dst_lid", dst_text, dst, err, errlen);
}

/* The oldest stored table on the path, 0 when one is unknown. */
static double oldest(const struct route_path *p, const double *lft_updated)
{
	double t = 0;

	for (size_t i = 0; lft_updated && i < p->n_hops; i++) {
		double u = lft_updated[p->hops[i].node];

		if (!u)
			return 0;
		if (!t || u < t)
			t = u;
	}
	return t;
}

int route_api_json(const struct route_net *n, const double *lft_updated,
		   unsigned src, unsigned dst, char **answer, char *err,
		   size_t errlen)
{
	struct route_path *p = malloc(sizeof(*p));
	json_t *o = NULL;
	double t;
	int ret;

	*answer = NULL;
	if (!p)
		return -ENOMEM;
	if (!route_net_nodes(n)) {
		snprintf(err, errlen,
			 "no fabric is known: no fabric poller (ibpulse-probe "
			 "fabric) has reported to this collector");
		free(p);
		return -ENOENT;
	}
	ret = route_path(n, src, dst, p, err, errlen);
	if (!ret) {
		o = route_path_json(n, p);
		t = oldest(p, lft_updated);
		if (o &&
		    json_object_set_new(o, "tables_stored",
					t > 0 ? json_real(t) : json_null()))
			ret = -ENOMEM;
		*answer = o && !ret ? json_dumps(o, JSON_COMPACT |
							    JSON_PRESERVE_ORDER)
				    : NULL;
		if (!*answer)
			ret = -ENOMEM;
		json_decref(o);
	} else if (ret != -ENOMEM) {
		ret = -ENOENT; /* the reason is in @err: a 404 */
	}
	free(p);
	return ret;
}

int route_api_answer(struct store *st, unsigned src, unsigned dst,
		     char **answer, char *err, size_t errlen)
{
	const struct route_net *n;
	const double *updated;
	int ret;

	*answer = NULL;
	ret = store_route_net(st, &n, &updated);
	if (ret)
		return ret;
	return route_api_json(n, updated, src, dst, answer, err, errlen);
}
