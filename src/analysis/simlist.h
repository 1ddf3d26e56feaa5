/* The lists laplace sim takes (policies.md §4, laplace-sim(1)): policies
 * (--policy) and sizes (--frames, --window), parsed before any input is
 * read, then expanded once the stream's D or largest backward distance
 * is known. The command and lp_simulate (laplace.h) share them. */
#ifndef LAPLACE_SIMLIST_H
#define LAPLACE_SIMLIST_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/policy.h"
#include "core/error.h"

/* The most sizes a list may expand to: every one is a row of output. */
#define LP_SIM_MAX_SIZES (UINT64_C(1) << 26)

/* A parsed size list: ranges (N is N-N), and whether pow2 and all were
 * named. */
typedef struct lp_sim_list {
	GArray *ranges; /* uint64_t pairs: first, last */
	bool pow2, all;
} lp_sim_list;

/* Parse the policies of list (comma-separated names of lp_policies) into
 * a new array of *n rows, g_free'd by the caller: 0, or LP_EUSAGE naming
 * the policy unknown. */
int lp_sim_parse_policies(const char *list, const lp_policy_info ***policies, size_t *n,
			  lp_error *err);
/* Parse a size list given to option (for the messages): 0, or LP_EUSAGE
 * naming the item that is no N >= 1, A-B with 1 <= A <= B, pow2 or all.
 * l is cleared by lp_sim_list_clear either way. */
int lp_sim_parse_sizes(const char *list, const char *option, lp_sim_list *l, lp_error *err);
/* The sizes of l, ascending and each once, for a stream whose D (frames)
 * or largest finite backward distance (windows) is max, with window
 * telling which (pow2 with max 0 is 1 for a window, nothing for frames):
 * a new array of *n (NULL when none), or NULL with *n 0 and LP_EUSAGE in
 * err when there would be more than LP_SIM_MAX_SIZES. */
int lp_sim_expand(const lp_sim_list *l, uint64_t max, bool window, uint64_t **sizes, size_t *n,
		  lp_error *err);
void lp_sim_list_clear(lp_sim_list *l);

#endif
