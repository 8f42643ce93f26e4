// SPDX-License-Identifier: MIT
/*
 * The socket half of the control channel: whole messages sent and received
 * against a monotonic deadline with poll(), TCP connect and listen, and the
 * HMAC-SHA256 challenge-response on OpenSSL's libcrypto.
 */
#include "ctrl.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#define STOP_SLICE_MS 100 /* how often a wait looks at the stop flag */

uint64_t ctrl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Wait for @events on @fd until @deadline_ns; 0, -ETIMEDOUT, -ECANCELED
 * once *@stop is set (looked at every STOP_SLICE_MS at least) or -errno.
 */
static int wait_fd(int fd, short events, uint64_t deadline_ns,
		   const volatile sig_atomic_t *stop)
{
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = events};
		uint64_t now = ctrl_now_ns();
		int ms, rc;

		if (stop && *stop)
			return -ECANCELED;
		if (now >= deadline_ns)
			return -ETIMEDOUT;
		ms = (int)((deadline_ns - now + 999999) / 1000000);
		if (stop && ms > STOP_SLICE_MS)
			ms = STOP_SLICE_MS;
		rc = poll(&pfd, 1, ms);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return -errno;
		if (rc > 0)
			return 0;
	}
}

int ctrl_send(int fd, const uint8_t *msg, size_t len, uint64_t deadline_ns,
	      const volatile sig_atomic_t *stop)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n;
		int rc = wait_fd(fd, POLLOUT, deadline_ns, stop);

		if (rc)
			return rc;
		n = send(fd, msg + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return errno == EPIPE ? -ECONNRESET : -errno;
		off += (size_t)n;
	}
	return 0;
}

static int read_full(int fd, uint8_t *buf, size_t len, uint64_t deadline_ns,
		     const volatile sig_atomic_t *stop)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n;
		int rc = wait_fd(fd, POLLIN, deadline_ns, stop);

		if (rc)
			return rc;
		n = recv(fd, buf + off, len - off, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		off += (size_t)n;
	}
	return 0;
}

int ctrl_recv(int fd, struct ctrl_hdr *h, uint8_t *payload,
	      uint64_t deadline_ns, const volatile sig_atomic_t *stop)
{
	uint8_t hdr[CTRL_HDR_LEN];
	int rc;

	rc = read_full(fd, hdr, sizeof(hdr), deadline_ns, stop);
	if (rc)
		return rc;
	rc = ctrl_hdr_decode(hdr, sizeof(hdr), h);
	if (rc)
		return rc;
	return read_full(fd, payload, h->len, deadline_ns, stop);
}

void ctrl_send_refuse(int fd, unsigned version, int code, const char *reason,
		      uint64_t deadline_ns)
{
	struct ctrl_refuse m = {.code = code < 0 ? code : -EPERM};
	uint8_t buf[CTRL_HDR_LEN + CTRL_REASON_MAX + 8];
	int len;

	if (code < -4095)
		m.code = -EPERM;
	ctrl_strlcpy(m.reason, reason ? reason : "", sizeof(m.reason));
	len = ctrl_refuse_encode(&m, buf, sizeof(buf));
	if (len > 0)
		ctrl_hdr_set_version(buf, version);
	if (len > 0)
		(void)ctrl_send(fd, buf, (size_t)len, deadline_ns, NULL);
}

static void set_sockopts(int fd)
{
	int one = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Non-blocking connect to one address, finished with poll(). */
static int connect_one(const struct addrinfo *ai, uint64_t deadline_ns,
		       const volatile sig_atomic_t *stop)
{
	int fd, rc, err = 0;
	socklen_t elen = sizeof(err);

	fd = socket(ai->ai_family,
		    ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    ai->ai_protocol);
	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
		rc = -errno;
		goto fail;
	}
	rc = wait_fd(fd, POLLOUT, deadline_ns, stop);
	if (rc)
		goto fail;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0 || err) {
		rc = err ? -err : -errno;
		goto fail;
	}
	set_sockopts(fd);
	return fd;
fail:
	close(fd);
	return rc;
}

int ctrl_connect(const char *host, const char *port, uint64_t deadline_ns,
		 const volatile sig_atomic_t *stop, int *fd_out)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL, *ai;
	int rc;

	rc = getaddrinfo(host, port, &hints, &res);
	if (rc)
		return -EHOSTUNREACH;
	rc = -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		if (stop && *stop) {
			rc = -ECANCELED;
			break;
		}
		rc = connect_one(ai, deadline_ns, stop);
		if (rc >= 0) {
			*fd_out = rc;
			rc = 0;
			break;
		}
	}
	freeaddrinfo(res);
	return rc;
}

static unsigned bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

int ctrl_listen(const char *addr, const char *port, int *fd_out,
		unsigned *port_out)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE};
	struct addrinfo *res = NULL, *ai;
	int rc, fd = -1, one = 1;

	if (getaddrinfo(addr, port, &hints, &res))
		return -EADDRNOTAVAIL;
	rc = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			rc = -errno;
			continue;
		}
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				 sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 16))
			break;
		rc = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return rc;
	*fd_out = fd;
	if (port_out)
		*port_out = bound_port(fd);
	return 0;
}

int ctrl_mac(const uint8_t *secret, size_t secret_len, const char *label,
	     const uint8_t *nonce_a, const uint8_t *nonce_b,
	     const uint8_t *payload, size_t len, uint8_t mac[CTRL_MAC_LEN])
{
	uint8_t msg[64 + 2 * CTRL_NONCE_LEN + CTRL_MAX_PAYLOAD];
	size_t llen = strlen(label), off = 0;
	unsigned int mlen = CTRL_MAC_LEN;

	if (llen > 64 || len > CTRL_MAX_PAYLOAD || secret_len > 4096)
		return -EINVAL;
	memcpy(msg, label, llen);
	off += llen;
	memcpy(msg + off, nonce_a, CTRL_NONCE_LEN);
	off += CTRL_NONCE_LEN;
	memcpy(msg + off, nonce_b, CTRL_NONCE_LEN);
	off += CTRL_NONCE_LEN;
	memcpy(msg + off, payload, len);
	off += len;
	if (!HMAC(EVP_sha256(), secret, (int)secret_len, msg, off, mac,
		  &mlen) ||
	    mlen != CTRL_MAC_LEN)
		return -EIO;
	return 0;
}

int ctrl_mac_check(const uint8_t *a, const uint8_t *b)
{
	return CRYPTO_memcmp(a, b, CTRL_MAC_LEN) ? -EACCES : 0;
}

int ctrl_random(uint8_t *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = getrandom(buf + off, len - off, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}
