// SPDX-License-Identifier: MIT
/*
 * libmicrohttpd start-up shared by the collector, the exporter and the
 * probe's /metrics (see httpd.h): the listen socket, MHD's options, the
 * request gate in front of every handler, MHD's messages in our log, and
 * the plain answers the metrics servers give. The connection guard is in
 * httpd_conn.c.
 */
#include "httpd.h"
#include "buf.h"
#include "httpd_int.h"
#include "log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#define HTTPD_BACKLOG 1024
#define HTTPD_SPARE_FDS 64 /* descriptors beyond the connections */
#define HTTPD_MHD_SPARE 16 /* MHD's own limit above the guard's, per worker */
#define HTTPD_MAX_PEM (1 << 20)

struct httpd {
	struct httpd_opts o;
	struct httpd_guard guard;
	struct MHD_Daemon *mhd;
	struct front *front; /* plain HTTP: the relay in front of MHD */
	unsigned port;
};

/* MHD's own pool per connection when connection_memory is 0. */
#define HTTPD_MHD_MEMORY (32 * 1024)

int httpd_addr(const char *what, const char *listen, unsigned port,
	       struct sockaddr_storage *ss, bool *v6)
{
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, listen, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*v6 = false;
		return 0;
	}
	if (inet_pton(AF_INET6, listen, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*v6 = true;
		return 0;
	}
	log_err("%s '%s': not a numeric IPv4 or IPv6 address (such as "
		"0.0.0.0, ::, 127.0.0.1)",
		what, listen);
	return -EINVAL;
}

/*
 * The listen socket, made here rather than by MHD: IPv6 sockets accept
 * IPv4 too (IPV6_V6ONLY off, so `::` is every address of both families),
 * and a failure names what was asked for.
 */
static int httpd_listen_fd(const struct httpd_opts *o, unsigned *port,
			   bool *is_v6)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd, one = 1, zero = 0;
	bool v6;

	if (httpd_addr(o->what, o->listen, o->port, &ss, &v6))
		return -EINVAL;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0 && errno == EAFNOSUPPORT && v6 && !strcmp(o->listen, "::")) {
		/* a kernel without IPv6: every address is every IPv4 one */
		log_info("%s: no IPv6 here; :: serves IPv4 (0.0.0.0)", o->what);
		httpd_addr(o->what, "0.0.0.0", o->port, &ss, &v6);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    0);
	}
	if (fd < 0)
		goto fail;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)))
		goto fail;
	if (bind(fd, (struct sockaddr *)&ss,
		 v6 ? sizeof(struct sockaddr_in6)
		    : sizeof(struct sockaddr_in)) ||
	    listen(fd, HTTPD_BACKLOG))
		goto fail;
	*is_v6 = v6;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
		*port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
				 : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
fail:
	one = errno; /* close() may change it */
	if (fd >= 0)
		close(fd);
	log_err("%s: cannot listen on %s%s%s port %u: %s", o->what,
		v6 ? "[" : "", o->listen, v6 ? "]" : "", o->port,
		strerror(one));
	return -one;
}

/*
 * Each connection is a descriptor: raise the soft limit to what
 * max_connections needs, or lower max_connections to what it allows
 * (accept() failing with EMFILE would stall MHD's worker).
 */
static unsigned httpd_fd_budget(const struct httpd_opts *o)
{
	/* plain HTTP: the client's socket and a socketpair (httpd_front.c) */
	rlim_t per = o->tls_cert_pem ? 1 : 3;
	rlim_t need = per * o->max_connections + HTTPD_SPARE_FDS;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return o->max_connections;
	if (rl.rlim_cur < need) {
		rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur >= need)
		return o->max_connections;
	log_warn("%s: max_connections %u needs %llu file descriptors, the "
		 "limit is %llu (LimitNOFILE=): serving at most %llu",
		 o->what, o->max_connections, (unsigned long long)need,
		 (unsigned long long)rl.rlim_cur,
		 (unsigned long long)((rl.rlim_cur - HTTPD_SPARE_FDS) / per));
	return rl.rlim_cur > 2 * HTTPD_SPARE_FDS
		       ? (unsigned)((rl.rlim_cur - HTTPD_SPARE_FDS) / per)
		       : HTTPD_SPARE_FDS / (unsigned)per;
}

/* 400 with Connection: close, in the server's error format. */
static enum MHD_Result httpd_reject(struct httpd *h, struct MHD_Connection *c,
				    const char *msg)
{
	struct buf b;
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *body;
	size_t len;

	buf_init(&b, 4096);
	if (h->o.json_errors) /* the gate's messages need no escaping */
		buf_printf(&b, "{\"error\":\"%s\"}", msg);
	else
		buf_printf(&b, "%s\n", msg);
	body = buf_steal(&b, &len);
	if (!body)
		return MHD_NO;
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				h->o.json_errors ? "application/json"
						 : "text/plain; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(c, MHD_HTTP_BAD_REQUEST, r);
	MHD_destroy_response(r);
	log_once(msg, 60, LOG_LVL_INFO, "http: 400: %s", msg);
	return ret;
}

/* Every handler call: the gate on a request's first, then the handler. */
static enum MHD_Result httpd_dispatch(void *cls, struct MHD_Connection *c,
				      const char *url, const char *method,
				      const char *version,
				      const char *upload_data,
				      size_t *upload_data_size, void **con_cls)
{
	struct httpd *h = cls;
	struct httpd_conn *hc = guard_conn(c);

	if (hc && !hc->busy) {
		char err[160];

		guard_begin(&h->guard, hc);
		if (httpd_check_request(c, version, err, sizeof(err)))
			return httpd_reject(h, c, err);
	}
	return h->o.handler(h->o.handler_cls, c, url, method, version,
			    upload_data, upload_data_size, con_cls);
}

static void httpd_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			    enum MHD_RequestTerminationCode toe)
{
	struct httpd *h = cls;
	struct httpd_conn *hc = guard_conn(c);

	if (hc && hc->busy)
		guard_end(&h->guard, hc);
	if (h->o.completed)
		h->o.completed(h->o.completed_cls, c, con_cls, toe);
}

/*
 * MHD on @fd (TLS: MHD reads the socket itself), or with no listen socket
 * of its own (plain HTTP: the front accepts and hands it connections).
 */
static struct MHD_Daemon *httpd_mhd_start(struct httpd *h, int fd, bool v6)
{
	const struct httpd_opts *o = &h->o;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
			 MHD_USE_ERROR_LOG;
	unsigned threads = o->threads > 1 ? o->threads : 1;
	/* Options that only some setups use go last, cut with MHD_OPTION_END */
	struct MHD_OptionItem opts[] = {
		{MHD_OPTION_CONNECTION_TIMEOUT, o->idle_timeout, NULL},
		/* each worker may hold all, and as many closing (doomed by
		 * the guard, not yet closed by MHD under a flood) */
		{MHD_OPTION_CONNECTION_LIMIT,
		 (intptr_t)(2 * h->guard.max + HTTPD_MHD_SPARE) * threads,
		 NULL},
		{MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)guard_notify,
		 &h->guard},
		{MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)httpd_completed, h},
		{MHD_OPTION_END, 0, NULL}, /* listen socket */
		{MHD_OPTION_END, 0, NULL}, /* per-IP limit */
		{MHD_OPTION_END, 0, NULL}, /* connection memory */
		{MHD_OPTION_END, 0, NULL}, /* thread pool */
		{MHD_OPTION_END, 0, NULL}, /* TLS key */
		{MHD_OPTION_END, 0, NULL}, /* TLS cert */
		{MHD_OPTION_END, 0, NULL},
	};
	size_t n = 4;

	if (o->tls_cert_pem)
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET,
						    fd, NULL};
	else
		flags |= MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC;
	if (o->per_ip_limit)
		opts[n++] = (struct MHD_OptionItem){
			MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->per_ip_limit,
			NULL};
	if (o->connection_memory)
		opts[n++] = (struct MHD_OptionItem){
			MHD_OPTION_CONNECTION_MEMORY_LIMIT,
			(intptr_t)o->connection_memory, NULL};
	if (threads > 1)
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE,
						    threads, NULL};
	if (o->tls_cert_pem) {
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0,
						    (void *)o->tls_key_pem};
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT,
						    0, (void *)o->tls_cert_pem};
		flags |= MHD_USE_TLS;
	}
	if (v6)
		flags |= MHD_USE_IPv6;
	if (o->suspend_resume)
		flags |= MHD_ALLOW_SUSPEND_RESUME;
	/* plain HTTP: the front admits (guard_admit()) before MHD sees it */
	return MHD_start_daemon(flags, 0, o->tls_cert_pem ? guard_accept : NULL,
				&h->guard, httpd_dispatch, h,
				/* first, so MHD logs nothing on its own */
				MHD_OPTION_EXTERNAL_LOGGER, httpd_log, NULL,
				MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
}

int httpd_start(const struct httpd_opts *o, struct httpd **out)
{
	struct httpd *h;
	int fd, ret;
	bool v6 = false;

	if (!o->tls_cert_pem != !o->tls_key_pem)
		return -EINVAL;
	if (o->tls_cert_pem &&
	    MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		log_err("%s: TLS is configured but this libmicrohttpd has no "
			"TLS support",
			o->what);
		return -ENOTSUP;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->o = *o;
	guard_init(&h->guard, httpd_fd_budget(o), o->header_timeout,
		   o->idle_timeout, o->request_timeout);
	fd = httpd_listen_fd(o, &h->port, &v6);
	if (fd < 0) {
		guard_destroy(&h->guard);
		free(h);
		return fd;
	}
	h->mhd = httpd_mhd_start(h, fd, v6);
	if (h->mhd && !o->tls_cert_pem) {
		size_t mem = o->connection_memory ? o->connection_memory
						  : HTTPD_MHD_MEMORY;

		/* a head takes at most a quarter of MHD's pool: MHD never
		 * runs out of room for one and answers 414 or 431 itself */
		ret = front_start(fd, h->mhd, &h->guard, mem / 4,
				  o->json_errors, &h->front);
		if (ret) {
			log_err("%s: cannot start the connection front: %s",
				o->what, strerror(-ret));
			MHD_stop_daemon(h->mhd);
			h->mhd = NULL;
		}
	}
	if (!h->mhd) {
		log_err("%s: cannot serve on %s port %u%s", o->what, o->listen,
			h->port,
			o->tls_cert_pem ? " (bad TLS certificate or key?)"
					: "");
		close(fd);
		guard_destroy(&h->guard);
		free(h);
		return -EINVAL;
	}
	ret = guard_start(&h->guard);
	if (ret) {
		httpd_stop(h);
		return ret;
	}
	*out = h;
	return 0;
}

unsigned httpd_bound_port(const struct httpd *h)
{
	return h->port;
}

void httpd_quiesce(struct httpd *h)
{
	MHD_socket s;

	if (h->front) {
		front_quiesce(h->front);
		return;
	}
	s = MHD_quiesce_daemon(h->mhd);
	if (s != MHD_INVALID_SOCKET)
		close(s);
}

void httpd_stop(struct httpd *h)
{
	if (!h)
		return;
	guard_stop(&h->guard);
	front_stop(h->front); /* MHD sees each connection end */
	if (h->mhd)
		MHD_stop_daemon(h->mhd);
	guard_destroy(&h->guard);
	free(h);
}

void httpd_log(void *cls, const char *fmt, va_list ap)
{
	/* TCP options MHD tries on the front's socketpairs (not TCP) */
	static const char *const quiet[] = {"TCP_NODELAY", "TCP_CORK",
					    "Failed to push the data"};
	char line[512];
	size_t n;

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	for (size_t i = 0; i < sizeof(quiet) / sizeof(*quiet); i++)
		if (strstr(line, quiet[i])) {
			log_debug("http: %s", line);
			return;
		}
	log_once(line, 60, LOG_LVL_WARN, "http: %s", line);
}

enum MHD_Result httpd_send(struct MHD_Connection *c, unsigned status,
			   const char *type, char *body, size_t len,
			   const char *encoding)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (encoding)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING,
					encoding);
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY,
				"Accept, Accept-Encoding");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result httpd_text_hdr(struct MHD_Connection *c, unsigned status,
			       const char *msg, const char *name,
			       const char *value)
{
	size_t len = strlen(msg);
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *body = malloc(len + 2);

	if (!body)
		return MHD_NO;
	memcpy(body, msg, len);
	body[len] = '\n';
	body[len + 1] = '\0';
	r = MHD_create_response_from_buffer(len + 1, body,
					    MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (name)
		MHD_add_response_header(r, name, value);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result httpd_text(struct MHD_Connection *c, unsigned status,
			   const char *msg)
{
	return httpd_text_hdr(c, status, msg, NULL, NULL);
}

int httpd_get_gate(struct MHD_Connection *c, const char *method,
		   size_t *upload_data_size, void **con_cls,
		   enum MHD_Result *ret)
{
	*ret = MHD_YES;
	if (!*con_cls) {
		*con_cls = c; /* any non-NULL: headers seen */
		return 0;
	}
	if (*upload_data_size) { /* GET has no body; drop any */
		*upload_data_size = 0;
		return 0;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		*ret = httpd_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "method not allowed: use GET");
		return 0;
	}
	return 1;
}

const char *httpd_header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

int httpd_read_pem(const char *path, char **out)
{
	char chunk[4096];
	struct buf b;
	size_t n;
	int ret = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		ret = -errno;
		log_err("cannot open %s: %s", path, strerror(-ret));
		return ret;
	}
	buf_init(&b, HTTPD_MAX_PEM);
	while (!ret && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		ret = buf_add(&b, chunk, n);
	fclose(f);
	if (ret || !b.len) {
		log_err("%s: empty or larger than %d bytes", path,
			HTTPD_MAX_PEM);
		buf_free(&b);
		return -EINVAL;
	}
	*out = buf_steal(&b, NULL);
	return *out ? 0 : -ENOMEM;
}
