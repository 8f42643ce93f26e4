/* SPDX-License-Identifier: MIT */
/*
 * Bearer tokens: each token names the one host it may report for, so a
 * compromised node can only write its own rows. Tokens come from the
 * config's [tokens] section (host = token), from a tokens_file ("host
 * token" per line, # comments) and from enrolment: a probe holding the
 * enrolment secret asks once for a token bound to its host name; the
 * collector draws it at random and keeps only its SHA-256, in memory and
 * in the enrolled file ("host sha256-hex" lines). Only digests are kept
 * for every token; lookups compare digests in constant time against the
 * candidate found through a hash keyed with a random seed, so response
 * timing says nothing useful about a guessed token. Lookups and
 * enrolments may run on different threads.
 */
#ifndef IBPULSE_COLLECTOR_AUTH_H
#define IBPULSE_COLLECTOR_AUTH_H

#include <jansson.h>
#include <stddef.h>

#define AUTH_MIN_TOKEN 16   /* shorter tokens are refused */
#define AUTH_TOKEN_BYTES 32 /* enrolled tokens: 256 random bits, in hex */
#define AUTH_MAX_HOST 64    /* longest host name enrolled (REPORT_MAX_NAME) */

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

/*
 * auth_enrol_setup() - enable enrolment with @secret (at least
 * AUTH_MIN_TOKEN characters) and the enrolled file @path, whose hosts are
 * loaded now (a missing file is empty; a last line torn by a crash is
 * ignored; anything else malformed is -EINVAL with "PATH:LINE: reason").
 * At most @max_hosts hosts enrol. Call before the lookups start.
 */
int auth_enrol_setup(struct auth *a, const char *secret, const char *path,
		     size_t max_hosts, char *err, size_t errlen);
int auth_enrol_enabled(const struct auth *a);
/* 1 when @tok (@len bytes) is the enrolment secret (constant time). */
int auth_enrol_secret_ok(const struct auth *a, const char *tok, size_t len);
/* Hosts enrolled so far (loaded or new). */
size_t auth_enrolled(const struct auth *a);

/*
 * auth_enrol() - enrol @host (a valid host name, at most AUTH_MAX_HOST
 * characters): a new random token goes into @token (@toklen at least
 * 2 * AUTH_TOKEN_BYTES + 1), its digest is appended to the enrolled file
 * and fsync'd, then the token is valid. -EEXIST: @host already has a
 * token (enrolled or configured); -ENOSPC: max_hosts reached; -EPERM:
 * enrolment disabled; another -errno: the file write failed. On error
 * nothing changed and @token is zeroed.
 */
int auth_enrol(struct auth *a, const char *host, char *token, size_t toklen);

/*
 * auth_enrol_request() - POST /api/v1/enrol's body {"host": NAME}: enrol
 * NAME and put the answer {"host": NAME, "token": TOKEN} in *@answer
 * (caller json_decref()s). -EINVAL (bad body), -EEXIST, -ENOSPC or another
 * -errno as auth_enrol(), with the reason in @err.
 */
int auth_enrol_request(struct auth *a, const char *body, size_t len,
		       json_t **answer, char *err, size_t errlen);

/* Constant-time comparison of two byte strings; 1 when equal. */
int auth_equal(const char *a, size_t alen, const char *b, size_t blen);

/*
 * auth_bearer() - the token in an "Authorization: Bearer X" header value,
 * or NULL (and *@len untouched) when @header is not of that form.
 */
const char *auth_bearer(const char *header, size_t *len);

#endif
