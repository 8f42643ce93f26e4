/* SPDX-License-Identifier: MIT */
/*
 * The responder's side of test tickets (common/ticket.h): the responder
 * keys its plans delivered, by period, and the tickets already used. A
 * planned test's REQUEST (control protocol v3) carries its claims; the
 * responder finds the key of the claimed period, checks the time window
 * and recomputes the ticket, which is that session's MAC key; once the
 * MAC checked out, the ticket is spent (one use per window).
 *
 * Windows: the planned slot [not_before, deadline) with DTICKET_SKEW_MS
 * (at most a quarter period) of clock difference allowed at each end; and,
 * because a daemon that cannot reach its collector runs its last plan
 * again a period later (docs/probe.md), the same slot shifted by k whole
 * periods for k up to DTICKET_REPLAYS, each used once. Shifted windows
 * are only accepted when they cannot overlap (slot plus skews shorter
 * than the period), so one ticket is one test per window.
 *
 * Pure state, no clock and no lock: the caller passes the time and
 * serialises access (the daemon holds its lock).
 */
#ifndef IBPULSE_DTICKET_H
#define IBPULSE_DTICKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticket.h"

#define DTICKET_KEYS 32	      /* responder keys kept, newest periods */
#define DTICKET_REPLAYS 24    /* periods a planned slot may repeat */
#define DTICKET_SKEW_MS 60000 /* clock difference tolerated, each end */
#define DTICKET_USED_MAX 4096 /* tickets remembered as spent */
#define DTICKET_ID_LEN 16

struct dticket_key {
	uint64_t period;
	uint64_t period_ms; /* length of a period */
	uint8_t key[TICKET_KEY_LEN];
};

struct dticket_spent {
	uint8_t id[DTICKET_ID_LEN]; /* the ticket's first bytes */
	uint32_t window;
	uint64_t until_ms; /* forgotten after its window ended */
};

struct dticket {
	struct dticket_key keys[DTICKET_KEYS];
	size_t n_keys;
	struct dticket_spent spent[DTICKET_USED_MAX];
	size_t n_spent;
};

/* What dticket_expect() found for a REQUEST's claims. */
struct dticket_check {
	uint8_t ticket[TICKET_KEY_LEN]; /* the session's MAC key */
	uint32_t window;   /* 0: the planned slot; k: k periods on */
	uint64_t until_ms; /* end of that window, skew included */
};

/* Empty: no keys, nothing spent. */
void dticket_init(struct dticket *t);

/*
 * dticket_add_key() - keep @key for @period (@period_ms long), replacing
 * the one held for that period; when full, the oldest period goes.
 */
void dticket_add_key(struct dticket *t, uint64_t period, uint64_t period_ms,
		     const uint8_t key[TICKET_KEY_LEN]);

/*
 * dticket_expect() - may claims @c be presented at @now_ms (epoch)? On 0,
 * @out holds the ticket to check the REQUEST's MAC with. Else @why says
 * why: -ENOKEY no key for the claimed period (the collector's plan has
 * not delivered it, or it is too old), -EKEYEXPIRED outside every window
 * (too early, or past the last), -EINVAL claims that cannot be (deadline
 * before not_before), -EIO the HMAC failed.
 */
int dticket_expect(const struct dticket *t, const struct ticket_claims *c,
		   uint64_t now_ms, struct dticket_check *out, char *why,
		   size_t len);

/*
 * dticket_spend() - the ticket of @chk is used now: 0 the first time in
 * its window (remembered until the window ends), -EALREADY when it was
 * used before (a replay), -ENOSPC when DTICKET_USED_MAX tickets are in
 * their windows (refused rather than forgetting one).
 */
int dticket_spend(struct dticket *t, const struct dticket_check *chk,
		  uint64_t now_ms);

#endif
