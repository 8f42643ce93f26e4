/* SPDX-License-Identifier: MIT */
/*
 * Pushing the fabric poller's picture to the collector (fpush.c): as
 * reports with a fabric section, chunked under the body limit. Internal
 * to probe/fabric and its command line.
 */
#ifndef IBPULSE_FABRIC_PUSH_H
#define IBPULSE_FABRIC_PUSH_H

#include <stddef.h>

#include "fabric_int.h"

struct fabric_push;

/*
 * fabric_push_new() - a pusher for @s's collector_url (required), token,
 * CA file and host. 0, or a negative errno with the reason in @err.
 */
int fabric_push_new(const struct fabric_settings *s, struct fabric_push **out,
		    char *err, size_t errlen);
void fabric_push_free(struct fabric_push *p);

/*
 * fabric_push_send() - push the picture and the last sweep, every chunk,
 * with (@routes) each switch's forwarding table as last read; 0 when all
 * were accepted, else the first push_send() error (push.h).
 */
int fabric_push_send(struct fabric_push *p, const struct fabric *f,
		     bool routes);

#endif
