// SPDX-License-Identifier: MIT
/*
 * The attributes that point a QP at its peer, as plain structs (engine.h,
 * "Paths"): the address vector (InfiniBand by LID, RoCE by GID in a GRH)
 * and the RTR transition of an RC QP. Pure functions with no verbs call,
 * so that what a test sends to (the DLID a plan chose, over LMC > 0,
 * chooses the path through the fabric) is unit-tested without hardware;
 * veng.c hands the result to ibv_modify_qp() and ibv_create_ah().
 */
#include "engine.h"

#include <string.h>

/* A port owns at most 2^7 LIDs (LMC 7). */
#define VAH_LMC_SPAN 128u

unsigned veng_dlid(const struct veng_path *p, const struct ctrl_endpoint *r)
{
	if (p->ethernet || !r->lid)
		return 0; /* RoCE routes by IP: no LID to choose */
	if (p->dlid >= r->lid && p->dlid < r->lid + VAH_LMC_SPAN)
		return p->dlid;
	return r->lid;
}

void veng_ah_attr(const struct veng_path *p, const struct ctrl_endpoint *r,
		  struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->dlid = (uint16_t)(p->ethernet ? r->lid : veng_dlid(p, r));
	ah->sl = (uint8_t)p->sl;
	ah->port_num = (uint8_t)p->port;
	if (p->ethernet || !r->lid) {
		ah->is_global = 1;
		memcpy(ah->grh.dgid.raw, r->gid, 16);
		ah->grh.sgid_index = (uint8_t)p->gid_index;
		ah->grh.hop_limit = 64;
		ah->grh.traffic_class = (uint8_t)p->tclass;
	}
}

int veng_rtr_attr(const struct veng_path *p, const struct ctrl_endpoint *r,
		  unsigned i, enum ibv_mtu mtu, unsigned dest_rd,
		  struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = mtu;
	a->dest_qp_num = r->qpn[i];
	a->rq_psn = r->psn[i];
	a->max_dest_rd_atomic = (uint8_t)dest_rd;
	a->min_rnr_timer = 12;
	veng_ah_attr(p, r, &a->ah_attr);
	return IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
}
