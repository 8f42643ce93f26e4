/* SPDX-License-Identifier: MIT */
/*
 * The probe's own /metrics (docs/probe.md "metrics"): one host's devices,
 * ports and counters, as read from sysfs, in the Prometheus exposition
 * formats of common/expo.h. The host, device, port and counter families
 * are written by the exporter's renderer (common/msnap.h, docs/metrics.md),
 * so a dashboard reads either source: host/device/port labels, counters
 * named and scaled by common/counters.h (the node_exporter InfiniBand
 * names with our prefix, x4 for the data counters), PCIe current and
 * maximum, port state, rate and addressing. The probe adds two families of its
 * own (build info, the time the sysfs read took) and, served by the
 * daemon, its results spool: results waiting and results dropped by reason.
 *
 * pmetrics_render() is a pure function of a struct report; the server
 * (libmicrohttpd, one thread) builds a fresh report per scrape through a
 * callback, and `ibpulse-probe metrics` prints the same text once.
 */
#ifndef IBPULSE_PMETRICS_H
#define IBPULSE_PMETRICS_H

#include <stddef.h>

#include "buf.h"
#include "expo.h"
#include "report.h"

/* Bounds of the HTTP side (fixed: a local scrape endpoint needs no more). */
#define PMETRICS_MAX_CONNECTIONS 8
#define PMETRICS_TIMEOUT 10	      /* seconds a connection may idle */
#define PMETRICS_MAX_BODY (64u << 20) /* bytes; a body past it is a 500 */

/* What the daemon adds: its results spool (spool.h). */
struct pmetrics_spool {
	uint64_t on_disk, in_memory; /* results waiting to be sent */
	uint64_t spool_full, expired, unwritable; /* dropped, cumulative */
};

/*
 * pmetrics_render() - append the /metrics body for @r in @format to @out
 * (whose ceiling bounds it). @sp: the daemon's spool figures (NULL: not
 * shown, as in `ibpulse-probe metrics`). @read_seconds is how long
 * building @r took (< 0: not shown). *@series (may be NULL) gets the
 * number of samples. Returns 0, -ENOMEM, or -E2BIG past the ceiling.
 */
int pmetrics_render(const struct report *r, const struct pmetrics_spool *sp,
		    double read_seconds, enum expo_format format,
		    struct buf *out, size_t *series);

/*
 * Families of a caller's own, written after the host's and before the
 * end of the body (the daemon's responder counters). Returns 0 or the
 * writer's sticky error.
 */
typedef int (*pmetrics_extra_fn)(void *arg, struct expo *e);

/* pmetrics_render() with @extra(@arg) (NULL: none) at the end. */
int pmetrics_render_extra(const struct report *r,
			  const struct pmetrics_spool *sp, double read_seconds,
			  enum expo_format format, struct buf *out,
			  size_t *series, pmetrics_extra_fn extra, void *arg);

/*
 * pmetrics_listen_parse() - "ADDR:PORT" as metrics_listen takes it:
 * ADDR a numeric IPv4 address, a bracketed IPv6 address ("[::1]:9469"),
 * or empty for every address (":9469"); PORT 0..65535 (0: any free
 * port, logged at start). Writes the address (without brackets; "" for
 * every address) to @addr. Returns 0 or -EINVAL with the reason in @err.
 */
int pmetrics_listen_parse(const char *text, char *addr, size_t addrlen,
			  unsigned *port, char *err, size_t errlen);

/*
 * Build a fresh report for one scrape (caller of the callback frees it
 * with report_free()) and fill *@sp with the spool's figures. Returns 0 or
 * a negative errno.
 */
typedef int (*pmetrics_build_fn)(void *arg, struct report **out,
				 struct pmetrics_spool *sp);

struct pmetrics_server;

/*
 * pmetrics_server_new() - serve GET /metrics on @listen (see
 * pmetrics_listen_parse()) from one libmicrohttpd thread, at most
 * PMETRICS_MAX_CONNECTIONS connections, each closed after
 * PMETRICS_TIMEOUT idle seconds. @build is called from that thread, once
 * per scrape, and @extra (NULL: none) after the host's families, both with
 * @arg. Other paths answer 404, other methods 405. Returns 0, -EINVAL for
 * a bad @listen, -EADDRINUSE when it cannot listen, -ENOMEM; free with
 * pmetrics_server_free().
 */
int pmetrics_server_new(const char *listen, pmetrics_build_fn build,
			pmetrics_extra_fn extra, void *arg,
			struct pmetrics_server **out);
/* Stop serving (waits for the thread) and free. NULL is fine. */
void pmetrics_server_free(struct pmetrics_server *s);

#endif
