// SPDX-License-Identifier: MIT
/*
 * What a port's PortInfo says about its link: lanes and per-lane speed,
 * active against enabled, and the verdict "degraded" (a 4X cable that
 * trained at 1X, an EDR link running at FDR). Speeds are compared by
 * their signalling rate per lane; rate_gbps is reported the way the
 * kernel's sysfs `rate` is (SDR 2.5, QDR 10, FDR 14, EDR 25, HDR 50, NDR
 * 100 Gb/s per lane), so a switch port's rate reads like a host port's.
 */
#include "fabric.h"

#include <stdio.h>

struct speed {
	const char *name;
	double signal; /* Gb/s per lane, for comparisons */
	double rate;   /* Gb/s per lane as sysfs `rate` shows it */
};

/* LinkSpeedActive/Enabled bits (IBA 14.2.5.6) */
static const struct speed base_speeds[] = {
	{"SDR", 2.5, 2.5},
	{"DDR", 5.0, 5.0},
	{"QDR", 10.0, 10.0},
};
/* LinkSpeedExtActive/Enabled bits */
static const struct speed ext_speeds[] = {
	{"FDR", 14.0625, 14.0}, {"EDR", 25.78125, 25.0}, {"HDR", 53.125, 50.0},
	{"NDR", 106.25, 100.0}, {"XDR", 212.5, 200.0},
};
static const struct speed fdr10 = {"FDR10", 10.3125, 10.0};

unsigned fabric_width_lanes(unsigned bit)
{
	switch (bit) {
	case 1:
		return 1;
	case 2:
		return 4;
	case 4:
		return 8;
	case 8:
		return 12;
	case 16:
		return 2;
	default:
		return 0;
	}
}

unsigned fabric_width_max(unsigned mask)
{
	unsigned best = 0;

	for (unsigned b = 1; b <= 16; b <<= 1)
		if ((mask & b) && fabric_width_lanes(b) > best)
			best = fabric_width_lanes(b);
	return best;
}

/* The fastest speed named in base, ext and FDR10 masks; NULL: none. */
static const struct speed *fastest(unsigned base, unsigned ext, unsigned f10)
{
	const struct speed *best = NULL;

	for (unsigned i = 0; i < 3; i++)
		if (base & (1u << i))
			best = &base_speeds[i];
	if ((f10 & 1) && (!best || fdr10.signal > best->signal))
		best = &fdr10;
	for (unsigned i = 0; i < 5; i++)
		if (ext & (1u << i))
			best = &ext_speeds[i];
	return best;
}

/* The active speed: an extended speed wins, then FDR10, then the base. */
static const struct speed *active(const struct fabric_port *p)
{
	if (p->espeed_active)
		return fastest(0, p->espeed_active, 0);
	if (p->fdr10_active)
		return &fdr10;
	return fastest(p->speed_active, 0, 0);
}

double fabric_speed_active(const struct fabric_port *p)
{
	const struct speed *s = active(p);

	return s ? s->rate : 0;
}

double fabric_speed_enabled_max(const struct fabric_port *p)
{
	const struct speed *s =
		fastest(p->speed_enabled, p->espeed_enabled, p->fdr10_enabled);

	return s ? s->rate : 0;
}

const char *fabric_speed_name(const struct fabric_port *p)
{
	const struct speed *s = active(p);

	return s ? s->name : "?";
}

bool fabric_port_degraded(const struct fabric_port *p, char *why, size_t len)
{
	unsigned lanes = fabric_width_lanes(p->width_active);
	unsigned want = fabric_width_max(p->width_enabled);
	const struct speed *s = active(p);
	const struct speed *e =
		fastest(p->speed_enabled, p->espeed_enabled, p->fdr10_enabled);

	if (p->state < 2 || p->phys_state != 5) /* not up: not degraded */
		return false;
	if (lanes && want > lanes) {
		if (why)
			snprintf(why, len, "width %uX of %uX enabled", lanes,
				 want);
		return true;
	}
	if (s && e && e->signal > s->signal) {
		if (why)
			snprintf(why, len, "speed %s of %s enabled", s->name,
				 e->name);
		return true;
	}
	return false;
}

const char *fabric_node_type_name(enum fabric_node_type t)
{
	switch (t) {
	case FABRIC_CA:
		return "ca";
	case FABRIC_SWITCH:
		return "switch";
	case FABRIC_ROUTER:
		return "router";
	default:
		return "?";
	}
}
