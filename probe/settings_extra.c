// SPDX-License-Identifier: MIT
/*
 * The free-form sections of probe.ini that a fixed option table cannot
 * describe: [labels] (operator labels, any key), [peers] (static test
 * peers, NAME = host:port[/device/port]) and [profile NAME] (named test
 * shapes), plus the checks across keys and printing them back for
 * --print-config. Every error names the key and what it accepts.
 */
#include "probe_settings.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pmetrics.h"
#include "sysval.h"

/* Built-in profiles, used when probe.ini defines none. */
static const struct probe_profile builtin_profiles[] = {
	{.name = "bw",
	 .test = "write_bw",
	 .size = 65536,
	 .qps = 2,
	 .duration = 2},
	{.name = "lat",
	 .test = "write_lat",
	 .size = 2,
	 .qps = 1,
	 .iters = 1000},
};

static const char *const profile_tests[] = {
	"write_bw",    "read_bw",  "send_bw",  "write_lat",
	"read_lat",    "send_lat", "fadd_lat", "cas_lat",
	"ud_send_lat", "fadd_bw",  "cas_bw",
};

static int copy_name(char *dst, size_t size, const char *v, const char *what,
		     char *err, size_t errlen)
{
	size_t n = strlen(v);

	if (!n || n >= size || !sysval_is_name(v)) {
		snprintf(err, errlen,
			 "%s: '%s' must be 1 to %zu characters of "
			 "[A-Za-z0-9._-]",
			 what, v, size - 1);
		return -EINVAL;
	}
	memcpy(dst, v, n + 1);
	return 0;
}

static int parse_ll(const char *key, const char *v, long long min,
		    long long max, long long *out, char *err, size_t errlen)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(v, &end, 0);
	if (errno || end == v || *end || x < min || x > max) {
		snprintf(err, errlen,
			 "%s: '%s' is not an integer in [%lld, %lld]", key, v,
			 min, max);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

static int parse_labels(struct probe_settings *s, const char *name,
			const char *value, char *err, size_t errlen)
{
	struct probe_label *l;
	size_t n = strlen(value);

	if (s->n_labels == PROBE_MAX_LABELS) {
		snprintf(err, errlen, "labels: at most %d labels",
			 PROBE_MAX_LABELS);
		return -E2BIG;
	}
	l = &s->labels[s->n_labels];
	if (copy_name(l->key, sizeof(l->key), name, "labels key", err, errlen))
		return -EINVAL;
	if (n >= sizeof(l->value) || strpbrk(value, "\"\\")) {
		snprintf(err, errlen,
			 "labels.%s: the value must be under %zu characters, "
			 "without quotes or backslashes",
			 name, sizeof(l->value));
		return -EINVAL;
	}
	memcpy(l->value, value, n + 1);
	s->n_labels++;
	return 0;
}

int probe_peer_parse(const char *text, struct probe_peer *p, char *err,
		     size_t errlen)
{
	char buf[512], *host = buf, *port, *dev = NULL, *ibp = NULL, *end;
	unsigned long v;

	if (strlen(text) >= sizeof(buf))
		goto bad;
	memcpy(buf, text, strlen(text) + 1);
	if (*host == '[') { /* [v6]:port */
		end = strchr(host, ']');
		if (!end || end[1] != ':')
			goto bad;
		*end = '\0';
		host++;
		port = end + 2;
	} else {
		port = strchr(host, ':');
		if (!port)
			goto bad;
		*port++ = '\0';
	}
	dev = strchr(port, '/');
	if (dev) {
		*dev++ = '\0';
		ibp = strchr(dev, '/');
		if (!ibp)
			goto bad;
		*ibp++ = '\0';
	}
	errno = 0;
	v = strtoul(port, &end, 10);
	if (!*host || errno || end == port || *end || v < 1 || v > 65535 ||
	    strlen(host) >= sizeof(p->address))
		goto bad;
	memcpy(p->address, host, strlen(host) + 1);
	snprintf(p->port, sizeof(p->port), "%lu", v);
	p->device[0] = '\0';
	p->ib_port = 0;
	if (dev) {
		v = strtoul(ibp, &end, 10);
		if (!*dev || strlen(dev) >= sizeof(p->device) ||
		    !sysval_is_name(dev) || end == ibp || *end || v < 1 ||
		    v > 255)
			goto bad;
		memcpy(p->device, dev, strlen(dev) + 1);
		p->ib_port = (unsigned)v;
	}
	return 0;
bad:
	snprintf(err, errlen,
		 "'%s' is not host:port[/device/port] (port 1..65535, "
		 "device port 1..255)",
		 text);
	return -EINVAL;
}

static int parse_peer(struct probe_settings *s, const char *name,
		      const char *value, char *err, size_t errlen)
{
	struct probe_peer *p;
	char why[384];

	if (s->n_peers == PROBE_MAX_PEERS) {
		snprintf(err, errlen, "peers: at most %d peers",
			 PROBE_MAX_PEERS);
		return -E2BIG;
	}
	p = &s->peers[s->n_peers];
	if (copy_name(p->name, sizeof(p->name), name, "peers key", err, errlen))
		return -EINVAL;
	if (probe_peer_parse(value, p, why, sizeof(why))) {
		snprintf(err, errlen, "peers.%s: %s", name, why);
		return -EINVAL;
	}
	s->n_peers++;
	return 0;
}

/* The profile for section "profile NAME", created on its first key. */
static struct probe_profile *profile_for(struct probe_settings *s,
					 const char *name, char *err,
					 size_t errlen)
{
	struct probe_profile *p;

	for (size_t i = 0; i < s->n_profiles; i++)
		if (!strcmp(s->profiles[i].name, name))
			return &s->profiles[i];
	if (s->n_profiles == PROBE_MAX_PROFILES) {
		snprintf(err, errlen, "at most %d profiles",
			 PROBE_MAX_PROFILES);
		return NULL;
	}
	p = &s->profiles[s->n_profiles];
	/* Keys not given: one QP, the test's own iteration default. */
	*p = (struct probe_profile){
		.test = "write_bw", .size = 65536, .qps = 1};
	if (copy_name(p->name, sizeof(p->name), name, "profile name", err,
		      errlen))
		return NULL;
	s->n_profiles++;
	return p;
}

static int parse_profile_test(struct probe_profile *p, const char *v, char *err,
			      size_t errlen)
{
	for (size_t i = 0; i < sizeof(profile_tests) / sizeof(*profile_tests);
	     i++) {
		if (!strcmp(v, profile_tests[i])) {
			snprintf(p->test, sizeof(p->test), "%s", v);
			return 0;
		}
	}
	snprintf(err, errlen,
		 "profile %s: test: '%s' is not one of write_bw, read_bw, "
		 "send_bw, write_lat, read_lat, send_lat, fadd_lat, cas_lat, "
		 "ud_send_lat, fadd_bw, cas_bw",
		 p->name, v);
	return -EINVAL;
}

static int parse_profile_key(struct probe_profile *p, const char *k,
			     const char *v, char *err, size_t errlen)
{
	char key[128];
	char *end;

	snprintf(key, sizeof(key), "profile %s: %s", p->name, k);
	if (!strcmp(k, "test"))
		return parse_profile_test(p, v, err, errlen);
	if (!strcmp(k, "size"))
		return parse_ll(key, v, 1, 1073741824, &p->size, err, errlen);
	if (!strcmp(k, "qps"))
		return parse_ll(key, v, 1, 64, &p->qps, err, errlen);
	if (!strcmp(k, "iters"))
		return parse_ll(key, v, 0, 100000000, &p->iters, err, errlen);
	if (!strcmp(k, "pkey"))
		return parse_ll(key, v, 0, 65535, &p->pkey, err, errlen);
	if (!strcmp(k, "sl"))
		return parse_ll(key, v, 0, 15, &p->sl, err, errlen);
	if (!strcmp(k, "gid")) {
		if (strlen(v) >= sizeof(p->gid)) {
			snprintf(err, errlen, "%s: too long", key);
			return -EINVAL;
		}
		snprintf(p->gid, sizeof(p->gid), "%s", v);
		return 0;
	}
	if (!strcmp(k, "duration")) {
		double d;

		errno = 0;
		d = strtod(v, &end);
		if (errno || end == v || *end || !(d >= 0 && d <= 3600)) {
			snprintf(err, errlen,
				 "%s: '%s' is not a number in [0, 3600]", key,
				 v);
			return -EINVAL;
		}
		p->duration = d;
		return 0;
	}
	snprintf(
		err, errlen,
		"%s: unknown key (test, size, qps, duration, iters, pkey, gid, "
		"sl)",
		key);
	return -ENOENT;
}

int probe_settings_extra(void *obj, const char *section, const char *name,
			 const char *value, char *err, size_t errlen)
{
	struct probe_settings *s = obj;
	struct probe_profile *p;

	if (!strcmp(section, "labels"))
		return parse_labels(s, name, value, err, errlen);
	if (!strcmp(section, "peers"))
		return parse_peer(s, name, value, err, errlen);
	if (!strcmp(section, "fabric"))
		return 0; /* ibpulse-probe fabric's (docs/fabric.md) */
	if (!strncmp(section, "profile ", 8)) {
		p = profile_for(s, section + 8, err, errlen);
		if (!p)
			return -EINVAL;
		return parse_profile_key(p, name, value, err, errlen);
	}
	snprintf(err, errlen,
		 "unknown section [%s] (probe, daemon, labels, peers, "
		 "profile NAME, fabric)",
		 section);
	return -ENOENT;
}

const struct probe_profile *probe_profile_find(const struct probe_settings *s,
					       const char *name)
{
	for (size_t i = 0; name && i < s->n_profiles; i++)
		if (!strcmp(s->profiles[i].name, name))
			return &s->profiles[i];
	return NULL;
}

/* Every name in the comma-separated @list is a profile. */
static int check_profile_list(const struct probe_settings *s, const char *list,
			      char *err, size_t errlen)
{
	const char *p = list;

	while (p && *p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char name[PROBE_NAME_MAX];

		snprintf(name, sizeof(name), "%.*s", (int)n, p);
		if (!probe_profile_find(s, name)) {
			snprintf(err, errlen,
				 "peer_profiles: no [profile %s] defined",
				 name);
			return -EINVAL;
		}
		p = comma ? comma + 1 : NULL;
	}
	return 0;
}

int probe_settings_finish(struct probe_settings *s, char *err, size_t errlen)
{
	if (!s->n_profiles) {
		memcpy(s->profiles, builtin_profiles, sizeof(builtin_profiles));
		s->n_profiles =
			sizeof(builtin_profiles) / sizeof(*builtin_profiles);
	}
	if (s->backoff_min > s->backoff_max) {
		snprintf(err, errlen,
			 "backoff_min (%g) must not exceed backoff_max (%g)",
			 s->backoff_min, s->backoff_max);
		return -EINVAL;
	}
	if (s->selftest && !probe_profile_find(s, s->selftest_profile)) {
		snprintf(err, errlen,
			 "selftest_profile: no [profile %s] defined",
			 s->selftest_profile ? s->selftest_profile : "");
		return -EINVAL;
	}
	if (s->metrics_listen && *s->metrics_listen) {
		char addr[64];
		unsigned port;

		if (pmetrics_listen_parse(s->metrics_listen, addr, sizeof(addr),
					  &port, err, errlen))
			return -EINVAL;
	}
	return check_profile_list(s, s->peer_profiles, err, errlen);
}

void probe_settings_print_extra(const void *obj, FILE *f)
{
	const struct probe_settings *s = obj;

	fprintf(f, "\n[labels]\n");
	for (size_t i = 0; i < s->n_labels; i++)
		fprintf(f, "%s = %s\n", s->labels[i].key, s->labels[i].value);
	fprintf(f, "\n[peers]\n");
	for (size_t i = 0; i < s->n_peers; i++) {
		const struct probe_peer *p = &s->peers[i];
		int v6 = strchr(p->address, ':') != NULL;

		fprintf(f, "%s = %s%s%s:%s", p->name, v6 ? "[" : "", p->address,
			v6 ? "]" : "", p->port);
		if (p->device[0])
			fprintf(f, "/%s/%u", p->device, p->ib_port);
		fprintf(f, "\n");
	}
	for (size_t i = 0; i < s->n_profiles; i++) {
		const struct probe_profile *p = &s->profiles[i];

		fprintf(f,
			"\n[profile %s]\ntest = %s\nsize = %lld\nqps = %lld\n"
			"duration = %g\niters = %lld\npkey = %lld\n",
			p->name, p->test, p->size, p->qps, p->duration,
			p->iters, p->pkey);
		if (p->gid[0])
			fprintf(f, "gid = %s\n", p->gid);
		fprintf(f, "sl = %lld\n", p->sl);
	}
}
