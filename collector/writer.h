/* SPDX-License-Identifier: MIT */
/*
 * The writer thread: the only user of the store. Request handlers submit
 * jobs (a decoded report, a retirement, a health check) and suspend; the
 * writer drains every queued job (up to max_batch_rows counters) into one
 * transaction, commits it (synchronous=FULL), and only then calls each
 * job's done() — group commit, so one fsync covers many requests and no
 * request is answered before its rows are durable. A failed transaction
 * is rolled back and every job in it gets the error. Between batches the
 * writer prunes history in small steps and manages WAL checkpoints.
 */
#ifndef IBPULSE_COLLECTOR_WRITER_H
#define IBPULSE_COLLECTOR_WRITER_H

#include "store.h"

#include <stddef.h>

struct plansvc;
struct report;
struct testapi_reg;
struct testapi_results;
struct writer;

enum writer_kind {
	WRITER_REPORT,	 /* store job->report */
	WRITER_RETIRE,	 /* delete job->host */
	WRITER_HEALTH,	 /* an empty transaction (the write lock can be
			  * taken), and status is the last data commit's
			  * failure if that came within the last minute */
	WRITER_REGISTER, /* store job->reg; answer: its host's plan */
	WRITER_PLAN,	 /* answer: job->host's plan */
	WRITER_RESULTS,	 /* store job->results once per id */
	WRITER_PAUSE,	 /* job->host paused (flag 1) or resumed (0) */
	WRITER_COVERAGE, /* answer: the coverage view */
	WRITER_REGRESS,	 /* answer: GET /api/v1/regressions */
	WRITER_ROUTE,	 /* answer: GET /api/v1/route; -ENOENT: no route */
	WRITER_VERDICT,	 /* answer: job->host's health, recomputed */
};

struct writer_job {
	struct writer_job *next; /* queue link, the writer's */
	enum writer_kind kind;
	const struct report *report; /* owned by the submitter */
	const char *host; /* RETIRE, PLAN, PAUSE; owned by the submitter */
	const struct testapi_reg *reg;	       /* WRITER_REGISTER */
	const struct testapi_results *results; /* WRITER_RESULTS */
	int flag, by_admin;		       /* WRITER_PAUSE */
	unsigned src_lid, dst_lid;	       /* WRITER_ROUTE */
	size_t rows;			       /* set by writer_submit() */
	/* Results, set before done() is called. */
	int status; /* 0; -ENOENT (retire of an unknown host); -EINVAL (the
		     * rows break a constraint); other -errno: storage failed */
	struct store_stats stats;
	char error[160]; /* with -EINVAL: what the database refused; for
			  * WRITER_HEALTH: why it failed */
	char *answer;	 /* REGISTER, PLAN, COVERAGE, ROUTE: JSON text (ROUTE
			  * with -ENOENT: why there is no route); the
			  * submitter frees it (also when status is not 0) */
	size_t stored, duplicates; /* WRITER_RESULTS */
	/*
	 * Called on the writer thread once the job's transaction committed or
	 * failed; after it returns the writer never touches the job again.
	 */
	void (*done)(struct writer_job *job);
	void *arg;
};

struct writer_opts {
	long long max_batch_rows;
	long long checkpoint_interval; /* seconds */
	struct plansvc *plans;	       /* the test plan; owned by the caller */
};

/* Start the thread; it uses @st exclusively until writer_free(). */
int writer_new(struct store *st, const struct writer_opts *o,
	       struct writer **out);
/*
 * writer_submit() - queue @job. Returns 0, or -ESHUTDOWN once
 * writer_stop() was called (done() is then not called).
 */
int writer_submit(struct writer *w, struct writer_job *job);
/* Refuse new jobs, finish the queued ones, join the thread. */
void writer_stop(struct writer *w);
/* Stop if needed and free. The store stays open. NULL is fine. */
void writer_free(struct writer *w);

struct writer_counts {
	unsigned long long commits, failed, jobs, samples, history_rows;
};
void writer_counts(struct writer *w, struct writer_counts *out);

#endif
