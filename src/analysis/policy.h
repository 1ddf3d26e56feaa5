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

#include "core/error.h"
#include "core/nextuse.h"

/* A dense page number. */
typedef uint32_t lp_pageno;
#define LP_NO_PAGE UINT32_MAX


typedef enum lp_policy_space {
	LP_SPACE_FIXED,    /* --frames: K frames */
	LP_SPACE_VARIABLE, /* --window: a window of tau references */
} lp_policy_space;

/* A policy's options (laplace-sim(1)): each the command's --NAME VALUE,
 * parsed and checked by the policy's own functions, as libCacheSim's
 * policies parse their parameter strings. */
#define LP_POLICY_OPTIONS_MAX 2
typedef struct lp_policy_option {
	const char *name;     /* the option without its dashes: "segq-lru-frames" */
	const char *metavar;  /* its value in --help: "S" */
	const char *help;     /* one line: what it is and its range */
	const char *fallback; /* its default, in words: "floor(K/2)" */
} lp_policy_option;

/* The values given, by the position of their option in the row. */
typedef struct lp_policy_settings {
	uint64_t value[LP_POLICY_OPTIONS_MAX];
	bool set[LP_POLICY_OPTIONS_MAX];
} lp_policy_settings;

/* What a policy is created with. */
typedef struct lp_policy_params {
	uint64_t frames;          /* K >= 1 */
	/* Every page number given is below it; except that arrive() (and
	 * access()) may take any page, the state growing as need be: a
	 * memory that learns its pages as it goes (laplace schedule) gives
	 * a first guess. opt, segq, arc and eelru are given the exact count
	 * (laplace sim's). */
	lp_pageno pages;
	/* The row's needs_next_use: next(t) of every reference t (LP_NEVER:
	 * none), for the whole stream the policy will be fed, t counted from
	 * 0. */
	const uint64_t *next_use;
	/* The row's options at K frames, their defaults filled in
	 * (lp_policy_info.resolve). */
	uint64_t option[LP_POLICY_OPTIONS_MAX];
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

/* How a pass over a stream tells how far it has come: fn(ctx, refs),
 * refs more references read; false when the run is to stop (the pass
 * then ends early, its results unfinished). */
typedef struct lp_curve_tick {
	bool (*fn)(void *ctx, uint64_t refs);
	void *ctx;
} lp_curve_tick;
/* tick told (NULL: nobody): whether to go on. */
static inline bool lp_curve_ticked(const lp_curve_tick *tick, uint64_t refs)
{
	return !tick || tick->fn(tick->ctx, refs);
}

/* A whole curve in one pass: the faults at each of sizes[0, nsizes),
 * ascending; tick (may be NULL) told as it goes. */
struct lp_trace;
typedef struct lp_policy_curve {
	const struct lp_trace *t;
	const uint64_t *sizes;
	size_t nsizes;
	uint64_t *faults;
	const lp_curve_tick *tick;
} lp_policy_curve;

/* What one pass over the backward distances (policies.md §3) gives at
 * window tau, from which every variable-space row takes its space_time:
 * all share that pass, and the faults, pages + finite - near. */
typedef struct lp_window_sums {
	uint64_t tau;
	uint64_t n, pages; /* references, distinct pages */
	uint64_t finite;   /* references with a previous use: n - pages */
	/* Finite backward distances <= tau: how many, their sum. */
	uint64_t near, near_sum;
	/* Gaps from a page's last reference to the end (n - s) <= tau: how
	 * many (of pages), their sum. */
	uint64_t tails, tail_sum;
} lp_window_sums;

/* One row per policy: everything the commands, the library, the schedule
 * and the report know of it. */
typedef struct lp_policy_info {
	const char *name;
	lp_policy_space space;     /* its kind */
	const char *rule;          /* one line on what it is */
	const lp_policy_ops *ops;  /* per-size simulation; NULL: curve only;
				    * with victim(), a replacement of laplace
				    * schedule --memory */
	/* Its options (options[0, noptions)), and the policy's own
	 * functions over them: parse one value given (0, or LP_EUSAGE with
	 * err set, the message naming --NAME); check those given against K
	 * frames asked (0 or LP_EUSAGE); fill params->option at k frames
	 * (k <= the pages: no eviction past them), defaults where not
	 * given. NULL functions: no options. */
	const lp_policy_option *options;
	size_t noptions;
	int (*parse)(lp_policy_settings *s, size_t i, const char *text, lp_error *err);
	int (*check)(const lp_policy_settings *s, uint64_t from, uint64_t to, lp_error *err);
	void (*resolve)(const lp_policy_settings *s, uint64_t k, lp_policy_params *params);
	/* A fixed-space row's whole curve in one pass (sim.h), or NULL: one
	 * simulation per size. */
	void (*curve)(const lp_policy_curve *c);
	/* A variable-space row's space_time at a window (its curve: every
	 * such row's is one pass, lp_sim_windows). */
	uint64_t (*window_space)(const lp_window_sums *s);
	/* Whether, with --sample-rate or --sample-pages, it runs miniature
	 * simulations (policies.md §8); with mini_scale, its options scaled
	 * to the miniature memory: *p is at K' = p->frames, its options
	 * resolved there, s the options given (NULL: none), frames K,
	 * rate 0 < R <= 1. A fixed-space row with neither a curve nor this
	 * refuses sampling. */
	bool miniature;
	void (*mini_scale)(const lp_policy_settings *s, uint64_t frames, double rate,
			   lp_policy_params *p);
	uint64_t curve_pages;      /* the most distinct pages curve holds; 0: any */
	bool needs_next_use;       /* params.next_use at each size */
	const char *colour;        /* its curves' colour in laplace report */
	/* and their dash pattern (SVG stroke-dasharray, "" solid): curves
	 * that coincide (arc's on lru's) still show apart, in grey print too */
	const char *dash;
} lp_policy_info;

/* The table (policies.c), and the index of a row in it. */
extern const lp_policy_info *const lp_policies[];
extern const size_t lp_npolicies;
size_t lp_policy_index(const lp_policy_info *p);

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

/* LP_EINPUT with err set to "NAME: PAGES distinct pages, more than P's
 * whole curve holds (P's curve_pages)", the one wording of this refusal;
 * without "NAME: " when name is NULL (a caller that names the stream
 * itself, lp_trace_add's). */
int lp_policy_refuse_pages(const lp_policy_info *p, const char *name, uint64_t pages,
			   lp_error *err);
/* The row named name (the whole string), or NULL. */
const lp_policy_info *lp_policy_find(const char *name);
/* The names of the rows for which keep(row) holds (NULL: every row),
 * joined by sep, the last two by last (NULL: sep): "lru, fifo or clock".
 * g_free it. */
char *lp_policy_names(bool (*keep)(const lp_policy_info *), const char *sep, const char *last);
/* Rows with a victim rule: laplace schedule's replacements. */
bool lp_policy_has_victim(const lp_policy_info *p);
/* Rows that refuse --sample-rate and --sample-pages (policies.md §8):
 * fixed-space, with neither a one-pass curve nor miniature simulations. */
bool lp_policy_refuses_sampling(const lp_policy_info *p);
/* The parameters of policy at frames (K past the pages is the pages,
 * where no policy evicts), its options from s (NULL: defaults). */
void lp_policy_params_at(const lp_policy_info *policy, const lp_policy_settings *s,
			 uint64_t frames, lp_pageno pages, const uint64_t *next_use,
			 lp_policy_params *p);
/* For a row's parse: text, the value of option o, a decimal number >=
 * min into *value, or LP_EUSAGE ("--NAME must be a decimal number of at
 * least MIN, not 'TEXT'"). */
int lp_policy_parse_count(const lp_policy_option *o, const char *text, uint64_t min,
			  uint64_t *value, lp_error *err);

#endif
