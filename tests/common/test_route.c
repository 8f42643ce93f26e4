// SPDX-License-Identifier: MIT
/*
 * Unit tests of the path function (common/route.c) on small fat trees
 * built here, with forwarding tables written the way OpenSM's min-hop
 * engine spreads them (a LID's uplink chosen by the LID, so the LIDs of
 * one port with LMC > 0 leave by different spines): the hops and both
 * ends of every link, paths to a switch and from one, LMC, and every
 * failure a table or a picture can hold (holes, a LID beyond the top, a
 * loop, links to nowhere, a down port, a missing table, misdelivery,
 * unknown LIDs, more switches than a path may have), each with its code
 * and a reason that names the switch. Then the runs codec and the
 * builder's refusals.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "route.h"

#define NL 3 /* leaves */
#define PL 2 /* hosts per leaf */
#define NS 2 /* spines */
#define HOSTS (NL * PL)
#define TOP 2100

#define HOST_GUID(h) (0x100000u + (h))
#define LEAF_GUID(l) (0x200000u + (l))
#define SPINE_GUID(s) (0x300000u + (s))
#define LEAF_LID(l) (1000u + (l))
#define SPINE_LID(s) (2000u + (s))

struct tree {
	unsigned lmc;
	uint8_t leaf[NL][TOP + 1];
	uint8_t spine[NS][TOP + 1];
};

static unsigned host_lid(const struct tree *t, unsigned h)
{
	return (h + 1) << t->lmc;
}

static unsigned lids_of(const struct tree *t)
{
	return 1u << t->lmc;
}

/* Min-hop-like tables: own hosts down, others up by LID, spines down. */
static void tables(struct tree *t)
{
	memset(t->leaf, ROUTE_PORT_NONE, sizeof(t->leaf));
	memset(t->spine, ROUTE_PORT_NONE, sizeof(t->spine));
	for (unsigned h = 0; h < HOSTS; h++)
		for (unsigned k = 0; k < lids_of(t); k++) {
			unsigned lid = host_lid(t, h) + k;

			for (unsigned l = 0; l < NL; l++)
				t->leaf[l][lid] = h / PL == l
							  ? h % PL + 1
							  : PL + 1 + lid % NS;
			for (unsigned s = 0; s < NS; s++)
				t->spine[s][lid] = h / PL + 1;
		}
	for (unsigned l = 0; l < NL; l++) {
		for (unsigned m = 0; m < NL; m++)
			t->leaf[l][LEAF_LID(m)] =
				l == m ? 0 : PL + 1 + LEAF_LID(m) % NS;
		for (unsigned s = 0; s < NS; s++) {
			t->leaf[l][SPINE_LID(s)] = PL + 1 + s;
			t->spine[s][LEAF_LID(l)] = l + 1;
		}
	}
	for (unsigned s = 0; s < NS; s++)
		t->spine[s][SPINE_LID(s)] = 0;
}

/* Add a node; every test builds its nets through these two. */
static void node(struct route_net *n, uint64_t guid, enum route_node_type type,
		 const char *desc, unsigned numports, unsigned lid,
		 unsigned lmc)
{
	struct route_node_in in = {guid,     type,	    desc,
				   numports, (uint16_t)lid, (uint8_t)lmc};

	assert_int_equal(route_add_node(n, &in), 0);
}

static void port(struct route_net *n, uint64_t guid, struct route_port_in in)
{
	assert_int_equal(route_add_port(n, guid, &in), 0);
}

static void add_lft(struct route_net *n, uint64_t guid, const uint8_t *lft)
{
	struct route_run runs[TOP + 1];
	size_t k = route_runs_encode(lft, TOP, runs);

	assert_int_equal(k, route_runs_count(lft, TOP));
	assert_int_equal(route_add_lft(n, guid, TOP, runs, k), 0);
}

/* The picture of @t into an unfinished net (tests may add to it). */
static struct route_net *picture(const struct tree *t)
{
	struct route_net *n;
	char name[16];

	assert_int_equal(route_net_new(&n), 0);
	for (unsigned h = 0; h < HOSTS; h++) {
		struct route_port_in p = {.num = 1,
					  .lid = (uint16_t)host_lid(t, h),
					  .lmc = (uint8_t)t->lmc,
					  .state = 4,
					  .port_guid = HOST_GUID(h) + 0x1000,
					  .remote_guid = LEAF_GUID(h / PL),
					  .remote_port = h % PL + 1};

		snprintf(name, sizeof(name), "h%02u", h);
		node(n, HOST_GUID(h), ROUTE_CA, name, 1, 0, 0);
		assert_int_equal(route_add_port(n, HOST_GUID(h), &p), 0);
	}
	for (unsigned l = 0; l < NL; l++) {
		snprintf(name, sizeof(name), "leaf%u", l);
		node(n, LEAF_GUID(l), ROUTE_SWITCH, name, PL + NS,
		     (uint16_t)LEAF_LID(l), 0);
		for (unsigned i = 0; i < PL + NS; i++) {
			struct route_port_in p = {.num = i + 1, .state = 4};

			p.remote_guid = i < PL ? HOST_GUID(l * PL + i)
					       : SPINE_GUID(i - PL);
			p.remote_port = i < PL ? 1 : l + 1;
			assert_int_equal(route_add_port(n, LEAF_GUID(l), &p),
					 0);
		}
		add_lft(n, LEAF_GUID(l), t->leaf[l]);
	}
	for (unsigned s = 0; s < NS; s++) {
		snprintf(name, sizeof(name), "spine%u", s);
		node(n, SPINE_GUID(s), ROUTE_SWITCH, name, NL,
		     (uint16_t)SPINE_LID(s), 0);
		for (unsigned l = 0; l < NL; l++) {
			struct route_port_in p = {.num = l + 1,
						  .state = 4,
						  .remote_guid = LEAF_GUID(l),
						  .remote_port = PL + 1 + s};

			assert_int_equal(route_add_port(n, SPINE_GUID(s), &p),
					 0);
		}
		add_lft(n, SPINE_GUID(s), t->spine[s]);
	}
	return n;
}

static struct route_net *built(const struct tree *t)
{
	struct route_net *n = picture(t);
	char err[256] = "";

	assert_int_equal(route_net_finish(n, err, sizeof(err)), 0);
	return n;
}

static uint64_t guid_at(const struct route_net *n, uint32_t idx)
{
	struct route_node_info ni;

	assert_int_equal(route_node_get(n, idx, &ni), 0);
	return ni.guid;
}

static void check_hop(const struct route_net *n, const struct route_hop *h,
		      uint64_t guid, const char *desc, unsigned in,
		      unsigned out, uint64_t from, unsigned from_port,
		      uint64_t to, unsigned to_port)
{
	assert_true(h->guid == guid);
	assert_true(guid_at(n, h->node) == guid);
	assert_string_equal(h->desc, desc);
	assert_int_equal(h->in_port, in);
	assert_int_equal(h->out_port, out);
	assert_true(h->from.guid == from);
	assert_int_equal(h->from.port, from_port);
	assert_true(h->to.guid == to);
	assert_int_equal(h->to.port, to_port);
}

static void test_host_to_host(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	struct route_link links[ROUTE_MAX_HOPS + 1];
	struct route_path p;
	struct route_net *n;
	char err[256];
	unsigned dst;

	(void)state;
	tables(t);
	n = built(t);
	/* h00 (leaf0 port 1) to h05 (leaf2 port 2): up by LID 6 % 2 */
	dst = host_lid(t, 5);
	assert_int_equal(
		route_path(n, host_lid(t, 0), dst, &p, err, sizeof(err)), 0);
	assert_int_equal(p.src_lid, 1);
	assert_int_equal(p.dst_lid, 6);
	assert_true(p.src.guid == HOST_GUID(0) && p.src.port == 1);
	assert_true(p.dst.guid == HOST_GUID(5) && p.dst.port == 1);
	assert_int_equal(p.n_hops, 3);
	check_hop(n, &p.hops[0], LEAF_GUID(0), "leaf0", 1, PL + 1 + 0,
		  HOST_GUID(0), 1, SPINE_GUID(0), 1);
	check_hop(n, &p.hops[1], SPINE_GUID(0), "spine0", 1, 3, LEAF_GUID(0),
		  PL + 1, LEAF_GUID(2), PL + 1);
	check_hop(n, &p.hops[2], LEAF_GUID(2), "leaf2", PL + 1, 2,
		  SPINE_GUID(0), 3, HOST_GUID(5), 1);
	assert_int_equal(p.hops[0].lid, LEAF_LID(0));
	/* the directed links: host->leaf, leaf->spine, spine->leaf, leaf->host
	 */
	assert_int_equal(route_path_links(&p, links), 4);
	assert_true(links[0].from.guid == HOST_GUID(0) &&
		    links[0].to.guid == LEAF_GUID(0) && links[0].to.port == 1);
	assert_true(links[1].from.guid == LEAF_GUID(0) &&
		    links[1].from.port == PL + 1 &&
		    links[1].to.guid == SPINE_GUID(0) && links[1].to.port == 1);
	assert_true(links[2].from.guid == SPINE_GUID(0) &&
		    links[2].from.port == 3 &&
		    links[2].to.guid == LEAF_GUID(2));
	assert_true(links[3].from.guid == LEAF_GUID(2) &&
		    links[3].from.port == 2 &&
		    links[3].to.guid == HOST_GUID(5) && links[3].to.port == 1);
	/* the same pair the other way round: the other spine (LID 1 % 2) */
	assert_int_equal(
		route_path(n, dst, host_lid(t, 0), &p, err, sizeof(err)), 0);
	assert_int_equal(p.n_hops, 3);
	assert_true(p.hops[1].guid == SPINE_GUID(1));
	/* hosts of one leaf: one switch */
	assert_int_equal(route_path(n, host_lid(t, 0), host_lid(t, 1), &p, err,
				    sizeof(err)),
			 0);
	assert_int_equal(p.n_hops, 1);
	check_hop(n, &p.hops[0], LEAF_GUID(0), "leaf0", 1, 2, HOST_GUID(0), 1,
		  HOST_GUID(1), 1);
	assert_int_equal(route_path_links(&p, links), 2);
	/* a port's own LID: no switch, no link */
	assert_int_equal(route_path(n, 1, 1, &p, err, sizeof(err)), 0);
	assert_int_equal(p.n_hops, 0);
	assert_int_equal(route_path_links(&p, links), 0);
	/* one table entry: leaf0 sends h05's LID up to spine0 */
	assert_int_equal(
		route_lft_get(n, route_node_find(n, LEAF_GUID(0)), dst),
		PL + 1);
	assert_int_equal(
		route_lft_get(n, route_node_find(n, LEAF_GUID(0)), LEAF_LID(0)),
		0);
	assert_int_equal(route_lft_get(n, route_node_find(n, LEAF_GUID(0)),
				       ROUTE_LID_MAX),
			 ROUTE_PORT_NONE);
	assert_int_equal(route_lft_get(n, route_node_find(n, HOST_GUID(0)), 1),
			 -EINVAL);
	assert_int_equal(route_lft_get(n, 1u << 20, 1), -EINVAL);
	route_net_free(n);
	free(t);
}

/* LMC 2: each port owns 4 LIDs, and choosing the LID chooses the spine. */
static void test_lmc(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	struct route_end owner;
	struct route_path p;
	struct route_net *n;
	uint64_t spines[4];

	(void)state;
	t->lmc = 2;
	tables(t);
	n = built(t);
	for (unsigned k = 0; k < 4; k++) {
		unsigned dst = host_lid(t, 4) + k;

		assert_int_equal(
			route_path(n, host_lid(t, 0) + 3, dst, &p, NULL, 0), 0);
		assert_int_equal(p.src_lid, host_lid(t, 0) + 3);
		assert_true(p.src.guid == HOST_GUID(0));
		assert_true(p.dst.guid == HOST_GUID(4));
		assert_int_equal(p.n_hops, 3);
		spines[k] = p.hops[1].guid;
		assert_int_equal(route_lid_owner(n, dst, &owner), 0);
		assert_true(owner.guid == HOST_GUID(4) && owner.port == 1);
	}
	assert_true(spines[0] != spines[1]);
	assert_true(spines[0] == spines[2] && spines[1] == spines[3]);
	/* a LID between two ports' ranges belongs to nobody */
	assert_int_equal(route_lid_owner(n, host_lid(t, HOSTS - 1) + 4, &owner),
			 -ENOENT);
	route_net_free(n);
	free(t);
}

static void test_switch_ends(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	struct route_link links[ROUTE_MAX_HOPS + 1];
	struct route_path p;
	struct route_net *n;
	char err[256];

	(void)state;
	tables(t);
	n = built(t);
	/* to a spine: it delivers to itself, port 0 */
	assert_int_equal(route_path(n, host_lid(t, 2), SPINE_LID(1), &p, err,
				    sizeof(err)),
			 0);
	assert_int_equal(p.n_hops, 2);
	assert_true(p.dst.guid == SPINE_GUID(1) && p.dst.port == 0);
	check_hop(n, &p.hops[1], SPINE_GUID(1), "spine1", 2, 0, LEAF_GUID(1),
		  PL + 2, SPINE_GUID(1), 0);
	assert_int_equal(route_path_links(&p, links), 2);
	/* from a switch: it starts there, with in_port 0 */
	assert_int_equal(route_path(n, LEAF_LID(2), host_lid(t, 0), &p, err,
				    sizeof(err)),
			 0);
	assert_true(p.src.guid == LEAF_GUID(2) && p.src.port == 0);
	assert_int_equal(p.n_hops, 3);
	assert_int_equal(p.hops[0].in_port, 0);
	assert_int_equal(p.hops[0].from.node, ROUTE_NO_NODE);
	assert_int_equal(route_path_links(&p, links), 3);
	assert_true(links[0].from.guid == LEAF_GUID(2));
	/* from a switch to itself */
	assert_int_equal(
		route_path(n, LEAF_LID(2), LEAF_LID(2), &p, err, sizeof(err)),
		0);
	assert_int_equal(p.n_hops, 1);
	assert_int_equal(p.hops[0].out_port, 0);
	assert_int_equal(route_path_links(&p, links), 0);
	/* by port rather than LID */
	assert_int_equal(route_path_from(n, route_node_find(n, HOST_GUID(3)), 1,
					 host_lid(t, 0), &p, err, sizeof(err)),
			 0);
	assert_int_equal(p.src_lid, host_lid(t, 3));
	assert_int_equal(p.n_hops, 3);
	route_net_free(n);
	free(t);
}

/* Build @t with @poke applied to leaf @l's table, and walk h00 -> @dst. */
static int walk_poked(struct tree *t, unsigned l, unsigned lid, uint8_t port,
		      unsigned dst, char *err, size_t errlen)
{
	struct route_path p;
	struct route_net *n;
	int ret;

	tables(t);
	t->leaf[l][lid] = port;
	n = built(t);
	ret = route_path(n, host_lid(t, 0), dst, &p, err, errlen);
	route_net_free(n);
	return ret;
}

static void test_holes_and_loops(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	char err[256];

	(void)state;
	/* LFT entry 255 on the first switch */
	assert_int_equal(walk_poked(t, 0, host_lid(t, 4), ROUTE_PORT_NONE,
				    host_lid(t, 4), err, sizeof(err)),
			 -EHOSTUNREACH);
	assert_non_null(strstr(err, "leaf0 (0x0000000000200000) has no entry "
				    "for LID 5 (255)"));
	/* a loop: spine0 sends LID 5 back down to leaf0, which sends it up */
	tables(t);
	t->spine[0][5] = 1;
	t->leaf[0][5] = PL + 1;
	{
		struct route_net *n = built(t);
		struct route_path p;

		assert_int_equal(route_path(n, 1, 5, &p, err, sizeof(err)),
				 -ELOOP);
		assert_non_null(strstr(err, "loop for LID 5"));
		assert_non_null(strstr(err, "leaf0"));
		assert_int_equal(p.n_hops, 2);
		route_net_free(n);
	}
	/* misdelivery: leaf2 hands LID 5 to h05 */
	assert_int_equal(walk_poked(t, 2, host_lid(t, 4), 2, host_lid(t, 4),
				    err, sizeof(err)),
			 -EHOSTUNREACH);
	assert_non_null(strstr(err, "delivered to port 1 of h05"));
	assert_non_null(strstr(err, "owns LIDs 6-6"));
	/* a port the switch does not have */
	assert_int_equal(walk_poked(t, 0, host_lid(t, 4), 9, host_lid(t, 4),
				    err, sizeof(err)),
			 -EHOSTUNREACH);
	assert_non_null(strstr(err, "to port 9, and it has 4"));
	/* port 0 for a LID that is not the switch's */
	assert_int_equal(walk_poked(t, 0, host_lid(t, 4), 0, host_lid(t, 4),
				    err, sizeof(err)),
			 -EHOSTUNREACH);
	assert_non_null(strstr(err, "to itself (port 0), but its LIDs are "
				    "1000-1000"));
	free(t);
}

/* A sixth port of leaf0, linked to a node the picture does not hold. */
static void dangling(struct route_net *n)
{
	port(n, LEAF_GUID(0),
	     (struct route_port_in){.num = 6,
				    .state = 4,
				    .remote_guid = 0xdead,
				    .remote_port = 1});
}

static void test_links_to_nowhere(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	struct route_net *n;
	struct route_path p;
	char err[256];

	(void)state;
	tables(t);
	/* leaf0 sends LID 5 up port 5: a port with nothing attached */
	t->leaf[0][5] = 5;
	n = picture(t);
	node(n, 0x999, ROUTE_CA, "lonely", 1, 0, 0);
	port(n, 0x999,
	     (struct route_port_in){.num = 1, .lid = 900, .state = 1});
	dangling(n);
	assert_int_equal(route_net_finish(n, err, sizeof(err)), 0);
	assert_int_equal(route_path(n, 1, 5, &p, err, sizeof(err)), -ENOLINK);
	assert_non_null(strstr(err, "port 5 of leaf0"));
	assert_non_null(strstr(err, "the picture has no such port"));
	assert_int_equal(route_path(n, 900, 1, &p, err, sizeof(err)), -ENOLINK);
	assert_non_null(strstr(err, "port 1 of lonely (0x0000000000000999) "
				    "leads nowhere: nothing is attached"));
	{
		struct route_net_stats st;

		route_net_stats(n, &st);
		assert_int_equal(st.dangling, 1);
		assert_int_equal(st.nodes, HOSTS + NL + NS + 1);
		assert_int_equal(st.switches, NL + NS);
		assert_int_equal(st.links, HOSTS + NL * NS);
		assert_int_equal(st.lfts, NL + NS);
		assert_int_equal(st.top_lid, SPINE_LID(NS - 1));
	}
	route_net_free(n);
	/* the dangling link used by the table */
	t->leaf[0][5] = 6;
	n = picture(t);
	dangling(n);
	assert_int_equal(route_net_finish(n, err, sizeof(err)), 0);
	assert_int_equal(route_path(n, 1, 5, &p, err, sizeof(err)), -ENOLINK);
	assert_non_null(strstr(err, "its peer is not in the picture"));
	route_net_free(n);
	free(t);
}

/*
 * One switch (LID 10) with h (LID 1) on port 1, ACTIVE, and h2 (LID 2) on
 * port 2, INIT; the switch's table not yet given.
 */
static struct route_net *two_hosts(void)
{
	struct route_net *m;

	assert_int_equal(route_net_new(&m), 0);
	node(m, 1, ROUTE_CA, "h", 1, 0, 0);
	node(m, 2, ROUTE_SWITCH, "sw", 2, 10, 0);
	node(m, 3, ROUTE_CA, "h2", 1, 0, 0);
	port(m, 1,
	     (struct route_port_in){.num = 1,
				    .lid = 1,
				    .state = 4,
				    .remote_guid = 2,
				    .remote_port = 1});
	port(m, 2,
	     (struct route_port_in){
		     .num = 1, .state = 4, .remote_guid = 1, .remote_port = 1});
	port(m, 2,
	     (struct route_port_in){
		     .num = 2, .state = 2, .remote_guid = 3, .remote_port = 1});
	port(m, 3,
	     (struct route_port_in){.num = 1,
				    .lid = 2,
				    .state = 2,
				    .remote_guid = 2,
				    .remote_port = 2});
	return m;
}

static void test_down_port_and_no_table(void **state)
{
	struct route_path p;
	struct route_net *m;
	char err[256];

	(void)state;
	/* the switch's table failed */
	m = two_hosts();
	assert_int_equal(
		route_add_lft_error(m, 2, "LinearForwardingTable: timeout"), 0);
	assert_int_equal(route_net_finish(m, err, sizeof(err)), 0);
	assert_int_equal(route_path(m, 1, 10, &p, err, sizeof(err)), -ENODATA);
	assert_non_null(strstr(err, "the forwarding table of sw "
				    "(0x0000000000000002) is unknown: "
				    "LinearForwardingTable: timeout"));
	assert_int_equal(p.n_hops, 1);
	route_net_free(m);
	/* with a table: port 2 is INIT */
	m = two_hosts();
	assert_int_equal(
		route_add_lft(
			m, 2, 10,
			(struct route_run[]){
				{0, 255}, {1, 1}, {2, 2}, {3, 255}, {10, 0}},
			5),
		0);
	assert_int_equal(route_net_finish(m, err, sizeof(err)), 0);
	assert_int_equal(route_path(m, 1, 2, &p, err, sizeof(err)), -ENOLINK);
	assert_non_null(strstr(err, "port 2 of sw (0x0000000000000002) is "
				    "INIT"));
	/* beyond the table's top, and an unknown LID */
	assert_int_equal(route_path(m, 1, 11, &p, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no port holds LID 11"));
	assert_int_equal(route_path(m, 77, 1, &p, err, sizeof(err)), -ENOENT);
	assert_int_equal(route_path(m, 0, 1, &p, err, sizeof(err)), -EINVAL);
	assert_int_equal(route_path(m, 1, 0xc000, &p, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a unicast LID"));
	assert_int_equal(route_path(m, 1, 10, &p, err, sizeof(err)), 0);
	route_net_free(m);
}

/* A LID beyond a table's top: no entry. */
static void test_beyond_top(void **state)
{
	struct route_net *m = two_hosts();
	struct route_path p;
	char err[256];

	(void)state;
	assert_int_equal(route_add_lft(m, 2, 1,
				       (struct route_run[]){{0, 255}, {1, 1}},
				       2),
			 0);
	assert_int_equal(route_net_finish(m, err, sizeof(err)), 0);
	assert_int_equal(route_path(m, 1, 2, &p, err, sizeof(err)),
			 -EHOSTUNREACH);
	assert_non_null(strstr(err, "no entry for LID 2: its table ends at "
				    "LID 1"));
	route_net_free(m);
}

/* A chain of 70 switches: more than a path may hold, never a hang. */
static void test_too_long(void **state)
{
	enum { N = 70 };
	struct route_net *m;
	struct route_path p;
	char err[256];

	(void)state;
	assert_int_equal(route_net_new(&m), 0);
	node(m, 1, ROUTE_CA, "a", 1, 0, 0);
	node(m, 2, ROUTE_CA, "b", 1, 0, 0);
	port(m, 1,
	     (struct route_port_in){
		     .num = 1, .lid = 1, .remote_guid = 100, .remote_port = 1});
	port(m, 2,
	     (struct route_port_in){.num = 1,
				    .lid = 2,
				    .remote_guid = 100 + N - 1,
				    .remote_port = 2});
	for (unsigned i = 0; i < N; i++) {
		uint64_t g = 100 + i;

		node(m, g, ROUTE_SWITCH, "s", 2, (uint16_t)(10 + i), 0);
		port(m, g,
		     (struct route_port_in){.num = 1,
					    .remote_guid = i ? g - 1 : 1,
					    .remote_port = i ? 2 : 1});
		port(m, g,
		     (struct route_port_in){.num = 2,
					    .remote_guid =
						    i + 1 < N ? g + 1 : 2,
					    .remote_port = 1});
		assert_int_equal(
			route_add_lft(m, g, 2,
				      (struct route_run[]){{0, 255}, {2, 2}},
				      2),
			0);
	}
	assert_int_equal(route_net_finish(m, err, sizeof(err)), 0);
	assert_int_equal(route_path(m, 1, 2, &p, err, sizeof(err)), -E2BIG);
	assert_int_equal(p.n_hops, ROUTE_MAX_HOPS);
	assert_non_null(strstr(err, "more than 64 switches"));
	route_net_free(m);
}

static void test_runs(void **state)
{
	uint8_t lft[10] = {255, 3, 3, 3, 4, 255, 255, 1, 1, 1}, back[10];
	struct route_run runs[10];
	char err[128];
	size_t k;

	(void)state;
	assert_int_equal(route_runs_count(lft, 9), 5);
	k = route_runs_encode(lft, 9, runs);
	assert_int_equal(k, 5);
	assert_int_equal(runs[1].lid, 1);
	assert_int_equal(runs[1].port, 3);
	assert_int_equal(runs[4].lid, 7);
	assert_int_equal(route_runs_check(runs, k, 9, err, sizeof(err)), 0);
	memset(back, 0xaa, sizeof(back));
	route_runs_expand(runs, k, 9, back);
	assert_memory_equal(lft, back, sizeof(lft));
	/* one LID, one run */
	assert_int_equal(route_runs_count(lft, 0), 1);
	/* refusals name the run */
	runs[0].lid = 1;
	assert_int_equal(route_runs_check(runs, k, 9, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "run 0 starts at LID 1, not 0");
	runs[0].lid = 0;
	runs[2].lid = 1;
	assert_int_equal(route_runs_check(runs, k, 9, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "run 2 starts at LID 1, not after run 1's 1");
	runs[2].lid = 4;
	assert_int_equal(route_runs_check(runs, k, 6, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "run 4 starts at LID 7, beyond the top LID 6");
	assert_int_equal(route_runs_check(runs, 0, 6, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(route_runs_check(runs, k, 0xc000, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "beyond the unicast LIDs"));
}

static void test_builder_refusals(void **state)
{
	struct route_net *n;
	char err[256];

	(void)state;
	/* two nodes with one GUID */
	assert_int_equal(route_net_new(&n), 0);
	node(n, 5, ROUTE_CA, "a", 1, 0, 0);
	node(n, 5, ROUTE_CA, "b", 1, 0, 0);
	assert_int_equal(route_net_finish(n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "node 0x0000000000000005 given twice");
	route_net_free(n);
	/* a port of no node; a table of a CA; a port given twice */
	assert_int_equal(route_net_new(&n), 0);
	port(n, 7, (struct route_port_in){.num = 1});
	assert_int_equal(route_net_finish(n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no such node"));
	route_net_free(n);
	assert_int_equal(route_net_new(&n), 0);
	node(n, 5, ROUTE_CA, "a", 1, 0, 0);
	assert_int_equal(
		route_add_lft(n, 5, 0, (struct route_run[]){{0, 255}}, 1), 0);
	assert_int_equal(route_net_finish(n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "which is no switch"));
	route_net_free(n);
	assert_int_equal(route_net_new(&n), 0);
	node(n, 5, ROUTE_CA, "a", 1, 0, 0);
	port(n, 5, (struct route_port_in){.num = 1});
	port(n, 5, (struct route_port_in){.num = 1});
	assert_int_equal(route_net_finish(n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "port 1 of node 0x0000000000000005 given "
				    "twice"));
	route_net_free(n);
	/* values out of range are refused at once and named at finish */
	assert_int_equal(route_net_new(&n), 0);
	assert_int_equal(
		route_add_node(n, &(struct route_node_in){6, ROUTE_SWITCH, "s",
							  300, 0, 0}),
		-EINVAL);
	assert_int_equal(
		route_add_port(n, 6, &(struct route_port_in){.num = 0}),
		-EINVAL);
	assert_int_equal(
		route_add_lft(n, 6, 3, (struct route_run[]){{1, 255}}, 1),
		-EINVAL);
	assert_int_equal(route_net_finish(n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "more than 254 ports"));
	route_net_free(n);
	/* a path before finish */
	{
		struct route_path p;

		assert_int_equal(route_net_new(&n), 0);
		assert_int_equal(route_path(n, 1, 2, &p, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "not finished"));
		route_net_free(n);
	}
	route_net_free(NULL);
}

/* Two ports claiming one LID: the node added first keeps it, counted. */
static void test_lid_conflict(void **state)
{
	struct route_net_stats st;
	struct route_end owner;
	struct route_net *n;
	char err[128];

	(void)state;
	assert_int_equal(route_net_new(&n), 0);
	node(n, 2, ROUTE_CA, "b", 1, 0, 0);
	node(n, 1, ROUTE_CA, "a", 1, 0, 0);
	port(n, 2, (struct route_port_in){.num = 1, .lid = 4, .lmc = 1});
	port(n, 1, (struct route_port_in){.num = 1, .lid = 5});
	assert_int_equal(route_net_finish(n, err, sizeof(err)), 0);
	route_net_stats(n, &st);
	assert_int_equal(st.lid_conflicts, 1);
	assert_int_equal(route_lid_owner(n, 5, &owner), 0);
	assert_true(owner.guid == 2); /* added first, though its GUID is not */
	assert_int_equal(route_lid_owner(n, 4, &owner), 0);
	assert_true(owner.guid == 2);
	route_net_free(n);
}

static void test_lid_parse(void **state)
{
	unsigned lid = 0;

	(void)state;
	assert_int_equal(route_lid_parse("25", &lid), 0);
	assert_int_equal(lid, 25);
	assert_int_equal(route_lid_parse("0x19", &lid), 0);
	assert_int_equal(lid, 25);
	assert_int_equal(route_lid_parse("49151", &lid), 0);
	assert_int_equal(route_lid_parse("0xBFFF", &lid), 0);
	assert_int_equal(lid, ROUTE_LID_MAX);
	assert_int_equal(route_lid_parse("49152", &lid), -EINVAL);
	assert_int_equal(route_lid_parse("0", &lid), -EINVAL);
	assert_int_equal(route_lid_parse("-1", &lid), -EINVAL);
	assert_int_equal(route_lid_parse("+5", &lid), -EINVAL);
	assert_int_equal(route_lid_parse(" 5", &lid), -EINVAL);
	assert_int_equal(route_lid_parse("5x", &lid), -EINVAL);
	assert_int_equal(route_lid_parse("0x", &lid), -EINVAL);
	assert_int_equal(route_lid_parse("", &lid), -EINVAL);
	assert_int_equal(route_lid_parse(NULL, &lid), -EINVAL);
	assert_int_equal(route_lid_parse("99999999999999999999", &lid),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_to_host),
		cmocka_unit_test(test_lmc),
		cmocka_unit_test(test_switch_ends),
		cmocka_unit_test(test_holes_and_loops),
		cmocka_unit_test(test_links_to_nowhere),
		cmocka_unit_test(test_down_port_and_no_table),
		cmocka_unit_test(test_beyond_top),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_builder_refusals),
		cmocka_unit_test(test_lid_conflict),
		cmocka_unit_test(test_lid_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
