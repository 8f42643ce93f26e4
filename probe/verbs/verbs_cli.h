/* SPDX-License-Identifier: MIT */
/*
 * The `ibpulse-probe run` and `ibpulse-probe serve` subcommands. Each takes
 * the subcommand's own argv (argv[0] is "run" or "serve") and returns the
 * exit status: 0 success, 1 a failed test, 2 a bad command line.
 */
#ifndef IBPULSE_VERBS_CLI_H
#define IBPULSE_VERBS_CLI_H

int verbs_cmd_run(int argc, char **argv);
int verbs_cmd_serve(int argc, char **argv);

#define VERBS_RUN_USAGE                                                        \
	"run TEST --peer HOST[:PORT] [--peer-device DEV] [--peer-ib-port N] "  \
	"[-d DEV] [-i PORT] [-x GID_INDEX | "                                  \
	"--gid "                                                               \
	"SEL] [--pkey-index N | --pkey VAL] [--sl N] [-m MTU] [-q QPS] "       \
	"[-s SIZE] [-t DEPTH] [-n ITERS | -D SEC [--margin SEC]] "             \
	"[--inline N] [--cq-mod N] "                                           \
	"[--post-list N] [-b] [--outs N] [--verify] [--secret-file F] "        \
	"[--json]"
#define VERBS_SERVE_USAGE                                                      \
	"serve [-p PORT] [--bind ADDR] [-d DEV] [-i PORT] [-x N | --gid SEL] " \
	"[--pkey-index N | --pkey VAL] [--secret-file F] [--max-size B] "      \
	"[--max-qps N] [--max-duration S] [--max-concurrent N] [--once] "      \
	"[--json]"

#endif
