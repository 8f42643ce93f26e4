// SPDX-License-Identifier: MIT
/*
 * The expected figure of a bandwidth test: see expected.h. The kernel's
 * `rate` is lane speed x width (drivers/infiniband/core/sysfs.c,
 * rate_show()) and carries no encoding, so the encoding is recovered from
 * the figure itself: the products of the 8b/10b lane speeds (2.5, 5, 10
 * Gb/s) and the widths (1, 2, 4, 8, 12) never equal those of FDR (14) or
 * of the data-rate speeds (25, 50, 100, 200). FDR10 (10 Gb/s lanes, 64b/66b)
 * shows the same figure as QDR and is taken as QDR: the lower estimate.
 */
#include "expected.h"
#include "testapi.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* Lane speeds as rate_show() prints them, Gb/s, with their data share. */
static const struct {
	double gbps, data;
} lane_speeds[] = {
	{2.5, 0.8},		      /* SDR, 8b/10b */
	{5, 0.8},		      /* DDR, 8b/10b */
	{10, 0.8},		      /* QDR, 8b/10b (FDR10 too: see above) */
	{14, 14.0625 / 14 * 64 / 66}, /* FDR: 14.0625 Gbaud, 64b/66b */
	{25, 1},		      /* EDR: 25 Gb/s of data */
	{50, 1},		      /* HDR */
	{100, 1},		      /* NDR */
	{200, 1},		      /* XDR */
};
static const int lane_widths[] = {1, 2, 4, 8, 12};

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

double expected_port_data_rate(double rate_bytes, int ethernet)
{
	double gbps = rate_bytes * 8 / 1e9;

	if (!(rate_bytes > 0) || !isfinite(rate_bytes))
		return 0;
	if (ethernet)
		return rate_bytes; /* the netdev's speed: already data */
	for (size_t s = 0; s < N_ELEMS(lane_speeds); s++)
		for (size_t w = 0; w < N_ELEMS(lane_widths); w++)
			if (fabs(gbps - lane_speeds[s].gbps * lane_widths[w]) <
			    1e-6)
				return rate_bytes * lane_speeds[s].data;
	return rate_bytes; /* an unknown speed: taken as data (upper bound) */
}

double expected_wire_efficiency(int ethernet, const struct expected_test *t)
{
	double size = t->size >= 1 ? t->size : 1;
	double mtu = t->mtu >= 256 ? t->mtu : 256;
	double packets = ceil(size / mtu);
	double per = ethernet ? EXPECTED_ROCE2_PACKET : EXPECTED_IB_PACKET;
	double extra = 0;

	if (t->op == EXPECTED_WRITE)
		extra = EXPECTED_RETH;
	else if (t->op == EXPECTED_READ)
		extra = EXPECTED_AETH * (packets > 1 ? 2 : 1);
	return size / (size + packets * per + extra);
}

double expected_pcie_data_rate(double gts, long long width)
{
	double enc, tlp;

	if (!(gts > 0) || !isfinite(gts) || width <= 0)
		return 0;
	if (gts < 8) { /* Gen1, Gen2 */
		enc = 8.0 / 10;
		tlp = EXPECTED_PCIE_TLP;
	} else if (gts < 64) { /* Gen3 to Gen5 */
		enc = 128.0 / 130;
		tlp = EXPECTED_PCIE_TLP;
	} else { /* Gen6 flit mode: 236 TLP bytes per 256-byte flit */
		enc = 236.0 / 256;
		tlp = EXPECTED_PCIE_FLIT_TLP;
	}
	return gts * 1e9 * (double)width * enc / 8 * EXPECTED_PCIE_MPS /
	       (EXPECTED_PCIE_MPS + tlp);
}

int expected_compute(const struct expected_end *a, const struct expected_end *b,
		     const struct expected_test *t, struct expected_figure *out)
{
	static const char *const names[4] = {
		"initiator link",
		"responder link",
		"initiator pcie",
		"responder pcie",
	};
	const struct expected_end *end[2] = {a, b};
	double v[4];
	size_t low = 0;

	for (int i = 0; i < 2; i++) {
		v[i] = expected_port_data_rate(end[i]->rate_bytes,
					       end[i]->ethernet) *
		       expected_wire_efficiency(end[i]->ethernet, t);
		v[2 + i] = expected_pcie_data_rate(end[i]->pcie_gts,
						   end[i]->pcie_width);
		out->link[i] = v[i];
		out->pcie[i] = v[2 + i];
	}
	for (size_t i = 0; i < 4; i++) {
		if (!(v[i] > 0))
			return -ENODATA;
		if (v[i] < v[low])
			low = i;
	}
	out->value = v[low] * (t->bidir ? 2 : 1);
	out->limit = names[low];
	return 0;
}

int expected_test_parse(const char *test, const char *params,
			struct expected_test *out)
{
	struct testapi_params tp;
	struct testapi_kind k;

	memset(out, 0, sizeof(*out));
	/* the test API's one classifier: a bandwidth test, and its op */
	if (testapi_test_kind(test, 0, &k) ||
	    k.metric != TESTAPI_METRIC_BANDWIDTH)
		return -ENOTSUP;
	switch (k.op) {
	case TESTAPI_OP_WRITE:
		out->op = EXPECTED_WRITE;
		break;
	case TESTAPI_OP_READ:
		out->op = EXPECTED_READ;
		break;
	case TESTAPI_OP_SEND:
		out->op = EXPECTED_SEND;
		break;
	default: /* atomics: no wire model */
		return -ENOTSUP;
	}
	/* the typed params of the test API; unknown: 64 KiB at MTU 4096 */
	testapi_params_decode(params, &tp);
	out->size = tp.size > 0 ? (double)tp.size : 65536;
	out->mtu = tp.mtu > 0 ? (double)tp.mtu : 4096;
	out->bidir = tp.bidirectional;
	return tp.selftest ? -ENOTSUP : 0;
}
