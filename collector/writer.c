// SPDX-License-Identifier: MIT
/*
 * The writer thread and its queue: see writer.h. One mutex guards the
 * queue; the thread never holds it while it talks to SQLite.
 */
#include "writer.h"
#include "now.h"
#include "log.h"
#include "plansvc.h"
#include "report.h"
#include "route_api.h"
#include "store.h"
#include "testapi.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WRITER_IDLE_WAIT 1.0	/* seconds between maintenance runs when idle */
#define WRITER_PRUNE_PAUSE 60.0 /* seconds after a step that found little */
#define WRITER_FAIL_MEMORY 60.0 /* seconds a failed commit keeps health 503 */

struct writer {
	struct store *st;
	struct writer_opts opts;
	pthread_t thread;
	int started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct writer_job *head, *tail;
	int stopping;
	double next_prune, next_checkpoint;
	struct writer_counts counts; /* under lock */
	/* The last transaction that carried data, if it failed to commit
	 * (the writer thread's own: no lock). */
	int data_fail;	  /* 0, or its -errno */
	double data_when; /* CLOCK_MONOTONIC of that failure */
	char data_error[120];
};

static size_t writer_rows(const struct writer_job *job)
{
	const struct report *r = job->report;
	size_t rows = 1;

	if (job->kind == WRITER_RESULTS)
		return rows + job->results->n;
	if (job->kind == WRITER_REGISTER)
		return rows + job->reg->n_ports;
	if (job->kind != WRITER_REPORT)
		return rows;
	for (size_t i = 0; i < r->n_devices; i++)
		for (size_t j = 0; j < r->devices[i].n_ports; j++)
			for (int s = 0; s < CSRC_COUNT; s++)
				rows += r->devices[i].ports[j].n_counters[s];
	return rows;
}

int writer_submit(struct writer *w, struct writer_job *job)
{
	job->rows = writer_rows(job);
	job->next = NULL;
	job->status = 0;
	job->error[0] = '\0';
	job->answer = NULL;
	job->stored = job->duplicates = 0;
	memset(&job->stats, 0, sizeof(job->stats));
	pthread_mutex_lock(&w->lock);
	if (w->stopping) {
		pthread_mutex_unlock(&w->lock);
		return -ESHUTDOWN;
	}
	if (w->tail)
		w->tail->next = job;
	else
		w->head = job;
	w->tail = job;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

/*
 * Take up to max_batch_rows worth of jobs (at least one), waiting up to
 * WRITER_IDLE_WAIT for the first. NULL with *@stop set: time to exit.
 */
static struct writer_job *writer_take(struct writer *w, int *stop)
{
	struct writer_job *first, *last;
	struct timespec until;
	size_t rows;

	until = now_after(CLOCK_REALTIME, WRITER_IDLE_WAIT);
	pthread_mutex_lock(&w->lock);
	while (!w->head && !w->stopping)
		if (pthread_cond_timedwait(&w->cond, &w->lock, &until) ==
		    ETIMEDOUT)
			break;
	*stop = w->stopping && !w->head;
	first = last = w->head;
	if (first) {
		rows = first->rows;
		while (last->next && rows + last->next->rows <=
					     (size_t)w->opts.max_batch_rows) {
			last = last->next;
			rows += last->rows;
		}
		w->head = last->next;
		if (!w->head)
			w->tail = NULL;
		last->next = NULL;
	}
	pthread_mutex_unlock(&w->lock);
	return first;
}

/* The test API's jobs (a redo after a failed batch starts over). */
static int writer_apply_tests(struct writer *w, struct writer_job *job,
			      double now)
{
	struct plansvc *ps = w->opts.plans;
	int ret = 0;

	free(job->answer);
	job->answer = NULL;
	if (!ps && job->kind != WRITER_RESULTS)
		return -ENOTSUP;
	switch (job->kind) {
	case WRITER_REGISTER:
		ret = store_register(w->st, job->reg, now);
		plansvc_touch(ps);
		if (!ret)
			ret = plansvc_plan_json(ps, w->st, job->reg->host, now,
						&job->answer);
		return ret;
	case WRITER_PLAN:
		return plansvc_plan_json(ps, w->st, job->host, now,
					 &job->answer);
	case WRITER_RESULTS:
		return store_results(w->st, job->results, now, &job->stored,
				     &job->duplicates);
	case WRITER_PAUSE:
		plansvc_touch(ps);
		return store_pause(w->st, job->host, job->flag, job->by_admin,
				   now);
	case WRITER_COVERAGE:
		return plansvc_coverage_json(ps, w->st, now, &job->answer);
	default:
		return -EINVAL;
	}
}

/* GET /api/v1/route: no route is that job's answer (its reason), not the
 * batch's failure. */
static int writer_route(struct writer *w, struct writer_job *job)
{
	char why[512] = "";
	int ret;

	free(job->answer);
	job->answer = NULL;
	job->status = 0;
	ret = route_api_answer(w->st, job->src_lid, job->dst_lid, &job->answer,
			       why, sizeof(why));
	if (ret != -ENOENT)
		return ret;
	job->status = -ENOENT;
	job->answer = strdup(why);
	return job->answer ? 0 : -ENOMEM;
}

static int writer_apply(struct writer *w, struct writer_job *job, double now)
{
	switch (job->kind) {
	case WRITER_REPORT:
		return store_put_report(w->st, job->report, now, &job->stats);
	case WRITER_RETIRE: {
		int ret = store_retire(w->st, job->host);

		/* An unknown host is that job's answer, not the batch's
		 * failure. */
		job->status = ret == -ENOENT ? -ENOENT : 0;
		return ret == -ENOENT ? 0 : ret;
	}
	case WRITER_HEALTH:
		return 0;
	case WRITER_REGRESS:
		free(job->answer);
		job->answer = NULL;
		return store_regress_json(w->st, now, &job->answer);
	case WRITER_ROUTE:
		return writer_route(w, job);
	case WRITER_VERDICT: {
		int ret;

		free(job->answer);
		ret = store_health_json(w->st, job->host, now, &job->answer);
		/* this job's answer, not the batch's failure */
		job->status = ret == -ENOENT || ret == -ECANCELED ? ret : 0;
		return ret == -ENOENT || ret == -ECANCELED ? 0 : ret;
	}
	default:
		return writer_apply_tests(w, job, now);
	}
	return -EINVAL;
}

/* One transaction for the jobs from @first to the end of its list. */
static int writer_transaction(struct writer *w, struct writer_job *first,
			      struct writer_job *end)
{
	double now = now_wall();
	int ret = store_begin(w->st);

	for (struct writer_job *j = first; !ret && j != end; j = j->next)
		ret = writer_apply(w, j, now);
	if (!ret)
		ret = store_commit(w->st);
	else
		store_rollback(w->st);
	if (ret && w->opts.plans)
		plansvc_invalidate(w->opts.plans);
	return ret;
}

/* A failure of the storage, as opposed to a refused request. */
static int writer_storage_failed(int ret)
{
	return ret && ret != -EINVAL && ret != -ENOENT && ret != -ENOTSUP;
}

/*
 * After a transaction: remember whether data could be committed. A health
 * job alone proves little (an empty transaction commits on a full disk);
 * the last real commit does, until WRITER_FAIL_MEMORY passes without one.
 */
static void writer_note(struct writer *w, const struct writer_job *first,
			const struct writer_job *end, int ret)
{
	int data = 0;

	for (const struct writer_job *j = first; j != end; j = j->next)
		data |= j->kind != WRITER_HEALTH;
	if (!data)
		return;
	if (!writer_storage_failed(ret)) {
		w->data_fail = 0;
		return;
	}
	if (ret == -EBUSY) /* a lock: the health job's own BEGIN meets it */
		return;
	w->data_fail = ret;
	w->data_when = now_mono();
	snprintf(w->data_error, sizeof(w->data_error), "%s",
		 store_last_error(w->st));
}

/* A health job whose own transaction committed: the last data commit's. */
static void writer_health(struct writer *w, struct writer_job *job)
{
	double age = now_mono() - w->data_when;

	if (!w->data_fail || age >= WRITER_FAIL_MEMORY)
		return;
	job->status = w->data_fail;
	snprintf(job->error, sizeof(job->error),
		 "the last commit failed %.0f s ago: %s", age,
		 w->data_error[0] ? w->data_error : strerror(-w->data_fail));
}

static void writer_finish(struct writer *w, struct writer_job *job, int ret)
{
	pthread_mutex_lock(&w->lock);
	w->counts.jobs++;
	if (!ret) {
		w->counts.samples += job->stats.samples;
		w->counts.history_rows += job->stats.history_written;
	}
	pthread_mutex_unlock(&w->lock);
	if (ret) {
		job->status = ret;
		if (job->kind == WRITER_HEALTH)
			snprintf(job->error, sizeof(job->error), "%s",
				 store_last_error(w->st));
	} else if (job->kind == WRITER_HEALTH) {
		writer_health(w, job);
	}
	job->done(job);
}

static void writer_count(struct writer *w, int ret)
{
	pthread_mutex_lock(&w->lock);
	if (ret)
		w->counts.failed++;
	else
		w->counts.commits++;
	pthread_mutex_unlock(&w->lock);
}

/*
 * Answer the plan requests the plan in memory serves as it is, before the
 * batch's transaction: they write nothing, so they need not wait for its
 * commit (at 2,000 probes a plan request waited 100-170 ms for the fsync,
 * seconds under load, and probes then saw their tests late: bench/scale).
 * Returns the jobs left for the transaction.
 */
static struct writer_job *writer_fresh_plans(struct writer *w,
					     struct writer_job *jobs)
{
	struct writer_job *keep = NULL, **tail = &keep;
	double now = now_wall();

	while (jobs) {
		struct writer_job *next = jobs->next;
		int ret = -EAGAIN;

		if (jobs->kind == WRITER_PLAN && w->opts.plans) {
			free(jobs->answer);
			ret = plansvc_plan_fresh(w->opts.plans, w->st,
						 jobs->host, now,
						 &jobs->answer);
		}
		if (ret == -EAGAIN) {
			jobs->next = NULL;
			*tail = jobs;
			tail = &jobs->next;
		} else {
			writer_finish(w, jobs, ret);
		}
		jobs = next;
	}
	return keep;
}

/*
 * Commit a batch. If rows broke a constraint (-EINVAL) and the batch held
 * several jobs, redo them one per transaction so one bad report cannot
 * keep failing the reports that happen to share its batch.
 */
static void writer_batch(struct writer *w, struct writer_job *jobs)
{
	int ret;

	jobs = writer_fresh_plans(w, jobs);
	if (!jobs)
		return;
	ret = writer_transaction(w, jobs, NULL);

	writer_count(w, ret);
	writer_note(w, jobs, NULL, ret);
	if (ret == -EINVAL && !jobs->next)
		snprintf(jobs->error, sizeof(jobs->error), "%s",
			 store_last_error(w->st));
	if (ret == -EINVAL && jobs->next) {
		log_warn("writer: a batch broke a constraint; retrying its "
			 "jobs one by one");
		while (jobs) {
			struct writer_job *next = jobs->next;

			ret = writer_transaction(w, jobs, next);
			writer_count(w, ret);
			writer_note(w, jobs, next, ret);
			if (ret == -EINVAL)
				snprintf(jobs->error, sizeof(jobs->error), "%s",
					 store_last_error(w->st));
			writer_finish(w, jobs, ret);
			jobs = next;
		}
		return;
	}
	while (jobs) {
		struct writer_job *next = jobs->next;

		writer_finish(w, jobs, ret);
		jobs = next;
	}
}

/* Between batches: one pruning step when due, a checkpoint when due. */
static void writer_maintain(struct writer *w)
{
	double mono = now_mono();
	size_t deleted = 0;

	if (mono >= w->next_prune) {
		int ret = store_prune(w->st, now_wall(), &deleted);

		/* A full step means more is due: go on after the next batch. */
		w->next_prune = mono + (ret == 1 ? 0 : WRITER_PRUNE_PAUSE);
		if (deleted)
			log_debug("writer: pruned %zu history rows", deleted);
	}
	if (mono >= w->next_checkpoint) {
		store_checkpoint(w->st, NULL);
		w->next_checkpoint = mono + (double)w->opts.checkpoint_interval;
	}
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	int stop = 0;

	while (!stop) {
		struct writer_job *jobs = writer_take(w, &stop);

		if (jobs)
			writer_batch(w, jobs);
		writer_maintain(w);
	}
	return NULL;
}

int writer_new(struct store *st, const struct writer_opts *o,
	       struct writer **out)
{
	struct writer *w = calloc(1, sizeof(*w));
	int ret;

	if (!w)
		return -ENOMEM;
	w->st = st;
	w->opts = *o;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->next_checkpoint = now_mono() + (double)o->checkpoint_interval;
	ret = -pthread_create(&w->thread, NULL, writer_main, w);
	if (ret) {
		writer_free(w);
		return ret;
	}
	w->started = 1;
	*out = w;
	return 0;
}

void writer_stop(struct writer *w)
{
	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	if (w->started) {
		pthread_join(w->thread, NULL);
		w->started = 0;
	}
}

void writer_free(struct writer *w)
{
	if (!w)
		return;
	writer_stop(w);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
}

void writer_counts(struct writer *w, struct writer_counts *out)
{
	pthread_mutex_lock(&w->lock);
	*out = w->counts;
	pthread_mutex_unlock(&w->lock);
}
