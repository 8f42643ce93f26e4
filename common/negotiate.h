/* SPDX-License-Identifier: MIT */
/*
 * HTTP content negotiation for /metrics: which exposition format the
 * Accept header prefers (OpenMetrics 1.0 only when the client names it
 * with a q-value at least that of text/plain; Prometheus asks for it
 * first), and whether Accept-Encoding allows gzip. Pure functions of the
 * header text (NULL means the header is absent).
 */
#ifndef IBPULSE_NEGOTIATE_H
#define IBPULSE_NEGOTIATE_H

#include "expo.h"

/* The format to serve for the Accept header @accept. */
enum expo_format negotiate_format(const char *accept);

/* 1 if @accept_encoding allows gzip (gzip, x-gzip or * with q > 0). */
int negotiate_gzip(const char *accept_encoding);

#endif
