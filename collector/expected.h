/* SPDX-License-Identifier: MIT */
/*
 * The expected figure of a bandwidth test: what the hardware at both ends
 * promises, before any history. Pure functions (no SQLite):
 *   - a port's data rate from the kernel's `rate` (lane speed x width, as
 *     port.rate_bytes holds it): SDR/DDR/QDR lose 20% to 8b/10b, FDR runs
 *     14.0625 Gb/s lanes with 64b/66b, EDR/HDR/NDR/XDR figures are
 *     already data rates; RoCE ports' rates are Ethernet data rates;
 *   - the link layer's share of the wire at the test's message size and
 *     MTU (InfiniBand LRH+BTH+ICRC+VCRC, RoCE v2's Ethernet, IPv4, UDP,
 *     BTH, ICRC, FCS, preamble and gap, plus RETH or AETH);
 *   - a PCIe link's data rate: speed x width x encoding (8b/10b up to
 *     5 GT/s, 128b/130b from 8 GT/s, flit mode at 64 GT/s) x TLP
 *     efficiency at a 256-byte max payload;
 * and the lower of the four (both ports, both PCIe links) wins.
 * docs/collector.md, "EXPECTED FIGURE", cites where each number comes from.
 */
#ifndef IBPULSE_COLLECTOR_EXPECTED_H
#define IBPULSE_COLLECTOR_EXPECTED_H

#include <stddef.h>

/* Overheads in bytes (docs/collector.md has the sources). */
#define EXPECTED_IB_PACKET 26	  /* LRH 8 + BTH 12 + ICRC 4 + VCRC 2 */
#define EXPECTED_ROCE2_PACKET 82  /* 8 + 14 + 20 + 8 + 12 + 4 + 4 + 12 */
#define EXPECTED_RETH 16	  /* first packet of an RDMA write */
#define EXPECTED_AETH 4		  /* first and last RDMA read response */
#define EXPECTED_PCIE_MPS 256	  /* max payload size assumed */
#define EXPECTED_PCIE_TLP 24	  /* framing/seq 4 + 4DW header 16 + LCRC 4 */
#define EXPECTED_PCIE_FLIT_TLP 16 /* flit mode: the header only */

/* One end of the link, from the counters report tables. */
struct expected_end {
	double rate_bytes;    /* port.rate_bytes; <= 0 unknown */
	int ethernet;	      /* link_layer "Ethernet" (RoCE) */
	double pcie_gts;      /* device.pcie_cur_speed_gts; <= 0 unknown */
	long long pcie_width; /* device.pcie_cur_width; <= 0 unknown */
};

enum expected_op {
	EXPECTED_WRITE, /* write_bw: RETH on the first packet */
	EXPECTED_READ,	/* read_bw: AETH on the first and last response */
	EXPECTED_SEND,	/* send_bw */
};

/* What the test did, from the result's test and params. */
struct expected_test {
	enum expected_op op;
	double size; /* message bytes */
	double mtu;  /* path MTU in bytes */
	int bidir;   /* both directions at once: twice the figure */
};

/* The figure and what limits it. */
struct expected_figure {
	double value;		 /* bytes per second */
	double link[2], pcie[2]; /* initiator, responder */
	const char *limit;	 /* "initiator link", "responder pcie"... */
};

/* A port's data rate in bytes/s from its `rate`; 0 when unknown. */
double expected_port_data_rate(double rate_bytes, int ethernet);

/* The share of the wire that is payload (0, 1]. */
double expected_wire_efficiency(int ethernet, const struct expected_test *t);

/* A PCIe link's data rate in bytes/s; 0 when unknown. */
double expected_pcie_data_rate(double gts, long long width);

/*
 * expected_compute() - the figure for @t between @a (initiator) and @b
 * (responder). -ENODATA when a rate or a PCIe link is unknown: a device
 * without PCIe (Soft-RoCE, siw) reports a made-up rate, and nothing is
 * judged against it.
 */
int expected_compute(const struct expected_end *a, const struct expected_end *b,
		     const struct expected_test *t,
		     struct expected_figure *out);

/*
 * expected_test_parse() - @test ("write_bw"...) and @params (the result's
 * JSON object as text, may be NULL) into *@out: size (default 65,536),
 * mtu (default 4,096), "bidirectional". -ENOTSUP for tests that have no
 * expected figure (latency, atomics, loopback self-tests).
 */
int expected_test_parse(const char *test, const char *params,
			struct expected_test *out);

#endif
