/* vmin: Prieve and Fabry's VMIN (policies.md §3), a curve from the
 * forward distances (sim.h); no simulation at one window. */
#include "analysis/sim.h"

static void vmin_curve(const lp_policy_curve *c)
{
	lp_sim_windows(c->t, c->sizes, c->nsizes, c->faults, NULL, c->space_time);
}

const lp_policy_info lp_policy_vmin = {
	.name = "vmin",
	.space = LP_SPACE_VARIABLE,
	.rule = "Prieve and Fabry's VMIN: a page stays while its next use is within tau",
	.curve = vmin_curve,
	.colour = "#293fae",
	.dash = "10 4",
};
