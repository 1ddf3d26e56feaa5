/* ws: Denning's working set (policies.md §3), a curve from the backward
 * distances (sim.h); no simulation at one window. */
#include "analysis/sim.h"

static void ws_curve(const lp_policy_curve *c)
{
	lp_sim_windows(c->t, c->sizes, c->nsizes, c->faults, c->space_time, NULL);
}

const lp_policy_info lp_policy_ws = {
	.name = "ws",
	.space = LP_SPACE_VARIABLE,
	.rule = "Denning's working set: the pages of the last tau references",
	.curve = ws_curve,
	.colour = "#94d85a",
	.dash = "",
};
