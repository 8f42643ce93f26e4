// SPDX-License-Identifier: MIT
/*
 * Unit tests of what points a QP at its peer (probe/verbs/vah.c), since
 * no InfiniBand hardware runs here: on InfiniBand the address vector's
 * DLID is the plan's DLID when it is one of the LIDs the peer's port may
 * own (LMC > 0: the DLID chooses the path), else the peer's base LID; no
 * GRH on the subnet. RoCE ignores the DLID and routes by GID in a GRH, as
 * does a peer without a LID. The RTR attributes carry that vector with
 * the peer's QP number and PSN, and the mask names each field set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"

static void peer(struct ctrl_endpoint *r, uint16_t lid)
{
	memset(r, 0, sizeof(*r));
	r->lid = lid;
	for (int i = 0; i < 16; i++)
		r->gid[i] = (uint8_t)(0xa0 + i);
	r->nqps = 2;
	r->qpn[0] = 0x111;
	r->qpn[1] = 0x222;
	r->psn[1] = 0x4242;
}

static void test_ib_dlid(void **state)
{
	struct veng_path p = {.port = 1, .gid_index = 3, .sl = 5, .dlid = 0};
	struct ctrl_endpoint r;
	struct ibv_ah_attr ah;

	(void)state;
	peer(&r, 152); /* LMC 2: 152..155 */
	veng_ah_attr(&p, &r, &ah);
	assert_int_equal(ah.dlid, 152); /* no choice: the base LID */
	assert_int_equal(ah.is_global, 0);
	assert_int_equal(ah.sl, 5);
	assert_int_equal(ah.port_num, 1);

	p.dlid = 154; /* the plan's choice: that LID's path */
	veng_ah_attr(&p, &r, &ah);
	assert_int_equal(ah.dlid, 154);
	assert_int_equal(ah.is_global, 0);
	assert_int_equal(veng_dlid(&p, &r), 154);

	p.dlid = 152 + 127; /* the last a port may own (LMC 7) */
	assert_int_equal(veng_dlid(&p, &r), 279);
	p.dlid = 152 + 128; /* another port's: ignored */
	veng_ah_attr(&p, &r, &ah);
	assert_int_equal(ah.dlid, 152);
	p.dlid = 151;
	assert_int_equal(veng_dlid(&p, &r), 152);
}

static void test_roce_ignores(void **state)
{
	struct veng_path p = {
		.ethernet = true, .port = 2, .gid_index = 3, .tclass = 106};
	struct ctrl_endpoint r;
	struct ibv_ah_attr ah;

	(void)state;
	peer(&r, 0);
	p.dlid = 154;
	veng_ah_attr(&p, &r, &ah);
	assert_int_equal(ah.is_global, 1);
	assert_int_equal(ah.dlid, 0);
	assert_memory_equal(ah.grh.dgid.raw, r.gid, 16);
	assert_int_equal(ah.grh.sgid_index, 3);
	assert_int_equal(ah.grh.traffic_class, 106);
	assert_int_equal(ah.grh.hop_limit, 64);
	assert_int_equal(veng_dlid(&p, &r), 0);

	/* an InfiniBand peer without a LID: routed by GID */
	p.ethernet = false;
	veng_ah_attr(&p, &r, &ah);
	assert_int_equal(ah.is_global, 1);
	assert_int_equal(ah.dlid, 0);
}

static void test_rtr(void **state)
{
	struct veng_path p = {.port = 1, .dlid = 153};
	struct ctrl_endpoint r;
	struct ibv_qp_attr a;
	int mask;

	(void)state;
	peer(&r, 152);
	mask = veng_rtr_attr(&p, &r, 1, IBV_MTU_4096, 16, &a);
	assert_int_equal(a.qp_state, IBV_QPS_RTR);
	assert_int_equal(a.path_mtu, IBV_MTU_4096);
	assert_int_equal(a.dest_qp_num, 0x222);
	assert_int_equal(a.rq_psn, 0x4242);
	assert_int_equal(a.max_dest_rd_atomic, 16);
	assert_int_equal(a.min_rnr_timer, 12);
	assert_int_equal(a.ah_attr.dlid, 153);
	assert_int_equal(a.ah_attr.port_num, 1);
	assert_int_equal(mask, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				       IBV_QP_MAX_DEST_RD_ATOMIC |
				       IBV_QP_MIN_RNR_TIMER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ib_dlid),
		cmocka_unit_test(test_roce_ignores),
		cmocka_unit_test(test_rtr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
