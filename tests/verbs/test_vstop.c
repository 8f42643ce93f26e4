// SPDX-License-Identifier: MIT
/*
 * Unit tests for aborting a client test (vt_params.stop), the parts that
 * run without an RDMA device: a control-channel receive and a connect
 * that would wait 30 s end with -ECANCELED soon after another thread sets
 * the flag; the measured loops' watchdog reports the flag as -ECANCELED
 * "aborted"; vt_run() with the flag already set fails with -ECANCELED and
 * error "aborted". The measured loop itself is proven in the lab.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctrl.h"
#include "run.h"
#include "vtest.h"

#define LONG_NS 30000000000ull /* a deadline the tests must not reach */
#define QUICK_NS 5000000000ull /* generous bound for "soon" on a busy box */

static volatile sig_atomic_t flag;

static void *set_later(void *arg)
{
	struct timespec ts = {.tv_nsec = 200000000};

	(void)arg;
	nanosleep(&ts, NULL);
	flag = 1;
	return NULL;
}

static void test_recv_stops(void **state)
{
	uint8_t payload[CTRL_MAX_PAYLOAD];
	struct ctrl_hdr h;
	pthread_t tid;
	uint64_t t0;
	int sv[2], rc;

	(void)state;
	flag = 0;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(pthread_create(&tid, NULL, set_later, NULL), 0);
	t0 = ctrl_now_ns();
	rc = ctrl_recv(sv[0], &h, payload, t0 + LONG_NS, &flag);
	assert_int_equal(rc, -ECANCELED);
	assert_true(ctrl_now_ns() - t0 < QUICK_NS);
	pthread_join(tid, NULL);
	close(sv[0]);
	close(sv[1]);
}

/* Without a flag the same wait still ends at its deadline. */
static void test_recv_no_flag(void **state)
{
	uint8_t payload[CTRL_MAX_PAYLOAD];
	struct ctrl_hdr h;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(ctrl_recv(sv[0], &h, payload,
				   ctrl_now_ns() + 50000000ull, NULL),
			 -ETIMEDOUT);
	close(sv[0]);
	close(sv[1]);
}

static void test_connect_stops(void **state)
{
	uint64_t t0;
	int fd = -1, rc;

	(void)state;
	flag = 1;
	t0 = ctrl_now_ns();
	/* TEST-NET-1: nothing answers, the connect would wait 30 s. */
	rc = ctrl_connect("192.0.2.1", "18515", t0 + LONG_NS, &flag, &fd);
	assert_int_equal(rc, -ECANCELED);
	assert_int_equal(fd, -1);
	assert_true(ctrl_now_ns() - t0 < QUICK_NS);
}

static void test_watch_stops(void **state)
{
	struct vwatch w = {.fd = -1, .deadline_ns = UINT64_MAX, .stop = &flag};
	char why[64] = "";

	(void)state;
	flag = 0;
	assert_int_equal(vwatch_check(&w, 1, false, why, sizeof(why)), 0);
	flag = 1;
	assert_int_equal(vwatch_check(&w, 1, false, why, sizeof(why)),
			 -ECANCELED);
	assert_string_equal(why, "aborted");
}

static void test_run_stopped(void **state)
{
	struct vt_result res;
	struct vt_params p;

	(void)state;
	vt_params_default(&p);
	p.test = VT_WRITE_BW;
	flag = 1;
	p.stop = &flag;
	assert_int_equal(vt_run(&p, "192.0.2.1", NULL, &res), -ECANCELED);
	assert_int_equal(res.status, -ECANCELED);
	assert_string_equal(res.error, "aborted");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recv_stops),
		cmocka_unit_test(test_recv_no_flag),
		cmocka_unit_test(test_connect_stops),
		cmocka_unit_test(test_watch_stops),
		cmocka_unit_test(test_run_stopped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
