// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the control-channel codec: the first byte picks a
 * message type (byte % 5) and, for REQUEST and RESULT, the protocol
 * version (1 + byte / 5 % 3: 1, 2, or 3 with a ticket); the rest is a
 * payload. Whatever decodes
 * must re-encode to the same bytes; nothing may read out of bounds.
 * Seeds, one valid message of each kind and version: corpus/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t out[CTRL_HDR_LEN + CTRL_MAX_PAYLOAD];

/* Re-encode must reproduce the input payload exactly. */
static void same(int len, const uint8_t *p, size_t plen)
{
	if (len < CTRL_HDR_LEN || (size_t)len - CTRL_HDR_LEN != plen ||
	    memcmp(out + CTRL_HDR_LEN, p, plen))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctrl_request q;
	struct ctrl_accept a;
	struct ctrl_endpoint e;
	struct ctrl_refuse r;
	struct ctrl_result m;
	struct ctrl_hdr h;
	const uint8_t *p = data + 1;
	size_t n = size ? size - 1 : 0;
	unsigned v;

	if (!size || n > CTRL_MAX_PAYLOAD)
		return 0;
	v = 1 + (unsigned)(data[0] / 5) % 3;
	(void)ctrl_hdr_decode(p, n, &h);
	switch (data[0] % 5) {
	case 0:
		if (!ctrl_request_decode(p, n, v, &q))
			same(ctrl_request_encode(&q, out, sizeof(out)), p, n);
		break;
	case 1:
		if (!ctrl_accept_decode(p, n, &a))
			same(ctrl_accept_encode(&a, out, sizeof(out)), p, n);
		break;
	case 2:
		if (!ctrl_connect_decode(p, n, &e))
			same(ctrl_connect_encode(&e, out, sizeof(out)), p, n);
		break;
	case 3:
		if (!ctrl_refuse_decode(p, n, &r))
			same(ctrl_refuse_encode(&r, out, sizeof(out)), p, n);
		break;
	default:
		if (!ctrl_result_decode(p, n, v, &m))
			same(ctrl_result_encode(CTRL_RESULT, &m, out,
						sizeof(out)),
			     p, n);
		break;
	}
	return 0;
}
