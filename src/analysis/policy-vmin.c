/* vmin: Prieve and Fabry's VMIN (policies.md §3): n + Σ over the forward
 * distances f <= tau of (f - 1), from the window pass's sums (sim.h; the
 * finite forward distances are the backward ones); no simulation at one
 * window. */
#include "analysis/policy.h"

static uint64_t vmin_space(const lp_window_sums *s)
{
	return s->n + s->near_sum - s->near;
}

const lp_policy_info lp_policy_vmin = {
	.name = "vmin",
	.space = LP_SPACE_VARIABLE,
	.rule = "Prieve and Fabry's VMIN: a page stays while its next use is within tau",
	.window_space = vmin_space,
	.colour = "#293fae",
	.dash = "10 4",
};
