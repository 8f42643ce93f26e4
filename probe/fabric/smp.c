// SPDX-License-Identifier: MIT
/*
 * The SubnGet(LinearForwardingTable) codec (smp.h). The header fields are
 * the common MAD header's (IB_MAD_*_F, relative to the MAD); the table is
 * the SMP data area at IB_SMP_DATA_OFFS, one byte per LID, which libibmad
 * describes as one 512-bit field.
 */
#include "smp.h"

#include <errno.h>
#include <string.h>

#include <infiniband/mad.h>

#include "pma.h"

static void put(uint8_t *base, int field, uint32_t v)
{
	mad_encode_field(base, field, &v);
}

static uint32_t get(const uint8_t *base, int field)
{
	uint32_t v = 0;

	mad_decode_field((uint8_t *)base, field, &v);
	return v;
}

void smp_encode_lft_get(uint8_t *mad, unsigned block, uint64_t tid)
{
	memset(mad, 0, SMP_MAD_SIZE);
	put(mad, IB_MAD_METHOD_F, IB_MAD_METHOD_GET);
	put(mad, IB_MAD_RESPONSE_F, 0);
	put(mad, IB_MAD_STATUS_F, 0);
	put(mad, IB_MAD_CLASSVER_F, 1);
	put(mad, IB_MAD_MGMTCLASS_F, IB_SMI_CLASS);
	put(mad, IB_MAD_BASEVER_F, 1);
	mad_encode_field(mad, IB_MAD_TRID_F, &tid);
	put(mad, IB_MAD_ATTRID_F, IB_ATTR_LINEARFORWTBL);
	put(mad, IB_MAD_ATTRMOD_F, block);
}

int smp_check_lft(const uint8_t *mad, unsigned block, unsigned *status)
{
	*status = get(mad, IB_MAD_STATUS_F);
	if (get(mad, IB_MAD_MGMTCLASS_F) != IB_SMI_CLASS ||
	    !get(mad, IB_MAD_RESPONSE_F) ||
	    get(mad, IB_MAD_METHOD_F) != IB_MAD_METHOD_GET ||
	    get(mad, IB_MAD_ATTRID_F) != IB_ATTR_LINEARFORWTBL ||
	    get(mad, IB_MAD_ATTRMOD_F) != block)
		return -EPROTO;
	return pma_status_errno(*status);
}

void smp_decode_lft(const uint8_t *mad, uint8_t *ports)
{
	mad_decode_field((uint8_t *)mad + IB_SMP_DATA_OFFS,
			 IB_LINEAR_FORW_TBL_F, ports);
}
