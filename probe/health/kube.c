// SPDX-License-Identifier: MIT
/*
 * The Node's condition and taint through the API server (kube.h): one
 * libcurl easy handle per call, TLS verified against the cluster's CA,
 * the bearer token read afresh each time; JSON with jansson.
 */
#include "kube.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "phealth.h"

#define KUBE_MAX_TOKEN 16384
#define KUBE_MAX_ANSWER (4 << 20) /* a Node with its images listed */
#define KUBE_MAX_MESSAGE 1024

struct kube {
	char *api, *token_file, *ca_file, *node;
	double timeout;
};

static const char *const cond_reason[] = {
	[PHEALTH_HEALTHY] = "IbpulseHealthy",
	[PHEALTH_DEGRADED] = "IbpulseDegraded",
	[PHEALTH_FAILED] = "IbpulseFailed",
	[PHEALTH_UNKNOWN] = "IbpulseUnknown",
};

static const char *const cond_status[] = {
	[PHEALTH_HEALTHY] = "True",
	[PHEALTH_DEGRADED] = "True",
	[PHEALTH_FAILED] = "False",
	[PHEALTH_UNKNOWN] = "Unknown",
};

int kube_new(const struct kube_opts *o, struct kube **out)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	struct kube *k;
	char api[300];

	*out = NULL;
	if (o->api) {
		snprintf(api, sizeof(api), "%s", o->api);
	} else if (host && *host) {
		snprintf(api, sizeof(api),
			 strchr(host, ':') ? "https://[%s]:%s"
					   : "https://%s:%s",
			 host, port && *port ? port : "443");
	} else {
		log_err("kube: no API server: set [health] kube_api, or run "
			"in a pod (KUBERNETES_SERVICE_HOST)");
		return -EINVAL;
	}
	if (!o->node || !*o->node || !o->token_file || !o->ca_file) {
		log_err("kube: the node name, kube_token_file and kube_ca_file "
			"are needed");
		return -EINVAL;
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->api = strdup(api);
	k->token_file = strdup(o->token_file);
	k->ca_file = strdup(o->ca_file);
	k->node = strdup(o->node);
	k->timeout = o->timeout > 0 ? o->timeout : 20;
	if (!k->api || !k->token_file || !k->ca_file || !k->node) {
		kube_free(k);
		return -ENOMEM;
	}
	*out = k;
	return 0;
}

void kube_free(struct kube *k)
{
	if (!k)
		return;
	free(k->api);
	free(k->token_file);
	free(k->ca_file);
	free(k->node);
	free(k);
}

/* "Authorization: Bearer TOKEN" from the token file, into @hdr. */
static int kube_auth(const struct kube *k, char *hdr, size_t len)
{
	char tok[KUBE_MAX_TOKEN];
	int fd = open(k->token_file, O_RDONLY | O_CLOEXEC), ret = 0;
	ssize_t n;

	if (fd < 0) {
		ret = -errno;
		log_err("kube: %s: %s", k->token_file, strerror(errno));
		return ret;
	}
	n = read(fd, tok, sizeof(tok) - 1);
	close(fd);
	while (n > 0 &&
	       (tok[n - 1] == '\n' || tok[n - 1] == '\r' || tok[n - 1] == ' '))
		n--;
	if (n <= 0) {
		log_err("kube: %s: no token", k->token_file);
		return -EINVAL;
	}
	tok[n] = '\0';
	if ((size_t)snprintf(hdr, len, "Authorization: Bearer %s", tok) >= len)
		ret = -E2BIG;
	explicit_bzero(tok, sizeof(tok));
	return ret;
}

static size_t kube_write_cb(char *data, size_t size, size_t nmemb, void *user)
{
	size_t n = size * nmemb, room = buf_room(user);

	/* past the ceiling the rest is dropped (and the JSON is refused) */
	if (buf_add(user, data, n < room ? n : room))
		return 0; /* out of memory (and the answer freed): abort */
	return n;
}

/*
 * One call: @method @path with @body of @ctype (NULL: none). *@status
 * gets the HTTP status (0: no answer), @resp the body. 0 on 2xx, -EIO
 * otherwise (logged with the API server's message).
 */
static int kube_call(const struct kube *k, const char *method, const char *path,
		     const char *ctype, const char *body, long *status,
		     struct buf *resp)
{
	char auth[KUBE_MAX_TOKEN + 32], url[600], ct[96],
		err[CURL_ERROR_SIZE] = "";
	struct curl_slist *h = NULL;
	CURL *c = curl_easy_init();
	CURLcode rc = CURLE_OK;
	int ret = kube_auth(k, auth, sizeof(auth));

	*status = 0;
	buf_reset(resp);
	if (!c || ret) {
		curl_easy_cleanup(c);
		explicit_bzero(auth, sizeof(auth));
		return ret ? ret : -ENOMEM;
	}
	snprintf(url, sizeof(url), "%s%s", k->api, path);
	h = curl_slist_append(h, auth);
	h = curl_slist_append(h, "Accept: application/json");
	if (ctype) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
		h = curl_slist_append(h, ct);
	}
	rc |= curl_easy_setopt(c, CURLOPT_URL, url);
	rc |= curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	rc |= curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (body)
		rc |= curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	rc |= curl_easy_setopt(c, CURLOPT_CAINFO, k->ca_file);
	rc |= curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	rc |= curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	rc |= curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	rc |= curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
			       (long)(k->timeout * 1000));
	rc |= curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	rc |= curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	rc |= curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, kube_write_cb);
	rc |= curl_easy_setopt(c, CURLOPT_WRITEDATA, resp);
	rc |= curl_easy_setopt(c, CURLOPT_USERAGENT, "ibpulse-probe");
	if (rc == CURLE_OK)
		rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	explicit_bzero(auth, sizeof(auth));
	if (rc != CURLE_OK) {
		log_once(k->api, 60, LOG_LVL_ERR, "kube: %s %s: %s%s%s", method,
			 url, curl_easy_strerror(rc), err[0] ? ": " : "", err);
		return -EIO;
	}
	if (*status >= 200 && *status < 300)
		return 0;
	if (*status != 409) { /* a conflict is retried, not an error */
		json_t *j = json_loadb(resp->data ? resp->data : "", resp->len,
				       0, NULL);
		const char *why =
			json_string_value(json_object_get(j, "message"));

		log_err("kube: %s %s: HTTP %ld: %.300s", method, url, *status,
			why ? why : "");
		json_decref(j);
	}
	return -EIO;
}

/* The node as the API server has it (GET nodes/NAME). */
static int kube_get(const struct kube *k, struct buf *b, json_t **node)
{
	char path[400];
	long status;
	int ret;

	snprintf(path, sizeof(path), "/api/v1/nodes/%s", k->node);
	ret = kube_call(k, "GET", path, NULL, NULL, &status, b);
	if (ret)
		return ret;
	*node = json_loadb(b->data ? b->data : "", b->len, 0, NULL);
	if (!json_is_object(*node)) {
		log_err("kube: GET %s: the answer is not a Node", path);
		json_decref(*node);
		return -EPROTO;
	}
	return 0;
}

static void kube_time(char *out, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static json_t *kube_find(json_t *arr, const char *key, const char *value)
{
	size_t i;
	json_t *x;

	json_array_foreach(arr, i, x)
	{
		const char *v = json_string_value(json_object_get(x, key));

		if (v && !strcmp(v, value))
			return x;
	}
	return NULL;
}

/* PATCH nodes/NAME/status with our condition, when it changed (or the
 * heartbeat is due). */
static int kube_condition(const struct kube *k, json_t *node, int verdict,
			  const char *message, int heartbeat, struct buf *b)
{
	json_t *conds =
		json_object_get(json_object_get(node, "status"), "conditions");
	json_t *old = kube_find(conds, "type", KUBE_CONDITION), *patch;
	const char *status = cond_status[verdict],
		   *reason = cond_reason[verdict];
	const char *old_status =
		json_string_value(json_object_get(old, "status"));
	const char *old_since =
		json_string_value(json_object_get(old, "lastTransitionTime"));
	const char *old_reason =
		json_string_value(json_object_get(old, "reason"));
	const char *old_msg =
		json_string_value(json_object_get(old, "message"));
	char now[32], path[400], msg[KUBE_MAX_MESSAGE], *body;
	int same, ret;
	long st;

	snprintf(msg, sizeof(msg), "%s", message ? message : "");
	same = old_status && !strcmp(old_status, status);
	if (same && old_reason && !strcmp(old_reason, reason) && old_msg &&
	    !strcmp(old_msg, msg) && !heartbeat)
		return 0;
	kube_time(now, sizeof(now));
	patch = json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s, s:s}]}}", "status",
			  "conditions", "type", KUBE_CONDITION, "status",
			  status, "reason", reason, "message", msg,
			  "lastHeartbeatTime", now, "lastTransitionTime",
			  same && old_since ? old_since : now);
	body = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
	json_decref(patch);
	if (!body)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/api/v1/nodes/%s/status", k->node);
	ret = kube_call(k, "PATCH", path,
			"application/strategic-merge-patch+json", body, &st, b);
	free(body);
	if (!ret && !same)
		log_info("kube: node %s condition %s=%s (%s)", k->node,
			 KUBE_CONDITION, status, reason);
	return ret;
}

/*
 * Add (@want) or remove our taint: the whole list with the
 * resourceVersion it was read at. 0; -EAGAIN on a conflict (read again).
 */
static int kube_taint(const struct kube *k, json_t *node, int want,
		      struct buf *b)
{
	json_t *spec = json_object_get(node, "spec");
	json_t *taints = json_object_get(spec, "taints"), *keep, *patch, *x;
	const char *rv = json_string_value(json_object_get(
		json_object_get(node, "metadata"), "resourceVersion"));
	int have = kube_find(taints, "key", KUBE_TAINT_KEY) != NULL, ret;
	char path[400], *body;
	size_t i;
	long st;

	if (have == want)
		return 0;
	keep = json_array();
	json_array_foreach(taints, i, x)
	{
		const char *key = json_string_value(json_object_get(x, "key"));

		if (!key || strcmp(key, KUBE_TAINT_KEY))
			json_array_append(keep, x);
	}
	if (want)
		json_array_append_new(keep, json_pack("{s:s, s:s, s:s}", "key",
						      KUBE_TAINT_KEY, "value",
						      KUBE_TAINT_VALUE,
						      "effect", "NoSchedule"));
	patch = json_pack("{s:{s:s?}, s:{s:o}}", "metadata", "resourceVersion",
			  rv, "spec", "taints", keep);
	body = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
	json_decref(patch);
	if (!body)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", k->node);
	ret = kube_call(k, "PATCH", path, "application/merge-patch+json", body,
			&st, b);
	free(body);
	if (ret && st == 409)
		return -EAGAIN;
	if (!ret)
		log_info("kube: node %s taint %s=%s:NoSchedule %s", k->node,
			 KUBE_TAINT_KEY, KUBE_TAINT_VALUE,
			 want ? "added" : "removed");
	return ret;
}

int kube_publish(struct kube *k, int verdict, const char *message, int taint,
		 int heartbeat)
{
	json_t *node = NULL;
	struct buf b;
	int ret, tries = 0;

	if (verdict < PHEALTH_HEALTHY || verdict > PHEALTH_UNKNOWN)
		verdict = PHEALTH_UNKNOWN;
	buf_init(&b, KUBE_MAX_ANSWER);
	ret = kube_get(k, &b, &node);
	if (!ret)
		ret = kube_condition(k, node, verdict, message, heartbeat, &b);
	/* the taint follows failed in, healthy out; degraded and unknown
	 * leave it as it is */
	while (!ret && taint &&
	       (verdict == PHEALTH_FAILED || verdict == PHEALTH_HEALTHY)) {
		ret = kube_taint(k, node, verdict == PHEALTH_FAILED, &b);
		if (ret != -EAGAIN || ++tries == 3)
			break;
		json_decref(node);
		node = NULL;
		ret = kube_get(k, &b, &node);
	}
	json_decref(node);
	buf_free(&b);
	return ret;
}
