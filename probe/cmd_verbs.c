// SPDX-License-Identifier: MIT
/*
 * `ibpulse-probe run` and `serve` (cmd_verbs.h): the verbs engine's
 * command line, through its door (verbs/vtest.h) only. Flag tables of the
 * shared skeleton (common/cli.h) with perftest's short letters where they
 * mean the same, number parsing that names the flag and its range, the
 * shared-secret file, probe.ini with --config (sysfs_root, secret_file,
 * the responder_* keys for `serve`), NUMA pinning to the HCA for `run`,
 * and the stop flag for `serve`.
 */
#include "cmd_verbs.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"
#include "probe_settings.h"
#include "secret.h"
#include "vout.h"
#include "vtest.h"

#define EXIT_USAGE CLI_EXIT_USAGE

static volatile sig_atomic_t serve_stop;

struct cli_opts {
	struct vt_params p;
	struct vt_limits lim;
	char host[256];
	char port[16];
	char bind[256];
	const char *secret_file;
	char secret_path[4096]; /* probe.ini's secret_file */
	uint8_t secret[SECRET_MAX_LEN];
	bool json;
	bool no_pin;
	bool once;
	bool serve;
	char *err; /* where a bad flag's reason goes */
	size_t errlen;
	struct cli_args a;
};

static int bad(struct cli_opts *o, const char *flag, const char *val,
	       const char *range)
{
	snprintf(o->err, o->errlen, "%s '%s': expected %s", flag, val, range);
	return -EINVAL;
}

static int num_u(struct cli_opts *o, const char *flag, const char *s,
		 unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		char range[64];

		snprintf(range, sizeof(range), "an integer in %lu..%lu", min,
			 max);
		return bad(o, flag, s, range);
	}
	*out = v;
	return 0;
}

static int num_d(struct cli_opts *o, const char *flag, const char *s,
		 double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max)) {
		char range[64];

		snprintf(range, sizeof(range), "a number in %g..%g", min, max);
		return bad(o, flag, s, range);
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
			return bad(o, "--peer", s,
				   "HOST[:PORT] or [IPV6]:PORT");
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
		return bad(o, "--peer", s, "HOST[:PORT]");
	memcpy(o->host, s, hl);
	o->host[hl] = '\0';
	if (colon) {
		unsigned long v;

		if (num_u(o, "--peer port", colon + 1, 1, 65535, &v))
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
		fprintf(stderr, "ibpulse-probe %s: %s\n",
			o->serve ? "serve" : "run", err);
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
	OPT_DLID,
};

/* Device, port, addressing and output: both commands. */
#define VERBS_COMMON_FLAGS                                                     \
	{"device", 'd', "DEV", NULL, 'd', "RDMA device (default: the first)"}, \
		{"ib-port", 'i', "PORT", NULL, 'i', "port of the device (1)"}, \
		{"port",                                                       \
		 'p',                                                          \
		 "PORT",                                                       \
		 NULL,                                                         \
		 'p',                                                          \
		 "TCP port of the control channel (" VT_DEFAULT_PORT ")"},     \
		{"gid-index", 'x', "N", NULL, 'x', "GID table index"},         \
		{"gid",                                                        \
		 0,                                                            \
		 "SEL",                                                        \
		 NULL,                                                         \
		 OPT_GID,                                                      \
		 "GID by type or address: v2, v1, ipv4, ipv6, v2-ipv4, ADDR"}, \
		{"pkey-index",	     0, "N", NULL, OPT_PKEY_INDEX,             \
		 "P_Key table index"},                                         \
		{"pkey", 0, "VAL", NULL, OPT_PKEY, "P_Key by value"},          \
		{"secret-file",                                                \
		 0,                                                            \
		 "F",                                                          \
		 NULL,                                                         \
		 OPT_SECRET,                                                   \
		 "shared secret authenticating the test (both ends)"},         \
		{"json", 0, NULL, NULL, OPT_JSON, "results as JSON"},          \
		{"sysfs-root", 0,	  "DIR",                               \
		 NULL,	       OPT_SYSFS, "sysfs mount point (/sys)"},         \
		{"timeout",   0,                                               \
		 "SEC",	      NULL,                                            \
		 OPT_TIMEOUT, "seconds each control step may take (10)"},      \
		{"config",                                                     \
		 0,                                                            \
		 "FILE",                                                       \
		 NULL,                                                         \
		 CLI_CONFIG,                                                   \
		 "probe.ini: sysfs_root, secret_file (and for serve the "      \
		 "responder_* keys) under these flags"},                       \
	{                                                                      \
		"log-level", 0, "LEVEL", "log_level", 0,                       \
			"error, warn, info or debug"                           \
	}

static const struct cli_flag run_flags[] = {
	{"peer", 0, "HOST[:PORT]", NULL, OPT_PEER, "the responder (required)"},
	{"peer-device", 0, "DEV", NULL, OPT_PEER_DEVICE,
	 "the responder's device (default: its own choice)"},
	{"peer-ib-port", 0, "N", NULL, OPT_PEER_IB_PORT,
	 "the responder's port (default: its own choice)"},
	{"dlid", 0, "LID", NULL, OPT_DLID,
	 "InfiniBand: send to this of the responder port's LIDs (LMC > 0: "
	 "its path)"},
	VERBS_COMMON_FLAGS,
	{"sl", 0, "N", NULL, OPT_SL, "service level 0..15"},
	{"tclass", 0, "N", NULL, OPT_TCLASS, "traffic class 0..255"},
	{"mtu", 'm', "MTU", NULL, 'm', "path MTU, bytes (the port's active)"},
	{"qps", 'q', "QPS", NULL, 'q', "queue pairs (1)"},
	{"size", 's', "SIZE", NULL, 's', "bytes per message"},
	{"tx-depth", 't', "DEPTH", NULL, 't', "send queue depth"},
	{"iters", 'n', "ITERS", NULL, 'n', "iterations (5000 bw, 1000 lat)"},
	{"duration", 'D', "SEC", NULL, 'D', "run for SEC seconds instead"},
	{"margin", 0, "SEC", NULL, OPT_MARGIN,
	 "with -D: seconds left out at each end"},
	{"inline", 0, "N", NULL, OPT_INLINE, "inline bytes"},
	{"cq-mod", 0, "N", NULL, OPT_CQ_MOD, "completions per signal"},
	{"post-list", 0, "N", NULL, OPT_POST_LIST, "work requests per post"},
	{"bidirectional", 'b', NULL, NULL, 'b', "both directions at once"},
	{"outs", 0, "N", NULL, OPT_OUTS, "outstanding reads and atomics"},
	{"interval", 0, "SEC", NULL, OPT_INTERVAL,
	 "sub-interval for min and peak bandwidth (0.1)"},
	{"verify", 0, NULL, NULL, OPT_VERIFY,
	 "check a known pattern at the receiver"},
	{"no-pin", 0, NULL, NULL, OPT_NO_PIN,
	 "do not pin to the HCA's NUMA node"},
	{0},
};

static const struct cli_flag serve_flags[] = {
	VERBS_COMMON_FLAGS,
	{"bind", 0, "ADDR", NULL, OPT_BIND, "address to listen on (every)"},
	{"max-size", 0, "B", NULL, OPT_MAX_SIZE,
	 "largest message a peer may ask"},
	{"max-qps", 0, "N", NULL, OPT_MAX_QPS, "most QPs a peer may ask"},
	{"max-duration", 0, "S", NULL, OPT_MAX_DURATION,
	 "longest test a peer may ask, seconds"},
	{"max-iters", 0, "N", NULL, OPT_MAX_ITERS,
	 "most iterations a peer may ask"},
	{"max-concurrent", 0, "N", NULL, OPT_MAX_CONC, "tests at once"},
	{"once", 0, NULL, NULL, OPT_ONCE, "answer one client, then exit"},
	{0},
};

const struct cli_cmd cmd_verbs_run_cli = {
	.prog = "ibpulse-probe",
	.name = "run",
	.args = "TEST",
	.max_args = 1,
	.about = "Run one verbs test against a responder (`ibpulse-probe "
		 "serve` or a daemon)\nand print what both ends measured. "
		 "TEST: write_bw read_bw send_bw write_lat\nread_lat send_lat "
		 "fadd_lat cas_lat fadd_bw cas_bw ud_send_lat. docs/verbs.md.",
	.flags = run_flags,
	.others = serve_flags,
};

const struct cli_cmd cmd_verbs_serve_cli = {
	.prog = "ibpulse-probe",
	.name = "serve",
	.about = "Answer verbs tests from `ibpulse-probe run` until SIGINT or "
		 "SIGTERM.\ndocs/verbs.md.",
	.flags = serve_flags,
	.others = run_flags,
};

/* "--name" of the flag with id @opt, for messages. */
static const char *flag_name(int opt, char *buf, size_t len)
{
	static const struct cli_flag *const tables[] = {run_flags, serve_flags};

	for (size_t t = 0; t < 2; t++)
		for (const struct cli_flag *f = tables[t]; f->name; f++)
			if (f->id == opt && !f->key) {
				snprintf(buf, len, "--%s", f->name);
				return buf;
			}
	return "option";
}

/* Device, port and addressing options shared by run and serve. */
static int opt_port(struct cli_opts *o, int opt, const char *a)
{
	char fb[40];
	const char *f = flag_name(opt, fb, sizeof(fb));
	unsigned long v;
	struct vt_params *p = &o->p;

	switch (opt) {
	case 'd':
		if (strlen(a) >= sizeof(p->device))
			return bad(o, f, a, "a device name");
		snprintf(p->device, sizeof(p->device), "%s", a);
		return 0;
	case 'i':
		return num_u(o, f, a, 1, 255, &v)
			       ? -EINVAL
			       : (p->ib_port = (unsigned)v, 0);
	case 'p':
		if (num_u(o, f, a, 0, 65535, &v))
			return -EINVAL;
		snprintf(o->port, sizeof(o->port), "%lu", v);
		return 0;
	case 'x':
		return num_u(o, f, a, 0, 255, &v) ? -EINVAL
						  : (p->gid_index = (int)v, 0);
	case OPT_GID:
		if (strlen(a) >= sizeof(p->gid_sel))
			return bad(o, f, a, "a GID selector");
		snprintf(p->gid_sel, sizeof(p->gid_sel), "%s", a);
		return 0;
	case OPT_PKEY_INDEX:
		return num_u(o, f, a, 0, 127, &v) ? -EINVAL
						  : (p->pkey_index = (int)v, 0);
	case OPT_PKEY:
		if (num_u(o, f, a, 1, 0xffff, &v) || !(v & 0x7fff))
			return bad(o, f, a,
				   "a P_Key value 0x0001..0xffff, not 0x8000");
		p->pkey = (unsigned)v;
		return 0;
	case OPT_SYSFS:
		snprintf(p->sysfs_root, sizeof(p->sysfs_root), "%s", a);
		return 0;
	case OPT_TIMEOUT:
		return num_d(o, f, a, 0.1, 3600, &p->timeout_s);
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
	{OPT_DLID, false, NUM_UINT, 1, 49151, P(dlid)},
	{OPT_MAX_SIZE, true, NUM_U32, 1, 1u << 30, L(max_size)},
	{OPT_MAX_QPS, true, NUM_UINT, 1, 64, L(max_qps)},
	{OPT_MAX_DURATION, true, NUM_DBL, 0.2, 86400, L(max_duration_s)},
	{OPT_MAX_ITERS, true, NUM_U32, 1, 100000000, L(max_iters)},
	{OPT_MAX_CONC, true, NUM_UINT, 1, 64, L(max_concurrent)},
};

/* 0 parsed, 1 not a numeric option of this command, < 0 bad value. */
static int opt_num(struct cli_opts *o, int opt, const char *a, bool serve)
{
	char fb[40];
	const char *f = flag_name(opt, fb, sizeof(fb));
	unsigned long v;
	size_t i;

	for (i = 0; i < sizeof(num_opts) / sizeof(num_opts[0]); i++) {
		const struct num_opt *n = &num_opts[i];
		void *dst = (char *)o + n->off; /* the option's field */

		if (n->opt != opt || n->serve != serve)
			continue;
		if (n->kind == NUM_DBL)
			return num_d(o, f, a, n->min, n->max, dst);
		if (num_u(o, f, a, (unsigned long)n->min, (unsigned long)n->max,
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
		snprintf(o->bind, sizeof(o->bind), "%s", a);
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
		if (!*a || strlen(a) > VT_DEV_NAME_MAX || !vt_dev_name_ok(a))
			return bad(o, "--peer-device", a,
				   "a device name of 1 to 63 characters of "
				   "[A-Za-z0-9_.-]");
		snprintf(o->p.peer_device, sizeof(o->p.peer_device), "%s", a);
		return 0;
	}
	return opt_num(o, opt, a, serve);
}

/* One flag of run or serve: cli_flag_fn. */
static int on_flag(void *arg, int opt, const char *a, char *err, size_t errlen)
{
	struct cli_opts *o = arg;
	int rc;

	o->err = err;
	o->errlen = errlen;
	rc = opt_port(o, opt, a ? a : "");
	if (rc > 0)
		rc = opt_other(o, opt, a ? a : "", o->serve);
	return rc > 0 ? 0 : rc;
}

/*
 * probe.ini (--config) under the flags: what the file says becomes the
 * defaults the flags then override. Without --config nothing is read
 * (a test from the command line is what its flags say).
 */
static int apply_config(struct cli_opts *o, const struct cli_cmd *cmd)
{
	struct cli_conf cf = probe_conf;
	struct probe_settings s;
	char err[512];
	int ret;

	cf.default_path = NULL;
	ret = cli_load(&cf, &o->a, &s, err, sizeof(err));
	if (ret)
		cli_error(cmd, "%s", err);
	if (ret || !o->a.config) {
		cli_free(&cf, &s);
		return ret;
	}
	snprintf(o->p.sysfs_root, sizeof(o->p.sysfs_root), "%s", s.sysfs_root);
	if (s.secret_file) {
		snprintf(o->secret_path, sizeof(o->secret_path), "%s",
			 s.secret_file);
		o->secret_file = o->secret_path;
	}
	if (o->serve) {
		snprintf(o->bind, sizeof(o->bind), "%s",
			 s.responder_listen ? s.responder_listen : "");
		snprintf(o->port, sizeof(o->port), "%lld", s.responder_port);
		snprintf(o->p.device, sizeof(o->p.device), "%s",
			 s.responder_device ? s.responder_device : "");
		o->p.ib_port = (unsigned)s.responder_ib_port;
		o->lim.max_size = (uint32_t)s.responder_max_size;
		o->lim.max_qps = (unsigned)s.responder_max_qps;
		o->lim.max_duration_s = s.responder_max_duration;
		o->lim.max_iters = (uint32_t)s.responder_max_iters;
	}
	cli_free(&cf, &s);
	return 0;
}

static int parse(struct cli_opts *o, int argc, char **argv, bool serve)
{
	const struct cli_cmd *cmd =
		serve ? &cmd_verbs_serve_cli : &cmd_verbs_run_cli;
	int rc;

	o->serve = serve;
	rc = cli_parse(cmd, argc, argv, &o->a, on_flag, o);
	if (!rc)
		rc = apply_config(o, cmd);
	if (!rc && o->a.config) /* the flags again, over the file */
		rc = cli_parse(cmd, argc, argv, &o->a, on_flag, o);
	if (rc)
		return rc;
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

	snprintf(dev, sizeof(dev), "%s", p->device);
	if (!dev[0] && vt_first_device(dev, sizeof(dev)))
		return;
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

int cmd_verbs_run(int argc, char **argv)
{
	struct cli_opts *o = calloc(1, sizeof(*o));
	struct vt_result *res = calloc(1, sizeof(*res));
	char err[VT_ERR_MAX];
	int ret = EXIT_USAGE, rc;

	if (!o || !res)
		goto out;
	vt_params_default(&o->p);
	rc = parse(o, argc, argv, false);
	if (rc) {
		ret = rc > 0 ? EXIT_SUCCESS : EXIT_USAGE;
		goto out;
	}
	if (o->a.n_pos != 1 || !(o->p.test = vt_test_parse(o->a.pos[0]))) {
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

	rc = vt_listen(o->bind[0] ? o->bind : NULL,
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

int cmd_verbs_serve(int argc, char **argv)
{
	struct cli_opts *o = calloc(1, sizeof(*o));
	struct vt_serve_cfg cfg;
	int ret = EXIT_USAGE, rc;

	if (!o)
		return EXIT_FAILURE;
	vt_params_default(&o->p);
	vt_limits_default(&o->lim);
	rc = parse(o, argc, argv, true);
	if (rc) {
		ret = rc > 0 ? EXIT_SUCCESS : EXIT_USAGE;
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
