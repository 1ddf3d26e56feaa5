/* laplace sim's computation (policies.md §2-§4) over a stream held whole
 * (trace.h): the exact curves of the stack algorithms in one pass each
 * (lru by stack distances over recency.h's trees, opt by the critical
 * stack algorithm, ws and vmin by distance histograms), and the other
 * fixed-space policies simulated at each size through their operations
 * (policy.h), every curve and every (policy, size) a job of one work pool
 * over the same decoded stream. No I/O: the command prints. */
#ifndef LAPLACE_SIM_H
#define LAPLACE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/policy.h"
#include "analysis/trace.h"
#include "core/progress.h"

/* A size list as given (laplace-sim(1)): items N, A-B, pow2 and all. */
typedef enum lp_sim_item_kind { LP_SIM_RANGE, LP_SIM_POW2, LP_SIM_ALL } lp_sim_item_kind;
typedef struct lp_sim_item {
	lp_sim_item_kind kind;
	uint64_t from, to; /* LP_SIM_RANGE: N is N-N */
} lp_sim_item;
typedef struct lp_sim_list {
	lp_sim_item *items;
	size_t n;
} lp_sim_list;
/* Sizes the items N and A-B of one list may name in all, repeats
 * counted: each is a row. */
#define LP_SIM_SIZES_MAX (UINT64_C(1) << 26)
/* Parse text, the value of option (named in messages): 0, or LP_EUSAGE
 * with err set (an empty item, not a number, a size < 1, A > B, more than
 * LP_SIM_SIZES_MAX sizes named). */
int lp_sim_list_parse(const char *option, const char *text, lp_sim_list *list, lp_error *err);
void lp_sim_list_clear(lp_sim_list *list);
/* The sizes of list where pow2 and all reach top (D; for a window the
 * largest finite backward distance, or 1 when there is none; top 0, an
 * empty stream's D: pow2 and all name no size), as ascending ranges, none
 * overlapping or touching another: *n of them, g_free'd by the caller.
 * Memory and time follow the items, not the sizes they name. */
typedef struct lp_sim_range {
	uint64_t from, to;
} lp_sim_range;
lp_sim_range *lp_sim_list_ranges(const lp_sim_list *list, uint64_t top, size_t *n);
/* The sizes of ranges[0, m) in ascending order: their number. */
uint64_t lp_sim_range_count(const lp_sim_range *ranges, size_t m);
/* The same sizes one by one, ascending and each once: *n of them,
 * g_free'd by the caller. */
uint64_t *lp_sim_list_sizes(const lp_sim_list *list, uint64_t top, size_t *n);
/* The sizes of ranges[0, m) up to cap, and cap itself when a size lies
 * past it: the sizes whose rows a run computes when every size past cap
 * has cap's row (lp_sim_fixed_cap, lp_sim_window_bounds): *n of them,
 * g_free'd by the caller. Memory O(min(sizes, cap)). */
uint64_t *lp_sim_sizes_upto(const lp_sim_range *ranges, size_t m, uint64_t cap, size_t *n);
/* The sizes of ranges, one by one, each with the index of its row among
 * lp_sim_sizes_upto's (cap's index past cap). */
typedef struct lp_sim_size_walk {
	const lp_sim_range *ranges;
	size_t m, range;
	uint64_t next, cap, last;
	size_t index;
	bool started;
} lp_sim_size_walk;
void lp_sim_size_walk_init(lp_sim_size_walk *w, const lp_sim_range *ranges, size_t m,
			   uint64_t cap);
bool lp_sim_size_walk_next(lp_sim_size_walk *w, uint64_t *size, size_t *index);

/* The policy options given (policy.h): settings[i] the options of row
 * lp_policies[i]; NULL: every default. With sample (lp_sim_sample's),
 * the policies lp_sim_miniature names run miniature simulations over it
 * (policies.md §8). progress, when set, is told the references read so
 * far out of every run's (from any thread, one call at a time); a run
 * stops soon after *stop (when stop is set) turns non-zero. */
typedef struct lp_sim_options {
	const lp_policy_settings *settings;
	const lp_trace *sample;
	double sample_rate;
	lp_progress_fn progress;
	void *progress_ctx;
	const int *stop;
} lp_sim_options;

/* The parameters of policy at frames (lp_policy_params_at), its options
 * from o. */
void lp_sim_params(const lp_sim_options *o, const lp_policy_info *policy, uint64_t frames,
		   const lp_trace *t, const uint64_t *next_use, lp_policy_params *p);

/* hist[d], d = 1 .. D (D + 1 entries, hist[0] unused): the references at
 * LRU stack distance d (stackdist.h); at OPT stack distance d (optdist.h,
 * no next uses needed). tick (may be NULL) told a block at a time; lru's
 * of a trace loaded with LP_TRACE_LRU_ONLY, opt's with LP_TRACE_OPT_ONLY,
 * are the ones counted then, tick told once. g_free them. */
uint64_t *lp_sim_lru_distances(const lp_trace *t, const lp_curve_tick *tick);
uint64_t *lp_sim_opt_distances(const lp_trace *t, const lp_curve_tick *tick);
/* Faults of a stack algorithm at each of sizes[0, m) (ascending) from its
 * distances: the first references and those deeper than the size. */
void lp_sim_stack_faults(const uint64_t *hist, lp_pageno pages, const uint64_t *sizes, size_t m,
			 uint64_t *faults);
/* Whether every space_time of t fits 64 bits: each is at most n + n x D
 * (a page resident at most once a reference, D of them). When it does
 * not, LP_EINPUT with err set naming name, the stream (laplace sim
 * counts in 64 bits and writes no sum that wrapped). */
bool lp_sim_space_fits(const lp_trace *t);
int lp_sim_check_space(const lp_trace *t, const char *name, lp_error *err);
/* Whether the whole curve of each of policies[0, n) holds t's distinct
 * pages (lp_policy_info.curve_pages): else LP_EINPUT with err set naming
 * name, the stream, and the limit. */
int lp_sim_check_curves(const lp_trace *t, const lp_policy_info *const *policies, size_t n,
			const char *name, lp_error *err);
/* space_time of every fixed-space policy at each of sizes[0, m):
 * Σ_t min(K, distinct pages among references 0 .. t). */
void lp_sim_fixed_space(const lp_trace *t, const uint64_t *sizes, size_t m, uint64_t *space);

/* In one pass: the largest finite backward distance (*max_backward, 0
 * when none: where a window's pow2 and all stop) and the window cap
 * (*cap: the window past which ws and vmin's rows are all the same, the
 * largest gap from a reference to the next one to its page, or to the
 * end; at least 1). lp_sim_max_backward gives the first alone. */
void lp_sim_window_bounds(const lp_trace *t, uint64_t *max_backward, uint64_t *cap);
uint64_t lp_sim_max_backward(const lp_trace *t);
/* The variable-space rows[0, nrows) at each window of taus[0, m)
 * (ascending), in one pass over the backward distances (prevuse.h):
 * their faults (the same for all), and each row's space_time into
 * space[r] (m entries; its window_space of the pass's sums). tick (may
 * be NULL) told a block at a time. */
void lp_sim_windows(const lp_trace *t, const uint64_t *taus, size_t m, uint64_t *faults,
		    const lp_policy_info *const *rows, uint64_t *const *space, size_t nrows,
		    const lp_curve_tick *tick);

/* One policy at one size through its operations: the faults; with
 * fault_fn, each fault told (victim LP_NO_PAGE for a fill). */
typedef void (*lp_sim_fault_fn)(void *ctx, uint64_t t, lp_pageno page, lp_pageno victim);
uint64_t lp_sim_fixed(const lp_trace *t, const lp_policy_info *policy, const lp_policy_params *p,
		      lp_sim_fault_fn fault_fn, void *ctx);

/* ---- miniature simulation (policies.md §8) ---- */
/* Whether policy runs miniature simulations when sampling: its row's
 * miniature (a stack algorithm run size by size does not). */
bool lp_sim_miniature(const lp_policy_info *policy);
/* The references of t whose page is sampled (h(page) < R * 2^64, §7's
 * rule), into *sample (a done trace, pages numbered in the same order),
 * with R = rate (0 < rate <= 1; pages 0) or, with pages >= 1 (rate 0),
 * the pages-th smallest h over t's pages / 2^64 (1 when t has at most
 * pages pages); R into *r. 0, or LP_EIO (temporary files), or LP_EINPUT
 * when the sampled references scaled by 1/R would pass 2^64; err set. */
int lp_sim_sample(const lp_trace *t, double rate, uint64_t pages, lp_trace *sample, double *r,
		  lp_error *err);
/* K' = max(1, nearbyint(K * R)): the frames of a miniature memory. */
uint64_t lp_sim_mini_frames(uint64_t frames, double rate);
/* The size past which a policy's rows are all the same: D for the
 * exact runs of a fixed-space policy, at least D for miniature ones
 * (where K' first reaches the sample's pages), given the options. */
uint64_t lp_sim_fixed_cap(const lp_trace *t, const lp_policy_info *policy,
			  const lp_sim_options *o);

/* What a run asks: per policy, its sizes (ascending) and room for the
 * results. */
typedef struct lp_sim_task {
	const lp_policy_info *policy;
	const uint64_t *sizes;
	size_t nsizes;
	uint64_t *faults, *space_time; /* nsizes each, filled */
	bool per_size; /* one simulation per size, even with a curve */
} lp_sim_task;
/* Fill every task's results, on up to threads threads: 0, or 1 when
 * *o->stop stopped it (the results then unfinished). The variable-space
 * tasks of the same sizes share one pass (lp_sim_windows). */
int lp_sim_run(const lp_trace *t, lp_sim_task *tasks, size_t ntasks, const lp_sim_options *o,
		unsigned threads);

/* A policy's rows: the sizes asked, as ranges (none on an empty stream),
 * every size past cap having cap's row (lp_sim_size_walk). */
typedef struct lp_sim_rows {
	const lp_sim_range *ranges;
	size_t nranges;
	uint64_t cap;
} lp_sim_rows;
/* A run over a stream as laplace sim and lp_simulate_request (laplace.h)
 * set it up: the sizes the lists name (frames where pow2 and all reach
 * the stream's pages; windows, with a variable-space policy and a
 * non-empty stream, where they reach its largest backward distance or
 * 1), each policy's rows and task (its sizes up to its cap), and the
 * sample of its miniature simulations. */
typedef struct lp_sim_plan {
	lp_sim_range *ranges[2]; /* frames, windows: the sizes named */
	size_t nranges[2];
	lp_sim_rows *rows;  /* one a policy */
	lp_sim_task *tasks; /* one a policy */
	size_t ntasks;
	lp_trace sample;
	bool sampled; /* sample filled, o->sample pointing to it */
} lp_sim_plan;
/* Plan policies[0, n) over t: the sizes named (N, A-B) checked by
 * lp_sim_options_check against o->settings, on an empty stream too;
 * with sample_rate or sample_pages, a non-empty stream and a policy
 * lp_sim_miniature names, t sampled (lp_sim_sample) into plan->sample,
 * and o->sample and o->sample_rate set; then the tasks. 0, or LP_EUSAGE
 * (the check) or lp_sim_sample's status, with err set. plan is
 * lp_sim_plan_clear'ed whatever this returns, and not moved meanwhile. */
int lp_sim_plan_init(lp_sim_plan *plan, const lp_trace *t, const lp_policy_info *const *policies,
		     size_t n, const lp_sim_list *frames, const lp_sim_list *windows,
		     double sample_rate, uint64_t sample_pages, lp_sim_options *o, lp_error *err);
void lp_sim_plan_clear(lp_sim_plan *plan);

#endif
