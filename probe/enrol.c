// SPDX-License-Identifier: MIT
/*
 * Enrolment (enrol.h, probe_enrol()): a probe that has no token yet but
 * holds the enrolment secret asks the collector once, POST /api/v1/enrol
 * {"host": NAME} with the secret as bearer token, and keeps the token it
 * receives in token_file (written to a temporary file, fsync'd, renamed:
 * a crash leaves the old state or the new one). From then on the token
 * is what it sends; the collector refuses a second enrolment of the name.
 */
#include "enrol.h"
#include "report_build.h"
#include "log.h"
#include "push.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENROL_PATH "/api/v1/enrol"
#define ENROL_MAX_TOKEN 256

/* Write @token + "\n" to @path atomically, mode 0600. */
static int enrol_store(const char *path, const char *token)
{
	size_t n = strlen(path);
	char *tmp = malloc(n + 5), *dir;
	int fd, ret = 0;

	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, n + 5, "%s.new", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
	} else {
		if (dprintf(fd, "%s\n", token) < 0 || fsync(fd))
			ret = errno ? -errno : -EIO;
		if (close(fd) && !ret)
			ret = -errno;
		if (!ret && rename(tmp, path))
			ret = -errno;
		if (ret)
			unlink(tmp);
	}
	dir = ret ? NULL : dirname(tmp); /* tmp is not needed any more */
	fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(tmp);
	return ret;
}

/* The token of a 201 answer for @host, checked; NULL when malformed. */
static char *enrol_parse(const char *body, size_t len, const char *host)
{
	json_t *o = json_loadb(body, len, 0, NULL);
	const char *h = json_string_value(json_object_get(o, "host"));
	const char *t = json_string_value(json_object_get(o, "token"));
	char *token = NULL;

	if (h && t && !strcmp(h, host) && strlen(t) >= 16 &&
	    strlen(t) < ENROL_MAX_TOKEN && !strpbrk(t, " \t\r\n"))
		token = strdup(t);
	json_decref(o);
	return token;
}

/* POST the enrolment; the token goes into *@token. */
static int enrol_ask(const struct probe_settings *s, const char *host,
		     char **token)
{
	struct push_opts po = {
		.token_file = s->enrol_secret_file,
		.ca_file = s->ca_file,
		.connect_timeout = s->connect_timeout,
		.timeout = s->timeout,
	};
	json_t *req = json_pack("{s:s}", "host", host);
	char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
	char *url = push_api_url(s->collector_url, ENROL_PATH);
	struct push *p = NULL;
	const char *answer;
	size_t len = 0;
	int ret = body && url ? 0 : -ENOMEM;

	po.url = url;
	if (!ret)
		ret = push_new(&po, &p);
	if (!ret)
		ret = push_send(p, body, strlen(body));
	if (ret && p && push_last_status(p) == 409)
		log_err("enrol: %s is already enrolled: restore its token_file "
			"(%s) or remove its line from the collector's "
			"enrolled_file",
			host, s->token_file);
	if (!ret) {
		answer = push_response(p, &len);
		*token = enrol_parse(answer, len, host);
		if (!*token) {
			log_err("enrol: %s answered without a token for %s",
				url, host);
			ret = -EPROTO;
		}
	}
	push_free(p);
	free(url);
	free(body);
	json_decref(req);
	return ret;
}

int probe_enrol(const struct probe_settings *s)
{
	char *host = NULL, *token = NULL;
	int ret;

	if (!s->enrol_secret_file || !s->token_file ||
	    !access(s->token_file, F_OK))
		return 0;
	if (!s->collector_url) {
		log_err("enrol: no collector: set --collector URL or [probe] "
			"collector_url");
		return -EINVAL;
	}
	ret = probe_host_name(s, &host);
	if (!ret)
		ret = enrol_ask(s, host, &token);
	if (!ret) {
		ret = enrol_store(s->token_file, token);
		if (ret)
			log_err("enrol: %s: %s (the token is lost: remove %s "
				"from the collector's enrolled_file)",
				s->token_file, strerror(-ret), host);
		else
			log_info("enrolled %s: token in %s", host,
				 s->token_file);
	}
	if (token)
		explicit_bzero(token, strlen(token));
	free(token);
	free(host);
	return ret;
}
