// SPDX-License-Identifier: MIT
/*
 * The human listing of `ibpulse-probe devices` (print.h): ibstat's layout,
 * plus what ibstat leaves out and operators then dig out of sysfs by hand:
 * the PCIe link against its maximum, the P_Key table with membership, the
 * GID table with types and netdevs, and the counters.
 */
#include "print.h"

#include <inttypes.h>
#include <stdio.h>

static void print_text(FILE *f, const char *label, const char *v)
{
	if (v)
		fprintf(f, "\t%s: %s\n", label, v);
}

/* "16 GT/s x16", with "?" for what is unknown. */
static void fmt_link(char *out, size_t size, double gts, int width)
{
	char sp[32] = "?", w[16] = "?";

	if (gts >= 0)
		snprintf(sp, sizeof(sp), "%g", gts);
	if (width >= 0)
		snprintf(w, sizeof(w), "%d", width);
	snprintf(out, size, "%s GT/s x%s", sp, w);
}

static void fmt_count(char *out, size_t size, int64_t v)
{
	if (v >= 0)
		snprintf(out, size, "%" PRId64, v);
	else
		snprintf(out, size, "?");
}

static void print_pcie(FILE *f, const struct report_pcie *p)
{
	char cur[64], max[64], cor[24], nonfatal[24], fatal[24];

	if (!p->address)
		return;
	fmt_link(cur, sizeof(cur), p->cur_speed_gts, p->cur_width);
	fmt_link(max, sizeof(max), p->max_speed_gts, p->max_width);
	fprintf(f, "\tPCIe: %s %s (max %s)%s\n", p->address, cur, max,
		report_pcie_degraded(p) > 0 ? " DEGRADED" : "");
	if (p->aer_correctable < 0 && p->aer_nonfatal < 0 && p->aer_fatal < 0)
		return;
	fmt_count(cor, sizeof(cor), p->aer_correctable);
	fmt_count(nonfatal, sizeof(nonfatal), p->aer_nonfatal);
	fmt_count(fatal, sizeof(fatal), p->aer_fatal);
	fprintf(f, "\tPCIe AER: correctable %s, nonfatal %s, fatal %s\n", cor,
		nonfatal, fatal);
}

static void print_tables(FILE *f, const struct report_port *p)
{
	fprintf(f, "\t\tP_Keys: %zu\n", p->n_pkeys);
	if (p->n_pkeys)
		fprintf(f, "\t\t\t%-6s %-7s %s\n", "index", "pkey",
			"membership");
	for (size_t i = 0; i < p->n_pkeys; i++)
		fprintf(f, "\t\t\t%-6u 0x%04x  %s\n", p->pkeys[i].index,
			p->pkeys[i].pkey,
			p->pkeys[i].pkey & 0x8000 ? "full" : "limited");
	fprintf(f, "\t\tGIDs: %zu\n", p->n_gids);
	if (p->n_gids)
		fprintf(f, "\t\t\t%-6s %-39s  %-11s %s\n", "index", "gid",
			"type", "netdev");
	for (size_t i = 0; i < p->n_gids; i++) {
		const struct report_gid *g = &p->gids[i];

		fprintf(f, "\t\t\t%-6u %-39s  %-11s %s\n", g->index, g->gid,
			g->type ? g->type : "-", g->netdev ? g->netdev : "-");
	}
}

static void print_counters(FILE *f, const struct report_port *p)
{
	static const char *const titles[CSRC_COUNT] = {"counters",
						       "hw_counters", "netdev"};

	for (int s = 0; s < CSRC_COUNT; s++) {
		if (!p->n_counters[s])
			continue;
		fprintf(f, "\t\tCounters (%s):\n", titles[s]);
		for (size_t i = 0; i < p->n_counters[s]; i++)
			fprintf(f, "\t\t\t%-40s %" PRIu64 "\n",
				p->counters[s][i].name,
				p->counters[s][i].value);
	}
}

static void print_num(FILE *f, const char *label, int64_t v, int hex)
{
	if (v < 0)
		return;
	if (hex)
		fprintf(f, "\t\t%s: 0x%08" PRIx64 "\n", label, (uint64_t)v);
	else
		fprintf(f, "\t\t%s: %" PRId64 "\n", label, v);
}

static void print_port(FILE *f, const struct report_port *p, int counters)
{
	fprintf(f, "\tPort %u:\n", p->port);
	fprintf(f, "\t\tState: %s (%d)\n", report_port_state_name(p->state),
		p->state);
	fprintf(f, "\t\tPhysical state: %s (%d)\n",
		report_phys_state_name(p->phys_state), p->phys_state);
	if (p->rate_bytes != REPORT_UNKNOWN)
		fprintf(f, "\t\tRate: %g Gb/sec (%" PRIu64 " bytes/s)\n",
			(double)p->rate_bytes * 8 / 1e9, p->rate_bytes);
	if (p->link_layer)
		fprintf(f, "\t\tLink layer: %s\n", p->link_layer);
	print_num(f, "Base lid", p->lid, 0);
	print_num(f, "LMC", p->lmc, 0);
	print_num(f, "SM lid", p->sm_lid, 0);
	print_num(f, "Capability mask", p->cap_mask, 1);
	if (p->port_guid)
		fprintf(f, "\t\tPort GUID: %s\n", p->port_guid);
	if (p->netdev)
		fprintf(f, "\t\tNetdev: %s\n", p->netdev);
	print_tables(f, p);
	if (counters)
		print_counters(f, p);
}

void probe_print_devices(FILE *f, const struct report *r, int counters)
{
	if (!r->n_devices)
		fprintf(f, "no RDMA devices\n");
	for (size_t i = 0; i < r->n_devices; i++) {
		const struct report_device *d = &r->devices[i];

		fprintf(f, "%sCA '%s'\n", i ? "\n" : "", d->name);
		print_text(f, "CA type", d->hca_type);
		print_text(f, "Firmware version", d->fw_ver);
		print_text(f, "Board id", d->board_id);
		print_text(f, "Node GUID", d->node_guid);
		print_text(f, "System image GUID", d->sys_image_guid);
		print_text(f, "Node description", d->node_desc);
		if (d->numa_node >= 0)
			fprintf(f, "\tNUMA node: %d\n", d->numa_node);
		for (size_t j = 0; j < d->n_netdevs; j++)
			fprintf(f, "%s%s%s",
				j ? ", " : "\tNetdevs: ", d->netdevs[j],
				j + 1 == d->n_netdevs ? "\n" : "");
		print_pcie(f, &d->pcie);
		fprintf(f, "\tNumber of ports: %zu\n", d->n_ports);
		for (size_t j = 0; j < d->n_ports; j++)
			print_port(f, &d->ports[j], counters);
	}
}
