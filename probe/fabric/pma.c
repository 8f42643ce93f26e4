// SPDX-License-Identifier: MIT
/*
 * PerfMgt MAD encoding and decoding (pma.h) through libibmad's field
 * tables. The MAD header fields (IB_MAD_*_F) are relative to the start of
 * the MAD, the attribute fields (IB_CPI_*_F, IB_PC_*_F) to the data area
 * at IB_PC_DATA_OFFS (64). A counter's saturating width is common/
 * counters.h's where the counter has an entry there (the unit test checks
 * that it is the field's width), else the field's own width when it is
 * narrower than 64 bits: PortCounters' counters stop at their maximum.
 */
#include "pma.h"

#include <errno.h>
#include <string.h>

#include <infiniband/mad.h>

#include "counters.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const uint16_t attr_ids[PMA_KIND_COUNT] = {
	[PMA_CPI] = CLASS_PORT_INFO,
	[PMA_PC] = IB_GSI_PORT_COUNTERS,
	[PMA_PCE] = IB_GSI_PORT_COUNTERS_EXT,
	[PMA_RCV_ERR] = IB_GSI_PORT_RCV_ERROR_DETAILS,
	[PMA_XMIT_DISC] = IB_GSI_PORT_XMIT_DISCARD_DETAILS,
};

static const char *const kind_names[PMA_KIND_COUNT] = {
	[PMA_CPI] = "ClassPortInfo",
	[PMA_PC] = "PortCounters",
	[PMA_PCE] = "PortCountersExtended",
	[PMA_RCV_ERR] = "PortRcvErrorDetails",
	[PMA_XMIT_DISC] = "PortXmitDiscardDetails",
};

#define F(c, k, f, b, n)                                                       \
	{                                                                      \
		FC_##c, PMA_##k, f, b, n                                       \
	}

static const struct pma_field fields[] = {
	F(SYMBOL_ERROR, PC, IB_PC_ERR_SYM_F, 16, "symbol_error"),
	F(LINK_ERROR_RECOVERY, PC, IB_PC_LINK_RECOVERS_F, 8,
	  "link_error_recovery"),
	F(LINK_DOWNED, PC, IB_PC_LINK_DOWNED_F, 8, "link_downed"),
	F(RCV_ERRORS, PC, IB_PC_ERR_RCV_F, 16, "port_rcv_errors"),
	F(RCV_REMOTE_PHYSICAL_ERRORS, PC, IB_PC_ERR_PHYSRCV_F, 16,
	  "port_rcv_remote_physical_errors"),
	F(RCV_SWITCH_RELAY_ERRORS, PC, IB_PC_ERR_SWITCH_REL_F, 16,
	  "port_rcv_switch_relay_errors"),
	F(XMIT_DISCARDS, PC, IB_PC_XMT_DISCARDS_F, 16, "port_xmit_discards"),
	F(XMIT_CONSTRAINT_ERRORS, PC, IB_PC_ERR_XMTCONSTR_F, 8,
	  "port_xmit_constraint_errors"),
	F(RCV_CONSTRAINT_ERRORS, PC, IB_PC_ERR_RCVCONSTR_F, 8,
	  "port_rcv_constraint_errors"),
	F(LOCAL_LINK_INTEGRITY_ERRORS, PC, IB_PC_ERR_LOCALINTEG_F, 4,
	  "local_link_integrity_errors"),
	F(EXCESSIVE_BUFFER_OVERRUN_ERRORS, PC, IB_PC_ERR_EXCESS_OVR_F, 4,
	  "excessive_buffer_overrun_errors"),
	F(VL15_DROPPED, PC, IB_PC_VL15_DROPPED_F, 16, "VL15_dropped"),
	/* 32-bit data and packets: only without PortCountersExtended */
	F(XMIT_DATA, PC, IB_PC_XMT_BYTES_F, 32, "port_xmit_data"),
	F(RCV_DATA, PC, IB_PC_RCV_BYTES_F, 32, "port_rcv_data"),
	F(XMIT_PACKETS, PC, IB_PC_XMT_PKTS_F, 32, "port_xmit_packets"),
	F(RCV_PACKETS, PC, IB_PC_RCV_PKTS_F, 32, "port_rcv_packets"),
	F(XMIT_WAIT, PC, IB_PC_XMT_WAIT_F, 32, "port_xmit_wait"),
	/* PortCountersExtended */
	F(XMIT_DATA, PCE, IB_PC_EXT_XMT_BYTES_F, 64, "port_xmit_data"),
	F(RCV_DATA, PCE, IB_PC_EXT_RCV_BYTES_F, 64, "port_rcv_data"),
	F(XMIT_PACKETS, PCE, IB_PC_EXT_XMT_PKTS_F, 64, "port_xmit_packets"),
	F(RCV_PACKETS, PCE, IB_PC_EXT_RCV_PKTS_F, 64, "port_rcv_packets"),
	F(UNICAST_XMIT_PACKETS, PCE, IB_PC_EXT_XMT_UPKTS_F, 64,
	  "unicast_xmit_packets"),
	F(UNICAST_RCV_PACKETS, PCE, IB_PC_EXT_RCV_UPKTS_F, 64,
	  "unicast_rcv_packets"),
	F(MULTICAST_XMIT_PACKETS, PCE, IB_PC_EXT_XMT_MPKTS_F, 64,
	  "multicast_xmit_packets"),
	F(MULTICAST_RCV_PACKETS, PCE, IB_PC_EXT_RCV_MPKTS_F, 64,
	  "multicast_rcv_packets"),
	F(XMIT_WAIT, PCE, IB_PC_EXT_XMT_WAIT_F, 64, "port_xmit_wait"),
	/* PortRcvErrorDetails */
	F(LOCAL_PHYSICAL_ERRORS, RCV_ERR, IB_PC_RCV_LOCAL_PHY_ERR_F, 16,
	  "port_local_physical_errors"),
	F(MALFORMED_PACKET_ERRORS, RCV_ERR, IB_PC_RCV_MALFORMED_PKT_ERR_F, 16,
	  "port_malformed_packet_errors"),
	F(BUFFER_OVERRUN_ERRORS, RCV_ERR, IB_PC_RCV_BUF_OVR_ERR_F, 16,
	  "port_buffer_overrun_errors"),
	F(DLID_MAPPING_ERRORS, RCV_ERR, IB_PC_RCV_DLID_MAP_ERR_F, 16,
	  "port_dlid_mapping_errors"),
	F(VL_MAPPING_ERRORS, RCV_ERR, IB_PC_RCV_VL_MAP_ERR_F, 16,
	  "port_vl_mapping_errors"),
	F(LOOPING_ERRORS, RCV_ERR, IB_PC_RCV_LOOPING_ERR_F, 16,
	  "port_looping_errors"),
	/* PortXmitDiscardDetails */
	F(INACTIVE_DISCARDS, XMIT_DISC, IB_PC_XMT_INACT_DISC_F, 16,
	  "port_inactive_discards"),
	F(NEIGHBOR_MTU_DISCARDS, XMIT_DISC, IB_PC_XMT_NEIGH_MTU_DISC_F, 16,
	  "port_neighbor_mtu_discards"),
	F(SW_LIFETIME_LIMIT_DISCARDS, XMIT_DISC, IB_PC_XMT_SW_LIFE_DISC_F, 16,
	  "port_sw_lifetime_limit_discards"),
	F(SW_HOQ_LIFETIME_LIMIT_DISCARDS, XMIT_DISC, IB_PC_XMT_SW_HOL_DISC_F,
	  16, "port_sw_hoq_lifetime_limit_discards"),
};

const struct pma_field *pma_fields(size_t *n)
{
	*n = ARRAY_SIZE(fields);
	return fields;
}

uint16_t pma_attr_id(enum pma_kind k)
{
	return k < PMA_KIND_COUNT ? attr_ids[k] : 0;
}

const char *pma_kind_name(enum pma_kind k)
{
	return k < PMA_KIND_COUNT ? kind_names[k] : "?";
}

const char *pma_counter_name(enum fab_counter c)
{
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (fields[i].counter == c)
			return fields[i].name;
	return NULL;
}

/* libibmad's encoder takes a pointer to a value of the field's size. */
static void put(uint8_t *base, int field, uint32_t v)
{
	mad_encode_field(base, field, &v);
}

static uint32_t get32(const uint8_t *base, int field)
{
	uint32_t v = 0;

	mad_decode_field((uint8_t *)base, field, &v);
	return v;
}

static uint64_t get(const uint8_t *base, int field, unsigned bits)
{
	uint64_t v = 0;

	if (bits <= 32)
		return get32(base, field);
	mad_decode_field((uint8_t *)base, field, &v);
	return v;
}

void pma_encode_get(uint8_t *mad, enum pma_kind k, uint8_t port, uint64_t tid)
{
	uint8_t *data = mad + IB_PC_DATA_OFFS;

	memset(mad, 0, PMA_MAD_SIZE);
	put(mad, IB_MAD_METHOD_F, IB_MAD_METHOD_GET);
	put(mad, IB_MAD_RESPONSE_F, 0);
	put(mad, IB_MAD_STATUS_F, 0);
	put(mad, IB_MAD_CLASSVER_F, 1);
	put(mad, IB_MAD_MGMTCLASS_F, IB_PERFORMANCE_CLASS);
	put(mad, IB_MAD_BASEVER_F, 1);
	mad_encode_field(mad, IB_MAD_TRID_F, &tid);
	put(mad, IB_MAD_ATTRID_F, pma_attr_id(k));
	put(mad, IB_MAD_ATTRMOD_F, 0);
	if (k == PMA_PCE)
		put(data, IB_PC_EXT_PORT_SELECT_F, port);
	else if (k != PMA_CPI)
		put(data, IB_PC_PORT_SELECT_F, port);
}

void pma_encode_reset(uint8_t *mad, enum pma_kind k, uint8_t port, uint64_t tid)
{
	pma_encode_get(mad, k, port, tid);
	put(mad, IB_MAD_METHOD_F, IB_MAD_METHOD_SET);
	put(mad + IB_PC_DATA_OFFS, IB_PC_COUNTER_SELECT_F,
	    PMA_PC_ERRORS_SELECT);
}

uint32_t pma_tid32(const uint8_t *mad)
{
	return (uint32_t)get(mad, IB_MAD_TRID_F, 64);
}

int pma_check_response(const uint8_t *mad, enum pma_kind k, unsigned *status)
{
	*status = get32(mad, IB_MAD_STATUS_F);
	if (get32(mad, IB_MAD_MGMTCLASS_F) != IB_PERFORMANCE_CLASS ||
	    !get32(mad, IB_MAD_RESPONSE_F) ||
	    get32(mad, IB_MAD_METHOD_F) != IB_MAD_METHOD_GET ||
	    get32(mad, IB_MAD_ATTRID_F) != pma_attr_id(k))
		return -EPROTO;
	return pma_status_errno(*status);
}

int pma_status_errno(unsigned status)
{
	unsigned code;

	if (!status)
		return 0;
	if (status & 0x1)
		return -EBUSY;
	if (status & 0x2)
		return -EREMOTE;
	/* bits 2-4: the invalid field code (IBA 13.4.7, table 112) */
	code = (status >> 2) & 0x7;
	if (code == 1 || code == 2 || code == 3)
		return -EOPNOTSUPP;
	return -EINVAL;
}

void pma_decode_cpi(const uint8_t *mad, struct pma_caps *out)
{
	const uint8_t *data = mad + IB_PC_DATA_OFFS;

	out->cap_mask = (uint16_t)get32(data, IB_CPI_CAPMASK_F);
	out->cap_mask2 = get32(data, IB_CPI_CAPMASK2_F);
	out->resp_time = get32(data, IB_CPI_RESP_TIME_VALUE_F);
}

bool pma_has_ext(const struct pma_caps *caps)
{
	return caps->cap_mask & (PMA_CAP_EXT_WIDTH | PMA_CAP_EXT_WIDTH_NOIETF);
}

bool pma_has_ietf(const struct pma_caps *caps)
{
	return caps->cap_mask & PMA_CAP_EXT_WIDTH;
}

bool pma_has_xmit_wait(const struct pma_caps *caps)
{
	return caps->cap_mask & PMA_CAP_XMIT_WAIT;
}

bool pma_has_ext_xmit_wait(const struct pma_caps *caps)
{
	return caps->cap_mask2 & PMA_CAP2_ADDL_PORT_COUNTERS_EXT;
}

/* Whether @f of a response is valid for a PMA with @caps. */
static bool field_wanted(const struct pma_field *f, const struct pma_caps *c)
{
	switch (f->counter) {
	case FC_XMIT_DATA:
	case FC_RCV_DATA:
	case FC_XMIT_PACKETS:
	case FC_RCV_PACKETS:
		return f->kind == PMA_PCE || !pma_has_ext(c);
	case FC_XMIT_WAIT:
		if (f->kind == PMA_PCE)
			return pma_has_ext_xmit_wait(c);
		return pma_has_xmit_wait(c) && !pma_has_ext_xmit_wait(c);
	case FC_UNICAST_XMIT_PACKETS:
	case FC_UNICAST_RCV_PACKETS:
	case FC_MULTICAST_XMIT_PACKETS:
	case FC_MULTICAST_RCV_PACKETS:
		return pma_has_ietf(c);
	default:
		return true;
	}
}

/*
 * Whether @v has saturated: counters.h's verdict for counters it gives a
 * width, else at the maximum of a field narrower than 64 bits.
 */
static bool saturated(const struct pma_field *f, uint64_t v)
{
	const struct counter_def *d = counters_lookup(CSRC_IB, f->name);

	if (d && d->width)
		return counters_saturated(d, v);
	return f->bits < 64 && v >= counters_max(f->bits);
}

void pma_decode(const uint8_t *mad, enum pma_kind k,
		const struct pma_caps *caps, struct pma_counters *c)
{
	const uint8_t *data = mad + IB_PC_DATA_OFFS;

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const struct pma_field *f = &fields[i];
		uint64_t bit = UINT64_C(1) << f->counter;
		uint64_t v;

		if (f->kind != k || !field_wanted(f, caps))
			continue;
		v = get(data, f->field, f->bits);
		c->v[f->counter] = v;
		c->have |= bit;
		if (saturated(f, v))
			c->sat |= bit;
		else
			c->sat &= ~bit;
	}
}
