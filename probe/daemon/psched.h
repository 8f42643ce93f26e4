/* SPDX-License-Identifier: MIT */
/*
 * The test budget of each local port, shared by the initiator (the test
 * runner) and the responder: at most one test per port at a time in
 * either role, a duty-cycle cap (a token bucket: a port earns duty_cycle
 * seconds of testing per second, up to duty_cycle * window, and a test
 * spends what it took), only ACTIVE ports, and nothing while paused (by
 * the control socket, the pause file or the collector's plan). Pure
 * logic with a lock, no I/O: the daemon's threads ask it, unit tests
 * drive it with their own clock.
 */
#ifndef IBPULSE_PSCHED_H
#define IBPULSE_PSCHED_H

#include <pthread.h>
#include <stddef.h>

#define PSCHED_MAX_PORTS 64
#define PSCHED_NAME_MAX 64

enum psched_role { PSCHED_IDLE = 0, PSCHED_INITIATOR, PSCHED_RESPONDER };

/* Why tests are paused: any set bit pauses. */
enum psched_pause {
	PSCHED_PAUSE_CTL = 1,  /* ibpulse-probe pause */
	PSCHED_PAUSE_FILE = 2, /* pause_file exists */
	PSCHED_PAUSE_PLAN = 4, /* the collector's plan says paused */
};

struct psched_port {
	char device[PSCHED_NAME_MAX];
	unsigned port;
	int active; /* state ACTIVE */
	enum psched_role role;
	double credit;	  /* seconds of testing it may still spend */
	double credit_at; /* when credit was last brought up to date */
	double tested_s;  /* total seconds in tests, both roles */
};

struct psched {
	pthread_mutex_t lock;
	double duty;   /* 0..1 */
	double window; /* seconds */
	unsigned paused;
	struct psched_port ports[PSCHED_MAX_PORTS];
	size_t n_ports;
};

void psched_init(struct psched *s, double duty, double window);
void psched_destroy(struct psched *s);
/* New duty cycle and window (SIGHUP); credit is clamped to the new cap. */
void psched_configure(struct psched *s, double duty, double window);

/*
 * psched_port_set() - add or update a port (keeping its budget); a port
 * not seen before starts with a full budget at @now.
 */
int psched_port_set(struct psched *s, const char *device, unsigned port,
		    int active, double now);

/* Set or clear pause reason bits; returns the bits now set. */
unsigned psched_pause(struct psched *s, unsigned bits, int on);
unsigned psched_paused(struct psched *s);

/*
 * psched_acquire() - may a test of about @expect_s seconds start on
 * @device/@port in @role at @now? 0: yes, the port is now taken (release
 * with psched_release()). Otherwise, with a reason in @why:
 * -ECANCELED paused, -ENODEV unknown port, -ENETDOWN not ACTIVE,
 * -EBUSY a test runs there, -EAGAIN over the duty cycle (the responder,
 * which does not know the duration yet, needs a positive budget).
 * A @device of "" means the first port.
 */
int psched_acquire(struct psched *s, const char *device, unsigned port,
		   enum psched_role role, double expect_s, double now,
		   char *why, size_t len);

/* The test on @device/@port took @spent_s seconds; the port is free. */
void psched_release(struct psched *s, const char *device, unsigned port,
		    double spent_s, double now);

/* The ACTIVE ports as "rxe0/1, mlx5_0/1"; "none" when there is none. */
void psched_active_list(struct psched *s, char *buf, size_t len);

/* The first port's device name into @dev (@len bytes) and port number. */
int psched_first(struct psched *s, char *dev, size_t len, unsigned *port);

/* Seconds until @device/@port has @expect_s of budget (0: now). */
double psched_wait(struct psched *s, const char *device, unsigned port,
		   double expect_s, double now);

#endif
