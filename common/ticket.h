/* SPDX-License-Identifier: MIT */
/*
 * Test tickets: how a responder admits exactly the tests the collector
 * planned, without a secret shared by the fleet (docs/probe.md, "Who may
 * test"). The collector holds one master key. For each responder host and
 * plan period it derives a responder key,
 *     K = HMAC-SHA256(master, "ibpulse-responder-key-v1" | host | period),
 * and gives it to that host only, in its own plan (over its authenticated
 * channel). For each planned test it mints a ticket for the initiator,
 *     T = HMAC-SHA256(K, "ibpulse-ticket-v1" | plan id | initiator host |
 *         initiator device | port | responder device | port | period |
 *         not_before_ms | deadline_ms),
 * every string length-prefixed, every number big-endian. The initiator
 * sends the claims in its REQUEST and MACs the REQUEST with T (control
 * protocol v3); the responder recomputes T from the claims with its K, so
 * the ticket itself never crosses the wire and a claim changed in transit
 * gives another T and a failed MAC. Time window and one use per ticket
 * are the responder's checks (probe/daemon/dticket.h). Pure functions here: the
 * same inputs give the same bytes on both ends.
 */
#ifndef IBPULSE_TICKET_H
#define IBPULSE_TICKET_H

#include <stddef.h>
#include <stdint.h>

#define TICKET_KEY_LEN 32
#define TICKET_STR_MAX 64 /* bytes of a plan id, host or device name */
#define TICKET_MASTER_MIN 16

/* What a ticket vouches for. Strings are NUL-terminated. */
struct ticket_claims {
	char plan_id[TICKET_STR_MAX + 1];
	char initiator[TICKET_STR_MAX + 1]; /* host */
	char initiator_device[TICKET_STR_MAX + 1];
	unsigned initiator_port;
	char responder_device[TICKET_STR_MAX + 1];
	unsigned responder_port;
	uint64_t period; /* plan period number: which responder key */
	uint64_t not_before_ms, deadline_ms; /* epoch milliseconds */
};

/*
 * ticket_responder_key() - the key of responder @host for plan period
 * @period, from the collector's @master key (@len bytes, at least
 * TICKET_MASTER_MIN). 0, or -EINVAL for a bad argument, -EIO when the
 * HMAC failed.
 */
int ticket_responder_key(const uint8_t *master, size_t len, const char *host,
			 uint64_t period, uint8_t key[TICKET_KEY_LEN]);

/*
 * ticket_mint() - the ticket for @c under responder key @key. 0, -EINVAL
 * for a string longer than TICKET_STR_MAX or a port above 255, -EIO.
 */
int ticket_mint(const uint8_t key[TICKET_KEY_LEN],
		const struct ticket_claims *c, uint8_t ticket[TICKET_KEY_LEN]);

/* Tickets and keys travel as hex: hex.h. */

/*
 * ticket_master_load() - the collector's master key from @path (at least
 * TICKET_MASTER_MIN bytes, a trailing newline dropped; its content is the
 * key). A missing file is created with 32 random bytes in hex, mode 0600,
 * so a collector is keyed from its first start and keeps its key across
 * restarts. 0 with *@len set, or a negative errno with the reason in @err.
 */
int ticket_master_load(const char *path, uint8_t *key, size_t cap, size_t *len,
		       char *err, size_t errlen);

#endif
