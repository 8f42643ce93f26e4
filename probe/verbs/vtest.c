// SPDX-License-Identifier: MIT
/*
 * The small helpers of the engine's door (vtest.h) that callers outside
 * probe/verbs/ need besides running and serving tests: a listening
 * socket for a responder, the device-name rule of the control protocol,
 * and the first RDMA device. They wrap the private ctrl.h and libibverbs
 * so that nothing outside verbs/ includes either.
 */
#include "vtest.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>

#include "ctrl.h"

_Static_assert(VT_PROTO_TICKET == CTRL_VERSION_TICKET,
	       "vtest.h names the control protocol's ticket version");
_Static_assert(VT_DEV_NAME_MAX == CTRL_DEV_MAX,
	       "vtest.h names the control protocol's device name length");

int vt_listen(const char *addr, const char *port, int *fd, unsigned *bound)
{
	return ctrl_listen(addr, port, fd, bound);
}

bool vt_dev_name_ok(const char *name)
{
	return ctrl_dev_name_ok(name);
}

const char *vt_wc_status_name(int wc_status)
{
	return ibv_wc_status_str((enum ibv_wc_status)wc_status);
}

int vt_first_device(char *name, size_t len)
{
	int n = 0, ret = -ENODEV;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (list && n) {
		snprintf(name, len, "%s", ibv_get_device_name(list[0]));
		ret = 0;
	}
	if (list)
		ibv_free_device_list(list);
	return ret;
}
