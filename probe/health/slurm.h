/* SPDX-License-Identifier: MIT */
/*
 * `ibpulse-probe health --drain-slurm`: the verdict into Slurm with
 * scontrol, as an administrator would do it. A failed node is drained
 * with the reason ("ibpulse: mlx5_0/1 port down: ..."); a node ibpulse
 * drained is resumed once the collector calls it healthy; a node drained
 * or down for any other reason (an operator's) is never touched. Whose
 * drain it is, is read from its reason: ibpulse's start with "ibpulse:".
 */
#ifndef IBPULSE_SLURM_H
#define IBPULSE_SLURM_H

#include <stddef.h>
#include <stdio.h>

#include "phealth.h"

#define SLURM_REASON_PREFIX "ibpulse:"

/* A node as `scontrol show node NAME -o` shows it. */
struct slurm_node {
	char state[128];  /* "IDLE+DRAIN" */
	char reason[512]; /* without the " [user@time]" tail; "" none */
	int drained;	  /* DRAIN in its state flags (drained or draining) */
	int down;	  /* DOWN */
	int ours;	  /* its reason starts with SLURM_REASON_PREFIX */
};

/* slurm_node_parse() - one line of `scontrol show node -o` into *@out;
 * -EINVAL when it has no State=. */
int slurm_node_parse(const char *line, struct slurm_node *out);

/*
 * slurm_apply() - act on @h for Slurm node @node with @scontrol: drain,
 * resume or leave alone, saying which on @f. 0, or a negative errno when
 * scontrol failed (its output on @f).
 */
int slurm_apply(const char *scontrol, const char *node, const struct phealth *h,
		FILE *f);

#endif
