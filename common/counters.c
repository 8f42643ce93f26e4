// SPDX-License-Identifier: MIT
/*
 * The counters table: see counters.h. Widths are the InfiniBand
 * Architecture's PortCounters fields (SymbolErrorCounter 16 bits,
 * LinkDownedCounter 8, LocalLinkIntegrityErrors 4...); metric names mirror
 * node_exporter's collector/infiniband_linux.go (and procfs'
 * sysfs/class_infiniband.go for which file feeds which name).
 */
#include "counters.h"

#include <errno.h>
#include <string.h>

#define P "ibpulse_port_"

/* A counter with its own name; W: saturating width in bits. */
#define C(src, file, name, w, text)                                            \
	{                                                                      \
		.source = src, .sysfs = file, .metric = P name, .help = text,  \
		.kind = COUNTER_KIND_COUNTER, .mul = 1, .div = 1, .width = w   \
	}
/* IB data counters: 4-octet words, presented in bytes. */
#define WORDS(file, name, text)                                                \
	{                                                                      \
		.source = CSRC_IB, .sysfs = file, .metric = P name,            \
		.help = text, .kind = COUNTER_KIND_COUNTER, .mul = 4, .div = 1 \
	}

static const struct counter_def counters[] = {
	/* counters/: PortCounters and PortCountersExtended */
	WORDS("port_xmit_data", "data_transmitted_bytes_total",
	      "Data octets transmitted on all VLs (the kernel counts 4-octet "
	      "words; scaled to bytes)."),
	WORDS("port_rcv_data", "data_received_bytes_total",
	      "Data octets received on all VLs (the kernel counts 4-octet "
	      "words; scaled to bytes)."),
	C(CSRC_IB, "port_xmit_packets", "packets_transmitted_total", 0,
	  "Packets transmitted on all VLs, including packets with errors."),
	C(CSRC_IB, "port_rcv_packets", "packets_received_total", 0,
	  "Packets received on all VLs, including packets with errors."),
	C(CSRC_IB, "unicast_xmit_packets", "unicast_packets_transmitted_total",
	  0, "Unicast packets transmitted, including packets with errors."),
	C(CSRC_IB, "unicast_rcv_packets", "unicast_packets_received_total", 0,
	  "Unicast packets received, including packets with errors."),
	C(CSRC_IB, "multicast_xmit_packets",
	  "multicast_packets_transmitted_total", 0,
	  "Multicast packets transmitted, including packets with errors."),
	C(CSRC_IB, "multicast_rcv_packets", "multicast_packets_received_total",
	  0, "Multicast packets received, including packets with errors."),
	C(CSRC_IB, "port_xmit_wait", "transmit_wait_total", 0,
	  "Ticks during which the port had data to send but sent none "
	  "(congestion or missing credits)."),
	C(CSRC_IB, "symbol_error", "symbol_error_total", 16,
	  "Minor link errors on one or more physical lanes (16 bits, "
	  "saturates)."),
	C(CSRC_IB, "link_error_recovery", "link_error_recovery_total", 8,
	  "Times the link recovered from an error state (8 bits, saturates)."),
	C(CSRC_IB, "link_downed", "link_downed_total", 8,
	  "Times the link failed to recover from an error and went down (8 "
	  "bits, saturates)."),
	C(CSRC_IB, "port_rcv_errors", "errors_received_total", 16,
	  "Packets with errors received on the port (16 bits, saturates)."),
	C(CSRC_IB, "port_rcv_remote_physical_errors",
	  "receive_remote_physical_errors_total", 16,
	  "Packets received marked with the EBP delimiter (bad packet "
	  "upstream; 16 bits, saturates)."),
	C(CSRC_IB, "port_rcv_switch_relay_errors",
	  "receive_switch_relay_errors_total", 16,
	  "Packets received that the switch could not forward (16 bits, "
	  "saturates)."),
	C(CSRC_IB, "port_xmit_discards", "discards_transmitted_total", 16,
	  "Outbound packets discarded because the port was down or congested "
	  "(16 bits, saturates)."),
	C(CSRC_IB, "port_rcv_discards", "discards_received_total", 0,
	  "Inbound packets discarded because the port was down or congested."),
	C(CSRC_IB, "port_xmit_constraint_errors",
	  "constraint_errors_transmitted_total", 8,
	  "Packets not sent because of partition or raw constraints (8 bits, "
	  "saturates)."),
	C(CSRC_IB, "port_rcv_constraint_errors",
	  "constraint_errors_received_total", 8,
	  "Packets discarded on receipt because of partition or raw "
	  "constraints (8 bits, saturates)."),
	C(CSRC_IB, "local_link_integrity_errors",
	  "local_link_integrity_errors_total", 4,
	  "Times local physical errors exceeded the LocalPhyErrors threshold "
	  "(4 bits, saturates)."),
	C(CSRC_IB, "excessive_buffer_overrun_errors",
	  "excessive_buffer_overrun_errors_total", 4,
	  "Times OverrunErrors consecutive flow control periods had a buffer "
	  "overrun (4 bits, saturates)."),
	C(CSRC_IB, "VL15_dropped", "vl15_dropped_total", 16,
	  "Incoming VL15 (subnet management) packets dropped for lack of "
	  "resources (16 bits, saturates)."),
	/* counters_ext/ of kernels before 4.5 */
	WORDS("port_xmit_data_64", "legacy_data_transmitted_bytes_total",
	      "Data octets transmitted (counters_ext of old kernels; scaled "
	      "from 4-octet words to bytes)."),
	WORDS("port_rcv_data_64", "legacy_data_received_bytes_total",
	      "Data octets received (counters_ext of old kernels; scaled from "
	      "4-octet words to bytes)."),
	C(CSRC_IB, "port_xmit_packets_64", "legacy_packets_transmitted_total",
	  0, "Packets transmitted (counters_ext of old kernels)."),
	C(CSRC_IB, "port_rcv_packets_64", "legacy_packets_received_total", 0,
	  "Packets received (counters_ext of old kernels)."),
	C(CSRC_IB, "port_unicast_xmit_packets",
	  "legacy_unicast_packets_transmitted_total", 0,
	  "Unicast packets transmitted (counters_ext of old kernels)."),
	C(CSRC_IB, "port_unicast_rcv_packets",
	  "legacy_unicast_packets_received_total", 0,
	  "Unicast packets received (counters_ext of old kernels)."),
	C(CSRC_IB, "port_multicast_xmit_packets",
	  "legacy_multicast_packets_transmitted_total", 0,
	  "Multicast packets transmitted (counters_ext of old kernels)."),
	C(CSRC_IB, "port_multicast_rcv_packets",
	  "legacy_multicast_packets_received_total", 0,
	  "Multicast packets received (counters_ext of old kernels)."),

	/* hw_counters/: the mlx5 names node_exporter 1.11+ names too */
	{.source = CSRC_HW,
	 .sysfs = "lifespan",
	 .metric = P "lifespan_seconds",
	 .help = "How long the driver may serve cached hw_counters values (a "
		 "setting, not a counter; the kernel shows milliseconds).",
	 .kind = COUNTER_KIND_GAUGE,
	 .mul = 1,
	 .div = 1000},
	C(CSRC_HW, "out_of_buffer", "out_of_buffer_drops_total", 0,
	  "Packets dropped because no receive WQE was posted on the QP "
	  "(receive queue ran dry)."),
	C(CSRC_HW, "out_of_sequence", "out_of_sequence_packets_received_total",
	  0, "Out-of-sequence packets received."),
	C(CSRC_HW, "packet_seq_err", "packet_sequence_errors_total", 0,
	  "NAK sequence error packets received; the QP retry limit was not "
	  "exceeded."),
	C(CSRC_HW, "duplicate_request", "duplicate_requests_packets_total", 0,
	  "Duplicate requests received (a request that had already been "
	  "executed)."),
	C(CSRC_HW, "implied_nak_seq_err", "implied_nak_seq_errors_total", 0,
	  "Times the requester inferred a lost packet from an ACK with a later "
	  "PSN than expected."),
	C(CSRC_HW, "local_ack_timeout_err", "local_ack_timeout_errors_total", 0,
	  "Times a QP's ACK timer expired on the sender (still recoverable: "
	  "retry limit not exceeded)."),
	C(CSRC_HW, "rnr_nak_retry_err", "rnr_nak_retry_packets_received_total",
	  0, "RNR NAK packets received; the QP retry limit was not exceeded."),
	C(CSRC_HW, "np_cnp_sent", "np_cnp_packets_sent_total", 0,
	  "Congestion notification packets sent by the notification point "
	  "(ECN-marked RoCEv2 traffic seen)."),
	C(CSRC_HW, "np_ecn_marked_roce_packets",
	  "np_ecn_marked_roce_packets_received_total", 0,
	  "RoCEv2 packets received marked as having experienced congestion "
	  "(ECN)."),
	C(CSRC_HW, "rp_cnp_handled", "rp_cnp_packets_handled_total", 0,
	  "Congestion notification packets the reaction point acted on by "
	  "throttling."),
	C(CSRC_HW, "rp_cnp_ignored", "rp_cnp_ignored_packets_received_total", 0,
	  "Congestion notification packets received and ignored (check that "
	  "ECN is enabled on the adapter)."),
	C(CSRC_HW, "req_cqe_error", "req_cqes_errors_total", 0,
	  "Completions with an error seen by the requester."),
	C(CSRC_HW, "req_cqe_flush_error", "req_cqes_flush_errors_total", 0,
	  "Completions flushed with an error seen by the requester."),
	C(CSRC_HW, "req_remote_access_errors", "req_remote_access_errors_total",
	  0, "Remote access errors seen by the requester."),
	C(CSRC_HW, "req_remote_invalid_request",
	  "req_remote_invalid_request_errors_total", 0,
	  "Remote invalid request errors seen by the requester."),
	C(CSRC_HW, "resp_cqe_error", "resp_cqes_errors_total", 0,
	  "Completions with an error seen by the responder."),
	C(CSRC_HW, "resp_cqe_flush_error", "resp_cqes_flush_errors_total", 0,
	  "Completions flushed with an error seen by the responder."),
	C(CSRC_HW, "resp_local_length_error", "resp_local_length_errors_total",
	  0, "Local length errors seen by the responder."),
	C(CSRC_HW, "resp_remote_access_errors",
	  "resp_remote_access_errors_total", 0,
	  "Remote access errors seen by the responder."),
	C(CSRC_HW, "roce_adp_retrans", "roce_adp_retransmits_total", 0,
	  "Adaptive retransmissions of RoCE traffic."),
	C(CSRC_HW, "roce_adp_retrans_to", "roce_adp_retransmits_timeout_total",
	  0,
	  "Times RoCE traffic reached a timeout under adaptive "
	  "retransmission."),
	C(CSRC_HW, "roce_slow_restart", "roce_slow_restart_used_total", 0,
	  "Times RoCE slow restart was used."),
	C(CSRC_HW, "roce_slow_restart_cnps", "roce_slow_restart_cnps_total", 0,
	  "Congestion notification packets generated by RoCE slow restart."),
	C(CSRC_HW, "roce_slow_restart_trans", "roce_slow_restart_total", 0,
	  "Times RoCE slow restart changed state to slow restart."),
	C(CSRC_HW, "rx_atomic_requests", "rx_atomic_requests_total", 0,
	  "Atomic requests received."),
	C(CSRC_HW, "rx_dct_connect", "rx_dct_connect_requests_total", 0,
	  "Connection requests received for DCTs."),
	C(CSRC_HW, "rx_read_requests", "rx_read_requests_total", 0,
	  "RDMA read requests received."),
	C(CSRC_HW, "rx_write_requests", "rx_write_requests_total", 0,
	  "RDMA write requests received."),
	C(CSRC_HW, "rx_icrc_encapsulated", "rx_icrc_encapsulated_errors_total",
	  0, "RoCE packets received with an ICRC error."),

	/* the netdev behind a RoCE port (node_network_carrier_changes_total) */
	C(CSRC_NET, "carrier_changes", "carrier_changes_total", 0,
	  "Times the netdev's carrier went up or down: a RoCE link flap, which "
	  "link_downed does not count."),
};

static const struct counter_def generic[] = {
	{.source = CSRC_IB,
	 .metric = P "ib_counters_total",
	 .label = "counter",
	 .help = "Other counters of the port's counters/ directory, by kernel "
		 "name.",
	 .kind = COUNTER_KIND_COUNTER,
	 .mul = 1,
	 .div = 1},
	{.source = CSRC_HW,
	 .metric = P "hw_counters_total",
	 .label = "counter",
	 .help = "Other counters of the port's hw_counters/ directory "
		 "(driver-specific), by kernel name.",
	 .kind = COUNTER_KIND_COUNTER,
	 .mul = 1,
	 .div = 1},
	{.source = CSRC_NET,
	 .metric = P "netdev_statistics_total",
	 .label = "counter",
	 .help = "Statistics of the netdev behind a RoCE port (ethtool "
		 "statistics: pause, PFC, discards), by driver name.",
	 .kind = COUNTER_KIND_COUNTER,
	 .mul = 1,
	 .div = 1},
	{.source = CSRC_HW,
	 .metric = P "hw_resources",
	 .label = "counter",
	 .help = "Entries of hw_counters/ that are current values, not "
		 "counters (active_*, watermark_*), by kernel name.",
	 .kind = COUNTER_KIND_GAUGE,
	 .mul = 1,
	 .div = 1},
};

#define N_COUNTERS (sizeof(counters) / sizeof(counters[0]))
#define N_GENERIC (sizeof(generic) / sizeof(generic[0]))

const struct counter_def *counters_table(size_t *n)
{
	*n = N_COUNTERS;
	return counters;
}

const struct counter_def *counters_generic_table(size_t *n)
{
	*n = N_GENERIC;
	return generic;
}

const char *counters_source_name(enum counter_source source)
{
	static const char *const names[CSRC_COUNT] = {"ib", "hw", "net"};

	return (unsigned)source < CSRC_COUNT ? names[source] : "?";
}

const struct counter_def *counters_lookup(enum counter_source source,
					  const char *name)
{
	/* About 60 entries: a linear scan costs less than hashing, and the
	 * exporter looks each distinct name up once per scrape. */
	for (size_t i = 0; i < N_COUNTERS; i++)
		if (counters[i].source == source &&
		    !strcmp(counters[i].sysfs, name))
			return &counters[i];
	return NULL;
}

/* bnxt_re (and others) list current resource counts among hw_counters. */
static int counters_hw_is_gauge(const char *name)
{
	return !strncmp(name, "active_", 7) || !strncmp(name, "watermark_", 10);
}

const struct counter_def *counters_generic(enum counter_source source,
					   const char *name)
{
	if ((unsigned)source >= CSRC_COUNT)
		return NULL;
	if (source == CSRC_HW && counters_hw_is_gauge(name))
		return &generic[3];
	return &generic[source];
}

const struct counter_def *counters_describe(enum counter_source source,
					    const char *name)
{
	const struct counter_def *d = counters_lookup(source, name);

	return d ? d : counters_generic(source, name);
}

int counters_is_counter(enum counter_source source, const char *name)
{
	const struct counter_def *d = counters_describe(source, name);

	return d && d->kind == COUNTER_KIND_COUNTER;
}

uint64_t counters_max(unsigned width)
{
	if (width == 0 || width >= 64)
		return UINT64_MAX;
	return (UINT64_C(1) << width) - 1;
}

int counters_saturated(const struct counter_def *d, uint64_t raw)
{
	return d->width && raw >= counters_max(d->width);
}

int counters_scale_u64(const struct counter_def *d, uint64_t raw, uint64_t *out)
{
	if (d->div != 1 || (d->mul > 1 && raw > UINT64_MAX / d->mul))
		return -ERANGE;
	*out = raw * d->mul;
	return 0;
}

double counters_scale(const struct counter_def *d, uint64_t raw)
{
	return (double)raw * d->mul / d->div;
}
