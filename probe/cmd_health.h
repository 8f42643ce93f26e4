/* SPDX-License-Identifier: MIT */
/*
 * The `ibpulse-probe health` subcommand (cmd_health.c): this node's
 * verdict, one line per reason, the exit code Slurm's HealthCheckProgram,
 * NHC and node-problem-detector read, and --drain-slurm.
 */
#ifndef IBPULSE_CMD_HEALTH_H
#define IBPULSE_CMD_HEALTH_H

#include "cli.h"

int cmd_health(int argc, char **argv);
extern const struct cli_cmd cmd_health_cli;

#endif
