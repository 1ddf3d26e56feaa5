/* ws: Denning's working set (policies.md §3): Σ_s min(g_s, tau) from the
 * window pass's sums (sim.h); no simulation at one window. */
#include "analysis/policy.h"

static uint64_t ws_space(const lp_window_sums *s)
{
	return s->near_sum + s->tau * (s->finite - s->near) + s->tail_sum +
	       s->tau * (s->pages - s->tails);
}

const lp_policy_info lp_policy_ws = {
	.name = "ws",
	.space = LP_SPACE_VARIABLE,
	.rule = "Denning's working set: the pages of the last tau references",
	.window_space = ws_space,
	.colour = "#94d85a",
	.dash = "",
};
