// SPDX-License-Identifier: MIT
/*
 * Per-host bearer tokens: see auth.h. The table is an open-addressing hash
 * on a seeded FNV-1a of the token; the only secret-dependent comparison is
 * auth_equal(), which touches every byte whatever they hold.
 */
#include "auth.h"
#include "map.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

struct auth_ent {
	uint64_t hash;
	char *token; /* NULL: empty slot */
	size_t len;
	char *host;
};

struct auth {
	struct auth_ent *tab;
	size_t cap; /* a power of two */
	size_t n;
	uint64_t seed;
};

int auth_new(struct auth **out)
{
	struct auth *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->cap = 64;
	a->tab = calloc(a->cap, sizeof(*a->tab));
	if (!a->tab) {
		free(a);
		return -ENOMEM;
	}
	if (getrandom(&a->seed, sizeof(a->seed), 0) != sizeof(a->seed))
		a->seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL;
	*out = a;
	return 0;
}

void auth_free(struct auth *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->cap; i++) {
		free(a->tab[i].token);
		free(a->tab[i].host);
	}
	free(a->tab);
	free(a);
}

size_t auth_count(const struct auth *a)
{
	return a->n;
}

int auth_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	unsigned char diff = alen != blen;
	size_t n = alen < blen ? alen : blen;

	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)b[i];
	return diff == 0;
}

static int auth_grow(struct auth *a)
{
	struct auth_ent *old = a->tab;
	size_t old_cap = a->cap;

	a->tab = calloc(old_cap * 2, sizeof(*a->tab));
	if (!a->tab) {
		a->tab = old;
		return -ENOMEM;
	}
	a->cap = old_cap * 2;
	for (size_t i = 0; i < old_cap; i++) {
		if (!old[i].token)
			continue;
		/* Equal hashes chain in probe order; keep them together. */
		size_t mask = a->cap - 1, j = old[i].hash & mask;

		while (a->tab[j].token)
			j = (j + 1) & mask;
		a->tab[j] = old[i];
	}
	free(old);
	return 0;
}

const char *auth_host(const struct auth *a, const char *token, size_t len)
{
	uint64_t h = map_hash(token, len, a->seed);
	size_t mask = a->cap - 1;
	const char *host = NULL;

	/* Visit every entry of the cluster that shares the hash. */
	for (size_t i = h & mask; a->tab[i].token; i = (i + 1) & mask)
		if (a->tab[i].hash == h &&
		    auth_equal(a->tab[i].token, a->tab[i].len, token, len))
			host = a->tab[i].host;
	return host;
}

int auth_add(struct auth *a, const char *host, const char *token, char *err,
	     size_t errlen)
{
	size_t len = strlen(token), i;
	struct auth_ent *e;
	uint64_t h;

	if (len < AUTH_MIN_TOKEN) {
		snprintf(err, errlen,
			 "token for host '%s' is shorter than %d characters",
			 host, AUTH_MIN_TOKEN);
		return -EINVAL;
	}
	if (auth_host(a, token, len)) {
		snprintf(err, errlen,
			 "token for host '%s' is also given to another host",
			 host);
		return -EINVAL;
	}
	if ((a->n + 1) * 2 > a->cap && auth_grow(a))
		return -ENOMEM;
	h = map_hash(token, len, a->seed);
	for (i = h & (a->cap - 1); a->tab[i].token; i = (i + 1) & (a->cap - 1))
		;
	e = &a->tab[i];
	e->token = strdup(token);
	e->host = strdup(host);
	if (!e->token || !e->host) {
		free(e->token);
		free(e->host);
		e->token = e->host = NULL;
		return -ENOMEM;
	}
	e->hash = h;
	e->len = len;
	a->n++;
	return 0;
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
