// SPDX-License-Identifier: MIT
/*
 * Per-host bearer tokens: see auth.h. The table holds the SHA-256 of each
 * token, never the token, in an open-addressing hash on a seeded FNV-1a of
 * that digest; digests are compared with auth_equal(), which touches every
 * byte whatever they hold. Enrolment adds entries while HTTP threads look
 * tokens up, so the table sits behind a read-write lock; host names are
 * never freed before auth_free(), so a name auth_host() returned stays
 * valid whatever is added later.
 */
#include "auth.h"
#include "hex.h"
#include "hmap.h"
#include "jdec.h"
#include "map.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define AUTH_DIGEST 32 /* SHA-256 */

struct auth_ent {
	unsigned char digest[AUTH_DIGEST];
	char *host;
};

struct auth {
	struct hmap tab; /* of struct auth_ent */
	uint64_t seed;
	pthread_rwlock_t *lock;	     /* a pointer: lookups lock a const table */
	pthread_mutex_t *enrol_lock; /* one enrolment at a time */
	/* enrolment (auth_enrol_setup); secret NULL: disabled */
	char *secret;
	char *path;
	size_t max_enrolled, n_enrolled;
};

static void auth_digest(const char *token, size_t len,
			unsigned char out[AUTH_DIGEST])
{
	unsigned int n = AUTH_DIGEST;

	if (!EVP_Digest(token, len, out, &n, EVP_sha256(), NULL))
		abort(); /* SHA-256 is always there; nothing sane to do */
}

int auth_new(struct auth **out)
{
	struct auth *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	hmap_init(&a->tab, sizeof(struct auth_ent));
	a->lock = malloc(sizeof(*a->lock));
	a->enrol_lock = malloc(sizeof(*a->enrol_lock));
	if (!a->lock || !a->enrol_lock || pthread_rwlock_init(a->lock, NULL)) {
		free(a->lock);
		free(a->enrol_lock);
		free(a);
		return -ENOMEM;
	}
	pthread_mutex_init(a->enrol_lock, NULL);
	if (getrandom(&a->seed, sizeof(a->seed), 0) != sizeof(a->seed))
		a->seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL;
	*out = a;
	return 0;
}

void auth_free(struct auth *a)
{
	struct auth_ent *e;
	size_t i = 0;

	if (!a)
		return;
	while ((e = hmap_next(&a->tab, &i)))
		free(e->host);
	pthread_rwlock_destroy(a->lock);
	pthread_mutex_destroy(a->enrol_lock);
	free(a->lock);
	free(a->enrol_lock);
	hmap_free(&a->tab);
	free(a->secret);
	free(a->path);
	free(a);
}

size_t auth_count(const struct auth *a)
{
	size_t n;

	pthread_rwlock_rdlock(a->lock);
	n = a->tab.n;
	pthread_rwlock_unlock(a->lock);
	return n;
}

int auth_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	unsigned char diff = alen != blen;
	size_t n = alen < blen ? alen : blen;

	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)b[i];
	return diff == 0;
}

/* A lookup's digest, and where auth_match() puts the host it matches. */
struct auth_look {
	const unsigned char *digest;
	const char **host;
};

/*
 * Never a match for hmap_find(): it then compares @key with every entry
 * of the hash's cluster, whether and wherever the digest is found.
 */
static int auth_match(const void *ent, const void *key)
{
	const struct auth_ent *e = ent;
	const struct auth_look *l = key;

	if (auth_equal((const char *)e->digest, AUTH_DIGEST,
		       (const char *)l->digest, AUTH_DIGEST))
		*l->host = e->host;
	return 0;
}

/* The host of @digest, or NULL; the caller holds the lock. */
static const char *auth_find(const struct auth *a,
			     const unsigned char digest[AUTH_DIGEST])
{
	uint64_t h = map_hash((const char *)digest, AUTH_DIGEST, a->seed);
	const char *host = NULL;
	struct auth_look l = {digest, &host};

	hmap_find(&a->tab, h, auth_match, &l);
	return host;
}

const char *auth_host(const struct auth *a, const char *token, size_t len)
{
	unsigned char d[AUTH_DIGEST];
	const char *host;

	auth_digest(token, len, d);
	pthread_rwlock_rdlock(a->lock);
	host = auth_find(a, d);
	pthread_rwlock_unlock(a->lock);
	return host;
}

/* Insert @digest for @host; the caller holds the write lock. */
static int auth_insert(struct auth *a, const char *host,
		       const unsigned char digest[AUTH_DIGEST])
{
	uint64_t h = map_hash((const char *)digest, AUTH_DIGEST, a->seed);
	char *copy = strdup(host);
	struct auth_ent *e = copy ? hmap_add(&a->tab, h) : NULL;

	if (!e) {
		free(copy);
		return -ENOMEM;
	}
	memcpy(e->digest, digest, AUTH_DIGEST);
	e->host = copy;
	return 0;
}

int auth_add(struct auth *a, const char *host, const char *token, char *err,
	     size_t errlen)
{
	size_t len = strlen(token);
	unsigned char d[AUTH_DIGEST];
	int ret;

	if (len < AUTH_MIN_TOKEN) {
		snprintf(err, errlen,
			 "token for host '%s' is shorter than %d characters",
			 host, AUTH_MIN_TOKEN);
		return -EINVAL;
	}
	auth_digest(token, len, d);
	pthread_rwlock_wrlock(a->lock);
	if (auth_find(a, d)) {
		snprintf(err, errlen,
			 "token for host '%s' is also given to another host",
			 host);
		ret = -EINVAL;
	} else {
		ret = auth_insert(a, host, d);
	}
	pthread_rwlock_unlock(a->lock);
	return ret;
}

/* Split "host token" into two words; -EINVAL unless exactly two. */
static int auth_split(char *line, char **host, char **token)
{
	char *p = line, *extra;

	while (isspace((unsigned char)*p))
		p++;
	*host = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	if (!*p)
		return -EINVAL;
	*p++ = '\0';
	while (isspace((unsigned char)*p))
		p++;
	*token = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	extra = p;
	while (isspace((unsigned char)*extra))
		extra++;
	*p = '\0';
	return (**token && !*extra) ? 0 : -EINVAL;
}

int auth_load_file(struct auth *a, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, msg[200];
	size_t cap = 0;
	unsigned lineno = 0;
	int ret = 0;

	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	while (getline(&line, &cap, f) > 0) {
		char *host, *token, *p = line;

		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			continue;
		if (auth_split(p, &host, &token)) {
			snprintf(err, errlen, "%s:%u: expected \"host token\"",
				 path, lineno);
			ret = -EINVAL;
			break;
		}
		ret = auth_add(a, host, token, msg, sizeof(msg));
		if (ret) {
			snprintf(err, errlen, "%s:%u: %s", path, lineno, msg);
			break;
		}
	}
	free(line);
	fclose(f);
	return ret;
}

const char *auth_bearer(const char *header, size_t *len)
{
	const char *p;

	if (!header || strncasecmp(header, "Bearer ", 7) != 0)
		return NULL;
	p = header + 7;
	while (*p == ' ')
		p++;
	*len = strlen(p);
	while (*len && p[*len - 1] == ' ')
		(*len)--;
	return *len ? p : NULL;
}

/* ---- enrolment ---- */

/* Does @host have any token? The caller holds the lock. */
static int auth_has_host(const struct auth *a, const char *host)
{
	const struct auth_ent *e;
	size_t i = 0;

	while ((e = hmap_next(&a->tab, &i)))
		if (!strcmp(e->host, host))
			return 1;
	return 0;
}

/* One "host sha256hex" line of the enrolled file. */
static int auth_enrol_line(struct auth *a, char *line, char *msg, size_t len)
{
	unsigned char d[AUTH_DIGEST];
	char *host, *hex;

	if (auth_split(line, &host, &hex) || hex_decode(hex, d, AUTH_DIGEST)) {
		snprintf(msg, len, "expected \"host sha256-hex\"");
		return -EINVAL;
	}
	if (auth_has_host(a, host) || auth_find(a, d)) {
		snprintf(msg, len, "host '%s' (or its token) appears twice",
			 host);
		return -EINVAL;
	}
	a->n_enrolled++;
	return auth_insert(a, host, d);
}

/* Load the enrolled hosts; a missing file is an empty one. */
static int auth_enrol_load(struct auth *a, const char *path, char *err,
			   size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, msg[160];
	size_t cap = 0;
	ssize_t n;
	off_t good = 0; /* end of the last whole line */
	unsigned lineno = 0;
	int ret = 0;

	if (!f && errno == ENOENT)
		return 0;
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	while (!ret && (n = getline(&line, &cap, f)) > 0) {
		char *p = line;

		lineno++;
		/* A last line without its newline was torn by a crash
		 * before the enrolment was answered: nobody has that token.
		 * Cut it off, or the next append would extend it. */
		if (line[n - 1] != '\n' && fgetc(f) == EOF) {
			if (truncate(path, good))
				ret = -errno;
			if (ret)
				snprintf(err, errlen, "%s: %s", path,
					 strerror(-ret));
			break;
		}
		good += n;
		line[strcspn(line, "\r\n")] = '\0';
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			continue;
		ret = auth_enrol_line(a, p, msg, sizeof(msg));
		if (ret)
			snprintf(err, errlen, "%s:%u: %s", path, lineno, msg);
	}
	free(line);
	fclose(f);
	return ret;
}

int auth_enrol_setup(struct auth *a, const char *secret, const char *path,
		     size_t max_hosts, char *err, size_t errlen)
{
	int ret;

	if (strlen(secret) < AUTH_MIN_TOKEN) {
		snprintf(err, errlen,
			 "the enrolment secret is shorter than %d characters",
			 AUTH_MIN_TOKEN);
		return -EINVAL;
	}
	pthread_rwlock_wrlock(a->lock);
	free(a->secret);
	free(a->path);
	a->secret = strdup(secret);
	a->path = strdup(path);
	a->max_enrolled = max_hosts;
	ret = a->secret && a->path ? auth_enrol_load(a, path, err, errlen)
				   : -ENOMEM;
	pthread_rwlock_unlock(a->lock);
	return ret;
}

int auth_enrol_enabled(const struct auth *a)
{
	return a->secret != NULL;
}

int auth_enrol_secret_ok(const struct auth *a, const char *tok, size_t len)
{
	return a->secret && tok &&
	       auth_equal(tok, len, a->secret, strlen(a->secret));
}

size_t auth_enrolled(const struct auth *a)
{
	size_t n;

	pthread_rwlock_rdlock(a->lock);
	n = a->n_enrolled;
	pthread_rwlock_unlock(a->lock);
	return n;
}

/* Append "host hex\n" and fsync; the file is created 0600. */
static int auth_enrol_append(const char *path, const char *host,
			     const char *hex)
{
	char line[AUTH_MAX_HOST + 2 * AUTH_DIGEST + 4];
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	int n = snprintf(line, sizeof(line), "%s %s\n", host, hex), ret = 0;

	if (fd < 0)
		return -errno;
	if (n < 0 || (size_t)n >= sizeof(line))
		ret = -ENAMETOOLONG;
	else if (write(fd, line, (size_t)n) != n)
		ret = errno ? -errno : -EIO;
	else if (fsync(fd))
		ret = -errno;
	close(fd);
	return ret;
}

int auth_enrol(struct auth *a, const char *host, char *token, size_t toklen)
{
	unsigned char raw[AUTH_TOKEN_BYTES], d[AUTH_DIGEST];
	char hex[2 * AUTH_DIGEST + 1];
	int ret;

	if (!a->secret)
		return -EPERM;
	if (toklen < 2 * AUTH_TOKEN_BYTES + 1)
		return -ENOBUFS;
	if (getrandom(raw, sizeof(raw), 0) != sizeof(raw))
		return -EIO;
	hex_encode(raw, sizeof(raw), token);
	auth_digest(token, 2 * AUTH_TOKEN_BYTES, d);
	hex_encode(d, sizeof(d), hex);
	/* Enrolments queue on their own mutex, so the fsync does not hold
	 * up lookups; only the insertion takes the table's write lock.
	 * Tokens are added only here once serving, so the check holds. */
	pthread_mutex_lock(a->enrol_lock);
	pthread_rwlock_rdlock(a->lock);
	ret = auth_has_host(a, host)		 ? -EEXIST
	      : a->n_enrolled >= a->max_enrolled ? -ENOSPC
						 : 0;
	pthread_rwlock_unlock(a->lock);
	if (!ret)
		ret = auth_enrol_append(a->path, host, hex);
	if (!ret) {
		pthread_rwlock_wrlock(a->lock);
		ret = auth_insert(a, host, d);
		if (!ret)
			a->n_enrolled++;
		pthread_rwlock_unlock(a->lock);
	}
	pthread_mutex_unlock(a->enrol_lock);
	if (ret)
		memset(token, 0, toklen);
	return ret;
}

int auth_enrol_request(struct auth *a, const char *body, size_t len,
		       json_t **answer, char *err, size_t errlen)
{
	struct jdec d = {.err = err, .errlen = errlen, .top = "body"};
	char token[2 * AUTH_TOKEN_BYTES + 1];
	json_t *root = NULL;
	char *host = NULL;
	int ret = jdec_load(&d, body, len, &root);

	*answer = NULL;
	if (!ret && !json_is_object(root))
		ret = jdec_fail(&d, "must be a JSON object");
	if (!ret)
		ret = jdec_str(&d, root, "host", AUTH_MAX_HOST, JDEC_HOST, 1,
			       &host);
	json_decref(root);
	if (!ret) {
		ret = auth_enrol(a, host, token, sizeof(token));
		if (ret == -EEXIST)
			snprintf(err, errlen,
				 "host '%s' is already enrolled or has a "
				 "configured token",
				 host);
		else if (ret == -ENOSPC)
			snprintf(err, errlen, "enrol_max_hosts reached");
		else if (ret)
			snprintf(err, errlen, "%s: %s", a->path,
				 strerror(-ret));
	}
	if (!ret) {
		*answer = json_pack("{s:s, s:s}", "host", host, "token", token);
		explicit_bzero(token, sizeof(token));
		ret = *answer ? 0 : -ENOMEM;
	}
	free(host);
	return ret;
}
