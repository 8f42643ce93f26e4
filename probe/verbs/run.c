// SPDX-License-Identifier: MIT
/*
 * Pieces shared by the measured loops: the watchdog that keeps every loop
 * bounded, completion errors turned into a named status, and CPU time.
 */
#include "run.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

int vwatch_check(struct vwatch *w, uint64_t now, bool fd_is_end, char *why,
		 size_t len)
{
	if (w->stop && *w->stop) {
		snprintf(why, len, "aborted");
		return -ECANCELED;
	}
	if (now >= w->deadline_ns) {
		snprintf(why, len, "test did not finish before its deadline");
		return -ETIMEDOUT;
	}
	if (w->stall_ns && now - w->last_progress_ns > w->stall_ns) {
		snprintf(why, len,
			 "no progress for %.1f s: the peer or the "
			 "link stopped answering",
			 (double)w->stall_ns / 1e9);
		return -ETIMEDOUT;
	}
	if (w->fd >= 0 && now >= w->next_check_ns) {
		struct pollfd pfd = {.fd = w->fd, .events = POLLIN};

		w->next_check_ns = now + VWATCH_CHECK_NS;
		if (poll(&pfd, 1, 0) > 0) {
			uint8_t b;
			bool closed = recv(w->fd, &b, 1,
					   MSG_PEEK | MSG_DONTWAIT) <= 0;

			if (fd_is_end && !closed)
				return 1;
			snprintf(why, len,
				 "the peer ended the test early "
				 "(control connection %s)",
				 closed ? "closed" : "message");
			return -ECONNRESET;
		}
	}
	return 0;
}

void vrun_wc_error(const struct ibv_wc *wc, struct vt_side *out)
{
	out->wc_status = wc->status;
	snprintf(out->error, sizeof(out->error),
		 "completion error: %s (status %d, vendor error 0x%x)",
		 ibv_wc_status_str(wc->status), wc->status, wc->vendor_err);
}

double vrun_cpu_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
