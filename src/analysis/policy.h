/* Page-replacement policies behind one small table of operations
 * (policies.md §2-§3, laplace-sim(1)), the way libCacheSim's cache_t takes
 * get and evict: a policy is one file, policy-NAME.c, holding its state
 * and an lp_policy_ops, and one row of lp_policies (policies.c).
 *
 * Policies see dense page numbers, 0 .. pages - 1, handed out by whoever
 * reads the stream (in order of first reference), so that their state is
 * arrays indexed by page, never a hash of canonical numbers. They do no
 * I/O and never fail once created.
 *
 * Two ways to drive a fixed-space policy:
 *  - access(): demand paging with instant loads (laplace sim, laplace lru):
 *    the reference, and on a fault its victim, in one call;
 *  - arrive(), hit() and victim(): a memory whose loads take time
 *    (laplace schedule --memory, laplace-formats(5) §9.4.4): a fault
 *    first takes a frame (victim(), which passes over held pages), the
 *    page enters the policy when it arrives (arrive()), and references to
 *    resident pages are hit(). access(p) is, for these policies, exactly
 *    hit(p) when p is resident, else victim() when memory is full, then
 *    arrive(p). Policies whose faults depend on more than that (arc,
 *    eelru, segq, opt) leave the three NULL. */
#ifndef LAPLACE_POLICY_H
#define LAPLACE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/nextuse.h"

/* A dense page number. */
typedef uint32_t lp_pageno;
#define LP_NO_PAGE UINT32_MAX


typedef enum lp_policy_space {
	LP_SPACE_FIXED,    /* --frames: K frames */
	LP_SPACE_VARIABLE, /* --window: a window of tau references */
} lp_policy_space;

/* What a policy is created with. Options a policy does not take are
 * ignored; the command checks ranges before create (laplace-sim(1)). */
typedef struct lp_policy_params {
	uint64_t frames;          /* K >= 1 */
	/* Every page number given is below it; except that arrive() (and
	 * access()) may take any page, the state growing as need be: a
	 * memory that learns its pages as it goes (laplace schedule) gives
	 * a first guess. opt, segq, arc and eelru are given the exact count
	 * (laplace sim's). */
	lp_pageno pages;
	/* opt: next(t) of every reference t (LP_NEVER: none), for the whole
	 * stream the policy will be fed, t counted from 0. */
	const uint64_t *next_use;
	unsigned clock_load_bit;  /* 0 or 1 */
	uint64_t segq_lru_frames; /* S, 0 <= S < K */
	uint64_t eelru_early;     /* e, 1 <= e < K */
	uint64_t eelru_late;      /* l > K */
} lp_policy_params;

typedef struct lp_policy_ops {
	/* NULL only when out of memory is impossible to report: g_new aborts. */
	void *(*create)(const lp_policy_params *params);
	void (*destroy)(void *state);
	/* Reference t, to page: true on a hit; on a fault false, with *victim
	 * the evicted page, or LP_NO_PAGE when a free frame was filled. t
	 * counts every reference fed so far from 0. */
	bool (*access)(void *state, lp_pageno page, uint64_t t, lp_pageno *victim);

	/* The finer form (see above); NULL where the policy has none. */
	/* page (not resident) enters memory as a fault's page does. */
	void (*arrive)(void *state, lp_pageno page);
	/* A reference to page (resident) that is not the completion of its
	 * own fault. */
	void (*hit)(void *state, lp_pageno page);
	/* Choose, remove and return the victim among resident pages p with
	 * held[p] == 0 (held may be NULL: none is held); LP_NO_PAGE when every
	 * resident page is held. */
	lp_pageno (*victim)(void *state, const uint8_t *held);
} lp_policy_ops;

/* One row per policy. */
typedef struct lp_policy_info {
	const char *name;
	lp_policy_space space;
	const char *rule;          /* one line, for --help */
	const lp_policy_ops *ops;  /* per-size simulation; NULL: curve only */
	bool stack;                /* a stack algorithm: its whole curve is
				    * computed in one pass (lp_sim_run, sim.h) */
} lp_policy_info;

extern const lp_policy_info lp_policies[];
extern const size_t lp_npolicies;

/* opt's eviction key of a page last referenced at t, whose next use is
 * next (LP_NEVER: none): the largest key is evicted (policies.md §2). A
 * next use is its time; a page never used again ranks above every one,
 * the least recently referenced of them highest. The one-pass curve
 * (sim.c) and the simulation at one size (policy-opt.c) share it, so
 * they break ties alike. */
static inline uint64_t lp_opt_key(uint64_t next, uint64_t t)
{
	return next != LP_NEVER ? next : (UINT64_C(1) << 63) + ((UINT64_C(1) << 62) - t);
}

/* The row named name (the whole string), or NULL. */
const lp_policy_info *lp_policy_find(const char *name);

#endif
