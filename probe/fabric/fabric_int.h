/* SPDX-License-Identifier: MIT */
/*
 * What the files of probe/fabric share behind fabric.h: the poller's
 * state and the discovery step (disc.c). Not part of the door.
 */
#ifndef IBPULSE_FABRIC_INT_H
#define IBPULSE_FABRIC_INT_H

#include "fabric.h"
#include "fwin.h"

#define FABRIC_CA_NAME_LEN 64

struct fabric {
	struct fabric_settings s; /* strings borrowed from the caller's */
	char ca[FABRIC_CA_NAME_LEN];
	unsigned port;
	struct fwin *win;
	struct fabric_net net;
	bool have_net;
	struct fabric_sweep_stats last;
	double discovered_mono; /* CLOCK_MONOTONIC of the last discovery */
	bool want_rediscover;
};

/* Seconds on CLOCK_MONOTONIC and CLOCK_REALTIME; CPU of the process. */
double fabric_mono(void);
double fabric_real(void);
double fabric_cpu(void);

/*
 * fabric_disc_run() - discover the fabric through @ca port @port into
 * *@out (zeroed first; free with fabric_net_clear). 0 or -EIO / -ENOMEM.
 */
int fabric_disc_run(const char *ca, unsigned port,
		    const struct fabric_settings *s, struct fabric_net *out);
void fabric_net_clear(struct fabric_net *net);

#endif
