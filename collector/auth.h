/* SPDX-License-Identifier: MIT */
/*
 * Bearer tokens: each token names the one host it may report for, so a
 * compromised node can only write its own rows. Tokens come from the
 * config's [tokens] section (host = token) and from a tokens_file
 * ("host token" per line, # comments). Lookups compare in constant time
 * against the candidate found through a hash keyed with a random seed, so
 * response timing says nothing useful about a guessed token.
 */
#ifndef IBPULSE_COLLECTOR_AUTH_H
#define IBPULSE_COLLECTOR_AUTH_H

#include <stddef.h>

#define AUTH_MIN_TOKEN 16 /* shorter tokens are refused */

struct auth;

int auth_new(struct auth **out);
void auth_free(struct auth *a);

/*
 * auth_add() - let @token report for @host. A token given twice (for any
 * host) or a short one is -EINVAL with a reason in @err.
 */
int auth_add(struct auth *a, const char *host, const char *token, char *err,
	     size_t errlen);
/* Load "host token" lines; -errno with "PATH:LINE: reason" in @err. */
int auth_load_file(struct auth *a, const char *path, char *err, size_t errlen);
size_t auth_count(const struct auth *a);

/*
 * auth_host() - the host @token (not NUL-terminated, @len bytes) belongs
 * to, or NULL. The pointer lives as long as @a.
 */
const char *auth_host(const struct auth *a, const char *token, size_t len);

/* Constant-time comparison of two byte strings; 1 when equal. */
int auth_equal(const char *a, size_t alen, const char *b, size_t blen);

/*
 * auth_bearer() - the token in an "Authorization: Bearer X" header value,
 * or NULL (and *@len untouched) when @header is not of that form.
 */
const char *auth_bearer(const char *header, size_t *len);

#endif
