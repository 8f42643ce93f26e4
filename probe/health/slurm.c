// SPDX-License-Identifier: MIT
/*
 * Draining and resuming Slurm nodes (slurm.h): scontrol run with fork and
 * execvp (no shell: the node name and the reason are arguments, never
 * text a shell reads), its output read through a pipe.
 */
#include "slurm.h"
#include "now.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define SLURM_OUTPUT_MAX 8192
#define SLURM_TIMEOUT_MS 30000

/*
 * Run @argv, its stdout and stderr into @out (NUL-terminated, cut at
 * @len). 0 when it exited 0; -EIO otherwise (also a kill after
 * SLURM_TIMEOUT_MS); -errno when it could not be run.
 */
static int slurm_run(char *const argv[], char *out, size_t len)
{
	int fd[2], status = 0, ret = 0;
	size_t got = 0;
	double t0;
	pid_t pid;

	if (pipe2(fd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(fd[0]);
		close(fd[1]);
		return ret;
	}
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		dup2(fd[1], STDERR_FILENO);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	t0 = now_mono();
	for (;;) {
		struct pollfd p = {.fd = fd[0], .events = POLLIN};
		char chunk[1024];
		ssize_t n;
		long ms;

		ms = (long)((now_mono() - t0) * 1000);
		if (ms >= SLURM_TIMEOUT_MS) {
			kill(pid, SIGKILL);
			ret = -ETIMEDOUT;
			break;
		}
		if (poll(&p, 1, (int)(SLURM_TIMEOUT_MS - ms)) <= 0)
			continue;
		n = read(fd[0], chunk, sizeof(chunk));
		if (n <= 0)
			break;
		if (got + 1 < len) {
			size_t k = (size_t)n < len - 1 - got ? (size_t)n
							     : len - 1 - got;

			memcpy(out + got, chunk, k);
			got += k;
		}
	}
	out[got] = '\0';
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!ret && (!WIFEXITED(status) || WEXITSTATUS(status)))
		ret = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -ENOENT
								      : -EIO;
	return ret;
}

/* Copy the value of " KEY=" in @line up to the next space, or to the end
 * of the line with @to_end. 0, or -ENOENT. */
static int field(const char *line, const char *key, int to_end, char *out,
		 size_t len)
{
	size_t k = strlen(key);
	const char *p = line, *end;

	for (;;) {
		p = strstr(p, key);
		if (!p)
			return -ENOENT;
		if ((p == line || p[-1] == ' ') && p[k] == '=')
			break;
		p += k;
	}
	p += k + 1;
	end = to_end ? p + strcspn(p, "\n") : p + strcspn(p, " \n");
	snprintf(out, len, "%.*s", (int)(end - p), p);
	return 0;
}

int slurm_node_parse(const char *line, struct slurm_node *n)
{
	char *tail;

	memset(n, 0, sizeof(*n));
	if (field(line, "State", 0, n->state, sizeof(n->state)))
		return -EINVAL;
	/* Reason is the last field of -o output: "text [user@time]" */
	if (!field(line, "Reason", 1, n->reason, sizeof(n->reason))) {
		tail = strrchr(n->reason, '[');
		if (tail && tail > n->reason && tail[-1] == ' ' &&
		    strchr(tail, '@') && tail[strlen(tail) - 1] == ']')
			tail[-1] = '\0';
	}
	n->drained = strstr(n->state, "DRAIN") != NULL;
	n->down = !strncmp(n->state, "DOWN", 4);
	n->ours = !strncmp(n->reason, SLURM_REASON_PREFIX,
			   strlen(SLURM_REASON_PREFIX));
	return 0;
}

static int slurm_show(const char *scontrol, const char *node,
		      struct slurm_node *n, FILE *f)
{
	char *argv[] = {(char *)scontrol, "show", "node",
			(char *)node,	  "-o",	  NULL};
	char out[SLURM_OUTPUT_MAX];
	int ret = slurm_run(argv, out, sizeof(out));

	if (!ret && slurm_node_parse(out, n))
		ret = -EINVAL;
	if (ret)
		fprintf(f, "slurm: %s show node %s failed (%s): %s", scontrol,
			node, strerror(-ret), out[0] ? out : "\n");
	return ret;
}

static int slurm_update(const char *scontrol, const char *node,
			const char *state, const char *reason, FILE *f)
{
	char nodearg[320], statearg[64], reasonarg[600];
	char *argv[] = {(char *)scontrol,	   "update", nodearg, statearg,
			reason ? reasonarg : NULL, NULL};
	char out[SLURM_OUTPUT_MAX];
	int ret;

	snprintf(nodearg, sizeof(nodearg), "nodename=%s", node);
	snprintf(statearg, sizeof(statearg), "state=%s", state);
	if (reason)
		snprintf(reasonarg, sizeof(reasonarg), "reason=%s", reason);
	ret = slurm_run(argv, out, sizeof(out));
	if (ret)
		fprintf(f, "slurm: %s update %s %s failed (%s): %s", scontrol,
			nodearg, statearg, strerror(-ret), out[0] ? out : "\n");
	return ret;
}

int slurm_apply(const char *scontrol, const char *node, const struct phealth *h,
		FILE *f)
{
	struct slurm_node n;
	char reason[400];
	int ret = slurm_show(scontrol, node, &n, f);

	if (ret)
		return ret;
	if (h->verdict == PHEALTH_FAILED) {
		phealth_drain_reason(h, reason, sizeof(reason));
		if ((n.drained || n.down) && !n.ours) {
			fprintf(f,
				"slurm: %s is %s by someone else (\"%s\"): "
				"left alone\n",
				node, n.state, n.reason);
			return 0;
		}
		if (n.drained && !strcmp(n.reason, reason)) {
			fprintf(f, "slurm: %s stays drained: %s\n", node,
				reason);
			return 0;
		}
		ret = slurm_update(scontrol, node, "drain", reason, f);
		if (!ret)
			fprintf(f, "slurm: drained %s: %s\n", node, reason);
		return ret;
	}
	if (h->verdict != PHEALTH_HEALTHY || !(n.drained || n.down) || !n.ours)
		return 0;
	if (h->local) {
		fprintf(f,
			"slurm: %s stays drained: only the collector's "
			"verdict resumes it\n",
			node);
		return 0;
	}
	ret = slurm_update(scontrol, node, "resume", NULL, f);
	if (!ret)
		fprintf(f, "slurm: resumed %s (healthy again; it was \"%s\")\n",
			node, n.reason);
	return ret;
}
