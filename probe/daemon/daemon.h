/* SPDX-License-Identifier: MIT */
/*
 * ibpulse-probe daemon: counters every counters_interval pushed every
 * push_interval (only the newest report is kept while the collector is
 * away), registration and the test plan from the collector, static peers
 * without one, the loopback self-test, the responder for peers, the
 * results spool with retries, and pause/resume/status over a unix
 * socket. See docs/probe.md "daemon".
 */
#ifndef IBPULSE_DAEMON_H
#define IBPULSE_DAEMON_H

#include <signal.h>
#include <stddef.h>

#include "probe_settings.h"

/*
 * Reload the settings for SIGHUP into @out (zeroed by the caller, freed
 * with probe_settings_free() on failure too): the same file and command-
 * line overrides as at start. 0 or negative errno with a reason in @err.
 */
typedef int (*daemon_reload_fn)(void *arg, struct probe_settings *out,
				char *err, size_t errlen);

/*
 * daemon_run() - run until SIGTERM/SIGINT. Takes over @s (freed here) and
 * the process's signal dispositions. Returns 0 on a clean stop, else a
 * negative errno (start-up failures are logged).
 */
int daemon_run(struct probe_settings *s, daemon_reload_fn reload, void *arg);

/*
 * daemon_ctl() - send @cmd ("pause", "resume", "status") to the daemon
 * at @socket_path and print its answer to stdout. 0, or negative errno
 * (logged) when the daemon cannot be reached.
 */
int daemon_ctl(const char *socket_path, const char *cmd);

#endif
