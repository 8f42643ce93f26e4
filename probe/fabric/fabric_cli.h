/* SPDX-License-Identifier: MIT */
/*
 * The `ibpulse-probe fabric` subcommand: the fabric poller from the
 * command line. Takes the subcommand's own argv (argv[0] is "fabric") and
 * returns the exit status: 0 success, 1 a failure at run time, 2 a bad
 * command line.
 */
#ifndef IBPULSE_FABRIC_CLI_H
#define IBPULSE_FABRIC_CLI_H

#include "cli.h"

int fabric_cmd(int argc, char **argv);

/* Its flags and --help (common/cli.h), for the probe's command list. */
extern const struct cli_cmd fabric_cli;

#endif
