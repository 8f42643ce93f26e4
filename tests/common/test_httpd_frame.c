// SPDX-License-Identifier: MIT
/*
 * Unit tests for the front's request framing (common/httpd_frame.c):
 * sound requests pass whole however the bytes are split (one at a time,
 * or several requests at once), and each kind of bad framing that
 * libmicrohttpd 0.9.75 answered itself (in HTML, or twice) is refused
 * with its status before any of its bytes count as sound.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "httpd_int.h"

/* Feed @s @step bytes at a time: the bytes passed, or -status. */
static long feed(const char *s, size_t step, struct frame *f)
{
	size_t n = strlen(s), done = 0, have = 0, ok;

	frame_init(f, 512);
	while (have < n) {
		have += step;
		if (have > n)
			have = n;
		if (frame_scan(f, s + done, have - done, &ok))
			return -(long)f->status;
		done += ok;
	}
	return (long)done;
}

static void test_sound_requests_pass_whole(void **state)
{
	static const char *const ok[] = {
		"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /x HTTP/1.0\n\n",
		"POST /r HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
		"GET /next HTTP/1.1\r\nHost: a\r\n\r\n",
		"POST /r HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:  chunked "
		"\r\n"
		"\r\n5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-T: "
		"1\r\n\r\n",
	};
	struct frame f;

	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++)
		for (size_t step = 1; step <= strlen(ok[i]); step += 7) {
			assert_int_equal(feed(ok[i], step, &f),
					 (long)strlen(ok[i]));
			assert_int_equal(f.state, FRAME_HEAD);
		}
}

static void test_bad_framing_is_refused(void **state)
{
	static const struct {
		const char *req;
		long status;
	} bad[] = {
		{"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", -400},
		{"POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n", -400},
		{"POST / HTTP/1.1\r\nContent-Length: +571\r\n\r\n", -400},
		{"POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", -400},
		{"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n"
		 "\r\n",
		 -413},
		{"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n"
		 "\r\n",
		 -400},
		{"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: "
		 "chunked\r\n\r\n",
		 -400},
		{"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", -400},
		{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		 -400},
		{"POST / HTTP/1.1\r\nTransfer-Encoding: "
		 "chunked\r\n\r\n1\r\naXY",
		 -400},
		{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
		 "NoColon\r\n\r\n",
		 -400},
		{"GET / HTTP/2.0\r\n\r\n", -505},
		{"GET / HTTP/1.1\r\nX-A: a\rb\r\n\r\n", -400},
		{"GET / HTTP/1.1\r\nX-A: a\x01\r\n\r\n", -400},
		{"GET / HTTP/1.1\r\n folded\r\n\r\n", -400},
		{"GET / HTTP/1.1\r\nNoColon\r\n\r\n", -400},
		{"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", -400},
		{"GET /\r\n\r\n", -400},
		{"\x01\x02 garbage\r\n\r\n", -400},
	};
	struct frame f;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		for (size_t step = 1; step <= 64; step += 63) {
			assert_int_equal(feed(bad[i].req, step, &f),
					 bad[i].status);
			assert_true(f.reason[0]);
		}
}

static void test_sizes(void **state)
{
	char line[1024], head[1024];
	struct frame f;

	memset(line, 'a', sizeof(line));
	memcpy(line, "GET /", 5);
	line[sizeof(line) - 1] = '\0';
	assert_int_equal(feed(line, 100, &f), -414);
	snprintf(head, sizeof(head), "GET / HTTP/1.1\r\nX: %0600d\r\n\r\n", 0);
	assert_int_equal(feed(head, 100, &f), -431);
	/* a sound request after the bad one is not looked at */
	assert_int_equal(feed("GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/9.9"
			      "\r\n\r\n",
			      1, &f),
			 -505);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sound_requests_pass_whole),
		cmocka_unit_test(test_bad_framing_is_refused),
		cmocka_unit_test(test_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
