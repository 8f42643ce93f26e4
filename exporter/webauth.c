// SPDX-License-Identifier: MIT
/* The exporter's optional scrape authentication: see webauth.h. */
#include "webauth.h"

#include <crypt.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEBAUTH_HASH_LEN 60 /* "$2b$10$" + 22 salt + 31 hash characters */
#define WEBAUTH_MIN_TOKEN 16
#define WEBAUTH_MAX_SECRET 1024

struct webauth_user {
	char *name, *hash;
	char *verified; /* the password that last matched, or NULL */
};

struct webauth {
	struct webauth_user *users;
	size_t n_users;
	char *token;
	size_t token_len;
	pthread_mutex_t lock;	/* users[].verified */
	pthread_mutex_t bcrypt; /* one bcrypt at a time */
};

/* Equal bytes, in time that depends on the lengths only. */
static bool webauth_equal(const char *a, size_t alen, const char *b,
			  size_t blen)
{
	unsigned char diff = alen != blen;
	size_t n = alen < blen ? alen : blen;

	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return !diff;
}

static void webauth_wipe(char *s)
{
	if (!s)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}

int webauth_new(struct webauth **out)
{
	struct webauth *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&a->bcrypt, NULL);
	*out = a;
	return 0;
}

void webauth_free(struct webauth *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_users; i++) {
		free(a->users[i].name);
		free(a->users[i].hash);
		webauth_wipe(a->users[i].verified);
	}
	free(a->users);
	webauth_wipe(a->token);
	pthread_mutex_destroy(&a->lock);
	pthread_mutex_destroy(&a->bcrypt);
	free(a);
}

static bool webauth_bcrypt_form(const char *h)
{
	if (strlen(h) != WEBAUTH_HASH_LEN || h[0] != '$' || h[1] != '2' ||
	    !strchr("aby", h[2]) || h[3] != '$' ||
	    !isdigit((unsigned char)h[4]) || !isdigit((unsigned char)h[5]) ||
	    h[6] != '$')
		return false;
	if ((h[4] - '0') * 10 + (h[5] - '0') < 4 ||
	    (h[4] - '0') * 10 + (h[5] - '0') > 31)
		return false;
	for (const char *p = h + 7; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '/')
			return false;
	return crypt_checksalt(h) == CRYPT_SALT_OK;
}

int webauth_add_user(struct webauth *a, const char *user, const char *hash,
		     char *err, size_t errlen)
{
	struct webauth_user *u;

	if (!*user || strchr(user, ':') || strlen(user) > 256) {
		snprintf(err, errlen,
			 "[basic_auth_users] '%s': a user name is 1-256 "
			 "characters without ':'",
			 user);
		return -EINVAL;
	}
	for (const char *p = user; *p; p++)
		if (iscntrl((unsigned char)*p)) {
			snprintf(err, errlen,
				 "[basic_auth_users]: a user name has a "
				 "control character");
			return -EINVAL;
		}
	for (size_t i = 0; i < a->n_users; i++)
		if (!strcmp(a->users[i].name, user)) {
			snprintf(err, errlen,
				 "[basic_auth_users] %s: listed twice", user);
			return -EINVAL;
		}
	if (!webauth_bcrypt_form(hash)) {
		snprintf(err, errlen,
			 "[basic_auth_users] %s: not a bcrypt hash ($2y$, $2b$ "
			 "or $2a$, cost 04-31, 60 characters: `htpasswd -nBC "
			 "10 %s`)",
			 user, user);
		return -EINVAL;
	}
	u = realloc(a->users, (a->n_users + 1) * sizeof(*u));
	if (!u)
		return -ENOMEM;
	a->users = u;
	u = &a->users[a->n_users];
	u->name = strdup(user);
	u->hash = strdup(hash);
	u->verified = NULL;
	if (!u->name || !u->hash) {
		free(u->name);
		free(u->hash);
		return -ENOMEM;
	}
	a->n_users++;
	return 0;
}

int webauth_token_file(struct webauth *a, const char *path, char *err,
		       size_t errlen)
{
	char line[WEBAUTH_MAX_SECRET + 2];
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f) {
		int e = errno;

		snprintf(err, errlen, "bearer_token_file %s: %s", path,
			 strerror(e));
		return -e;
	}
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	n = strcspn(line, "\r\n");
	line[n] = '\0';
	if (n < WEBAUTH_MIN_TOKEN || n > WEBAUTH_MAX_SECRET) {
		explicit_bzero(line, sizeof(line));
		snprintf(err, errlen,
			 "bearer_token_file %s: the first line must be a token "
			 "of %d to %d characters",
			 path, WEBAUTH_MIN_TOKEN, WEBAUTH_MAX_SECRET);
		return -EINVAL;
	}
	webauth_wipe(a->token);
	a->token = strdup(line);
	a->token_len = n;
	explicit_bzero(line, sizeof(line));
	return a->token ? 0 : -ENOMEM;
}

bool webauth_enabled(const struct webauth *a)
{
	return a && (a->n_users || a->token);
}

size_t webauth_users(const struct webauth *a)
{
	return a ? a->n_users : 0;
}

bool webauth_has_token(const struct webauth *a)
{
	return a && a->token;
}

/* bcrypt of @password against @u's hash, one at a time. */
static enum webauth_result webauth_bcrypt(struct webauth *a,
					  const struct webauth_user *u,
					  const char *password)
{
	struct crypt_data *cd;
	enum webauth_result r = WEBAUTH_DENIED;
	const char *out;

	if (pthread_mutex_trylock(&a->bcrypt))
		return WEBAUTH_BUSY;
	cd = calloc(1, sizeof(*cd)); /* 32 KiB: not on a worker's stack */
	if (cd) {
		out = crypt_rn(password, u->hash, cd, sizeof(*cd));
		if (out &&
		    webauth_equal(out, strlen(out), u->hash, strlen(u->hash)))
			r = WEBAUTH_OK;
		explicit_bzero(cd, sizeof(*cd));
		free(cd);
	}
	pthread_mutex_unlock(&a->bcrypt);
	return r;
}

enum webauth_result webauth_check_basic(struct webauth *a, const char *user,
					const char *password)
{
	struct webauth_user *u = NULL;
	enum webauth_result r;
	size_t plen = strlen(password);
	bool known;

	for (size_t i = 0; i < a->n_users && !u; i++)
		if (!strcmp(a->users[i].name, user))
			u = &a->users[i];
	if (!u || plen > WEBAUTH_MAX_SECRET)
		return WEBAUTH_DENIED;
	pthread_mutex_lock(&a->lock);
	known = u->verified &&
		webauth_equal(u->verified, strlen(u->verified), password, plen);
	pthread_mutex_unlock(&a->lock);
	if (known)
		return WEBAUTH_OK;
	r = webauth_bcrypt(a, u, password);
	if (r == WEBAUTH_OK) {
		char *copy = strdup(password);

		pthread_mutex_lock(&a->lock);
		webauth_wipe(u->verified);
		u->verified = copy;
		pthread_mutex_unlock(&a->lock);
	}
	return r;
}

enum webauth_result webauth_check_bearer(struct webauth *a, const char *tok,
					 size_t len)
{
	if (!a->token || !tok)
		return WEBAUTH_DENIED;
	return webauth_equal(tok, len, a->token, a->token_len) ? WEBAUTH_OK
							       : WEBAUTH_DENIED;
}
