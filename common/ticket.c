// SPDX-License-Identifier: MIT
/*
 * Test tickets (ticket.h): the responder keys and tickets as HMAC-SHA256
 * over length-prefixed fields (OpenSSL's libcrypto), their hex form in
 * the plan, and the collector's master key file.
 */
#include "ticket.h"
#include "hex.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#define TICKET_MSG_MAX 512

struct tmsg {
	uint8_t b[TICKET_MSG_MAX];
	size_t len;
	int err;
};

static void t_bytes(struct tmsg *m, const void *p, size_t n)
{
	if (m->err || n > sizeof(m->b) - m->len) {
		m->err = -EINVAL;
		return;
	}
	memcpy(m->b + m->len, p, n);
	m->len += n;
}

static void t_u64(struct tmsg *m, uint64_t v)
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (56 - 8 * i));
	t_bytes(m, b, 8);
}

/* A u16 length and the bytes: no field can run into the next. */
static void t_str(struct tmsg *m, const char *s)
{
	size_t n = strnlen(s, TICKET_STR_MAX + 1);
	uint8_t len[2] = {(uint8_t)(n >> 8), (uint8_t)n};

	if (n > TICKET_STR_MAX) {
		m->err = -EINVAL;
		return;
	}
	t_bytes(m, len, 2);
	t_bytes(m, s, n);
}

static void t_port(struct tmsg *m, unsigned port)
{
	uint8_t b = (uint8_t)port;

	if (port > 255)
		m->err = -EINVAL;
	t_bytes(m, &b, 1);
}

static int t_hmac(const uint8_t *key, size_t klen, const struct tmsg *m,
		  uint8_t out[TICKET_KEY_LEN])
{
	unsigned int olen = TICKET_KEY_LEN;

	if (m->err)
		return m->err;
	if (!HMAC(EVP_sha256(), key, (int)klen, m->b, m->len, out, &olen) ||
	    olen != TICKET_KEY_LEN)
		return -EIO;
	return 0;
}

int ticket_responder_key(const uint8_t *master, size_t len, const char *host,
			 uint64_t period, uint8_t key[TICKET_KEY_LEN])
{
	struct tmsg m = {.len = 0};

	if (len < TICKET_MASTER_MIN || len > 4096 || !host[0])
		return -EINVAL;
	t_str(&m, "ibpulse-responder-key-v1");
	t_str(&m, host);
	t_u64(&m, period);
	return t_hmac(master, len, &m, key);
}

int ticket_mint(const uint8_t key[TICKET_KEY_LEN],
		const struct ticket_claims *c, uint8_t ticket[TICKET_KEY_LEN])
{
	struct tmsg m = {.len = 0};

	t_str(&m, "ibpulse-ticket-v1");
	t_str(&m, c->plan_id);
	t_str(&m, c->initiator);
	t_str(&m, c->initiator_device);
	t_port(&m, c->initiator_port);
	t_str(&m, c->responder_device);
	t_port(&m, c->responder_port);
	t_u64(&m, c->period);
	t_u64(&m, c->not_before_ms);
	t_u64(&m, c->deadline_ms);
	return t_hmac(key, TICKET_KEY_LEN, &m, ticket);
}

/* A fresh key file: 32 random bytes as hex, created 0600, never replaced. */
static int t_create(const char *path, char *err, size_t errlen)
{
	uint8_t raw[32];
	char hex[2 * sizeof(raw) + 2];
	int fd, ret = 0;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		snprintf(err, errlen, "ticket_key_file %s: getrandom: %s", path,
			 strerror(errno));
		return -EIO;
	}
	hex_encode(raw, sizeof(raw), hex);
	explicit_bzero(raw, sizeof(raw));
	hex[2 * sizeof(raw)] = '\n';
	hex[2 * sizeof(raw) + 1] = '\0';
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		/* Another process made it first: read that one. */
		if (ret != -EEXIST)
			snprintf(err, errlen,
				 "ticket_key_file %s: cannot create: %s", path,
				 strerror(errno));
		explicit_bzero(hex, sizeof(hex));
		return ret == -EEXIST ? 0 : ret;
	}
	errno = 0;
	if (write(fd, hex, strlen(hex)) != (ssize_t)strlen(hex) || fsync(fd)) {
		ret = errno ? -errno : -EIO;
		snprintf(err, errlen, "ticket_key_file %s: cannot write: %s",
			 path, strerror(errno));
		unlink(path);
	}
	close(fd);
	explicit_bzero(hex, sizeof(hex));
	return ret;
}

int ticket_master_load(const char *path, uint8_t *key, size_t cap, size_t *len,
		       char *err, size_t errlen)
{
	struct stat st;
	ssize_t n;
	int fd, ret;

	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		ret = t_create(path, err, errlen);
		if (ret)
			return ret;
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "ticket_key_file %s: %s", path,
			 strerror(errno));
		return ret;
	}
	if (!fstat(fd, &st) && (st.st_mode & 077)) {
		close(fd);
		snprintf(err, errlen,
			 "ticket_key_file %s is readable by group or others "
			 "(chmod 600 it)",
			 path);
		return -EPERM;
	}
	n = read(fd, key, cap);
	close(fd);
	while (n > 0 && (key[n - 1] == '\n' || key[n - 1] == '\r'))
		n--;
	if (n < TICKET_MASTER_MIN) {
		explicit_bzero(key, cap);
		snprintf(err, errlen,
			 "ticket_key_file %s: need at least %d bytes of key",
			 path, TICKET_MASTER_MIN);
		return -EINVAL;
	}
	*len = (size_t)n;
	return 0;
}
