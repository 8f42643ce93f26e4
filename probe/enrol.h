/* SPDX-License-Identifier: MIT */
/*
 * Enrolment: a probe with an enrolment secret but no token yet asks the
 * collector for one, once (docs/api.md, POST /api/v1/enrol).
 */
#ifndef IBPULSE_ENROL_H
#define IBPULSE_ENROL_H

#include "probe_settings.h"

/*
 * probe_enrol() - when @s->token_file does not exist and
 * @s->enrol_secret_file is set, enrol this host at the collector
 * (POST /api/v1/enrol) and write the token received to token_file (mode
 * 0600). Returns 0 (done, or nothing to do) or a negative errno, logged;
 * a host the collector has enrolled before is refused (409).
 */
int probe_enrol(const struct probe_settings *s);

#endif
