/* SPDX-License-Identifier: MIT */
/*
 * This node's verdict on its Kubernetes Node object, through the API
 * server with libcurl, the pod's service-account token (read again for
 * each call: the kubelet rotates it) and the cluster's CA:
 *   - condition IbpulseFabricHealthy (status True for healthy and
 *     degraded, False for failed, Unknown without a verdict): a
 *     strategic-merge PATCH of nodes/NAME/status, which merges
 *     conditions by type and leaves the others alone;
 *   - optionally the taint ibpulse.io/fabric=failed:NoSchedule, added
 *     while failed and removed once healthy: a JSON merge PATCH of
 *     nodes/NAME with the whole taint list and the resourceVersion it was
 *     read at, so a concurrent change is a 409 and is read again.
 * The calls, and so the RBAC they need: get nodes; patch nodes/status;
 * patch nodes (the taint only). docs/health.md, "KUBERNETES".
 */
#ifndef IBPULSE_KUBE_H
#define IBPULSE_KUBE_H

#include <stddef.h>

#define KUBE_CONDITION "IbpulseFabricHealthy"
#define KUBE_TAINT_KEY "ibpulse.io/fabric"
#define KUBE_TAINT_VALUE "failed"

struct kube_opts {
	const char *api;	/* "https://10.96.0.1:443"; NULL: from env */
	const char *token_file; /* service-account token */
	const char *ca_file;	/* the API server's CA */
	const char *node;	/* the Node to publish on */
	double timeout;		/* seconds per call */
};

struct kube;

/* kube_new() - check the options (the API from KUBERNETES_SERVICE_HOST
 * and _PORT when unset). 0, -EINVAL (logged) or -ENOMEM. */
int kube_new(const struct kube_opts *o, struct kube **out);
void kube_free(struct kube *k);

/*
 * kube_publish() - set the condition from @verdict (enum phealth_verdict)
 * with @message (the first reason, or why there is no verdict) and, with
 * @taint, add or remove the taint. Writes only what changed, except the
 * condition's heartbeat, refreshed when @heartbeat. 0 or a negative
 * errno (logged with the API server's reason).
 */
int kube_publish(struct kube *k, int verdict, const char *message, int taint,
		 int heartbeat);

#endif
