/* SPDX-License-Identifier: MIT */
/*
 * The MAD window: PerfMgt Gets (and Sets) and LID-routed SubnGets of
 * LinearForwardingTable blocks over one libibumad port, many outstanding
 * at once. Requests are queued per destination LID; up to @window are on
 * the wire together, at most @per_node of them at one LID, handed out
 * round-robin across LIDs so no node waits behind another. Each MAD has a
 * TransactionID whose low 32 bits name its slot and generation (the
 * kernel owns the high 32), its own deadline and up to @retries resends
 * with a fresh TransactionID; a late answer to an earlier try is counted
 * as stale and dropped. A LID whose MAD ran out of retries is dead for the
 * rest of the run: its queued requests fail at once with -EHOSTUNREACH, so
 * a node that stopped answering costs its timeout once, not once per port.
 *
 * It waits with poll() on the umad descriptor alone (libumad2sim, the
 * simulator's shim, wraps poll but not epoll). Internal to probe/fabric.
 */
#ifndef IBPULSE_FABRIC_FWIN_H
#define IBPULSE_FABRIC_FWIN_H

#include <signal.h>
#include <stdint.h>

#include "pma.h"
#include "smp.h"

struct fwin_opts {
	unsigned window;     /* 1 .. FWIN_MAX_WINDOW */
	unsigned per_node;   /* 1 .. window */
	unsigned timeout_ms; /* per try */
	unsigned retries;    /* resends after the first try */
};

#define FWIN_MAX_WINDOW 4096

/* What a request is: a PerfMgt GMP (QP1) or a subnet management SMP (QP0). */
enum fwin_class {
	FWIN_PMA = 0,
	FWIN_SMP_LFT = 1, /* SubnGet(LinearForwardingTable), block @block */
};

struct fwin_req {
	uint16_t lid;
	uint8_t cls;	/* enum fwin_class */
	uint8_t kind;	/* FWIN_PMA: enum pma_kind */
	uint8_t port;	/* FWIN_PMA: PortSelect */
	uint8_t set;	/* FWIN_PMA: 1 a Set (counter reset), not a Get */
	uint16_t block; /* FWIN_SMP_LFT: LIDs block * 64 .. + 63 */
	uint32_t tag;	/* the caller's */
};

struct fwin_stats {
	uint64_t sent;	      /* MADs written, tries included */
	uint64_t retries;     /* resends */
	uint64_t timeouts;    /* tries that got no answer in time */
	uint64_t errors;      /* answered with a bad status */
	uint64_t stale;	      /* answers to no outstanding try */
	uint64_t unreachable; /* failed because their LID was dead */
	uint64_t dead_lids;
};

/*
 * Called once per request: @status 0 with the response in @mad, or a
 * negative errno (-ETIMEDOUT, -EHOSTUNREACH, pma_check_response()'s) with
 * @mad NULL or the failed response. May call fwin_submit().
 */
typedef void (*fwin_done_fn)(void *arg, const struct fwin_req *req, int status,
			     const uint8_t *mad);

struct fwin;

/*
 * fwin_open() - register a PerfMgt agent on @ca port @port (already
 * resolved). Returns 0 and the window in *@out, or a negative errno.
 */
int fwin_open(const char *ca, unsigned port, const struct fwin_opts *o,
	      struct fwin **out);
void fwin_close(struct fwin *w);

/*
 * fwin_smi_open() / fwin_smi_close() - register (and drop) the LID-routed
 * subnet management agent the SMPs go through. It is held only while
 * they are on the wire: libibnetdisc registers the same class during a
 * discovery, and the simulator's shim (libumad2sim) hands answers to the
 * last registration of a class, not to the agent that asked. 0 or a
 * negative errno (fwin_submit() then refuses SMPs).
 */
int fwin_smi_open(struct fwin *w);
void fwin_smi_close(struct fwin *w);

/*
 * Queue @r for the next fwin_run() (or the running one). 0, -ENOMEM, or
 * -EOPNOTSUPP for an SMP without fwin_smi_open().
 */
int fwin_submit(struct fwin *w, const struct fwin_req *r);

/*
 * fwin_run() - send everything queued, calling @done for each, until
 * nothing is queued or outstanding. Returns 0, -ECANCELED when *@stop
 * became set (outstanding requests are then dropped without @done), or
 * -EIO when the umad port failed.
 */
int fwin_run(struct fwin *w, fwin_done_fn done, void *arg,
	     const volatile sig_atomic_t *stop);

/* Counts since fwin_open(); fwin_stats_reset() zeroes them. */
const struct fwin_stats *fwin_stats(const struct fwin *w);
void fwin_stats_reset(struct fwin *w);

#endif
