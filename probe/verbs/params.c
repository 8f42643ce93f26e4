// SPDX-License-Identifier: MIT
/*
 * Test names, perftest's defaults and the validation of a parameter set.
 * A rejected parameter gets a message that names the flag and its valid
 * range, because that message is what a user of the CLI reads.
 */
#include "vtest.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const test_names[] = {
	[VT_WRITE_BW] = "write_bw",	  [VT_READ_BW] = "read_bw",
	[VT_SEND_BW] = "send_bw",	  [VT_WRITE_LAT] = "write_lat",
	[VT_READ_LAT] = "read_lat",	  [VT_SEND_LAT] = "send_lat",
	[VT_FADD_LAT] = "fadd_lat",	  [VT_CAS_LAT] = "cas_lat",
	[VT_FADD_BW] = "fadd_bw",	  [VT_CAS_BW] = "cas_bw",
	[VT_UD_SEND_LAT] = "ud_send_lat",
};

enum vt_test vt_test_parse(const char *name)
{
	int t;

	for (t = VT_WRITE_BW; t <= VT_TEST_MAX; t++)
		if (!strcmp(name, test_names[t]))
			return (enum vt_test)t;
	return 0;
}

const char *vt_test_name(enum vt_test t)
{
	return t >= VT_WRITE_BW && t <= VT_TEST_MAX ? test_names[t] : NULL;
}

bool vt_test_is_lat(enum vt_test t)
{
	return t == VT_WRITE_LAT || t == VT_READ_LAT || t == VT_SEND_LAT ||
	       t == VT_FADD_LAT || t == VT_CAS_LAT || t == VT_UD_SEND_LAT;
}

bool vt_test_answers(enum vt_test t)
{
	return t == VT_WRITE_LAT || t == VT_SEND_LAT || t == VT_UD_SEND_LAT;
}

bool vt_test_is_atomic(enum vt_test t)
{
	return t == VT_FADD_LAT || t == VT_CAS_LAT || t == VT_FADD_BW ||
	       t == VT_CAS_BW;
}

const char *vt_gid_type_name(enum vt_gid_type t)
{
	switch (t) {
	case VT_GID_IB:
		return "IB";
	case VT_GID_ROCE_V1:
		return "RoCE v1";
	case VT_GID_ROCE_V2:
		return "RoCE v2";
	default:
		return "unknown";
	}
}

void vt_params_default(struct vt_params *p)
{
	memset(p, 0, sizeof(*p));
	p->ib_port = 1;
	p->gid_index = -1;
	p->pkey_index = -1;
	p->qps = 1;
	p->margin_s = -1;
	p->cq_mod = -1;
	p->post_list = 1;
	p->inline_size = -1;
	p->interval_s = 0.1;
	p->timeout_s = 10;
	snprintf(p->sysfs_root, sizeof(p->sysfs_root), "/sys");
}

void vt_limits_default(struct vt_limits *l)
{
	l->max_size = 8u << 20;
	l->max_qps = 16;
	l->max_duration_s = 60;
	l->max_iters = 1000000;
	l->max_concurrent = 2;
}

#define BAD(...)                                                               \
	do {                                                                   \
		snprintf(err, len, __VA_ARGS__);                               \
		return -EINVAL;                                                \
	} while (0)

static int check_shape(const struct vt_params *p, char *err, size_t len)
{
	bool lat = vt_test_is_lat(p->test);
	bool atomic = vt_test_is_atomic(p->test);

	if (!vt_test_name(p->test))
		BAD("unknown test; tests: write_bw read_bw send_bw write_lat "
		    "read_lat send_lat fadd_lat cas_lat fadd_bw cas_bw "
		    "ud_send_lat");
	if (p->qps < 1 || p->qps > 64)
		BAD("--qps %u: valid range 1..64", p->qps);
	if (lat && p->qps != 1)
		BAD("--qps %u: latency tests use one QP", p->qps);
	if (atomic && p->size && p->size != 8)
		BAD("--size %u: atomics are 8 bytes", p->size);
	if (p->size > (1u << 30))
		BAD("--size %u: valid range 1..1073741824", p->size);
	/* The path MTU is checked once both ports are known. */
	if (p->test == VT_UD_SEND_LAT && p->size > VT_UD_MAX_SIZE)
		BAD("--size %u: a UD message fits one MTU: valid range "
		    "1..%u (at most the path MTU)",
		    p->size, VT_UD_MAX_SIZE);
	if (p->bidir && lat)
		BAD("--bidirectional: supported for the bandwidth tests");
	if (p->verify &&
	    (p->bidir || (p->test != VT_WRITE_BW && p->test != VT_READ_BW &&
			  p->test != VT_SEND_BW)))
		BAD("--verify: supported for write_bw, read_bw and send_bw, "
		    "one direction");
	if (p->tx_depth > 16384)
		BAD("--tx-depth %u: valid range 1..16384", p->tx_depth);
	if (p->post_list < 1 || p->post_list > 1024)
		BAD("--post-list %u: valid range 1..1024", p->post_list);
	if (p->cq_mod == 0 || p->cq_mod > 16384)
		BAD("--cq-mod %d: valid range 1..16384", p->cq_mod);
	if (p->inline_size > 4096)
		BAD("--inline %d: valid range 0..4096", p->inline_size);
	return 0;
}

static int check_run(const struct vt_params *p, char *err, size_t len)
{
	if (p->iters > 100000000u)
		BAD("--iters %u: valid range 1..100000000", p->iters);
	if (p->duration_s < 0 || p->duration_s > 86400 ||
	    (p->duration_s > 0 && p->duration_s < 0.2))
		BAD("--duration %g: valid range 0.2..86400 seconds",
		    p->duration_s);
	if (p->duration_s > 0 && p->margin_s >= p->duration_s / 2)
		BAD("--margin %g: must be under half of --duration (%g)",
		    p->margin_s, p->duration_s);
	if (p->interval_s < 0.001 || p->interval_s > 60)
		BAD("--interval %g: valid range 0.001..60 seconds",
		    p->interval_s);
	if (p->timeout_s < 0.1 || p->timeout_s > 3600)
		BAD("--timeout %g: valid range 0.1..3600 seconds",
		    p->timeout_s);
	return 0;
}

static int check_port(const struct vt_params *p, char *err, size_t len)
{
	unsigned m;

	if (p->ib_port < 1 || p->ib_port > 255)
		BAD("--ib-port %u: valid range 1..255", p->ib_port);
	if (p->gid_index > 255)
		BAD("--gid-index %d: valid range 0..255", p->gid_index);
	if (p->gid_index >= 0 && p->gid_sel[0])
		BAD("--gid-index and --gid: give one of them");
	if (p->pkey_index > 127)
		BAD("--pkey-index %d: valid range 0..127", p->pkey_index);
	if (p->pkey_index >= 0 && p->pkey)
		BAD("--pkey-index and --pkey: give one of them");
	if (p->pkey > 0xffff || (p->pkey && !(p->pkey & 0x7fff)))
		BAD("--pkey 0x%x: valid values 0x0001..0xffff (not 0x8000)",
		    p->pkey);
	if (p->sl > 15)
		BAD("--sl %u: valid range 0..15", p->sl);
	if (p->tclass > 255)
		BAD("--tclass %u: valid range 0..255", p->tclass);
	for (m = 256; m <= 4096 && m != p->mtu; m *= 2)
		;
	if (p->mtu && m > 4096)
		BAD("--mtu %u: valid values 256 512 1024 2048 4096", p->mtu);
	if (p->rd_atomic > 255)
		BAD("--outs %u: valid range 1..255", p->rd_atomic);
	return 0;
}

int vt_params_check(const struct vt_params *p, char *err, size_t len)
{
	int rc = check_shape(p, err, len);

	if (!rc)
		rc = check_run(p, err, len);
	if (!rc)
		rc = check_port(p, err, len);
	return rc;
}

void vt_params_apply(const struct vt_params *p, struct vt_used *u)
{
	bool lat = vt_test_is_lat(p->test);
	unsigned limit;

	memset(u, 0, sizeof(*u));
	u->qps = p->qps;
	u->size = p->size ? p->size : lat ? 2 : 65536;
	if (vt_test_is_atomic(p->test))
		u->size = 8;
	u->iters = p->iters ? p->iters : lat ? 1000 : 5000;
	u->duration_s = p->duration_s;
	u->margin_s = p->margin_s >= 0 ? p->margin_s : p->duration_s / 4;
	if (!u->duration_s)
		u->margin_s = 0;
	u->tx_depth = p->tx_depth ? p->tx_depth : lat ? 1 : 128;
	/* perftest: no deeper queue than there are messages to send. */
	if (!lat && !u->duration_s && u->tx_depth > u->iters)
		u->tx_depth = u->iters;
	u->post_list = p->post_list > u->tx_depth ? u->tx_depth : p->post_list;
	if (p->cq_mod > 0)
		u->cq_mod = (unsigned)p->cq_mod;
	else
		u->cq_mod = u->size > 8192 ? 1 : 100;
	/* A full queue must always hold a signaled request, or we stall. */
	limit = u->tx_depth - u->post_list + 1;
	if (u->cq_mod > limit)
		u->cq_mod = limit;
	if (lat)
		u->cq_mod = 1;
	if (p->inline_size >= 0)
		u->inline_size = (unsigned)p->inline_size;
	else
		u->inline_size = vt_test_answers(p->test) ? 220 : 0;
	u->bidir = p->bidir;
	u->verify = p->verify;
	u->ib_port = p->ib_port;
}
