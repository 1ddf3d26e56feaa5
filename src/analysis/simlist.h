/* The policy list laplace sim takes (--policy, policies.md §4), which
 * laplace report's --policies and lp_simulate (laplace.h) take too; the
 * size lists are sim.h's. */
#ifndef LAPLACE_SIMLIST_H
#define LAPLACE_SIMLIST_H

#include <stddef.h>

#include "analysis/policy.h"
#include "core/error.h"

/* Parse the policies of list (comma-separated names of lp_policies) into
 * a new array of *n rows, g_free'd by the caller: 0, or LP_EUSAGE naming
 * the policy unknown, the message beginning with "--policy: ". */
int lp_sim_parse_policies(const char *list, const lp_policy_info ***policies, size_t *n,
			  lp_error *err);

#endif
