// SPDX-License-Identifier: MIT
/*
 * Link coverage in the database and in the coverage view
 * (store_localize.h): what the planner did for the links between
 * switches (planner.h, planner_cover.c) goes into fabric_link_cover and
 * fabric_link_uncovered (schema/009_localize.sql) for the exporter, and
 * into GET /api/v1/coverage's "fabric_links" with whether the routes are
 * known, how many judged tests were placed on their paths, and why not.
 */
#include "store_localize_int.h"

#include "route.h"
#include "store_int.h"
#include "store_route.h"

#include <errno.h>
#include <stdio.h>

const char *store_localize_why_name(enum planner_why w)
{
	static const char *const names[PLANNER_WHYS] = {
		[PLANNER_COVERED] = "covered",
		[PLANNER_DUTY_CYCLE] = "duty_cycle",
		[PLANNER_NO_ROUTE] = "no_route",
		[PLANNER_NO_PROBE] = "no_probe",
		[PLANNER_OFF] = "off",
	};

	return (unsigned)w < PLANNER_WHYS ? names[w] : "unknown";
}

int store_localize_cover_save(struct store *st, unsigned long long period,
			      const struct planner_cover *pc)
{
	struct store_localize *lz = st->localize;
	sqlite3_stmt *s;
	char a[24], b[24];
	int ret = 0;

	if (!lz || !pc->routed)
		return 0;
	for (int k = 0; !ret && k < 2; k++) {
		s = lz_stmt(lz, k ? LSQL_UNCOV_DEL : LSQL_COVER_DEL);
		sql_name_int(s, ":period", (int64_t)period);
		ret = store_done(st, s, "link coverage");
	}
	for (int w = 0; !ret && w < PLANNER_WHYS; w++) {
		s = lz_stmt(lz, LSQL_COVER_INS);
		sql_name_int(s, ":period", (int64_t)period);
		sql_name_text(s, ":state", store_localize_why_name(w));
		sql_name_int(s, ":links", (int64_t)pc->n[w]);
		ret = store_done(st, s, "link coverage");
	}
	for (size_t i = 0; !ret && i < pc->n_uncovered; i++) {
		const struct planner_uncovered *u = &pc->uncovered[i];

		s = lz_stmt(lz, LSQL_UNCOV_INS);
		lz_guid_text(u->guid, a, sizeof(a));
		lz_guid_text(u->peer_guid, b, sizeof(b));
		sql_name_int(s, ":period", (int64_t)period);
		sql_name_text(s, ":a_guid", a);
		sql_name_int(s, ":a_port", u->port);
		sql_name_text(s, ":b_guid", b);
		sql_name_int(s, ":b_port", u->peer_port);
		sql_name_text(s, ":reason", store_localize_why_name(u->why));
		ret = store_done(st, s, "uncovered link");
	}
	return ret;
}

/* A node's description, "" when the net does not know it. */
static const char *cover_desc(const struct route_net *n, uint64_t guid)
{
	struct route_node_info i;
	uint32_t x = n ? route_node_find(n, guid) : ROUTE_NO_NODE;

	return x != ROUTE_NO_NODE && !route_node_get(n, x, &i) && i.desc
		       ? i.desc
		       : "";
}

/* At most 100 of the uncovered links, named. */
#define COVER_LIST 100

static json_t *cover_list(const struct planner_cover *pc,
			  const struct route_net *n)
{
	json_t *arr = json_array();
	char a[24], b[24];

	for (size_t i = 0; arr && i < pc->n_uncovered && i < COVER_LIST; i++) {
		const struct planner_uncovered *u = &pc->uncovered[i];

		lz_guid_text(u->guid, a, sizeof(a));
		lz_guid_text(u->peer_guid, b, sizeof(b));
		json_array_append_new(
			arr,
			json_pack("{s:s, s:s, s:I, s:s, s:s, s:I, s:s}",
				  "a_node_guid", a, "a_node_desc",
				  cover_desc(n, u->guid), "a_port",
				  (json_int_t)u->port, "b_node_guid", b,
				  "b_node_desc", cover_desc(n, u->peer_guid),
				  "b_port", (json_int_t)u->peer_port, "reason",
				  store_localize_why_name(u->why)));
	}
	return arr;
}

/* The plan's side: links, covered, uncovered by why, tests. */
static void cover_plan(json_t *o, const struct planner_cover *pc,
		       const struct route_net *n)
{
	json_t *why = json_object();

	for (int w = PLANNER_COVERED + 1; why && w < PLANNER_WHYS; w++)
		json_object_set_new(why, store_localize_why_name(w),
				    json_integer((json_int_t)pc->n[w]));
	json_object_set_new(o, "links", json_integer((json_int_t)pc->links));
	json_object_set_new(o, "covered",
			    json_integer((json_int_t)pc->n[PLANNER_COVERED]));
	json_object_set_new(o, "uncovered", why);
	json_object_set_new(o, "tests_added",
			    json_integer((json_int_t)pc->added));
	json_object_set_new(o, "tests_steered",
			    json_integer((json_int_t)pc->steered));
	json_object_set_new(o, "tests_confirm",
			    json_integer((json_int_t)pc->confirm));
	json_object_set_new(o, "confirm_unplaced",
			    json_integer((json_int_t)pc->confirm_unplaced));
	json_object_set_new(o, "uncovered_links", cover_list(pc, n));
}

int store_localize_cover_json(struct store *st, const struct planner_cover *pc,
			      json_t **out)
{
	struct store_localize_status ls;
	const struct route_net *n = NULL;
	const double *upd;
	const char *why = NULL;
	json_t *o = json_object();

	*out = NULL;
	if (!o)
		return -ENOMEM;
	store_localize_status(st, &ls);
	if (!ls.enabled)
		why = "localization is off ([localize] enabled = false): "
		      "host-level inference only";
	else if (store_route_net(st, &n, &upd) || !route_net_nodes(n))
		why = "no fabric poller has reported the forwarding tables "
		      "(ibpulse-probe fabric, docs/fabric.md): host-level "
		      "inference only";
	if (why)
		n = NULL;
	json_object_set_new(o, "routes", json_boolean(!why));
	json_object_set_new(o, "why", why ? json_string(why) : json_null());
	json_object_set_new(o, "caveat", json_string(ROUTE_AR_CAVEAT));
	json_object_set_new(o, "tests_attributed",
			    json_integer((json_int_t)ls.attributed));
	json_object_set_new(o, "tests_unrouted",
			    json_integer((json_int_t)ls.unrouted));
	json_object_set_new(o, "unrouted_why",
			    ls.why[0] ? json_string(ls.why) : json_null());
	if (pc && pc->routed)
		cover_plan(o, pc, n);
	*out = o;
	return 0;
}
