// SPDX-License-Identifier: MIT
/*
 * The responder's ticket state (dticket.h): a small table of responder
 * keys by period, the window arithmetic, and the table of spent tickets
 * that makes each ticket good for one test per window.
 */
#include "dticket.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void dticket_init(struct dticket *t)
{
	explicit_bzero(t->keys, sizeof(t->keys));
	t->n_keys = 0;
	t->n_spent = 0;
}

void dticket_add_key(struct dticket *t, uint64_t period, uint64_t period_ms,
		     const uint8_t key[TICKET_KEY_LEN])
{
	struct dticket_key *slot = NULL;

	for (size_t i = 0; i < t->n_keys && !slot; i++)
		if (t->keys[i].period == period)
			slot = &t->keys[i];
	if (!slot && t->n_keys < DTICKET_KEYS)
		slot = &t->keys[t->n_keys++];
	if (!slot) {
		/* Full: the oldest period goes, unless this one is older. */
		slot = &t->keys[0];
		for (size_t i = 1; i < t->n_keys; i++)
			if (t->keys[i].period < slot->period)
				slot = &t->keys[i];
		if (slot->period > period)
			return;
	}
	slot->period = period;
	slot->period_ms = period_ms;
	memcpy(slot->key, key, TICKET_KEY_LEN);
}

static const struct dticket_key *dt_key(const struct dticket *t,
					uint64_t period)
{
	for (size_t i = 0; i < t->n_keys; i++)
		if (t->keys[i].period == period)
			return &t->keys[i];
	return NULL;
}

/*
 * The window of @c that @now_ms falls in: k periods after the planned
 * slot, or -EKEYEXPIRED. The skew is at most a quarter period; shifted
 * windows only when they cannot overlap.
 */
static int dt_window(const struct ticket_claims *c, uint64_t P, uint64_t now,
		     uint32_t *k, uint64_t *until, char *why, size_t len)
{
	uint64_t skew = DTICKET_SKEW_MS < P / 4 ? DTICKET_SKEW_MS : P / 4;
	uint64_t start = c->not_before_ms > skew ? c->not_before_ms - skew : 0;
	uint64_t slot = c->deadline_ms - c->not_before_ms + 2 * skew;
	uint64_t n = 0;

	if (now < start) {
		snprintf(why, len,
			 "ticket of plan %s not valid before %.3f (now %.3f)",
			 c->plan_id, (double)start / 1000, (double)now / 1000);
		return -EKEYEXPIRED;
	}
	if (P && slot < P)
		n = (now - start) / P;
	if (n > DTICKET_REPLAYS || now > c->deadline_ms + skew + n * P) {
		snprintf(why, len,
			 "ticket of plan %s expired: its slot was %.3f..%.3f%s "
			 "(now %.3f)",
			 c->plan_id, (double)start / 1000,
			 (double)(c->deadline_ms + skew) / 1000,
			 P && slot < P ? ", again each period after" : "",
			 (double)now / 1000);
		return -EKEYEXPIRED;
	}
	*k = (uint32_t)n;
	*until = c->deadline_ms + skew + n * P;
	return 0;
}

int dticket_expect(const struct dticket *t, const struct ticket_claims *c,
		   uint64_t now_ms, struct dticket_check *out, char *why,
		   size_t len)
{
	const struct dticket_key *k = dt_key(t, c->period);
	int rc;

	memset(out, 0, sizeof(*out));
	if (c->deadline_ms <= c->not_before_ms) {
		snprintf(why, len,
			 "ticket of plan %s: deadline before its start",
			 c->plan_id);
		return -EINVAL;
	}
	if (!k) {
		snprintf(why, len,
			 "no responder key for period %llu here (plan %s): "
			 "the collector has not given it to this host",
			 (unsigned long long)c->period, c->plan_id);
		return -ENOKEY;
	}
	rc = dt_window(c, k->period_ms, now_ms, &out->window, &out->until_ms,
		       why, len);
	if (rc)
		return rc;
	rc = ticket_mint(k->key, c, out->ticket);
	if (rc)
		snprintf(why, len, "ticket of plan %s: cannot compute it",
			 c->plan_id);
	return rc;
}

int dticket_spend(struct dticket *t, const struct dticket_check *chk,
		  uint64_t now_ms)
{
	size_t keep = 0;
	bool seen = false;

	/* Forget what has ended; look for this one among the rest. */
	for (size_t i = 0; i < t->n_spent; i++) {
		const struct dticket_spent s = t->spent[i];

		if (s.until_ms < now_ms)
			continue;
		if (s.window == chk->window &&
		    !memcmp(s.id, chk->ticket, DTICKET_ID_LEN))
			seen = true;
		t->spent[keep++] = s;
	}
	t->n_spent = keep;
	if (seen)
		return -EALREADY;
	if (t->n_spent == DTICKET_USED_MAX)
		return -ENOSPC;
	memcpy(t->spent[t->n_spent].id, chk->ticket, DTICKET_ID_LEN);
	t->spent[t->n_spent].window = chk->window;
	t->spent[t->n_spent].until_ms = chk->until_ms;
	t->n_spent++;
	return 0;
}
