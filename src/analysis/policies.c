/* The page-replacement policies, one row each (policy.h). A new policy
 * is its file, policy-NAME.c, its row here, its lines in laplace-sim(1)
 * and its tests. The rows are in the order laplace-sim(1) lists them. */
#include "analysis/policy.h"

#include <string.h>

extern const lp_policy_ops lp_policy_lru_ops;
extern const lp_policy_ops lp_policy_fifo_ops;
extern const lp_policy_ops lp_policy_clock_ops;
extern const lp_policy_ops lp_policy_opt_ops;
extern const lp_policy_ops lp_policy_segq_ops;
extern const lp_policy_ops lp_policy_arc_ops;
extern const lp_policy_ops lp_policy_eelru_ops;

/* ws and vmin have no operations: their curves are computed whole
 * (sim.h). */
const lp_policy_info lp_policies[] = {
	{"lru", LP_SPACE_FIXED, "evict the page referenced least recently", &lp_policy_lru_ops,
	 true},
	{"opt", LP_SPACE_FIXED, "evict the page whose next reference is furthest away (Belady's MIN)",
	 &lp_policy_opt_ops, true},
	{"fifo", LP_SPACE_FIXED, "evict the page that entered memory first", &lp_policy_fifo_ops,
	 false},
	{"clock", LP_SPACE_FIXED, "second chance: a reference bit, a hand that clears it",
	 &lp_policy_clock_ops, false},
	{"segq", LP_SPACE_FIXED, "a FIFO front of K - S frames before an LRU back of S",
	 &lp_policy_segq_ops, false},
	{"arc", LP_SPACE_FIXED, "Megiddo and Modha's adaptive replacement cache",
	 &lp_policy_arc_ops, false},
	{"eelru", LP_SPACE_FIXED, "early-eviction LRU, one pair of eviction points",
	 &lp_policy_eelru_ops, false},
	{"ws", LP_SPACE_VARIABLE, "Denning's working set: the pages of the last tau references",
	 NULL, true},
	{"vmin", LP_SPACE_VARIABLE, "Prieve and Fabry's VMIN: a page stays while its next use is "
	 "within tau", NULL, true},
};

const size_t lp_npolicies = sizeof lp_policies / sizeof lp_policies[0];

const lp_policy_info *lp_policy_find(const char *name)
{
	for (size_t i = 0; i < lp_npolicies; i++)
		if (strcmp(lp_policies[i].name, name) == 0)
			return &lp_policies[i];
	return NULL;
}
