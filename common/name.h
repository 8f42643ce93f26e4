/* SPDX-License-Identifier: MIT */
/*
 * The character rules of names that travel between the rooms: a label or
 * identifier (a device, counter, GID, label key) and a host name. The JSON
 * decoders (jdec.h), the probe's sysfs reader and its settings all ask
 * here, so a name the probe sends is one the collector accepts.
 */
#ifndef IBPULSE_NAME_H
#define IBPULSE_NAME_H

#include <stddef.h>

enum name_class {
	NAME_TEXT,  /* printable: no control characters */
	NAME_LABEL, /* [A-Za-z0-9_.:+-] */
	NAME_HOST,  /* [A-Za-z0-9._-], starting with a letter or digit */
};

/* 1 when byte @ch may stand at position @pos of a name of class @c. */
int name_char_ok(enum name_class c, unsigned char ch, size_t pos);

/* The class's rule in words, for error messages ("letters, digits..."). */
const char *name_class_desc(enum name_class c);

/* 1 when @s is 1 to @max bytes, each allowed by @c; else 0. */
int name_valid(enum name_class c, const char *s, size_t max);

#endif
