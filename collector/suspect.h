/* SPDX-License-Identifier: MIT */
/*
 * Whether the path between two groups is at fault when links regress, as
 * a pure function of the links around the regressions (one profile and
 * metric at a time; store_suspect.c loads them from SQLite and saves the
 * answer). Ports and devices are judged from evidence per element
 * instead (evidence.h), which needs no regression of any one link.
 *
 * Two distinct groups (the probes' group_label, e.g. leaf switches) are
 * suspect, the path between them (an uplink), when
 *   - at least 2 links between them are in regression, and more than half
 *     of the judged links between them (@gt, else those given);
 *   - those links involve at least 2 distinct ports on each side (one
 *     port would explain them alone);
 *   - on each side at least one of those ports is healthy with a peer
 *     outside the pair.
 * A link is "healthy" when it has a baseline, no open regression and its
 * latest result was good; loopback links (P to P) are left out. The
 * inference is blind where the evidence is missing: groups with one port
 * each, ports never tested with anyone outside the pair.
 */
#ifndef IBPULSE_COLLECTOR_SUSPECT_H
#define IBPULSE_COLLECTOR_SUSPECT_H

#include <stddef.h>
#include <stdint.h>

#define SUSPECT_NONE UINT32_MAX

struct suspect_link {
	uint32_t a, b;		/* port indexes (initiator, responder) */
	uint32_t ga, gb;	/* group indexes, SUSPECT_NONE: unlabelled */
	unsigned regressed : 1; /* an open regression */
	unsigned healthy : 1;	/* judged, no regression, last result good */
	unsigned judged : 1;	/* has a baseline (regressed or not) */
};

/* How many links between groups ga < gb are judged, all of them. */
struct suspect_gtotal {
	uint32_t ga, gb;
	unsigned judged;
};

struct suspect_group {
	uint32_t ga, gb; /* ga < gb */
	unsigned regressed, judged;
};

struct suspect_out {
	struct suspect_group *groups;
	size_t n_groups;
};

/*
 * suspect_infer() - the suspect group pairs among @n links over @n_ports
 * ports (the links must include every judged link of each end of a
 * regressed link).
 * *@out gets new arrays (suspect_out_free()). 0 or -ENOMEM.
 */
int suspect_infer(const struct suspect_link *l, size_t n, size_t n_ports,
		  const struct suspect_gtotal *gt, size_t n_gt,
		  struct suspect_out *out);
void suspect_out_free(struct suspect_out *out);

/* The group pair of link @l (smaller index first); 0 when it has none
 * (a group unknown, or the same group at both ends). */
int suspect_link_pair(const struct suspect_link *l, uint32_t *ga, uint32_t *gb);

#endif
