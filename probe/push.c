// SPDX-License-Identifier: MIT
/*
 * Report push over HTTP(S) with libcurl (push.h). The response body is
 * kept (up to a small ceiling) only to log the collector's reason, the
 * "error" member of its JSON answer, when a push is refused.
 */
#include "push.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"

#define PUSH_MAX_TOKEN 4096
#define PUSH_MAX_RESPONSE 4096

struct push {
	CURL *curl;
	struct curl_slist *headers;
	char *url;
	struct buf resp;
	long status;
	char errbuf[CURL_ERROR_SIZE];
};

static int push_read_token(const char *path, char *tok, size_t size)
{
	ssize_t n;
	size_t len;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int ret = -errno;

		log_err("token file %s: %s", path, strerror(errno));
		return ret;
	}
	n = read(fd, tok, size - 1);
	close(fd);
	if (n < 0) {
		log_err("token file %s: %s", path, strerror(errno));
		return -EIO;
	}
	len = (size_t)n;
	while (len && (tok[len - 1] == '\n' || tok[len - 1] == '\r' ||
		       tok[len - 1] == ' ' || tok[len - 1] == '\t'))
		len--;
	tok[len] = '\0';
	for (size_t i = 0; i < len; i++) {
		if (tok[i] <= 0x20 || tok[i] >= 0x7f) {
			log_err("token file %s: the token must be one line of "
				"printable characters",
				path);
			return -EINVAL;
		}
	}
	if (!len) {
		log_err("token file %s is empty", path);
		return -EINVAL;
	}
	return 0;
}

static size_t push_write_cb(char *data, size_t size, size_t nmemb, void *user)
{
	struct push *p = user;
	size_t n = size * nmemb, room = buf_room(&p->resp);

	/* Past the ceiling the rest is dropped: only a reason is wanted. */
	if (buf_add(&p->resp, data, n < room ? n : room))
		return 0; /* out of memory (and the response freed): abort */
	return n;
}

static int push_headers(struct push *p, const char *token_file)
{
	char tok[PUSH_MAX_TOKEN], hdr[PUSH_MAX_TOKEN + 32];
	struct curl_slist *l;
	int ret;

	l = curl_slist_append(NULL, "Content-Type: application/json");
	if (!l)
		return -ENOMEM;
	p->headers = l;
	if (!token_file)
		return 0;
	ret = push_read_token(token_file, tok, sizeof(tok));
	if (ret)
		return ret;
	snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", tok);
	l = curl_slist_append(p->headers, hdr);
	explicit_bzero(tok, sizeof(tok));
	explicit_bzero(hdr, sizeof(hdr));
	if (!l)
		return -ENOMEM;
	p->headers = l;
	return 0;
}

static int push_setopts(struct push *p, const struct push_opts *o)
{
	CURL *c = p->curl;
	CURLcode rc = CURLE_OK;

	rc |= curl_easy_setopt(c, CURLOPT_URL, p->url);
	rc |= curl_easy_setopt(c, CURLOPT_HTTPHEADER, p->headers);
	rc |= curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			       (long)(o->connect_timeout * 1000));
	rc |= curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
			       (long)(o->timeout * 1000));
	rc |= curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	rc |= curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	rc |= curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	rc |= curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	rc |= curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	rc |= curl_easy_setopt(c, CURLOPT_ERRORBUFFER, p->errbuf);
	rc |= curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, push_write_cb);
	rc |= curl_easy_setopt(c, CURLOPT_WRITEDATA, p);
	rc |= curl_easy_setopt(c, CURLOPT_USERAGENT, "ibpulse-probe");
	if (o->ca_file && access(o->ca_file, R_OK)) {
		/* else every push fails later with curl's vaguer words */
		log_err("ca_file %s: %s", o->ca_file, strerror(errno));
		return -ENOENT;
	}
	if (o->ca_file)
		rc |= curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
	if (rc != CURLE_OK) {
		log_err("curl: cannot set options for %s", p->url);
		return -EINVAL;
	}
	return 0;
}

int push_new(const struct push_opts *o, struct push **out)
{
	struct push *p;
	int ret;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	buf_init(&p->resp,
		 o->max_response ? o->max_response : PUSH_MAX_RESPONSE);
	p->url = strdup(o->url);
	p->curl = curl_easy_init();
	ret = p->url && p->curl ? 0 : -ENOMEM;
	if (!ret)
		ret = push_headers(p, o->token_file);
	if (!ret)
		ret = push_setopts(p, o);
	if (ret) {
		push_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

void push_free(struct push *p)
{
	if (!p)
		return;
	curl_easy_cleanup(p->curl);
	curl_slist_free_all(p->headers);
	buf_free(&p->resp);
	free(p->url);
	free(p);
}

/* The collector's reason: {"error": "..."}, or the start of the body. */
static void push_log_refusal(struct push *p)
{
	const char *body = p->resp.data ? p->resp.data : "";
	json_t *j = json_loadb(body, p->resp.len, 0, NULL);
	const char *why = json_string_value(json_object_get(j, "error"));

	log_err("push to %s: HTTP %ld: %.200s", p->url, p->status,
		why ? why : body);
	json_decref(j);
}

static int push_perform(struct push *p)
{
	CURLcode rc;

	rc = curl_easy_perform(p->curl);
	if (rc != CURLE_OK) {
		/* Once a minute per URL: a daemon retries far more often. */
		log_once(p->url, 60, LOG_LVL_ERR, "push to %s: %s%s%s", p->url,
			 curl_easy_strerror(rc), p->errbuf[0] ? ": " : "",
			 p->errbuf);
		return PUSH_ERR_NET;
	}
	curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &p->status);
	if (p->status >= 200 && p->status < 300)
		return 0;
	push_log_refusal(p);
	return p->status >= 400 && p->status < 500 ? PUSH_ERR_CLIENT
						   : PUSH_ERR_SERVER;
}

int push_send(struct push *p, const char *body, size_t len)
{
	buf_reset(&p->resp);
	p->status = 0;
	p->errbuf[0] = '\0';
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	return push_perform(p);
}

int push_get(struct push *p)
{
	buf_reset(&p->resp);
	p->status = 0;
	p->errbuf[0] = '\0';
	curl_easy_setopt(p->curl, CURLOPT_HTTPGET, 1L);
	return push_perform(p);
}

const char *push_response(const struct push *p, size_t *len)
{
	if (len)
		*len = p->resp.len;
	return p->resp.data ? p->resp.data : "";
}

long push_last_status(const struct push *p)
{
	return p->status;
}

char *push_api_url(const char *report_url, const char *path)
{
	static const char tail[] = "/api/v1/report";
	size_t n = strlen(report_url), t = strlen(tail), len;
	char *url;

	if (n >= t && !strcmp(report_url + n - t, tail))
		n -= t;
	while (n && report_url[n - 1] == '/')
		n--;
	len = n + strlen(path) + 1;
	url = malloc(len);
	if (url)
		snprintf(url, len, "%.*s%s", (int)n, report_url, path);
	return url;
}
