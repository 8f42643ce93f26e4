// SPDX-License-Identifier: MIT
/*
 * Unit tests of test tickets: minting (common/ticket.c, against an
 * independent HMAC-SHA256 computed with Python's hmac module) and the
 * responder's checks (probe/daemon/dticket.c). A good ticket passes and is
 * spent; the same ticket again is a replay; claims changed anywhere (the
 * initiator host, its port, the responder's port, the slot) give another
 * ticket, so the REQUEST's MAC fails; a ticket outside its slot is
 * expired (too early, too late, or past the last replayed period); a
 * period whose key the plan never brought is refused; shifted windows
 * (the collector away) each take one use, and only when they cannot
 * overlap; the key table and the spent table stay bounded.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dticket.h"
#include "hex.h"
#include "ticket.h"

static const uint8_t master[] = "0123456789abcdef0123456789abcdef";
#define MASTER_LEN 32
#define T0 151200000000ull /* not_before, epoch ms */
#define HOUR 3600000ull

/* The claims of one planned test, minted for responder node02. */
static struct ticket_claims claims(void)
{
	struct ticket_claims c = {.initiator_port = 1,
				  .responder_port = 2,
				  .period = 42,
				  .not_before_ms = T0,
				  .deadline_ms = T0 + 30000};

	snprintf(c.plan_id, sizeof(c.plan_id), "p151200-00000000deadbeef");
	snprintf(c.initiator, sizeof(c.initiator), "node01");
	snprintf(c.initiator_device, sizeof(c.initiator_device), "mlx5_0");
	snprintf(c.responder_device, sizeof(c.responder_device), "mlx5_1");
	return c;
}

/* What the collector does: node02's key for period 42, the ticket. */
static void mint(const struct ticket_claims *c, uint8_t key[TICKET_KEY_LEN],
		 uint8_t tk[TICKET_KEY_LEN])
{
	assert_int_equal(ticket_responder_key(master, MASTER_LEN, "node02",
					      c->period, key),
			 0);
	assert_int_equal(ticket_mint(key, c, tk), 0);
}

/* A responder holding node02's key for period 42 (hour-long periods). */
static void responder(struct dticket *t, uint64_t period_ms)
{
	struct ticket_claims c = claims();
	uint8_t key[TICKET_KEY_LEN], tk[TICKET_KEY_LEN];

	mint(&c, key, tk);
	dticket_init(t);
	dticket_add_key(t, 42, period_ms, key);
}

static void test_known_answer(void **state)
{
	struct ticket_claims c = claims();
	uint8_t key[TICKET_KEY_LEN], tk[TICKET_KEY_LEN];
	char hex[2 * TICKET_KEY_LEN + 1];

	mint(&c, key, tk);
	hex_encode(key, sizeof(key), hex);
	assert_string_equal(hex, "65cf9de2870e0b4dfa26e183493b8b39"
				 "c4bfb44472cc99e22b43a9d09fabd2d9");
	hex_encode(tk, sizeof(tk), hex);
	assert_string_equal(hex, "8c9183dc082082a878691a49e449fc24"
				 "1db70e32ff7ac89db519b3011f39a1a4");
	assert_int_equal(hex_decode(hex, key, sizeof(key)), 0);
	assert_memory_equal(key, tk, sizeof(tk));
	assert_int_equal(hex_decode("8c91", key, sizeof(key)), -EINVAL);
	hex[5] = 'x';
	assert_int_equal(hex_decode(hex, key, sizeof(key)), -EINVAL);
	/* Another responder, another period: another key. */
	assert_int_equal(
		ticket_responder_key(master, MASTER_LEN, "node03", 42, tk), 0);
	assert_memory_not_equal(key, tk, sizeof(tk));
	assert_int_equal(ticket_responder_key(master, 8, "node02", 42, tk),
			 -EINVAL);
}

static void test_good_then_replayed(void **state)
{
	static struct dticket t;
	struct ticket_claims c = claims();
	struct dticket_check chk;
	uint8_t key[TICKET_KEY_LEN], tk[TICKET_KEY_LEN];
	char why[200];

	mint(&c, key, tk);
	responder(&t, HOUR);
	assert_int_equal(
		dticket_expect(&t, &c, T0 + 1000, &chk, why, sizeof(why)), 0);
	assert_memory_equal(chk.ticket, tk, sizeof(tk));
	assert_int_equal(chk.window, 0);
	assert_int_equal(dticket_spend(&t, &chk, T0 + 1000), 0);
	/* The same ticket again, seconds later: a replay. */
	assert_int_equal(
		dticket_expect(&t, &c, T0 + 5000, &chk, why, sizeof(why)), 0);
	assert_int_equal(dticket_spend(&t, &chk, T0 + 5000), -EALREADY);
	assert_int_equal(t.n_spent, 1);
}

static void test_changed_claims(void **state)
{
	static struct dticket t;
	struct ticket_claims good = claims(), c;
	struct dticket_check chk;
	uint8_t key[TICKET_KEY_LEN], tk[TICKET_KEY_LEN];
	char why[200];

	mint(&good, key, tk);
	responder(&t, HOUR);
	for (int i = 0; i < 6; i++) {
		c = good;
		switch (i) {
		case 0: /* another initiator */
			snprintf(c.initiator, sizeof(c.initiator), "node09");
			break;
		case 1:
			c.initiator_port = 2;
			break;
		case 2: /* another port of the responder */
			c.responder_port = 1;
			break;
		case 3:
			snprintf(c.responder_device, sizeof(c.responder_device),
				 "mlx5_0");
			break;
		case 4: /* a longer slot */
			c.deadline_ms += 60000;
			break;
		default:
			snprintf(c.plan_id, sizeof(c.plan_id),
				 "p151200-00000000deadbeee");
			break;
		}
		assert_int_equal(dticket_expect(&t, &c, T0 + 1000, &chk, why,
						sizeof(why)),
				 0);
		/* The responder's ticket is not the initiator's: MAC fails. */
		assert_memory_not_equal(chk.ticket, tk, sizeof(tk));
	}
}

static void test_expired(void **state)
{
	static struct dticket t;
	struct ticket_claims c = claims();
	struct dticket_check chk;
	char why[200];

	responder(&t, HOUR);
	/* 60 s of clock difference allowed at each end of the slot. */
	assert_int_equal(
		dticket_expect(&t, &c, T0 - 59000, &chk, why, sizeof(why)), 0);
	assert_int_equal(
		dticket_expect(&t, &c, T0 - 61000, &chk, why, sizeof(why)),
		-EKEYEXPIRED);
	assert_non_null(strstr(why, "not valid before"));
	assert_int_equal(dticket_expect(&t, &c, T0 + 30000 + 59000, &chk, why,
					sizeof(why)),
			 0);
	assert_int_equal(dticket_expect(&t, &c, T0 + 30000 + 61000, &chk, why,
					sizeof(why)),
			 -EKEYEXPIRED);
	assert_non_null(strstr(why, "expired"));
	/* A slot that ends before it starts. */
	c.deadline_ms = c.not_before_ms;
	assert_int_equal(dticket_expect(&t, &c, T0, &chk, why, sizeof(why)),
			 -EINVAL);
}

static void test_no_key(void **state)
{
	static struct dticket t;
	struct ticket_claims c = claims();
	struct dticket_check chk;
	char why[200];

	dticket_init(&t);
	assert_int_equal(dticket_expect(&t, &c, T0, &chk, why, sizeof(why)),
			 -ENOKEY);
	responder(&t, HOUR);
	c.period = 43;
	assert_int_equal(dticket_expect(&t, &c, T0, &chk, why, sizeof(why)),
			 -ENOKEY);
	assert_non_null(strstr(why, "period 43"));
}

/* The collector is away: the slot again a period later, once each. */
static void test_replayed_periods(void **state)
{
	static struct dticket t;
	struct ticket_claims c = claims();
	struct dticket_check chk;
	uint8_t key[TICKET_KEY_LEN], tk[TICKET_KEY_LEN];
	char why[200];

	mint(&c, key, tk);
	responder(&t, HOUR);
	assert_int_equal(dticket_expect(&t, &c, T0 + HOUR + 1000, &chk, why,
					sizeof(why)),
			 0);
	assert_int_equal(chk.window, 1);
	assert_memory_equal(chk.ticket, tk, sizeof(tk));
	assert_int_equal(dticket_spend(&t, &chk, T0 + HOUR + 1000), 0);
	assert_int_equal(dticket_spend(&t, &chk, T0 + HOUR + 2000), -EALREADY);
	/* Between two windows, and past the last: expired. */
	assert_int_equal(
		dticket_expect(&t, &c, T0 + HOUR / 2, &chk, why, sizeof(why)),
		-EKEYEXPIRED);
	assert_int_equal(dticket_expect(&t, &c,
					T0 + DTICKET_REPLAYS * HOUR + 1000,
					&chk, why, sizeof(why)),
			 0);
	assert_int_equal(
		dticket_expect(&t, &c, T0 + (DTICKET_REPLAYS + 1) * HOUR + 1000,
			       &chk, why, sizeof(why)),
		-EKEYEXPIRED);
	/*
	 * 10 s periods (tests): the skew is a quarter period, and the 30 s
	 * slot would overlap the next window, so no shifted windows.
	 */
	responder(&t, 10000);
	assert_int_equal(dticket_expect(&t, &c, T0 + 30000 + 2000, &chk, why,
					sizeof(why)),
			 0);
	assert_int_equal(dticket_expect(&t, &c, T0 + 30000 + 3000, &chk, why,
					sizeof(why)),
			 -EKEYEXPIRED);
	assert_int_equal(dticket_expect(&t, &c, T0 + 40000 + 1000, &chk, why,
					sizeof(why)),
			 -EKEYEXPIRED);
}

static void test_bounded(void **state)
{
	static struct dticket t;
	uint8_t key[TICKET_KEY_LEN] = {1};
	struct dticket_check chk = {.until_ms = T0 + 1000};

	dticket_init(&t);
	for (uint64_t p = 100; p < 100 + DTICKET_KEYS + 5; p++)
		dticket_add_key(&t, p, HOUR, key);
	assert_int_equal(t.n_keys, DTICKET_KEYS);
	/* The oldest went; one older than all is not taken. */
	dticket_add_key(&t, 7, HOUR, key);
	for (size_t i = 0; i < t.n_keys; i++)
		assert_true(t.keys[i].period >= 105);
	/* A key given again replaces, not adds. */
	dticket_add_key(&t, 120, HOUR, key);
	assert_int_equal(t.n_keys, DTICKET_KEYS);
	for (uint32_t i = 0; i < DTICKET_USED_MAX; i++) {
		memcpy(chk.ticket, &i, sizeof(i));
		assert_int_equal(dticket_spend(&t, &chk, T0), 0);
	}
	chk.ticket[8] = 1;
	assert_int_equal(dticket_spend(&t, &chk, T0), -ENOSPC);
	/* Once their windows ended they are forgotten. */
	assert_int_equal(dticket_spend(&t, &chk, T0 + 2000), 0);
	assert_int_equal(t.n_spent, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_answer),
		cmocka_unit_test(test_good_then_replayed),
		cmocka_unit_test(test_changed_claims),
		cmocka_unit_test(test_expired),
		cmocka_unit_test(test_no_key),
		cmocka_unit_test(test_replayed_periods),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
