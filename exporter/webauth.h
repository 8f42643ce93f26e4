/* SPDX-License-Identifier: MIT */
/*
 * Who may scrape the exporter: optional basic auth with bcrypt hashes (as
 * Prometheus's exporter-toolkit web config has them: `htpasswd -nBC 10`)
 * and an optional bearer token read from a file. Either is enough when
 * both are configured; with neither, everyone may.
 *
 * bcrypt costs tens of milliseconds of CPU per check by design, so a flood
 * of wrong passwords must not take every worker thread: a password that
 * verified is remembered per user (compared in constant time, no bcrypt
 * again), and at most one bcrypt runs at a time; a check that would wait
 * for another one answers WEBAUTH_BUSY at once (the server says 429).
 * Verification is crypt_rn() of libxcrypt, which knows $2a$, $2b$, $2y$.
 */
#ifndef IBPULSE_EXPORTER_WEBAUTH_H
#define IBPULSE_EXPORTER_WEBAUTH_H

#include <stdbool.h>
#include <stddef.h>

struct webauth;

enum webauth_result {
	WEBAUTH_OK,
	WEBAUTH_DENIED, /* 401 */
	WEBAUTH_BUSY,	/* 429: another bcrypt is running; retry */
};

int webauth_new(struct webauth **out);
/* Free, wiping what it remembered. NULL is fine. */
void webauth_free(struct webauth *a);

/*
 * webauth_add_user() - allow @user with the bcrypt @hash ($2a$, $2b$ or
 * $2y$, cost 4-31, 60 characters). -EINVAL with the reason in @err for a
 * name with ':' or control characters, a duplicate, or another kind of
 * hash.
 */
int webauth_add_user(struct webauth *a, const char *user, const char *hash,
		     char *err, size_t errlen);

/*
 * webauth_token_file() - allow the bearer token in @path (its first line,
 * at least 16 characters). -EINVAL or the error of open() with a reason.
 */
int webauth_token_file(struct webauth *a, const char *path, char *err,
		       size_t errlen);

/* Whether any credential is configured. */
bool webauth_enabled(const struct webauth *a);
size_t webauth_users(const struct webauth *a);
bool webauth_has_token(const struct webauth *a);

/* @user with @password (basic auth). */
enum webauth_result webauth_check_basic(struct webauth *a, const char *user,
					const char *password);
/* A bearer token of @len bytes. */
enum webauth_result webauth_check_bearer(struct webauth *a, const char *tok,
					 size_t len);

#endif
