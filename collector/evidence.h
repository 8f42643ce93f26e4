/* SPDX-License-Identifier: MIT */
/*
 * Evidence per element, as pure functions (no SQLite, no clock), so every
 * rule is unit-tested alone; store_evidence.c keeps the windows in SQLite.
 *
 * An element is a port or a device (the HCA and its PCIe link). Every
 * judged result is evidence about each element it crossed, whatever the
 * peer: the judgements of one element, newest first, are its window (the
 * newest M, [suspect] judged_results). A bad result is *explained* when
 * its peer is a suspect already, or the path between the two ends' groups
 * is (a suspect group pair): it then counts neither for nor against. An
 * element is a *suspect* when
 *   - at least K ([suspect] bad_results) of its window were bad and not
 *     explained, and
 *   - the bad results involve at least P ([suspect] peers) distinct peers
 *     that *exonerate* it: peers whose own other results (with anyone
 *     but this element) are good, and that are not suspects themselves.
 * So one bad port does not make each of its partners a suspect (their
 * bad results all point at one peer, which is not fine elsewhere), and
 * two bad ports tested against each other do not hide each other (each
 * has bad results with good peers too). A suspect closes after
 * good_results good results in a row, and its window then starts empty.
 *
 * An element *needs confirmation* when it is not a suspect and fewer than
 * confirm_tests good results with other peers came after its newest bad
 * result, explained or not (a suspect's partner may be bad too: two bad
 * ports tested against each other must not hide each other); the planner
 * then adds tests
 * between it and peers with good recent history, so that one bad result
 * is confirmed or cleared within a period instead of waiting for the
 * rotation to bring it back.
 */
#ifndef IBPULSE_COLLECTOR_EVIDENCE_H
#define IBPULSE_COLLECTOR_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#define EVIDENCE_MAX_WINDOW 64 /* M at most */

/* The [suspect] settings (collector.ini). */
struct evidence_opts {
	long long bad_results;	  /* K */
	long long judged_results; /* M: the window */
	long long good_results;	  /* good in a row that close a suspect */
	long long peers;	  /* P: distinct exonerating peers */
	long long confirm_tests;  /* good results after a bad one that
				   * clear it without more tests */
};

/* One judgement of an element's window. */
struct evidence_row {
	double started, value, baseline;
	int64_t peer;	   /* the element at the other end */
	unsigned via_port; /* the port of this element that took it */
	int bad;	   /* 1 bad, 0 good */
	/* Filled by the caller for bad rows: peer_fine 1 when the peer
	 * exonerates this element (fine with others, not a suspect);
	 * explained 1 when something else explains the bad result: the
	 * peer is an open suspect, or the path between the two groups is. */
	int peer_fine, explained;
};

struct evidence_verdict {
	unsigned judged, bad;		/* in the window; bad unexplained */
	unsigned explained;		/* bad but explained */
	unsigned peers_bad;		/* distinct peers of the bad results */
	unsigned peers_exonerating;	/* of those, exonerating */
	unsigned ports_bad;		/* via ports mostly bad (more counted
					 * bad than good results) */
	unsigned ports_good;		/* via ports mostly good */
	unsigned ports_clear;		/* distinct other via_port with a good
					 * result after the first bad one */
	unsigned good_run;		/* good in a row, newest first */
	int suspect;			/* K bad and P exonerating peers */
	int confirm;			/* needs confirmation tests */
	double first_bad;		/* started of the oldest bad row */
	double baseline, figure, worst; /* medians of the bad rows; worst */
};

/*
 * evidence_judge() - the verdict over window @r[0..n-1] (newest first,
 * at most EVIDENCE_MAX_WINDOW) of an element whose metric is bandwidth
 * (@lower_is_worse 1) or latency (0). Pure; fills *@v.
 */
void evidence_judge(const struct evidence_opts *o, const struct evidence_row *r,
		    size_t n, int lower_is_worse, struct evidence_verdict *v);

/*
 * evidence_peer_fine() - does a peer whose window is @r[0..n-1] (newest
 * first) exonerate element @self? Its results with anyone but @self
 * must hold at least one good one, and more good than bad ones.
 */
int evidence_peer_fine(const struct evidence_row *r, size_t n, int64_t self);

/*
 * evidence_opts_check() - the rules across settings (bad_results <=
 * judged_results <= EVIDENCE_MAX_WINDOW, peers <= bad_results). 0, or
 * -EINVAL with the reason in @err.
 */
int evidence_opts_check(const struct evidence_opts *o, char *err,
			size_t errlen);

#endif
