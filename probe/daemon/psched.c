// SPDX-License-Identifier: MIT
/* Per-port test budget: one test at a time, duty cycle, pause (sched.h). */
#include "psched.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void psched_init(struct psched *s, double duty, double window)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->duty = duty;
	s->window = window;
}

void psched_destroy(struct psched *s)
{
	pthread_mutex_destroy(&s->lock);
}

static double psched_cap(const struct psched *s)
{
	return s->duty * s->window;
}

void psched_configure(struct psched *s, double duty, double window)
{
	pthread_mutex_lock(&s->lock);
	s->duty = duty;
	s->window = window;
	for (size_t i = 0; i < s->n_ports; i++)
		if (s->ports[i].credit > psched_cap(s))
			s->ports[i].credit = psched_cap(s);
	pthread_mutex_unlock(&s->lock);
}

static struct psched_port *psched_find(struct psched *s, const char *device,
				       unsigned port)
{
	if (!device || !device[0])
		return s->n_ports ? &s->ports[0] : NULL;
	for (size_t i = 0; i < s->n_ports; i++)
		if (s->ports[i].port == port &&
		    !strcmp(s->ports[i].device, device))
			return &s->ports[i];
	return NULL;
}

/* Bring @p's credit up to @now (earned at duty per second, capped). */
static void psched_accrue(struct psched *s, struct psched_port *p, double now)
{
	if (now > p->credit_at) {
		p->credit += (now - p->credit_at) * s->duty;
		p->credit_at = now;
	}
	if (p->credit > psched_cap(s))
		p->credit = psched_cap(s);
}

int psched_port_set(struct psched *s, const char *device, unsigned port,
		    int active, double now)
{
	struct psched_port *p;
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	p = device[0] ? psched_find(s, device, port) : NULL;
	if (!p && s->n_ports < PSCHED_MAX_PORTS) {
		p = &s->ports[s->n_ports++];
		memset(p, 0, sizeof(*p));
		snprintf(p->device, sizeof(p->device), "%s", device);
		p->port = port;
		p->credit = psched_cap(s);
		p->credit_at = now;
	}
	if (p)
		p->active = active;
	else
		ret = -E2BIG;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

unsigned psched_pause(struct psched *s, unsigned bits, int on)
{
	unsigned now;

	pthread_mutex_lock(&s->lock);
	if (on)
		s->paused |= bits;
	else
		s->paused &= ~bits;
	now = s->paused;
	pthread_mutex_unlock(&s->lock);
	return now;
}

unsigned psched_paused(struct psched *s)
{
	unsigned v;

	pthread_mutex_lock(&s->lock);
	v = s->paused;
	pthread_mutex_unlock(&s->lock);
	return v;
}

static int psched_check(struct psched *s, struct psched_port *p,
			enum psched_role role, double expect_s, char *why,
			size_t len)
{
	static const char *const roles[] = {"", "an initiator", "a responder"};

	if (s->paused) {
		snprintf(why, len, "paused");
		return -ECANCELED;
	}
	if (!p) {
		snprintf(why, len, "no such port here");
		return -ENODEV;
	}
	if (!p->active) {
		snprintf(why, len, "port %s/%u is not ACTIVE", p->device,
			 p->port);
		return -ENETDOWN;
	}
	if (p->role != PSCHED_IDLE) {
		snprintf(why, len, "busy: port %s/%u runs %s test", p->device,
			 p->port, roles[p->role]);
		return -EBUSY;
	}
	/* A test longer than the whole cap may start on a full budget. */
	if (expect_s > psched_cap(s))
		expect_s = psched_cap(s);
	if (s->duty <= 0 || (role == PSCHED_RESPONDER ? p->credit <= 0
						      : p->credit < expect_s)) {
		snprintf(why, len,
			 "busy: port %s/%u is at its duty cycle (%.3g)",
			 p->device, p->port, s->duty);
		return -EAGAIN;
	}
	return 0;
}

int psched_acquire(struct psched *s, const char *device, unsigned port,
		   enum psched_role role, double expect_s, double now,
		   char *why, size_t len)
{
	struct psched_port *p;
	int ret;

	pthread_mutex_lock(&s->lock);
	p = psched_find(s, device, port);
	if (p)
		psched_accrue(s, p, now);
	ret = psched_check(s, p, role, expect_s, why, len);
	if (!ret)
		p->role = role;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

void psched_release(struct psched *s, const char *device, unsigned port,
		    double spent_s, double now)
{
	struct psched_port *p;

	pthread_mutex_lock(&s->lock);
	p = psched_find(s, device, port);
	if (p) {
		psched_accrue(s, p, now);
		p->credit -= spent_s;
		p->tested_s += spent_s;
		p->role = PSCHED_IDLE;
	}
	pthread_mutex_unlock(&s->lock);
}

void psched_active_list(struct psched *s, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return;
	buf[0] = '\0';
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_ports && off < len; i++) {
		const struct psched_port *p = &s->ports[i];
		int n;

		if (!p->active)
			continue;
		n = snprintf(buf + off, len - off, "%s%s/%u", off ? ", " : "",
			     p->device, p->port);
		off += n > 0 ? (size_t)n : 0;
	}
	pthread_mutex_unlock(&s->lock);
	if (!buf[0])
		snprintf(buf, len, "none");
}

int psched_first(struct psched *s, char *dev, size_t len, unsigned *port)
{
	int ret = -ENODEV;

	pthread_mutex_lock(&s->lock);
	if (s->n_ports) {
		snprintf(dev, len, "%s", s->ports[0].device);
		*port = s->ports[0].port;
		ret = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

double psched_wait(struct psched *s, const char *device, unsigned port,
		   double expect_s, double now)
{
	struct psched_port *p;
	double w = 0;

	pthread_mutex_lock(&s->lock);
	p = psched_find(s, device, port);
	if (p) {
		psched_accrue(s, p, now);
		if (p->credit < expect_s)
			w = s->duty > 0 ? (expect_s - p->credit) / s->duty
					: 1e18;
	}
	pthread_mutex_unlock(&s->lock);
	return w;
}
