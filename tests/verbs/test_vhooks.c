// SPDX-License-Identifier: MIT
/*
 * Unit tests for the responder's hooks (vt_serve_cfg.hooks), the parts
 * that run without an RDMA device: vt_serve_conn() on one end of a socket
 * pair, a v2 client spoken with the codec on the other. open() gets a
 * private copy of the configuration and its state reaches the other
 * hooks; admit() sees the device, port and parameters the REQUEST asked
 * for and its refusal reaches the client as REFUSE with its reason, the
 * session then closing unadmitted; an admitted request goes on to open
 * the device admit() chose; without hooks a named device other than the
 * configured one is refused. Tickets (v3): the ticket hook sees the claims
 * with the REQUEST's own port as the responder's and gives the MAC key; a
 * REQUEST MAC'd with it reaches admit() as VT_AUTH_TICKET, one MAC'd with
 * another key is refused before admit() ("auth"), and without a ticket
 * hook every ticket is refused ("ticket").
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctrl.h"
#include "vtest.h"

#define STEP_NS 20000000000ull /* generous for a loaded machine */

/* What the hooks saw. */
struct seen {
	int opened, admits, closes, counters;
	bool admitted;
	int close_status;
	char device[VT_NAME_MAX];
	unsigned port, version;
	uint32_t size;
	double timeout_in_copy;
	int refuse;		/* admit's answer: 0 or a negative errno */
	const char *use_device; /* admit's choice when it admits */
	int tickets;		/* ticket() calls */
	int ticket_refuse;	/* ticket's answer */
	enum vt_auth auth;	/* what admit() was told */
	struct ticket_claims claims;
};

/* The ticket the hook hands out, and the one a forger guesses. */
static const uint8_t ticket_key[TICKET_KEY_LEN] =
	"0123456789abcdef0123456789abcde";

static int h_open(void *arg, struct vt_serve_cfg *cfg, void **sess)
{
	struct seen *s = arg;

	s->opened++;
	cfg->dev.timeout_s = 3; /* the copy, not the caller's */
	s->timeout_in_copy = cfg->dev.timeout_s;
	*sess = s;
	return 0;
}

static int h_admit(void *sess, const struct vt_serve_ask *ask,
		   struct vt_params *dev, char *why, size_t len)
{
	struct seen *s = sess;

	s->admits++;
	s->auth = ask->auth;
	snprintf(s->device, sizeof(s->device), "%s", ask->device);
	s->port = ask->ib_port;
	s->version = ask->version;
	s->size = ask->params->size;
	if (s->refuse) {
		snprintf(why, len, "no %s/%u here; valid: rxe0/1", ask->device,
			 ask->ib_port);
		return s->refuse;
	}
	snprintf(dev->device, sizeof(dev->device), "%s", s->use_device);
	return 0;
}

static int h_ticket(void *sess, const struct vt_serve_ask *ask,
		    uint8_t key[TICKET_KEY_LEN], char *why, size_t len)
{
	struct seen *s = sess;

	s->tickets++;
	s->claims = *ask->ticket;
	if (s->ticket_refuse) {
		snprintf(why, len, "ticket of plan %s expired",
			 ask->ticket->plan_id);
		return s->ticket_refuse;
	}
	memcpy(key, ticket_key, TICKET_KEY_LEN);
	return 0;
}

static int h_counters(void *sess, const char *device, unsigned port,
		      struct vt_portctr *c)
{
	struct seen *s = sess;

	s->counters++;
	memset(c, 0, sizeof(*c));
	return 0;
}

static void h_close(void *sess, bool admitted, const struct vt_result *res)
{
	struct seen *s = sess;

	s->closes++;
	s->admitted = admitted;
	s->close_status = res->status;
}

struct server {
	struct vt_serve_cfg cfg;
	int fd;
	struct vt_result res;
};

static void *serve(void *arg)
{
	struct server *sv = arg;

	vt_serve_conn(&sv->cfg, sv->fd, &sv->res);
	return NULL;
}

/* Send the @n-byte message in @buf, then receive the answer into @buf. */
static void round_trip(int fd, uint8_t *buf, int n, struct ctrl_hdr *h)
{
	assert_true(n > 0);
	assert_int_equal(
		ctrl_send(fd, buf, (size_t)n, ctrl_now_ns() + STEP_NS, NULL),
		0);
	assert_int_equal(ctrl_recv(fd, h, buf, ctrl_now_ns() + STEP_NS, NULL),
			 0);
}

/* HELLO, CHALLENGE, REQUEST for @device/@port; the REFUSE's reason. */
static int ask(int fd, const char *device, unsigned port, char *why, size_t len)
{
	static uint8_t buf[CTRL_HDR_LEN + CTRL_MAX_PAYLOAD];
	struct ctrl_hello hello = {{0}};
	struct ctrl_request q = {.version = 2,
				 .test = VT_WRITE_BW,
				 .qps = 1,
				 .size = 4096,
				 .tx_depth = 128,
				 .iters = 100};
	struct ctrl_refuse r;
	struct ctrl_hdr h;

	round_trip(fd, buf, ctrl_hello_encode(&hello, buf, sizeof(buf)), &h);
	assert_int_equal(h.type, CTRL_CHALLENGE);
	assert_int_equal(h.version, 2);
	q.ep.pkey = 0xffff;
	q.ep.mtu = 3;
	q.ep.gid_type = 2;
	q.ep.link_layer = 2;
	ctrl_strlcpy(q.device, device, sizeof(q.device));
	q.ib_port = (uint8_t)port;
	round_trip(fd, buf, ctrl_request_encode(&q, buf, sizeof(buf)), &h);
	assert_int_equal(h.type, CTRL_REFUSE);
	assert_int_equal(ctrl_refuse_decode(buf, h.len, &r), 0);
	ctrl_strlcpy(why, r.reason, len);
	return r.code;
}

/* One session against @sv; returns the refusal's code, reason in @why. */
static int session(struct server *sv, const char *device, unsigned port,
		   char *why, size_t len)
{
	pthread_t tid;
	int pair[2], code;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
	sv->fd = pair[1];
	assert_int_equal(pthread_create(&tid, NULL, serve, sv), 0);
	code = ask(pair[0], device, port, why, len);
	close(pair[0]);
	pthread_join(tid, NULL);
	close(pair[1]);
	return code;
}

/*
 * A v3 session: HELLO, CHALLENGE, REQUEST with a ticket's claims for
 * mlx5_1/1, MAC'd with @key; the REFUSE's code, its reason in @why.
 */
static int ask_v3(struct server *sv, const uint8_t *key, char *why, size_t len)
{
	static uint8_t b[CTRL_HDR_LEN + CTRL_MAX_PAYLOAD];
	struct ctrl_hello hello = {{1, 2, 3}};
	struct ctrl_request q = {.version = 3,
				 .test = VT_WRITE_BW,
				 .qps = 1,
				 .size = 4096,
				 .tx_depth = 128,
				 .iters = 100,
				 .ib_port = 1};
	struct ctrl_challenge ch;
	struct ctrl_refuse r;
	struct ctrl_hdr h;
	pthread_t tid;
	int pair[2], n;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
	sv->fd = pair[1];
	assert_int_equal(pthread_create(&tid, NULL, serve, sv), 0);
	n = ctrl_hello_encode(&hello, b, sizeof(b));
	ctrl_hdr_set_version(b, 3); /* a client speaks 3 from HELLO on */
	round_trip(pair[0], b, n, &h);
	assert_int_equal(h.type, CTRL_CHALLENGE);
	assert_int_equal(h.version, 3);
	assert_int_equal(ctrl_challenge_decode(b, h.len, &ch), 0);
	q.ep.pkey = 0xffff;
	q.ep.mtu = 3;
	q.ep.gid_type = 2;
	q.ep.link_layer = 2;
	ctrl_strlcpy(q.device, "mlx5_1", sizeof(q.device));
	ctrl_strlcpy(q.ticket.plan_id, "p100-00000000000000aa",
		     sizeof(q.ticket.plan_id));
	ctrl_strlcpy(q.ticket.host, "node01", sizeof(q.ticket.host));
	ctrl_strlcpy(q.ticket.device, "mlx5_0", sizeof(q.ticket.device));
	q.ticket.ib_port = 1;
	q.ticket.period = 7;
	q.ticket.not_before_ms = 1000;
	q.ticket.deadline_ms = 2000;
	n = ctrl_request_encode(&q, b, sizeof(b));
	assert_true(n > CTRL_HDR_LEN + CTRL_MAC_LEN);
	assert_int_equal(ctrl_mac(key, TICKET_KEY_LEN,
				  "ibpulse-verbs-v1 request", ch.nonce,
				  hello.nonce, b + CTRL_HDR_LEN,
				  (size_t)n - CTRL_HDR_LEN - CTRL_MAC_LEN,
				  b + n - CTRL_MAC_LEN),
			 0);
	round_trip(pair[0], b, n, &h);
	assert_int_equal(h.type, CTRL_REFUSE);
	assert_int_equal(h.version, 3);
	assert_int_equal(ctrl_refuse_decode(b, h.len, &r), 0);
	ctrl_strlcpy(why, r.reason, len);
	close(pair[0]);
	pthread_join(tid, NULL);
	close(pair[1]);
	return r.code;
}

static void server_init(struct server *sv, struct seen *s, bool hooks)
{
	memset(sv, 0, sizeof(*sv));
	vt_params_default(&sv->cfg.dev);
	vt_limits_default(&sv->cfg.limits);
	sv->cfg.dev.timeout_s = 10;
	if (hooks)
		sv->cfg.hooks = (struct vt_serve_hooks){.arg = s,
							.open = h_open,
							.admit = h_admit,
							.ticket = h_ticket,
							.counters = h_counters,
							.close = h_close};
}

static void test_admit_refuses(void **state)
{
	struct seen s = {.refuse = -ENODEV};
	struct server sv;
	char why[CTRL_REASON_MAX + 1];

	server_init(&sv, &s, true);
	assert_int_equal(session(&sv, "mlx5_7", 2, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "no mlx5_7/2 here; valid: rxe0/1");
	assert_int_equal(s.opened, 1);
	assert_int_equal(s.admits, 1);
	assert_string_equal(s.device, "mlx5_7");
	assert_int_equal(s.port, 2);
	assert_int_equal(s.version, 2);
	assert_int_equal(s.size, 4096);
	assert_int_equal(s.closes, 1);
	assert_false(s.admitted);
	assert_int_equal(s.close_status, -ENODEV);
	assert_int_equal(s.counters, 0); /* no device, no test */
	/* open() changed its copy, not the caller's configuration. */
	assert_true(s.timeout_in_copy == 3);
	assert_true(sv.cfg.dev.timeout_s == 10);
}

static void test_admit_picks_device(void **state)
{
	struct seen s = {.use_device = "nosuch_dev9"};
	struct server sv;
	char why[CTRL_REASON_MAX + 1];

	server_init(&sv, &s, true);
	assert_true(session(&sv, "", 0, why, sizeof(why)) < 0);
	/* Past admission: the device step fails on admit()'s choice. */
	assert_non_null(strstr(why, "device is not usable"));
	assert_non_null(strstr(sv.res.error, "nosuch_dev9"));
	assert_int_equal(s.admits, 1);
	assert_string_equal(s.device, "");
	assert_int_equal(s.port, 0);
	assert_int_equal(s.closes, 1);
	assert_true(s.admitted);
}

static void test_no_hooks(void **state)
{
	struct server sv;
	char why[CTRL_REASON_MAX + 1];

	server_init(&sv, NULL, false);
	snprintf(sv.cfg.dev.device, sizeof(sv.cfg.dev.device), "rxe0");
	assert_int_equal(session(&sv, "mlx5_0", 0, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "no device mlx5_0 here: this responder "
				 "serves rxe0 port 1");
	assert_int_equal(session(&sv, "", 2, why, sizeof(why)), -ENODEV);
	assert_string_equal(why,
			    "no port 2 here: this responder serves port 1");
	/* Its own device and port pass to the device step. */
	assert_true(session(&sv, "rxe0", 1, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "device is not usable"));
}

static void test_tickets(void **state)
{
	struct seen s = {.use_device = "nosuch_dev9"};
	uint8_t forged[TICKET_KEY_LEN];
	struct server sv;
	char why[CTRL_REASON_MAX + 1];

	server_init(&sv, &s, true);
	/* The right ticket: admitted as such, on to the device step. */
	assert_true(ask_v3(&sv, ticket_key, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "device is not usable"));
	assert_int_equal(s.tickets, 1);
	assert_int_equal(s.admits, 1);
	assert_int_equal(s.auth, VT_AUTH_TICKET);
	assert_true(s.admitted);
	assert_null(sv.res.refused);
	/* The claims as minted: the responder's port is the REQUEST's. */
	assert_string_equal(s.claims.plan_id, "p100-00000000000000aa");
	assert_string_equal(s.claims.initiator, "node01");
	assert_string_equal(s.claims.initiator_device, "mlx5_0");
	assert_int_equal(s.claims.initiator_port, 1);
	assert_string_equal(s.claims.responder_device, "mlx5_1");
	assert_int_equal(s.claims.responder_port, 1);
	assert_true(s.claims.period == 7 && s.claims.not_before_ms == 1000 &&
		    s.claims.deadline_ms == 2000);
	/* A REQUEST MAC'd with anything else: refused before admission. */
	memcpy(forged, ticket_key, sizeof(forged));
	forged[0] ^= 1;
	assert_int_equal(ask_v3(&sv, forged, why, sizeof(why)), -EACCES);
	assert_non_null(strstr(why, "authentication failed"));
	assert_int_equal(s.admits, 1);
	assert_false(s.admitted);
	assert_string_equal(sv.res.refused, "auth");
	/* The hook's refusal reaches the client with its reason. */
	s.ticket_refuse = -EKEYEXPIRED;
	assert_int_equal(ask_v3(&sv, ticket_key, why, sizeof(why)),
			 -EKEYEXPIRED);
	assert_string_equal(why,
			    "ticket of plan p100-00000000000000aa expired");
	assert_string_equal(sv.res.refused, "ticket");
	assert_int_equal(s.admits, 1);
	/* No ticket hook: no ticket is taken. */
	server_init(&sv, NULL, false);
	assert_int_equal(ask_v3(&sv, ticket_key, why, sizeof(why)), -EACCES);
	assert_non_null(strstr(why, "takes no tickets"));
	assert_string_equal(sv.res.refused, "ticket");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_admit_refuses),
		cmocka_unit_test(test_admit_picks_device),
		cmocka_unit_test(test_no_hooks),
		cmocka_unit_test(test_tickets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
