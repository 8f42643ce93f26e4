/* SPDX-License-Identifier: MIT */
/*
 * One daemon test, start to result: the job (a plan entry, a static peer
 * or the loopback self-test, with its profile), the port counters at both
 * ends (ours read before and after, the responder's deltas from its
 * RESULT) to tell a busy link, the verbs test itself
 * (vt_run), and the result as the JSON object POST /api/v1/results
 * carries (docs/api.md; encoded by common/testapi.h), with a fresh UUID.
 */
#ifndef IBPULSE_DTEST_H
#define IBPULSE_DTEST_H

#include <stdbool.h>
#include <stdint.h>

#include "probe_settings.h"
#include "spool.h"
#include "testapi.h"
#include "vtest.h"

struct dtest_job {
	char plan_id[PROBE_NAME_MAX]; /* "": not from a plan */
	struct probe_profile profile;
	char device[PROBE_NAME_MAX]; /* local */
	unsigned ib_port;
	char peer_host[256];		  /* name for the result */
	char peer_address[256];		  /* where its responder listens */
	char peer_tcp_port[8];		  /* its responder's TCP port */
	char peer_device[PROBE_NAME_MAX]; /* "": unknown */
	unsigned peer_ib_port;
	unsigned dlid;	 /* the plan's destination LID; 0: none */
	bool selftest;	 /* loopback on this host's own device */
	double deadline; /* epoch seconds; 0: none */
	bool has_ticket; /* a plan entry's ticket for its responder */
	struct vt_ticket ticket;
};

/* What the test itself moved through a port, both directions. */
struct dtest_load {
	uint64_t bytes;
	uint64_t msgs;
	uint32_t size; /* message size */
	unsigned mtu;  /* active MTU in bytes, 0 unknown */
};

/*
 * dtest_busy() - did traffic besides the test's own cross a port whose
 * counters rose by @d over the test? @tol is the share of extra bytes
 * tolerated. Returns true with the reason in @why.
 */
bool dtest_busy(const struct vt_portctr *d, const struct dtest_load *t,
		double tol, char *why, size_t len);

/*
 * dtest_verdict() - the busy verdict from both ends: @local's deltas and,
 * when not NULL, the responder's @remote. @why names every end that saw
 * more than the test ("responder: 3.1 MB beyond the test's own ...").
 */
bool dtest_verdict(const struct vt_portctr *local,
		   const struct vt_portctr *remote, const struct dtest_load *t,
		   double tol, char *why, size_t len);

/* The profile as engine parameters for @job (device, port, GID...). */
int dtest_params(const struct dtest_job *job, const char *sysfs_root,
		 double timeout_s, struct vt_params *p, char *err,
		 size_t errlen);

/* What the daemon knows about a finished test besides vt_result. */
struct dtest_meta {
	const char *host; /* this host */
	char id[SPOOL_ID_LEN + 1];
	double started;	 /* epoch seconds */
	double duration; /* seconds the whole test took */
	bool aborted;	 /* the daemon was stopping */
	bool busy;
	char busy_why[400];
};

/*
 * dtest_encode() - the result object as JSON text (caller frees), by the
 * test API codec (testapi.h). @res may be NULL for a test that never
 * started (then @error says why and @outcome is used as given).
 */
int dtest_encode(const struct dtest_job *job, const struct vt_result *res,
		 const struct dtest_meta *m, enum testapi_outcome outcome,
		 const char *error, char **out);

/* How the test of @res ended (aborted: the daemon was stopping). */
enum testapi_outcome dtest_outcome(const struct vt_result *res, bool aborted);

/*
 * dtest_selftest() - run @p in loopback: a responder on 127.0.0.1 in a
 * thread of its own on the same device, then vt_run() against it.
 */
int dtest_selftest(const struct vt_params *p, struct vt_result *res);

#endif
