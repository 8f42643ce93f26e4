/* SPDX-License-Identifier: MIT */
/*
 * The `ibpulse-probe run` and `ibpulse-probe serve` subcommands, the verbs
 * engine's command line (cmd_verbs.c). Each takes the subcommand's own
 * argv (argv[0] is "run" or "serve") and returns the exit status: 0
 * success, 1 a failed test, 2 a bad command line.
 */
#ifndef IBPULSE_CMD_VERBS_H
#define IBPULSE_CMD_VERBS_H

#include "cli.h"

int cmd_verbs_run(int argc, char **argv);
int cmd_verbs_serve(int argc, char **argv);

/* Their flags and --help (common/cli.h), for the probe's command list. */
extern const struct cli_cmd cmd_verbs_run_cli;
extern const struct cli_cmd cmd_verbs_serve_cli;

#endif
