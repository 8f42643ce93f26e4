/* SPDX-License-Identifier: MIT */
/*
 * PerfMgt MADs (InfiniBand Architecture chapter 16.1) as bytes: building
 * a Get for ClassPortInfo, PortCounters, PortCountersExtended,
 * PortRcvErrorDetails or PortXmitDiscardDetails, checking a response and
 * decoding its counters. Every field goes through libibmad's field tables
 * (mad_encode_field / mad_decode_field with IB_MAD_*_F, IB_CPI_*_F,
 * IB_PC_*_F, IB_PC_EXT_*_F), never a hand-written offset. No I/O here:
 * the window (fwin.c) sends what this builds, and the unit tests run it
 * against byte fixtures. Internal to probe/fabric.
 *
 * Counter names are the kernel's sysfs names where it is the same
 * counter (symbol_error, port_xmit_data...), so a switch port reads like
 * a host port; their meaning (scale, saturating width) is common/
 * counters.h's.
 */
#ifndef IBPULSE_FABRIC_PMA_H
#define IBPULSE_FABRIC_PMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PMA_MAD_SIZE 256

/* What one PerfMgt Get asks for. */
enum pma_kind {
	PMA_CPI,       /* ClassPortInfo: the PMA's capabilities */
	PMA_PC,	       /* PortCounters: the narrow error counters */
	PMA_PCE,       /* PortCountersExtended: 64-bit data, packets */
	PMA_RCV_ERR,   /* PortRcvErrorDetails */
	PMA_XMIT_DISC, /* PortXmitDiscardDetails */
	PMA_KIND_COUNT,
};

/* Every counter a sweep can read, in JSON order. */
enum fab_counter {
	FC_SYMBOL_ERROR,
	FC_LINK_ERROR_RECOVERY,
	FC_LINK_DOWNED,
	FC_RCV_ERRORS,
	FC_RCV_REMOTE_PHYSICAL_ERRORS,
	FC_RCV_SWITCH_RELAY_ERRORS,
	FC_XMIT_DISCARDS,
	FC_XMIT_CONSTRAINT_ERRORS,
	FC_RCV_CONSTRAINT_ERRORS,
	FC_LOCAL_LINK_INTEGRITY_ERRORS,
	FC_EXCESSIVE_BUFFER_OVERRUN_ERRORS,
	FC_VL15_DROPPED,
	FC_XMIT_DATA,
	FC_RCV_DATA,
	FC_XMIT_PACKETS,
	FC_RCV_PACKETS,
	FC_XMIT_WAIT,
	FC_UNICAST_XMIT_PACKETS,
	FC_UNICAST_RCV_PACKETS,
	FC_MULTICAST_XMIT_PACKETS,
	FC_MULTICAST_RCV_PACKETS,
	/* PortRcvErrorDetails */
	FC_LOCAL_PHYSICAL_ERRORS,
	FC_MALFORMED_PACKET_ERRORS,
	FC_BUFFER_OVERRUN_ERRORS,
	FC_DLID_MAPPING_ERRORS,
	FC_VL_MAPPING_ERRORS,
	FC_LOOPING_ERRORS,
	/* PortXmitDiscardDetails */
	FC_INACTIVE_DISCARDS,
	FC_NEIGHBOR_MTU_DISCARDS,
	FC_SW_LIFETIME_LIMIT_DISCARDS,
	FC_SW_HOQ_LIFETIME_LIMIT_DISCARDS,
	FC_COUNT
};

/* ClassPortInfo:CapabilityMask bits of the PerfMgt class (IBA 16.1.2). */
#define PMA_CAP_ALL_PORT_SELECT (1u << 8)
#define PMA_CAP_EXT_WIDTH (1u << 9)	    /* PortCountersExtended, all */
#define PMA_CAP_EXT_WIDTH_NOIETF (1u << 10) /* ... data and packets only */
#define PMA_CAP_XMIT_WAIT (1u << 12)	    /* PortCounters:PortXmitWait */
/* CapabilityMask2: PortCountersExtended has the 64-bit error set. */
#define PMA_CAP2_ADDL_PORT_COUNTERS_EXT (1u << 1)

struct pma_caps {
	uint16_t cap_mask;
	uint32_t cap_mask2; /* 27 bits */
	unsigned resp_time; /* RespTimeValue: 4.096 us * 2^value */
};

/* The values of one port; @have and @sat are bit masks over fab_counter. */
struct pma_counters {
	uint64_t v[FC_COUNT];
	uint64_t have; /* read in this sweep */
	uint64_t sat;  /* at the maximum of its width: saturated */
};

/* One counter as read: its name, where it comes from, its field width. */
struct pma_field {
	enum fab_counter counter;
	enum pma_kind kind;
	int field;	  /* enum MAD_FIELDS */
	unsigned bits;	  /* width of the MAD field */
	const char *name; /* the sysfs name, or ours for the details */
};

/* The attribute ID of @k (0x0001, 0x0012, 0x001D, 0x0015, 0x0016). */
uint16_t pma_attr_id(enum pma_kind k);
/* "ClassPortInfo", "PortCounters"...: for messages. */
const char *pma_kind_name(enum pma_kind k);

/*
 * pma_encode_get() - a PerfMgt Get of @k for @port (PortSelect; ignored
 * by ClassPortInfo) with TransactionID @tid into @mad (PMA_MAD_SIZE
 * bytes, cleared first).
 */
void pma_encode_get(uint8_t *mad, enum pma_kind k, uint8_t port, uint64_t tid);

/*
 * pma_encode_reset() - a PerfMgt Set of PortCounters for @port that zeroes
 * its error counters (CounterSelect 0x0FFF: SymbolErrorCounter through
 * VL15Dropped), leaving data, packets and PortXmitWait alone. Only
 * PMA_PC is meaningful for @k.
 */
void pma_encode_reset(uint8_t *mad, enum pma_kind k, uint8_t port,
		      uint64_t tid);

/* CounterSelect bits of the error counters (IBA table 247). */
#define PMA_PC_ERRORS_SELECT 0x0FFFu

/* The TransactionID of @mad, low 32 bits (the kernel owns the rest). */
uint32_t pma_tid32(const uint8_t *mad);

/*
 * pma_check_response() - 0 when @mad is a GetResp of @k with status 0;
 * -EBUSY (status busy: retry), -EOPNOTSUPP (the PMA does not support the
 * attribute or method), -EINVAL (it refused the attribute modifier or a
 * field: a bad PortSelect), -EREMOTE (redirect, which this poller does not
 * follow) or -EPROTO (not a PerfMgt response to @k). *@status gets the
 * MAD status word.
 */
int pma_check_response(const uint8_t *mad, enum pma_kind k, unsigned *status);

/*
 * pma_status_errno() - what a MAD status word (any class) means: 0, -EBUSY
 * (retry), -EREMOTE (redirect), -EOPNOTSUPP (attribute or method not
 * supported) or -EINVAL (a field or the attribute modifier refused).
 */
int pma_status_errno(unsigned status);

/* ClassPortInfo from a checked response. */
void pma_decode_cpi(const uint8_t *mad, struct pma_caps *out);

/* What @caps says the PMA has. */
bool pma_has_ext(const struct pma_caps *caps);
bool pma_has_ietf(const struct pma_caps *caps);
bool pma_has_xmit_wait(const struct pma_caps *caps);
bool pma_has_ext_xmit_wait(const struct pma_caps *caps);

/*
 * pma_decode() - the counters of a checked response of @k into @c: the
 * fields @caps says are valid, with their bits set in @c->have and, for
 * those at the maximum of their width, in @c->sat. PortCounters' 32-bit
 * data and packet counters are taken only when the PMA has no
 * PortCountersExtended (@caps), as the kernel's sysfs does.
 */
void pma_decode(const uint8_t *mad, enum pma_kind k,
		const struct pma_caps *caps, struct pma_counters *c);

/* The name of counter @c ("symbol_error"), NULL when out of range. */
const char *pma_counter_name(enum fab_counter c);

/* The decode table, for tests and documentation; @n gets its length. */
const struct pma_field *pma_fields(size_t *n);

#endif
