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
 * configured one is refused.
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
};

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_admit_refuses),
		cmocka_unit_test(test_admit_picks_device),
		cmocka_unit_test(test_no_hooks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
