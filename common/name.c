// SPDX-License-Identifier: MIT
/*
 * Name rules (name.h): one table of what a label and a host name may hold,
 * shared by the decoders on the collector's side and the probe's reader.
 */
#include "name.h"

#include <string.h>

int name_char_ok(enum name_class c, unsigned char ch, size_t pos)
{
	int alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9');

	switch (c) {
	case NAME_TEXT:
		return ch >= 0x20 && ch != 0x7f;
	case NAME_LABEL:
		return alnum || ch == '_' || ch == '.' || ch == ':' ||
		       ch == '+' || ch == '-';
	case NAME_HOST:
		return alnum ||
		       (pos > 0 && (ch == '.' || ch == '-' || ch == '_'));
	}
	return 0;
}

const char *name_class_desc(enum name_class c)
{
	switch (c) {
	case NAME_LABEL:
		return "letters, digits and _.:+-";
	case NAME_HOST:
		return "letters, digits and .-_ (starting with a letter or "
		       "digit)";
	default:
		return "printable characters";
	}
}

int name_valid(enum name_class c, const char *s, size_t max)
{
	size_t len = strlen(s);

	if (!len || len > max)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!name_char_ok(c, (unsigned char)s[i], i))
			return 0;
	return 1;
}
