/* SPDX-License-Identifier: MIT */
/*
 * This node's health verdict as `ibpulse-probe health` and the daemon's
 * Kubernetes node condition see it: the collector's (GET
 * /api/v1/hosts/NAME/health, which knows regressions, suspects and the
 * counters of both ends of every link), or, when the collector cannot be
 * reached, the node's own sysfs view, which knows much less and says so.
 * docs/health.md gives the exit codes and the rules.
 */
#ifndef IBPULSE_PHEALTH_H
#define IBPULSE_PHEALTH_H

#include <stddef.h>
#include <stdio.h>

#include "probe_settings.h"
#include "report.h"

enum phealth_verdict {
	PHEALTH_HEALTHY = 0,
	PHEALTH_DEGRADED = 1,
	PHEALTH_FAILED = 2,
	PHEALTH_UNKNOWN = 3,
};

/* The exit codes of `ibpulse-probe health` (docs/health.md). */
#define PHEALTH_EXIT_HEALTHY 0
#define PHEALTH_EXIT_FAILED 1
#define PHEALTH_EXIT_DEGRADED 2
#define PHEALTH_EXIT_UNKNOWN 3

#define PHEALTH_TEXT_MAX 320
#define PHEALTH_MAX_REASONS 256

struct phealth_reason {
	int level; /* PHEALTH_DEGRADED or PHEALTH_FAILED */
	char text[PHEALTH_TEXT_MAX];
	int active;	  /* seen in the latest evaluation */
	double last_seen; /* collector clock */
};

struct phealth {
	int verdict;	   /* enum phealth_verdict */
	int local;	   /* 1: the sysfs view, the collector unreachable */
	double since, now; /* collector clock; 0 unknown */
	long long quiet_seconds;
	char note[512]; /* why unknown, or why local */
	struct phealth_reason *r;
	size_t n;
};

/*
 * phealth_fetch() - ask the collector (@s->collector_url, token_file,
 * ca_file, timeouts) for @host's verdict. 0 with *@out filled (a 404 is
 * an unknown verdict with the collector's reason in note); -ECONNREFUSED
 * (unreachable, a 5xx, or an answer that is not a verdict) with the
 * reason in note: the caller falls back to phealth_local().
 */
int phealth_fetch(const struct probe_settings *s, const char *host,
		  struct phealth *out);

/* phealth_parse() - the collector's JSON answer into *@out; -EINVAL with
 * the reason in out->note. */
int phealth_parse(const char *json, size_t len, struct phealth *out);

/*
 * phealth_local() - the verdict from this node's own report @r: a fatal
 * AER error or no ACTIVE port at all is failed, a port not ACTIVE (it may
 * never have been up: only the collector knows) or a PCIe link below its
 * maximum degraded, no RDMA device unknown. Sets local.
 */
int phealth_local(const struct report *r, struct phealth *out);

/* One line of verdict, then one per reason (docs/health.md). */
void phealth_print(FILE *f, const char *host, const struct phealth *h);

/* The exit code (@npd: node-problem-detector's 0 ok, 1 problem,
 * 2 unknown; degraded is ok there). */
int phealth_exit_code(const struct phealth *h, int npd);

/* "ibpulse: " and the first failed reason, for a drain (in @buf). */
const char *phealth_drain_reason(const struct phealth *h, char *buf,
				 size_t len);

void phealth_free(struct phealth *h);

#endif
