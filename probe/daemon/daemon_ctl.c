// SPDX-License-Identifier: MIT
/*
 * The daemon's control socket: `ibpulse-probe pause|resume|status` send
 * one line ("pause\n") to a unix stream socket and read one JSON line
 * back. The event loop answers (a client gets one second to speak); the
 * socket is mode 0660, so the daemon's group (a Slurm prolog running as
 * root, say) may pause it and others may not.
 */
#include "daemon_int.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"

static int ctl_addr(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	memcpy(a->sun_path, path, strlen(path) + 1);
	return 0;
}

int daemon_ctl_listen(const char *path, int *fd_out)
{
	struct sockaddr_un a;
	int fd, ret = ctl_addr(path, &a);

	if (ret) {
		log_err("control_socket %s: path too long", path);
		return ret;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(path); /* a stale socket of an earlier run */
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || chmod(path, 0660) ||
	    listen(fd, 8)) {
		ret = -errno;
		log_err("control_socket %s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	*fd_out = fd;
	return 0;
}

/*
 * The responder's refusals by reason and its ticket state, added to the
 * status object @o; under d->lock.
 */
static void ctl_responder(struct daemon *d, json_t *o)
{
	json_t *by = json_object();

	for (int r = 0; r < RESP_REASONS; r++)
		json_object_set_new(by, daemon_resp_reason((enum resp_reason)r),
				    json_integer((json_int_t)d->refused_by[r]));
	json_object_set_new(o, "responder_refused_by", by);
	json_object_set_new(o, "responder_keys",
			    json_integer((json_int_t)d->tickets.n_keys));
	json_object_set_new(o, "tickets_spent",
			    json_integer((json_int_t)d->tickets.n_spent));
}

static char *ctl_status(struct daemon *d)
{
	unsigned paused = psched_paused(&d->sched);
	struct spool_dropped dr = spool_dropped(d->spool);
	json_t *o, *ports = json_array(), *why = json_array();
	uint64_t mem_bytes;
	size_t mem;
	char *text;

	spool_memory(d->spool, &mem, &mem_bytes);

	if (paused & PSCHED_PAUSE_CTL)
		json_array_append_new(why, json_string("command"));
	if (paused & PSCHED_PAUSE_FILE)
		json_array_append_new(why, json_string("pause_file"));
	if (paused & PSCHED_PAUSE_PLAN)
		json_array_append_new(why, json_string("collector"));
	pthread_mutex_lock(&d->sched.lock);
	for (size_t i = 0; i < d->sched.n_ports; i++) {
		const struct psched_port *p = &d->sched.ports[i];

		json_array_append_new(
			ports,
			json_pack("{s:s, s:i, s:b, s:b, s:f}", "device",
				  p->device, "port", (int)p->port, "active",
				  p->active, "testing", p->role != PSCHED_IDLE,
				  "tested_seconds", p->tested_s));
	}
	pthread_mutex_unlock(&d->sched.lock);
	pthread_mutex_lock(&d->lock);
	o = json_pack(
		"{s:s, s:b, s:o, s:i, s:o, s:I, s:I, s:I, s:I, s:I, "
		"s:I, s:I, s:I, s:{s:I, s:I, s:I}, s:s, s:I, s:b}",
		"host", d->host, "paused", paused != 0, "pause_reasons", why,
		"responder_port", (int)d->resp_port, "ports", ports,
		"tests_run", (json_int_t)d->tests_run, "tests_failed",
		(json_int_t)d->tests_failed, "tests_busy",
		(json_int_t)d->tests_busy, "responder_tests",
		(json_int_t)d->responder_tests, "responder_refused",
		(json_int_t)d->responder_refused, "results_sent",
		(json_int_t)d->results_sent, "spooled",
		(json_int_t)spool_count(d->spool), "in_memory", (json_int_t)mem,
		"dropped", "spool_full", (json_int_t)dr.spool_full, "expired",
		(json_int_t)dr.expired, "unwritable", (json_int_t)dr.unwritable,
		"running", d->running, "plan_tests", (json_int_t)d->n_plan,
		"have_plan", d->have_plan);
	if (o)
		ctl_responder(d, o);
	pthread_mutex_unlock(&d->lock);
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return text;
}

static void ctl_answer(struct daemon *d, int fd, const char *cmd)
{
	char *text = NULL;

	if (!strcmp(cmd, "pause")) {
		psched_pause(&d->sched, PSCHED_PAUSE_CTL, 1);
		log_info("paused by the control socket");
	} else if (!strcmp(cmd, "resume")) {
		psched_pause(&d->sched, PSCHED_PAUSE_CTL, 0);
		log_info("resumed by the control socket");
	} else if (strcmp(cmd, "status")) {
		dprintf(fd, "{\"error\":\"unknown command (pause, resume, "
			    "status)\"}\n");
		return;
	}
	text = ctl_status(d);
	dprintf(fd, "%s\n", text ? text : "{\"error\":\"out of memory\"}");
	free(text);
}

void daemon_ctl_serve(struct daemon *d, int lfd)
{
	char line[64];
	size_t len = 0;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	while (len < sizeof(line) - 1) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, 1000) <= 0)
			break;
		n = read(fd, line + len, sizeof(line) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (memchr(line, '\n', len))
			break;
	}
	line[len] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (len)
		ctl_answer(d, fd, line);
	close(fd);
}

int daemon_ctl(const char *path, const char *cmd)
{
	struct sockaddr_un a;
	char buf[8192];
	ssize_t n;
	int fd, ret = ctl_addr(path, &a);

	if (ret)
		return ret;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		ret = -errno;
		log_err("cannot reach the daemon at %s: %s", path,
			strerror(errno));
		close(fd);
		return ret;
	}
	dprintf(fd, "%s\n", cmd);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	close(fd);
	return n < 0 ? -EIO : 0;
}
