// SPDX-License-Identifier: MIT
/*
 * Command-line front end of the verbs engine: option tables for `run` and
 * `serve` with perftest's short letters where they mean the same, number
 * parsing that names the flag and its range, the shared-secret file, NUMA
 * pinning to the HCA for `run`, and the stop flag for `serve`.
 */
#include "verbs_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "ctrl.h"
#include "log.h"
#include "output.h"
#include "secret.h"
#include "vtest.h"

#define EXIT_USAGE 2

static volatile sig_atomic_t serve_stop;

struct cli_opts {
	struct vt_params p;
	struct vt_limits lim;
	char host[256];
	char port[16];
	char bind[256];
	const char *secret_file;
	uint8_t secret[SECRET_MAX_LEN];
	bool json;
	bool no_pin;
	bool once;
};

static int bad(const char *flag, const char *val, const char *range)
{
	fprintf(stderr, "ibpulse-probe: %s '%s': expected %s\n", flag, val,
		range);
	return -EINVAL;
}

static int num_u(const char *flag, const char *s, unsigned long min,
		 unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		char range[64];

		snprintf(range, sizeof(range), "an integer in %lu..%lu", min,
			 max);
		return bad(flag, s, range);
	}
	*out = v;
	return 0;
}

static int num_d(const char *flag, const char *s, double min, double max,
		 double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max)) {
		char range[64];

		snprintf(range, sizeof(range), "a number in %g..%g", min, max);
		return bad(flag, s, range);
	}
	*out = v;
	return 0;
}

/* HOST, HOST:PORT, [V6]:PORT or a bare IPv6 address. */
static int split_peer(const char *s, struct cli_opts *o)
{
	const char *colon = strrchr(s, ':');
	size_t hl;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || (rb[1] && rb[1] != ':'))
			return bad("--peer", s, "HOST[:PORT] or [IPV6]:PORT");
		hl = (size_t)(rb - s - 1);
		colon = rb[1] ? rb + 1 : NULL;
		s++;
	} else if (colon && strchr(s, ':') != colon) {
		colon = NULL; /* a bare IPv6 address */
		hl = strlen(s);
	} else {
		hl = colon ? (size_t)(colon - s) : strlen(s);
	}
	if (!hl || hl >= sizeof(o->host))
		return bad("--peer", s, "HOST[:PORT]");
	memcpy(o->host, s, hl);
	o->host[hl] = '\0';
	if (colon) {
		unsigned long v;

		if (num_u("--peer port", colon + 1, 1, 65535, &v))
			return -EINVAL;
		snprintf(o->port, sizeof(o->port), "%lu", v);
	}
	return 0;
}

/* Read the secret: at least 16 bytes, trailing newlines dropped. */
static int read_secret(struct cli_opts *o)
{
	char err[512];

	if (secret_read(o->secret_file, "--secret-file", o->secret,
			sizeof(o->secret), &o->p.secret_len, err,
			sizeof(err))) {
		fprintf(stderr, "ibpulse-probe: %s\n", err);
		return -EINVAL;
	}
	o->p.secret = o->secret;
	return 0;
}

enum {
	OPT_GID = 256,
	OPT_PKEY_INDEX,
	OPT_PKEY,
	OPT_SL,
	OPT_TCLASS,
	OPT_INLINE,
	OPT_CQ_MOD,
	OPT_POST_LIST,
	OPT_OUTS,
	OPT_SECRET,
	OPT_JSON,
	OPT_SYSFS,
	OPT_PEER,
	OPT_MARGIN,
	OPT_INTERVAL,
	OPT_TIMEOUT,
	OPT_NO_PIN,
	OPT_BIND,
	OPT_MAX_SIZE,
	OPT_MAX_QPS,
	OPT_MAX_DURATION,
	OPT_MAX_ITERS,
	OPT_MAX_CONC,
	OPT_ONCE,
	OPT_VERIFY,
	OPT_PEER_DEVICE,
	OPT_PEER_IB_PORT,
};

static const struct option long_opts[] = {
	{"device", required_argument, NULL, 'd'},
	{"ib-port", required_argument, NULL, 'i'},
	{"port", required_argument, NULL, 'p'},
	{"gid-index", required_argument, NULL, 'x'},
	{"gid", required_argument, NULL, OPT_GID},
	{"pkey-index", required_argument, NULL, OPT_PKEY_INDEX},
	{"pkey", required_argument, NULL, OPT_PKEY},
	{"sl", required_argument, NULL, OPT_SL},
	{"tclass", required_argument, NULL, OPT_TCLASS},
	{"mtu", required_argument, NULL, 'm'},
	{"qps", required_argument, NULL, 'q'},
	{"size", required_argument, NULL, 's'},
	{"tx-depth", required_argument, NULL, 't'},
	{"iters", required_argument, NULL, 'n'},
	{"duration", required_argument, NULL, 'D'},
	{"margin", required_argument, NULL, OPT_MARGIN},
	{"inline", required_argument, NULL, OPT_INLINE},
	{"cq-mod", required_argument, NULL, OPT_CQ_MOD},
	{"post-list", required_argument, NULL, OPT_POST_LIST},
	{"bidirectional", no_argument, NULL, 'b'},
	{"outs", required_argument, NULL, OPT_OUTS},
	{"interval", required_argument, NULL, OPT_INTERVAL},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"secret-file", required_argument, NULL, OPT_SECRET},
	{"json", no_argument, NULL, OPT_JSON},
	{"sysfs-root", required_argument, NULL, OPT_SYSFS},
	{"peer", required_argument, NULL, OPT_PEER},
	{"peer-device", required_argument, NULL, OPT_PEER_DEVICE},
	{"peer-ib-port", required_argument, NULL, OPT_PEER_IB_PORT},
	{"no-pin", no_argument, NULL, OPT_NO_PIN},
	{"bind", required_argument, NULL, OPT_BIND},
	{"max-size", required_argument, NULL, OPT_MAX_SIZE},
	{"max-qps", required_argument, NULL, OPT_MAX_QPS},
	{"max-duration", required_argument, NULL, OPT_MAX_DURATION},
	{"max-iters", required_argument, NULL, OPT_MAX_ITERS},
	{"max-concurrent", required_argument, NULL, OPT_MAX_CONC},
	{"once", no_argument, NULL, OPT_ONCE},
	{"verify", no_argument, NULL, OPT_VERIFY},
	{0},
};

static const char *flag_name(int opt)
{
	static char buf[40];
	const struct option *lo;

	for (lo = long_opts; lo->name; lo++) {
		if (lo->val == opt) {
			snprintf(buf, sizeof(buf), "--%s", lo->name);
			return buf;
		}
	}
	return "option";
}

/* Device, port and addressing options shared by run and serve. */
static int opt_port(struct cli_opts *o, int opt, const char *a)
{
	const char *f = flag_name(opt);
	unsigned long v;
	struct vt_params *p = &o->p;

	switch (opt) {
	case 'd':
		if (strlen(a) >= sizeof(p->device))
			return bad(f, a, "a device name");
		ctrl_strlcpy(p->device, a, sizeof(p->device));
		return 0;
	case 'i':
		return num_u(f, a, 1, 255, &v) ? -EINVAL
					       : (p->ib_port = (unsigned)v, 0);
	case 'p':
		if (num_u(f, a, 0, 65535, &v))
			return -EINVAL;
		snprintf(o->port, sizeof(o->port), "%lu", v);
		return 0;
	case 'x':
		return num_u(f, a, 0, 255, &v) ? -EINVAL
					       : (p->gid_index = (int)v, 0);
	case OPT_GID:
		if (strlen(a) >= sizeof(p->gid_sel))
			return bad(f, a, "a GID selector");
		ctrl_strlcpy(p->gid_sel, a, sizeof(p->gid_sel));
		return 0;
	case OPT_PKEY_INDEX:
		return num_u(f, a, 0, 127, &v) ? -EINVAL
					       : (p->pkey_index = (int)v, 0);
	case OPT_PKEY:
		if (num_u(f, a, 1, 0xffff, &v) || !(v & 0x7fff))
			return bad(f, a,
				   "a P_Key value 0x0001..0xffff, not 0x8000");
		p->pkey = (unsigned)v;
		return 0;
	case OPT_SYSFS:
		ctrl_strlcpy(p->sysfs_root, a, sizeof(p->sysfs_root));
		return 0;
	case OPT_TIMEOUT:
		return num_d(f, a, 0.1, 3600, &p->timeout_s);
	case OPT_SECRET:
		o->secret_file = a;
		return 0;
	case OPT_JSON:
		o->json = true;
		return 0;
	}
	return 1;
}

/* Numeric options: one row drives parsing, range and destination. */
enum num_kind { NUM_UINT, NUM_INT, NUM_U32, NUM_DBL };

struct num_opt {
	int opt;
	bool serve; /* a responder option, else a client one */
	enum num_kind kind;
	double min, max;
	size_t off; /* into struct cli_opts */
};

#define P(f) offsetof(struct cli_opts, p.f)
#define L(f) offsetof(struct cli_opts, lim.f)

static const struct num_opt num_opts[] = {
	{OPT_SL, false, NUM_UINT, 0, 15, P(sl)},
	{OPT_TCLASS, false, NUM_UINT, 0, 255, P(tclass)},
	{'m', false, NUM_UINT, 256, 4096, P(mtu)},
	{'q', false, NUM_UINT, 1, 64, P(qps)},
	{'s', false, NUM_U32, 1, 1u << 30, P(size)},
	{'t', false, NUM_UINT, 1, 16384, P(tx_depth)},
	{'n', false, NUM_U32, 1, 100000000, P(iters)},
	{'D', false, NUM_DBL, 0.2, 86400, P(duration_s)},
	{OPT_MARGIN, false, NUM_DBL, 0, 43200, P(margin_s)},
	{OPT_INLINE, false, NUM_INT, 0, 4096, P(inline_size)},
	{OPT_CQ_MOD, false, NUM_INT, 1, 16384, P(cq_mod)},
	{OPT_POST_LIST, false, NUM_UINT, 1, 1024, P(post_list)},
	{OPT_OUTS, false, NUM_UINT, 1, 255, P(rd_atomic)},
	{OPT_INTERVAL, false, NUM_DBL, 0.001, 60, P(interval_s)},
	{OPT_PEER_IB_PORT, false, NUM_UINT, 1, 254, P(peer_ib_port)},
	{OPT_MAX_SIZE, true, NUM_U32, 1, 1u << 30, L(max_size)},
	{OPT_MAX_QPS, true, NUM_UINT, 1, 64, L(max_qps)},
	{OPT_MAX_DURATION, true, NUM_DBL, 0.2, 86400, L(max_duration_s)},
	{OPT_MAX_ITERS, true, NUM_U32, 1, 100000000, L(max_iters)},
	{OPT_MAX_CONC, true, NUM_UINT, 1, 64, L(max_concurrent)},
};

/* 0 parsed, 1 not a numeric option of this command, < 0 bad value. */
static int opt_num(struct cli_opts *o, int opt, const char *a, bool serve)
{
	const char *f = flag_name(opt);
	unsigned long v;
	size_t i;

	for (i = 0; i < sizeof(num_opts) / sizeof(num_opts[0]); i++) {
		const struct num_opt *n = &num_opts[i];
		char *dst = (char *)o + n->off;

		if (n->opt != opt || n->serve != serve)
			continue;
		if (n->kind == NUM_DBL)
			return num_d(f, a, n->min, n->max, (double *)dst);
		if (num_u(f, a, (unsigned long)n->min, (unsigned long)n->max,
			  &v))
			return -EINVAL;
		if (n->kind == NUM_INT)
			*(int *)dst = (int)v;
		else if (n->kind == NUM_U32)
			*(uint32_t *)dst = (uint32_t)v;
		else
			*(unsigned *)dst = (unsigned)v;
		return 0;
	}
	return 1;
}

/* Flags and strings of one command. */
static int opt_other(struct cli_opts *o, int opt, const char *a, bool serve)
{
	if (serve && opt == OPT_BIND) {
		ctrl_strlcpy(o->bind, a, sizeof(o->bind));
		return 0;
	}
	if (serve && opt == OPT_ONCE) {
		o->once = true;
		return 0;
	}
	if (!serve && opt == 'b') {
		o->p.bidir = true;
		return 0;
	}
	if (!serve && opt == OPT_VERIFY) {
		o->p.verify = true;
		return 0;
	}
	if (!serve && opt == OPT_NO_PIN) {
		o->no_pin = true;
		return 0;
	}
	if (!serve && opt == OPT_PEER)
		return split_peer(a, o);
	if (!serve && opt == OPT_PEER_DEVICE) {
		if (!*a || strlen(a) > CTRL_DEV_MAX || !ctrl_dev_name_ok(a))
			return bad("--peer-device", a,
				   "a device name of 1 to 63 characters of "
				   "[A-Za-z0-9_.-]");
		ctrl_strlcpy(o->p.peer_device, a, sizeof(o->p.peer_device));
		return 0;
	}
	return opt_num(o, opt, a, serve);
}

static int parse(struct cli_opts *o, int argc, char **argv, bool serve)
{
	const char *shorts = serve ? "+d:i:p:x:" : "d:i:p:x:m:q:s:t:n:D:b";
	int opt, rc;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, long_opts, NULL)) != -1) {
		const char *a = optarg ? optarg : "";

		if (opt == '?' || opt == ':') {
			fprintf(stderr,
				"ibpulse-probe %s: bad or incomplete "
				"option '%s' (try ibpulse-probe --help)\n",
				argv[0], argv[optind - 1]);
			return -EINVAL;
		}
		rc = opt_port(o, opt, a);
		if (rc > 0)
			rc = opt_other(o, opt, a, serve);
		if (rc > 0) {
			fprintf(stderr,
				"ibpulse-probe %s: option %s does not apply "
				"here\n",
				argv[0], flag_name(opt));
			return -EINVAL;
		}
		if (rc)
			return rc;
	}
	if (o->secret_file && read_secret(o))
		return -EINVAL;
	return 0;
}

/* Parse a cpulist ("0-3,8") into @set. */
static void cpulist_parse(const char *s, cpu_set_t *set)
{
	while (*s) {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s)
			return;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		for (; a <= b && a < CPU_SETSIZE; a++)
			CPU_SET(a, set);
		s = *end == ',' ? end + 1 : end;
		if (*s == '\n')
			return;
	}
}

static int read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	return 0;
}

/* Pin to the CPUs of the HCA's NUMA node, like perftest; best effort. */
static void pin_to_hca(const struct vt_params *p)
{
	char path[512], val[1024], dev[VT_NAME_MAX];
	cpu_set_t set;
	long node;

	ctrl_strlcpy(dev, p->device, sizeof(dev));
	if (!dev[0]) {
		int n = 0;
		struct ibv_device **list = ibv_get_device_list(&n);

		if (list && n)
			ctrl_strlcpy(dev, ibv_get_device_name(list[0]),
				     sizeof(dev));
		if (list)
			ibv_free_device_list(list);
	}
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/device/numa_node",
		 p->sysfs_root, dev);
	if (!dev[0] || read_small(path, val, sizeof(val)))
		return;
	node = strtol(val, NULL, 10);
	if (node < 0)
		return;
	snprintf(path, sizeof(path), "%s/devices/system/node/node%ld/cpulist",
		 p->sysfs_root, node);
	if (read_small(path, val, sizeof(val)))
		return;
	CPU_ZERO(&set);
	cpulist_parse(val, &set);
	if (CPU_COUNT(&set) && sched_setaffinity(0, sizeof(set), &set))
		log_debug("cannot pin to NUMA node %ld: %s", node,
			  strerror(errno));
}

int verbs_cmd_run(int argc, char **argv)
{
	struct cli_opts *o = calloc(1, sizeof(*o));
	struct vt_result *res = calloc(1, sizeof(*res));
	char err[VT_ERR_MAX];
	int ret = EXIT_USAGE;

	if (!o || !res)
		goto out;
	vt_params_default(&o->p);
	if (parse(o, argc, argv, false))
		goto out;
	if (optind != argc - 1 || !(o->p.test = vt_test_parse(argv[optind]))) {
		fprintf(stderr,
			"ibpulse-probe run: name one test: write_bw "
			"read_bw send_bw write_lat read_lat send_lat fadd_lat "
			"cas_lat fadd_bw cas_bw ud_send_lat\n");
		goto out;
	}
	if (!o->host[0]) {
		fprintf(stderr, "ibpulse-probe run: --peer HOST[:PORT] is "
				"required\n");
		goto out;
	}
	if (vt_params_check(&o->p, err, sizeof(err))) {
		fprintf(stderr, "ibpulse-probe run: %s\n", err);
		goto out;
	}
	if (!o->no_pin)
		pin_to_hca(&o->p);
	vt_run(&o->p, o->host, o->port[0] ? o->port : VT_DEFAULT_PORT, res);
	if (o->json)
		vout_json(stdout, o->p.test, "client", res, 0);
	else
		vout_table(stdout, o->p.test, res);
	if (res->status)
		fprintf(stderr, "ibpulse-probe run: %s\n", res->error);
	ret = res->status ? EXIT_FAILURE : EXIT_SUCCESS;
out:
	if (o)
		memset(o->secret, 0, sizeof(o->secret));
	free(o);
	free(res);
	return ret;
}

static void on_stop(int sig)
{
	(void)sig;
	serve_stop = 1;
}

struct serve_out {
	bool json;
};

static void on_result(const struct vt_result *res, void *arg)
{
	const struct serve_out *so = arg;

	if (res->status)
		log_warn("test failed: %s", res->error);
	else
		log_info("test done: %s from %s", res->used.device,
			 res->used.remote_gid);
	if (so->json) {
		flockfile(stdout);
		vout_json(stdout, res->test, "responder", res, 1);
		fflush(stdout);
		funlockfile(stdout);
	}
}

static int serve_run(struct cli_opts *o, struct vt_serve_cfg *cfg)
{
	struct serve_out so = {.json = o->json};
	struct sigaction sa = {.sa_handler = on_stop};
	unsigned port = 0;
	int lfd, rc;

	rc = ctrl_listen(o->bind[0] ? o->bind : NULL,
			 o->port[0] ? o->port : VT_DEFAULT_PORT, &lfd, &port);
	if (rc) {
		fprintf(stderr,
			"ibpulse-probe serve: cannot listen on port "
			"%s: %s\n",
			o->port[0] ? o->port : VT_DEFAULT_PORT, strerror(-rc));
		return EXIT_FAILURE;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	printf("listening on port %u\n", port);
	fflush(stdout);
	if (o->once) {
		struct vt_result *res = calloc(1, sizeof(*res));
		int fd = res ? accept4(lfd, NULL, NULL, SOCK_CLOEXEC) : -1;

		rc = -EIO;
		if (fd >= 0) {
			rc = vt_serve_conn(cfg, fd, res);
			on_result(res, &so);
			close(fd);
		}
		free(res);
	} else {
		rc = vt_serve_loop(cfg, lfd, on_result, &so);
	}
	close(lfd);
	return rc ? EXIT_FAILURE : EXIT_SUCCESS;
}

int verbs_cmd_serve(int argc, char **argv)
{
	struct cli_opts *o = calloc(1, sizeof(*o));
	struct vt_serve_cfg cfg;
	int ret = EXIT_USAGE;

	if (!o)
		return EXIT_FAILURE;
	vt_params_default(&o->p);
	vt_limits_default(&o->lim);
	if (parse(o, argc, argv, true))
		goto out;
	if (optind != argc) {
		fprintf(stderr,
			"ibpulse-probe serve: unexpected argument "
			"'%s'\n",
			argv[optind]);
		goto out;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.dev = o->p;
	cfg.limits = o->lim;
	cfg.stop = &serve_stop;
	ret = serve_run(o, &cfg);
out:
	memset(o->secret, 0, sizeof(o->secret));
	free(o);
	return ret;
}
