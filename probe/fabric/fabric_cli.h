/* SPDX-License-Identifier: MIT */
/*
 * The `ibpulse-probe fabric` subcommand: the fabric poller from the
 * command line. Takes the subcommand's own argv (argv[0] is "fabric") and
 * returns the exit status: 0 success, 1 a failure at run time, 2 a bad
 * command line.
 */
#ifndef IBPULSE_FABRIC_CLI_H
#define IBPULSE_FABRIC_CLI_H

int fabric_cmd(int argc, char **argv);

#define FABRIC_USAGE                                                           \
	"fabric [--once] [--json] [--ca NAME] [--port N] [--window N] "        \
	"[--per-node N] [--timeout MS] [--retries N] [--interval SEC] "        \
	"[--rediscover SEC] [--smps N] [--details] [--reset] [--sweeps N] "    \
	"[--collector URL] [--token-file FILE] [--ca-file FILE] [--host "      \
	"NAME] "                                                               \
	"[--config FILE] [--set KEY=VALUE] [--print-config] [--log-level "     \
	"LEVEL]"

#endif
