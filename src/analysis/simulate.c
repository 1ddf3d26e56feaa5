/* lp_simulate (laplace.h): laplace sim's rows for a program, with the
 * command's lists (simlist.h, sim.h) and computation (sim.h). */
#include "laplace/laplace.h"

#include <glib.h>
#include <string.h>

#include "analysis/sim.h"
#include "analysis/simlist.h"
#include "core/error.h"

/* The stream held whole: from path, or from the caller's canonical
 * numbers (no types: every one a read, which no policy looks at). */
static int load(lp_trace *t, const char *path, const uint64_t *canonical, size_t n,
		lp_error *err)
{
	if (path)
		return lp_trace_load(t, path, false, err);
	lp_trace_init(t, false);
	for (size_t i = 0; i < n; i++) {
		int rc = lp_trace_add(t, 'r', canonical[i], err);
		if (rc) {
			lp_error inner = *err;
			lp_fail(err, rc, "lp_simulate: canonical[%zu]: %s", i, inner.msg);
			lp_trace_clear(t);
			return rc;
		}
	}
	lp_trace_done(t);
	return 0;
}

ssize_t lp_simulate(const char *path, const uint64_t *canonical, size_t n, const char *policies,
		    const char *frames, const char *windows, lp_sim_row **rows, lp_error *err)
{
	lp_error dropped = {0};
	if (!err)
		err = &dropped;
	if (!rows)
		return lp_fail(err, LP_EUSAGE, "lp_simulate: argument rows: NULL"), -1;
	*rows = NULL;
	if (!path && !canonical && n)
		return lp_fail(err, LP_EUSAGE, "lp_simulate: arguments path and canonical: NULL"), -1;

	const lp_policy_info **policy = NULL;
	size_t npolicies = 0;
	lp_sim_list lists[2] = {{0}, {0}};
	lp_trace t = {0};
	lp_sim_task *tasks = NULL;
	ssize_t result = -1;
	if (lp_sim_parse_policies(policies ? policies : "lru", &policy, &npolicies, err) ||
	    lp_sim_list_parse("--frames", frames ? frames : "pow2", &lists[0], err) ||
	    lp_sim_list_parse("--window", windows ? windows : "pow2", &lists[1], err) ||
	    load(&t, path, canonical, n, err) ||
	    lp_sim_check_space(&t, path ? path : "lp_simulate: canonical", err))
		goto out;
	if (!t.n) { /* an empty stream gives no rows */
		result = 0;
		goto out;
	}
	bool any_window = false;
	for (size_t i = 0; i < npolicies; i++)
		any_window |= policy[i]->space == LP_SPACE_VARIABLE;
	/* As laplace sim: a window's pow2 and all reach the largest backward
	 * distance, or 1 when there is none. */
	uint64_t most = any_window ? lp_sim_max_backward(&t) : 0;
	uint64_t *sizes[2];
	size_t nsizes[2];
	sizes[0] = lp_sim_list_sizes(&lists[0], t.pages, &nsizes[0]);
	sizes[1] = lp_sim_list_sizes(&lists[1], most ? most : 1, &nsizes[1]);
	tasks = g_new0(lp_sim_task, npolicies);
	size_t total = 0;
	for (size_t i = 0; i < npolicies; i++) {
		int w = policy[i]->space == LP_SPACE_VARIABLE;
		tasks[i] = (lp_sim_task){.policy = policy[i], .sizes = sizes[w], .nsizes = nsizes[w],
					 .faults = g_new0(uint64_t, nsizes[w] + 1),
					 .space_time = g_new0(uint64_t, nsizes[w] + 1)};
		total += nsizes[w];
	}
	lp_sim_options options = {0};
	lp_sim_run(&t, tasks, npolicies, &options, g_get_num_processors());
	lp_sim_row *out = total ? g_new0(lp_sim_row, total) : NULL;
	size_t k = 0;
	for (size_t i = 0; i < npolicies; i++)
		for (size_t s = 0; s < tasks[i].nsizes; s++, k++) {
			g_strlcpy(out[k].policy, policy[i]->name, sizeof out[k].policy);
			out[k].size = tasks[i].sizes[s];
			out[k].references = t.n;
			out[k].faults = tasks[i].faults[s];
			out[k].space_time = tasks[i].space_time[s];
		}
	for (size_t i = 0; i < npolicies; i++) {
		g_free(tasks[i].faults);
		g_free(tasks[i].space_time);
	}
	g_free(sizes[0]);
	g_free(sizes[1]);
	*rows = out;
	result = (ssize_t)total;
out:
	g_free(tasks);
	g_free(policy);
	lp_sim_list_clear(&lists[0]);
	lp_sim_list_clear(&lists[1]);
	lp_trace_clear(&t);
	return result;
}

void lp_sim_free(lp_sim_row *rows)
{
	g_free(rows);
}
