// SPDX-License-Identifier: MIT
/*
 * HTTP ingest on libmicrohttpd: see http.h. A request goes through three
 * handler calls: the first (headers only) routes, checks the method, the
 * token and Content-Length; then the body arrives in pieces and is counted
 * against max_body_bytes; the last call validates and submits to the
 * writer, suspending the connection. The writer's done() resumes it, and
 * one more call sends the answer. Nothing is written for a request that is
 * answered with an error: the writer only ever sees validated reports.
 */
#include "http.h"
#include "auth.h"
#include "buf.h"
#include "httpd.h"
#include "jdec.h"
#include "log.h"
#include "report.h"
#include "route_api.h"
#include "testapi.h"
#include "writer.h"

#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HTTP_REPORT_PATH "/api/v1/report"
#define HTTP_HEALTH_PATH "/healthz"
#define HTTP_HOSTS_PREFIX "/api/v1/hosts/"
#define HTTP_RETRY_AFTER "5" /* seconds, on 503 */

enum http_route {
	ROUTE_REPORT,
	ROUTE_HEALTH,
	ROUTE_RETIRE,
	ROUTE_REGISTER,
	ROUTE_PLAN,
	ROUTE_RESULTS,
	ROUTE_PAUSE,
	ROUTE_RESUME,
	ROUTE_COVERAGE,
	ROUTE_REGRESSIONS,
	ROUTE_ENROL,
	ROUTE_ROUTE,
	ROUTE_HOST_HEALTH,
};

/* Fixed paths: route, method, whether the admin token is needed. */
static const struct {
	const char *path, *method;
	enum http_route route;
	int admin;
} http_paths[] = {
	{HTTP_REPORT_PATH, MHD_HTTP_METHOD_POST, ROUTE_REPORT, 0},
	{"/api/v1/register", MHD_HTTP_METHOD_POST, ROUTE_REGISTER, 0},
	{"/api/v1/plan", MHD_HTTP_METHOD_GET, ROUTE_PLAN, 0},
	{"/api/v1/results", MHD_HTTP_METHOD_POST, ROUTE_RESULTS, 0},
	{"/api/v1/coverage", MHD_HTTP_METHOD_GET, ROUTE_COVERAGE, 1},
	{"/api/v1/regressions", MHD_HTTP_METHOD_GET, ROUTE_REGRESSIONS, 1},
	{"/api/v1/enrol", MHD_HTTP_METHOD_POST, ROUTE_ENROL, 0},
	{"/api/v1/route", MHD_HTTP_METHOD_GET, ROUTE_ROUTE, 1},
};

/* /api/v1/hosts/NAME/ACTION */
static const struct {
	const char *suffix, *method;
	enum http_route route;
} http_host_actions[] = {
	{"/retire", MHD_HTTP_METHOD_POST, ROUTE_RETIRE},
	{"/pause", MHD_HTTP_METHOD_POST, ROUTE_PAUSE},
	{"/resume", MHD_HTTP_METHOD_POST, ROUTE_RESUME},
	{"/health", MHD_HTTP_METHOD_GET, ROUTE_HOST_HEALTH},
};

enum http_state {
	REQ_BODY,     /* receiving the body */
	REQ_REJECTED, /* answered early; swallow what still arrives */
	REQ_WAITING,  /* suspended, job with the writer */
};

struct http {
	struct http_opts opts;
	char *tls_cert, *tls_key; /* PEM texts; NULL: plain HTTP */
	struct writer *writer;
	struct httpd *server;
	unsigned port;
	atomic_uint suspended; /* requests between suspend and completion */
};

struct http_req {
	struct http *http;
	struct MHD_Connection *conn;
	enum http_route route;
	enum http_state state;
	const char *token_host; /* the host the bearer token names */
	char target[256]; /* the host to retire, pause...: http_target_ok() */
	struct buf body;
	int too_big;
	int counted; /* in http.suspended */
	struct report *report;
	struct testapi_reg *reg;
	struct testapi_results *results;
	int by_admin; /* pause/resume with the admin token */
	struct writer_job job;
};

/* ---- responses ---- */

static enum MHD_Result http_send(struct MHD_Connection *conn, unsigned status,
				 json_t *body, const char *hname,
				 const char *hval)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	json_decref(body);
	if (!text)
		return MHD_NO; /* out of memory: MHD closes the connection */
	resp = MHD_create_response_from_buffer(strlen(text), text,
					       MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				"application/json");
	if (hname)
		MHD_add_response_header(resp, hname, hval);
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* 200 with the JSON text in *@text (taken over: *@text becomes NULL). */
static enum MHD_Result http_send_text(struct MHD_Connection *conn, char **text)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (!*text)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(strlen(*text), *text,
					       MHD_RESPMEM_MUST_FREE);
	if (!resp)
		return MHD_NO;
	*text = NULL;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				"application/json");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result http_error(struct MHD_Connection *conn, unsigned status,
				  const char *msg)
{
	const char *hname = NULL, *hval = NULL;

	if (status == MHD_HTTP_UNAUTHORIZED) {
		hname = MHD_HTTP_HEADER_WWW_AUTHENTICATE;
		hval = "Bearer realm=\"ibpulse\"";
	} else if (status == MHD_HTTP_SERVICE_UNAVAILABLE) {
		hname = MHD_HTTP_HEADER_RETRY_AFTER;
		hval = HTTP_RETRY_AFTER;
	}
	return http_send(conn, status, json_pack("{s:s}", "error", msg), hname,
			 hval);
}

static enum MHD_Result http_bad_method(struct MHD_Connection *conn,
				       const char *allow)
{
	return http_send(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			 json_pack("{s:s}", "error", "method not allowed"),
			 MHD_HTTP_HEADER_ALLOW, allow);
}

/* ---- routing and early checks ---- */

/* "/api/v1/hosts/NAME/@suffix": copy NAME into @name; -EINVAL otherwise. */
static int http_host_target(const char *url, const char *suffix, char *name,
			    size_t size)
{
	size_t plen = strlen(HTTP_HOSTS_PREFIX), slen = strlen(suffix);
	size_t len = strlen(url), n;

	if (len <= plen + slen || strncmp(url, HTTP_HOSTS_PREFIX, plen) ||
	    strcmp(url + len - slen, suffix))
		return -EINVAL;
	n = len - plen - slen;
	if (n >= size || memchr(url + plen, '/', n))
		return -EINVAL;
	memcpy(name, url + plen, n);
	name[n] = '\0';
	return 0;
}

/* Route @url; the method it takes in *@method. -ENOENT: no such path. */
static int http_route_of(struct http_req *req, const char *url,
			 const char **method)
{
	for (size_t i = 0; i < sizeof(http_paths) / sizeof(*http_paths); i++)
		if (!strcmp(url, http_paths[i].path)) {
			req->route = http_paths[i].route;
			*method = http_paths[i].method;
			return 0;
		}
	for (size_t i = 0;
	     i < sizeof(http_host_actions) / sizeof(*http_host_actions); i++)
		if (!http_host_target(url, http_host_actions[i].suffix,
				      req->target, sizeof(req->target))) {
			req->route = http_host_actions[i].route;
			*method = http_host_actions[i].method;
			return 0;
		}
	return -ENOENT;
}

static const char *http_bearer(struct MHD_Connection *conn, size_t *len)
{
	return auth_bearer(
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
					    MHD_HTTP_HEADER_AUTHORIZATION),
		len);
}

/* 0 when the request may go on; else the answer was queued in *@ret. */
static int http_authorize(struct http *h, struct http_req *req,
			  enum MHD_Result *ret)
{
	size_t len = 0;
	const char *tok = http_bearer(req->conn, &len);
	const char *admin = h->opts.admin_token;
	int is_admin =
		admin && tok && auth_equal(tok, len, admin, strlen(admin));

	if (req->route == ROUTE_HEALTH)
		return 0;
	if (req->route == ROUTE_ENROL) {
		if (!auth_enrol_enabled(h->opts.auth))
			*ret = http_error(req->conn, MHD_HTTP_FORBIDDEN,
					  "enrolment is disabled (no "
					  "enrol_secret_file configured)");
		else if (!auth_enrol_secret_ok(h->opts.auth, tok, len))
			*ret = http_error(req->conn, MHD_HTTP_UNAUTHORIZED,
					  "the enrolment secret is required");
		else
			return 0;
		return -EACCES;
	}
	if (req->route == ROUTE_RETIRE || req->route == ROUTE_COVERAGE ||
	    req->route == ROUTE_REGRESSIONS || req->route == ROUTE_ROUTE) {
		if (!admin)
			*ret = http_error(req->conn, MHD_HTTP_FORBIDDEN,
					  "the admin API is disabled (no "
					  "admin_token configured)");
		else if (!is_admin)
			*ret = http_error(
				req->conn, MHD_HTTP_UNAUTHORIZED,
				"a valid admin bearer token is required");
		else
			return 0;
		return -EACCES;
	}
	req->by_admin = is_admin;
	if (is_admin &&
	    (req->route == ROUTE_PAUSE || req->route == ROUTE_RESUME ||
	     req->route == ROUTE_HOST_HEALTH))
		return 0;
	req->token_host = tok ? auth_host(h->opts.auth, tok, len) : NULL;
	if (req->token_host &&
	    (req->route == ROUTE_PAUSE || req->route == ROUTE_RESUME ||
	     req->route == ROUTE_HOST_HEALTH) &&
	    strcmp(req->token_host, req->target) != 0) {
		char msg[320];

		snprintf(msg, sizeof(msg),
			 "the token is for host '%s', not '%s' (or use the "
			 "admin token)",
			 req->token_host, req->target);
		*ret = http_error(req->conn, MHD_HTTP_FORBIDDEN, msg);
		return -EACCES;
	}
	if (req->token_host)
		return 0;
	*ret = http_error(req->conn, MHD_HTTP_UNAUTHORIZED,
			  tok ? "unknown bearer token"
			      : "a bearer token is required");
	return -EACCES;
}

/*
 * The host NAME of /api/v1/hosts/NAME/ACTION (URL-decoded by MHD) must be
 * a host name as the JSON bodies spell it (jdec's JDEC_HOST rule): else
 * 400 with the reason in *@ret, and nothing stored.
 */
static int http_target_ok(struct http_req *req, enum MHD_Result *ret)
{
	char err[224], *copy = NULL;
	struct jdec d = {.err = err,
			 .errlen = sizeof(err),
			 .top = "the host name in the path"};

	if (req->route != ROUTE_RETIRE && req->route != ROUTE_PAUSE &&
	    req->route != ROUTE_RESUME && req->route != ROUTE_HOST_HEALTH)
		return 1;
	if (!jdec_cstring(&d, req->target, strlen(req->target), REPORT_MAX_NAME,
			  JDEC_HOST, &copy)) {
		free(copy);
		return 1;
	}
	*ret = http_error(req->conn, MHD_HTTP_BAD_REQUEST, err);
	return 0;
}

static int http_length_ok(struct http *h, struct MHD_Connection *conn)
{
	const char *cl = MHD_lookup_connection_value(
		conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	unsigned long long v;
	char *end;

	if (!cl)
		return 1; /* chunked: counted as it arrives */
	errno = 0;
	v = strtoull(cl, &end, 10);
	return !errno && end != cl && v <= h->opts.max_body_bytes;
}

static enum MHD_Result http_too_big(struct http *h, struct MHD_Connection *conn)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "body larger than %zu bytes",
		 h->opts.max_body_bytes);
	return http_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, msg);
}

/* The first call: route and check; *@con_cls set when the request goes on. */
static enum MHD_Result http_begin(struct http *h, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  void **con_cls)
{
	struct http_req *req = calloc(1, sizeof(*req));
	enum MHD_Result ret = MHD_YES;
	const char *want = NULL;

	if (!req)
		return MHD_NO;
	req->http = h;
	req->conn = conn;
	buf_init(&req->body, h->opts.max_body_bytes);
	*con_cls = req; /* freed by http_completed whatever happens next */
	req->state = REQ_REJECTED;
	if (!strcmp(url, HTTP_HEALTH_PATH)) {
		req->route = ROUTE_HEALTH;
		if (strcmp(method, MHD_HTTP_METHOD_GET) &&
		    strcmp(method, MHD_HTTP_METHOD_HEAD))
			return http_bad_method(conn, "GET, HEAD");
	} else if (!http_route_of(req, url, &want)) {
		if (strcmp(method, want))
			return http_bad_method(conn, want);
	} else {
		return http_error(conn, MHD_HTTP_NOT_FOUND, "no such endpoint");
	}
	if (http_authorize(h, req, &ret) || !http_target_ok(req, &ret))
		return ret;
	if (!http_length_ok(h, conn))
		return http_too_big(h, conn);
	req->state = REQ_BODY;
	return MHD_YES;
}

/* ---- the writer side ---- */

/* On the writer thread: the job's transaction is over; wake the request. */
static void http_job_done(struct writer_job *job)
{
	struct http_req *req = job->arg;

	MHD_resume_connection(req->conn);
}

/* Suspend, then hand the job over: done() may resume at once. */
static enum MHD_Result http_submit(struct http_req *req, enum writer_kind kind)
{
	req->job.kind = kind;
	req->job.report = req->report;
	req->job.reg = req->reg;
	req->job.results = req->results;
	req->job.host = kind == WRITER_PLAN ? req->token_host : req->target;
	req->job.flag = req->route == ROUTE_PAUSE;
	req->job.by_admin = req->by_admin;
	req->job.done = http_job_done;
	req->job.arg = req;
	req->state = REQ_WAITING;
	req->counted = 1;
	atomic_fetch_add(&req->http->suspended, 1);
	MHD_suspend_connection(req->conn);
	if (writer_submit(req->http->writer, &req->job)) {
		req->job.status = -ESHUTDOWN;
		MHD_resume_connection(req->conn);
	}
	return MHD_YES;
}

/* After the resume: answer from the job's outcome. */
static enum MHD_Result http_answer(struct http_req *req)
{
	struct writer_job *job = &req->job;
	struct MHD_Connection *conn = req->conn;
	char msg[256];

	if (job->status == -EINVAL && req->route == ROUTE_RESULTS &&
	    job->error[0] && !strncmp(job->error, "results[", 8))
		/* the store's limits name the result and the setting */
		return http_error(conn, MHD_HTTP_BAD_REQUEST, job->error);
	if (job->status == -EINVAL) {
		snprintf(msg, sizeof(msg),
			 "the database refuses the request: %s",
			 job->error[0] ? job->error : "constraint failed");
		return http_error(conn, MHD_HTTP_BAD_REQUEST, msg);
	}
	if (job->status == -ENOENT && req->route == ROUTE_ROUTE)
		return http_error(conn, MHD_HTTP_NOT_FOUND,
				  job->answer ? job->answer : "no route");
	if (job->status == -ENOENT) {
		snprintf(msg, sizeof(msg), "unknown host '%.*s'",
			 REPORT_MAX_NAME, req->target);
		return http_error(conn, MHD_HTTP_NOT_FOUND, msg);
	}
	if (job->status == -ENOTSUP)
		return http_error(conn, MHD_HTTP_NOT_FOUND,
				  "test planning is not enabled");
	if (job->status && req->route == ROUTE_HEALTH &&
	    job->status != -ESHUTDOWN && job->error[0]) {
		snprintf(msg, sizeof(msg), "storage failed: %s", job->error);
		return http_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, msg);
	}
	if (job->status)
		return http_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				  job->status == -ESHUTDOWN
					  ? "the collector is shutting down"
					  : "storage failed; retry later");
	switch (req->route) {
	case ROUTE_REPORT:
		return http_send(conn, MHD_HTTP_OK,
				 json_pack("{s:I}", "stored",
					   (json_int_t)job->stats.samples),
				 NULL, NULL);
	case ROUTE_RETIRE:
		return http_send(conn, MHD_HTTP_OK,
				 json_pack("{s:s}", "retired", req->target),
				 NULL, NULL);
	case ROUTE_REGISTER:
	case ROUTE_PLAN:
	case ROUTE_COVERAGE:
	case ROUTE_REGRESSIONS:
	case ROUTE_ROUTE:
	case ROUTE_HOST_HEALTH:
		return http_send_text(conn, &job->answer);
	case ROUTE_RESULTS:
		return http_send(conn, MHD_HTTP_OK,
				 json_pack("{s:I, s:I}", "stored",
					   (json_int_t)job->stored,
					   "duplicates",
					   (json_int_t)job->duplicates),
				 NULL, NULL);
	case ROUTE_PAUSE:
	case ROUTE_RESUME:
		return http_send(conn, MHD_HTTP_OK,
				 json_pack("{s:s, s:b}", "host", req->target,
					   "paused", req->route == ROUTE_PAUSE),
				 NULL, NULL);
	case ROUTE_HEALTH:
	case ROUTE_ENROL:
		break;
	}
	return http_send(conn, MHD_HTTP_OK, json_pack("{s:s}", "status", "ok"),
			 NULL, NULL);
}

/* 403 unless the body's host is the token's. */
static int http_same_host(struct http_req *req, const char *host,
			  enum MHD_Result *ret)
{
	char msg[320];

	if (!strcmp(host, req->token_host))
		return 1;
	snprintf(msg, sizeof(msg),
		 "host: the token is for host '%s', the body is for '%s'",
		 req->token_host, host);
	*ret = http_error(req->conn, MHD_HTTP_FORBIDDEN, msg);
	return 0;
}

/* GET /api/v1/route: its LIDs checked here (400), the path by the writer. */
static enum MHD_Result http_route(struct http_req *req)
{
	char err[160];

	if (route_api_args(MHD_lookup_connection_value(
				   req->conn, MHD_GET_ARGUMENT_KIND, "src_lid"),
			   MHD_lookup_connection_value(
				   req->conn, MHD_GET_ARGUMENT_KIND, "dst_lid"),
			   &req->job.src_lid, &req->job.dst_lid, err,
			   sizeof(err)))
		return http_error(req->conn, MHD_HTTP_BAD_REQUEST, err);
	return http_submit(req, WRITER_ROUTE);
}

/* The test API: register, plan, results, pause/resume, coverage. */
static enum MHD_Result http_process_tests(struct http_req *req)
{
	const char *body = req->body.data ? req->body.data : "";
	enum MHD_Result ret = MHD_YES;
	char err[256];
	int rc;

	switch (req->route) {
	case ROUTE_REGISTER:
		rc = testapi_reg_decode(body, req->body.len, &req->reg, err,
					sizeof(err));
		if (rc)
			return http_error(req->conn, MHD_HTTP_BAD_REQUEST, err);
		if (!http_same_host(req, req->reg->host, &ret))
			return ret;
		return http_submit(req, WRITER_REGISTER);
	case ROUTE_RESULTS:
		rc = testapi_results_decode(body, req->body.len, &req->results,
					    err, sizeof(err));
		if (rc)
			return http_error(req->conn, MHD_HTTP_BAD_REQUEST, err);
		if (!http_same_host(req, req->results->host, &ret))
			return ret;
		return http_submit(req, WRITER_RESULTS);
	case ROUTE_PLAN:
		return http_submit(req, WRITER_PLAN);
	case ROUTE_PAUSE:
	case ROUTE_RESUME:
		return http_submit(req, WRITER_PAUSE);
	case ROUTE_COVERAGE:
		return http_submit(req, WRITER_COVERAGE);
	case ROUTE_REGRESSIONS:
		return http_submit(req, WRITER_REGRESS);
	case ROUTE_ROUTE:
		return http_route(req);
	case ROUTE_HOST_HEALTH:
		return http_submit(req, WRITER_VERDICT);
	default:
		return http_error(req->conn, MHD_HTTP_NOT_FOUND,
				  "no such endpoint");
	}
}

/* POST /api/v1/enrol: answered here (auth.c writes the enrolled file). */
static enum MHD_Result http_enrol(struct http *h, struct http_req *req)
{
	const char *body = req->body.data ? req->body.data : "";
	json_t *answer = NULL;
	char err[256];
	int rc = auth_enrol_request(h->opts.auth, body, req->body.len, &answer,
				    err, sizeof(err));

	if (rc == -EINVAL)
		return http_error(req->conn, MHD_HTTP_BAD_REQUEST, err);
	if (rc == -EEXIST)
		return http_error(req->conn, MHD_HTTP_CONFLICT, err);
	if (rc == -ENOSPC)
		return http_error(req->conn, MHD_HTTP_FORBIDDEN, err);
	if (rc) {
		log_err("enrol: %s", err);
		return http_error(req->conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				  "storage failed; retry later");
	}
	log_info("enrol: a token for a new host (%zu enrolled)",
		 auth_enrolled(h->opts.auth));
	return http_send(req->conn, MHD_HTTP_CREATED, answer, NULL, NULL);
}

/* The whole body is in: validate and submit. */
static enum MHD_Result http_process(struct http *h, struct http_req *req)
{
	char err[256], msg[320];

	if (req->too_big)
		return http_too_big(h, req->conn);
	if (req->route == ROUTE_HEALTH)
		return http_submit(req, WRITER_HEALTH);
	if (req->route == ROUTE_RETIRE)
		return http_submit(req, WRITER_RETIRE);
	if (req->route == ROUTE_ENROL)
		return http_enrol(h, req);
	if (req->route != ROUTE_REPORT)
		return http_process_tests(req);
	if (report_decode(req->body.data ? req->body.data : "", req->body.len,
			  &req->report, err, sizeof(err)))
		return http_error(req->conn, MHD_HTTP_BAD_REQUEST, err);
	buf_free(&req->body);
	if (strcmp(req->report->host, req->token_host) != 0) {
		snprintf(msg, sizeof(msg),
			 "host: the token is for host '%s', "
			 "the report is for '%s'",
			 req->token_host, req->report->host);
		return http_error(req->conn, MHD_HTTP_FORBIDDEN, msg);
	}
	return http_submit(req, WRITER_REPORT);
}

static enum MHD_Result http_handler(void *cls, struct MHD_Connection *conn,
				    const char *url, const char *method,
				    const char *version,
				    const char *upload_data,
				    size_t *upload_data_size, void **con_cls)
{
	struct http *h = cls;
	struct http_req *req = *con_cls;

	if (!req)
		return http_begin(h, conn, url, method, con_cls);
	switch (req->state) {
	case REQ_WAITING:
		return http_answer(req);
	case REQ_REJECTED:
		*upload_data_size = 0;
		return MHD_YES;
	case REQ_BODY:
		break;
	}
	if (*upload_data_size) {
		int r = req->too_big ? 0
				     : buf_add(&req->body, upload_data,
					       *upload_data_size);

		if (r == -ENOMEM)
			return MHD_NO;
		if (r == -E2BIG) {
			req->too_big = 1;
			buf_free(&req->body);
			/* Answer now if MHD lets us; otherwise at the end. */
			if (http_too_big(h, conn) == MHD_YES)
				req->state = REQ_REJECTED;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	return http_process(h, req);
}

static void http_completed(void *cls, struct MHD_Connection *conn,
			   void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct http_req *req = *con_cls;

	if (!req)
		return;
	if (req->counted)
		atomic_fetch_sub(&req->http->suspended, 1);
	report_free(req->report);
	testapi_reg_free(req->reg);
	testapi_results_free(req->results);
	free(req->job.answer);
	buf_free(&req->body);
	free(req);
	*con_cls = NULL;
}

/* ---- the daemon ---- */

int http_new(const struct http_opts *o, struct writer *w, struct http **out)
{
	struct httpd_opts ho = {
		.what = "listen",
		.connection_memory = o->connection_memory,
		.json_errors = true,
		.suspend_resume = true,
		.handler = http_handler,
		.completed = http_completed,
	};
	struct http *h;
	int ret;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->opts = *o;
	h->writer = w;
	atomic_init(&h->suspended, 0);
	ho.handler_cls = h;
	ho.completed_cls = h;
	ret = httpd_conf_apply(o->conf, &ho, &h->tls_cert, &h->tls_key);
	if (!ret)
		ret = httpd_start(&ho, &h->server);
	if (ret) {
		free(h->tls_cert);
		free(h->tls_key);
		free(h);
		return ret;
	}
	h->port = httpd_bound_port(h->server);
	log_info("http: listening on %s port %u (%s, %u threads, at most %u "
		 "connections, %u per address)",
		 ho.listen, h->port, h->tls_cert ? "https" : "http", ho.threads,
		 ho.max_connections, ho.per_ip_limit);
	*out = h;
	return 0;
}

unsigned http_port(const struct http *h)
{
	return h->port;
}

void http_quiesce(struct http *h)
{
	httpd_quiesce(h->server);
}

unsigned http_drain(struct http *h, unsigned timeout_ms)
{
	struct timespec tick = {0, 10 * 1000 * 1000};

	for (unsigned waited = 0; waited < timeout_ms; waited += 10) {
		if (!atomic_load(&h->suspended))
			return 0;
		nanosleep(&tick, NULL);
	}
	return atomic_load(&h->suspended);
}

void http_free(struct http *h)
{
	if (!h)
		return;
	httpd_stop(h->server);
	free(h->tls_cert);
	free(h->tls_key);
	free(h);
}
