// SPDX-License-Identifier: MIT
/*
 * Unit tests for the report push (probe/push.c) against a small real
 * HTTP/1.1 server on a loopback ephemeral port, run in a thread: the
 * bearer token and body arrive, two pushes share one connection
 * (keep-alive), 4xx, 5xx, a refused connection and a silent server map to
 * their distinct errors, and bad token files are refused before any
 * network traffic.
 */
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"
#include "push.h"

struct server {
	int fd;
	int port;
	volatile int stop;
	int status; /* answer; 0: never answer */
	pthread_mutex_t lock;
	int connections, requests;
	char auth[256];
	char body[4096];
	pthread_t thread;
};

/* Read one request on @c into @s; 0, or -1 when the peer closed. */
static int server_request(struct server *s, int c)
{
	char buf[8192], *hdr_end, *p;
	size_t len = 0, want;
	long clen = 0;

	for (;;) {
		ssize_t n = recv(c, buf + len, sizeof(buf) - 1 - len, 0);

		if (n <= 0)
			return -1;
		len += (size_t)n;
		buf[len] = '\0';
		hdr_end = strstr(buf, "\r\n\r\n");
		if (hdr_end)
			break;
		if (len == sizeof(buf) - 1)
			return -1;
	}
	p = strcasestr(buf, "\r\nContent-Length:");
	if (p)
		clen = strtol(p + 17, NULL, 10);
	want = (size_t)(hdr_end + 4 - buf) + (size_t)clen;
	while (len < want && len < sizeof(buf) - 1) {
		ssize_t n = recv(c, buf + len, sizeof(buf) - 1 - len, 0);

		if (n <= 0)
			return -1;
		len += (size_t)n;
	}
	buf[len] = '\0';
	pthread_mutex_lock(&s->lock);
	s->requests++;
	p = strcasestr(buf, "\r\nAuthorization: ");
	s->auth[0] = '\0';
	if (p)
		snprintf(s->auth, sizeof(s->auth), "%.*s",
			 (int)strcspn(p + 17, "\r"), p + 17);
	snprintf(s->body, sizeof(s->body), "%s", hdr_end + 4);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static void server_answer(struct server *s, int c)
{
	static const char body[] =
		"{\"error\":\"devices[0].name: is required\"}";
	char resp[512];
	int n;

	n = snprintf(resp, sizeof(resp),
		     "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
		     "Content-Length: %zu\r\n\r\n%s",
		     s->status, sizeof(body) - 1, body);
	if (send(c, resp, (size_t)n, MSG_NOSIGNAL) < 0)
		return;
}

static void *server_main(void *arg)
{
	struct server *s = arg;

	while (!s->stop) {
		struct pollfd pfd = {.fd = s->fd, .events = POLLIN};
		int c;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		c = accept(s->fd, NULL, NULL);
		if (c < 0)
			continue;
		pthread_mutex_lock(&s->lock);
		s->connections++;
		pthread_mutex_unlock(&s->lock);
		while (!s->stop && server_request(s, c) == 0) {
			if (!s->status)
				continue; /* silent: let the client time out */
			server_answer(s, c);
		}
		close(c);
	}
	return NULL;
}

static struct server *server_start(int status)
{
	struct server *s = calloc(1, sizeof(*s));
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);

	assert_non_null(s);
	pthread_mutex_init(&s->lock, NULL);
	s->status = status;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s->fd >= 0);
	assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->fd, 8), 0);
	assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &alen), 0);
	s->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&s->thread, NULL, server_main, s), 0);
	return s;
}

static void server_stop(struct server *s)
{
	s->stop = 1;
	pthread_join(s->thread, NULL);
	close(s->fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static void token_file(char *path, size_t size, const char *content)
{
	int fd;

	snprintf(path, size, "/tmp/ibpulse-push-token-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)),
			 (ssize_t)strlen(content));
	close(fd);
}

static struct push *pusher(int port, const char *tokpath, double timeout)
{
	char url[128];
	struct push_opts o = {.url = url,
			      .token_file = tokpath,
			      .connect_timeout = 5,
			      .timeout = timeout};
	struct push *p;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/report", port);
	assert_int_equal(push_new(&o, &p), 0);
	return p;
}

static void test_push_ok_keepalive(void **state)
{
	struct server *s = server_start(200);
	char tok[64];
	struct push *p;

	token_file(tok, sizeof(tok), "s3cret-token\n");
	p = pusher(s->port, tok, 30);
	assert_int_equal(push_send(p, "{\"a\":1}", 7), 0);
	assert_int_equal(push_last_status(p), 200);
	assert_int_equal(push_send(p, "{\"b\":2}", 7), 0);
	push_free(p);
	pthread_mutex_lock(&s->lock);
	assert_int_equal(s->requests, 2);
	assert_int_equal(s->connections, 1); /* the connection was reused */
	assert_string_equal(s->auth, "Bearer s3cret-token");
	assert_string_equal(s->body, "{\"b\":2}");
	pthread_mutex_unlock(&s->lock);
	server_stop(s);
	unlink(tok);
}

static void test_push_http_errors(void **state)
{
	static const struct {
		int status;
		int err;
	} cases[] = {
		{400, PUSH_ERR_CLIENT},
		{401, PUSH_ERR_CLIENT},
		{403, PUSH_ERR_CLIENT},
		{413, PUSH_ERR_CLIENT},
		{500, PUSH_ERR_SERVER},
		{503, PUSH_ERR_SERVER},
		{204, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct server *s = server_start(cases[i].status);
		struct push *p = pusher(s->port, NULL, 30);

		assert_int_equal(push_send(p, "{}", 2), cases[i].err);
		assert_int_equal(push_last_status(p), cases[i].status);
		push_free(p);
		server_stop(s);
	}
	assert_true(PUSH_ERR_NET != PUSH_ERR_CLIENT &&
		    PUSH_ERR_CLIENT != PUSH_ERR_SERVER &&
		    PUSH_ERR_NET != PUSH_ERR_SERVER);
}

static void test_push_connection_refused(void **state)
{
	struct server *s = server_start(200);
	int port = s->port;
	struct push *p;

	server_stop(s); /* nothing listens on @port now */
	p = pusher(port, NULL, 30);
	assert_int_equal(push_send(p, "{}", 2), PUSH_ERR_NET);
	assert_int_equal(push_last_status(p), 0);
	push_free(p);
}

static void test_push_timeout(void **state)
{
	struct server *s = server_start(0);
	struct push *p = pusher(s->port, NULL, 0.5);
	struct timespec a, b;
	double dt;

	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(push_send(p, "{}", 2), PUSH_ERR_NET);
	clock_gettime(CLOCK_MONOTONIC, &b);
	dt = (double)(b.tv_sec - a.tv_sec) +
	     (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	assert_true(dt >= 0.4 && dt < 10);
	push_free(p);
	server_stop(s);
}

static void test_bad_token_files(void **state)
{
	struct push_opts o = {.url = "http://127.0.0.1:1/",
			      .connect_timeout = 1,
			      .timeout = 1};
	struct push *p = (struct push *)1;
	char tok[64];

	o.token_file = "/nonexistent/token";
	assert_int_equal(push_new(&o, &p), -ENOENT);
	assert_null(p);
	token_file(tok, sizeof(tok), "\n\n");
	o.token_file = tok;
	assert_int_equal(push_new(&o, &p), -EINVAL);
	unlink(tok);
	token_file(tok, sizeof(tok), "two words\n");
	assert_int_equal(push_new(&o, &p), -EINVAL);
	unlink(tok);
	push_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_ok_keepalive),
		cmocka_unit_test(test_push_http_errors),
		cmocka_unit_test(test_push_connection_refused),
		cmocka_unit_test(test_push_timeout),
		cmocka_unit_test(test_bad_token_files),
	};
	int ret;

	log_init("test_push", LOG_LVL_ERR);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return ret;
}
