// SPDX-License-Identifier: MIT
/*
 * One daemon test (dtest.h): engine parameters from a profile, port
 * counters at both ends of the test for the busy-link verdict, the loopback
 * self-test, and the result encoded for POST /api/v1/results.
 */
#include "dtest.h"

#include "vfig.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

bool dtest_busy(const struct vt_portctr *d, const struct dtest_load *t,
		double tol, char *why, size_t len)
{
	/* Headers and acknowledgements: generous slack per message. */
	double slack = 65536.0 + 128.0 * (double)t->msgs;
	unsigned mtu = t->mtu ? t->mtu : 1024;

	why[0] = '\0';
	if (d->has_bytes) {
		uint64_t seen = d->xmit_bytes + d->rcv_bytes;
		double allowed = (double)t->bytes * (1 + tol) + slack;

		if ((double)seen > allowed) {
			snprintf(why, len,
				 "%.1f MB beyond the test's own (port moved "
				 "%llu bytes, the test %llu)",
				 ((double)seen - (double)t->bytes) / 1e6,
				 (unsigned long long)seen,
				 (unsigned long long)t->bytes);
			return true;
		}
	} else if (d->has_pkts) {
		/*
		 * Packet counters say nothing of size: allow data packets
		 * both ways (ping-pong), an ack for each, and both counted
		 * twice when the peer is on the same device (loopback).
		 */
		double pkts = 8.0 * (double)t->msgs *
			      (double)((t->size + mtu - 1) / mtu);
		uint64_t seen = d->xmit_pkts + d->rcv_pkts;

		if ((double)seen > pkts * (1 + tol) + 1000) {
			snprintf(why, len,
				 "port moved %llu packets, the test at most "
				 "%.0f",
				 (unsigned long long)seen, pkts);
			return true;
		}
	}
	if (d->has_wait && d->xmit_wait) {
		snprintf(why, len, "port_xmit_wait rose by %llu",
			 (unsigned long long)d->xmit_wait);
		return true;
	}
	if (d->has_cnp && d->cnp) {
		snprintf(why, len, "congestion notifications rose by %llu",
			 (unsigned long long)d->cnp);
		return true;
	}
	return false;
}

bool dtest_verdict(const struct vt_portctr *local,
		   const struct vt_portctr *remote, const struct dtest_load *t,
		   double tol, char *why, size_t len)
{
	char mine[200], theirs[200];
	bool l = dtest_busy(local, t, tol, mine, sizeof(mine));
	bool r = remote && dtest_busy(remote, t, tol, theirs, sizeof(theirs));

	why[0] = '\0';
	if (l && r)
		snprintf(why, len, "initiator: %s; responder: %s", mine,
			 theirs);
	else if (l)
		snprintf(why, len, "initiator: %s", mine);
	else if (r)
		snprintf(why, len, "responder: %s", theirs);
	return l || r;
}

int dtest_params(const struct dtest_job *job, const char *sysfs_root,
		 double timeout_s, struct vt_params *p, char *err,
		 size_t errlen)
{
	const struct probe_profile *pr = &job->profile;

	vt_params_default(p);
	p->test = vt_test_parse(pr->test);
	snprintf(p->device, sizeof(p->device), "%s", job->device);
	p->ib_port = job->ib_port ? job->ib_port : 1;
	if (pr->gid[0])
		snprintf(p->gid_sel, sizeof(p->gid_sel), "%s", pr->gid);
	p->pkey = (unsigned)pr->pkey;
	p->sl = (unsigned)pr->sl;
	p->qps = (unsigned)pr->qps;
	p->size = (uint32_t)pr->size;
	p->iters = (uint32_t)pr->iters;
	p->duration_s = pr->duration;
	p->timeout_s = timeout_s;
	snprintf(p->sysfs_root, sizeof(p->sysfs_root), "%s", sysfs_root);
	/* The responder's port from the plan or the peer list (v2). */
	if (!job->selftest) {
		snprintf(p->peer_device, sizeof(p->peer_device), "%s",
			 job->peer_device);
		p->peer_ib_port = job->peer_ib_port;
		p->dlid = job->dlid;
		/* A plan entry's ticket (control protocol v3); @job outlives
		 * @p. */
		if (job->has_ticket)
			p->ticket = &job->ticket;
	}
	return vt_params_check(p, err, errlen);
}

enum testapi_outcome dtest_outcome(const struct vt_result *res, bool aborted)
{
	if (aborted)
		return TESTAPI_ABORTED;
	if (!res->status && !res->local.status)
		return TESTAPI_OK;
	if (res->peer_refused)
		return TESTAPI_REFUSED;
	if (res->local.wc_status || res->remote.wc_status)
		return TESTAPI_VERBS_ERROR;
	if (res->status == -ETIMEDOUT || res->local.status == -ETIMEDOUT)
		return TESTAPI_TIMEOUT;
	return TESTAPI_CONTROL_ERROR;
}

static const char *wc_name(int st)
{
	static const char *const names[] = {
		"IBV_WC_SUCCESS",	    "IBV_WC_LOC_LEN_ERR",
		"IBV_WC_LOC_QP_OP_ERR",	    "IBV_WC_LOC_EEC_OP_ERR",
		"IBV_WC_LOC_PROT_ERR",	    "IBV_WC_WR_FLUSH_ERR",
		"IBV_WC_MW_BIND_ERR",	    "IBV_WC_BAD_RESP_ERR",
		"IBV_WC_LOC_ACCESS_ERR",    "IBV_WC_REM_INV_REQ_ERR",
		"IBV_WC_REM_ACCESS_ERR",    "IBV_WC_REM_OP_ERR",
		"IBV_WC_RETRY_EXC_ERR",	    "IBV_WC_RNR_RETRY_EXC_ERR",
		"IBV_WC_LOC_RDD_VIOL_ERR",  "IBV_WC_REM_INV_RD_REQ_ERR",
		"IBV_WC_REM_ABORT_ERR",	    "IBV_WC_INV_EECN_ERR",
		"IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR",
		"IBV_WC_RESP_TIMEOUT_ERR",  "IBV_WC_GENERAL_ERR",
	};

	const size_t n = sizeof(names) / sizeof(*names);

	if (!st)
		return NULL;
	return st > 0 && (size_t)st < n ? names[st] : "IBV_WC_GENERAL_ERR";
}

static json_t *dtest_params_json(const struct dtest_job *job,
				 const struct vt_result *res)
{
	const struct probe_profile *p = &job->profile;
	const int used = res && res->used.device[0];
	/* the typed fields (testapi.h), then the rest for the eyes */
	const struct testapi_params tp = {
		.size = p->size,
		.qps = p->qps,
		.mtu = used ? (int64_t)res->used.mtu : -1,
		.bidirectional = used && res->used.bidir,
		.selftest = job->selftest,
		.dlid = used ? res->used.dlid : 0,
	};
	json_t *o = json_pack("{s:s, s:f, s:I, s:I, s:I}", "test", p->test,
			      "duration", p->duration, "iters",
			      (json_int_t)p->iters, "pkey", (json_int_t)p->pkey,
			      "sl", (json_int_t)p->sl);

	if (o && testapi_params_encode(&tp, o)) {
		json_decref(o);
		return NULL;
	}
	if (o && p->gid[0])
		json_object_set_new(o, "gid", json_string(p->gid));
	if (o && used) {
		json_object_set_new(o, "gid_index",
				    json_integer(res->used.gid_index));
		json_object_set_new(o, "used_pkey",
				    json_integer(res->used.pkey));
		json_object_set_new(o, "used_iters",
				    json_integer(res->used.iters));
	}
	return o;
}

int dtest_encode(const struct dtest_job *job, const struct vt_result *res,
		 const struct dtest_meta *m, enum testapi_outcome outcome,
		 const char *error, char **out)
{
	const char *dev =
		res && res->used.device[0] ? res->used.device : job->device;
	const char *wc =
		res ? wc_name(res->local.wc_status ? res->local.wc_status
						   : res->remote.wc_status)
		    : NULL;
	json_t *params = dtest_params_json(job, res);
	struct testapi_result r;
	int ret;

	*out = NULL;
	testapi_result_init(&r);
	/* The encoder only reads these (testapi.h). */
	r.id = (char *)m->id;
	r.plan_id = (char *)job->plan_id;
	r.profile = (char *)job->profile.name;
	r.test = (char *)job->profile.test;
	r.started = m->started;
	r.duration = m->duration;
	r.local_device = (char *)dev;
	r.local_port = job->ib_port;
	r.peer_host = (char *)job->peer_host;
	r.peer_device = (char *)job->peer_device;
	r.peer_port = job->peer_ib_port;
	r.outcome = outcome;
	r.error = (char *)error;
	r.wc_status = (char *)wc;
	r.busy = m->busy;
	r.busy_reason = m->busy ? (char *)m->busy_why : NULL;
	if (res && outcome == TESTAPI_OK)
		vfig_of(r.fig, res->test, &res->local); /* the client's */
	r.params = params ? json_dumps(params, JSON_COMPACT) : NULL;
	json_decref(params);
	ret = r.params ? testapi_result_encode(&r, out) : -ENOMEM;
	free(r.params);
	return ret;
}

struct loop_srv {
	struct vt_serve_cfg cfg;
	int lfd;
	struct vt_result res;
};

static void *loop_srv_thread(void *arg)
{
	struct loop_srv *s = arg;
	int fd;

	fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0) {
		vt_serve_conn(&s->cfg, fd, &s->res);
		close(fd);
	}
	OPENSSL_thread_stop();
	return NULL;
}

int dtest_selftest(const struct vt_params *p, struct vt_result *res)
{
	struct loop_srv *s = calloc(1, sizeof(*s));
	char port[8];
	unsigned bound;
	pthread_t tid;
	int rc;

	if (!s)
		return -ENOMEM;
	s->cfg.dev = *p;
	vt_limits_default(&s->cfg.limits);
	s->cfg.limits.max_concurrent = 1;
	rc = vt_listen("127.0.0.1", "0", &s->lfd, &bound);
	if (rc) {
		free(s);
		memset(res, 0, sizeof(*res));
		snprintf(res->error, sizeof(res->error),
			 "loopback responder: cannot listen: %s",
			 strerror(-rc));
		res->status = rc;
		return rc;
	}
	if (pthread_create(&tid, NULL, loop_srv_thread, s)) {
		close(s->lfd);
		free(s);
		return -EAGAIN;
	}
	snprintf(port, sizeof(port), "%u", bound);
	rc = vt_run(p, "127.0.0.1", port, res);
	/* A client that never connected leaves accept() waiting: wake it. */
	shutdown(s->lfd, SHUT_RDWR);
	pthread_join(tid, NULL);
	close(s->lfd);
	free(s);
	return rc;
}
