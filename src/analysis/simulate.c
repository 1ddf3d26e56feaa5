/* lp_simulate (laplace.h): laplace sim's rows for a program, with the
 * command's lists (simlist.h, sim.h) and computation (sim.h); and the
 * plan of a run that both set up the same way (lp_sim_plan_init). */
#include "laplace/laplace.h"

#include <glib.h>
#include <stddef.h>
#include <string.h>

#include "analysis/sim.h"
#include "analysis/simlist.h"
#include "core/error.h"

/* Canonical numbers taken in between two looks at the stop flag: a few
 * milliseconds' worth (tens of millions take seconds). */
#define LOAD_STOP_EVERY (UINT64_C(1) << 16)

/* The stream held whole: from path, or from the caller's canonical
 * numbers (no types: every one a read, which no policy looks at).
 * *stopped, t cleared, when *stop turned non-zero while the numbers were
 * taken in. */
static int load(lp_trace *t, const char *path, const uint64_t *canonical, size_t n,
		const volatile int *stop, bool *stopped, lp_error *err)
{
	*stopped = false;
	if (path)
		return lp_trace_load(t, path, 0, NULL, err);
	lp_trace_init(t, 0);
	for (size_t i = 0; i < n; i++) {
		if (stop && i % LOAD_STOP_EVERY == 0 && *stop) {
			lp_trace_clear(t);
			*stopped = true;
			return 0;
		}
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

/* The sizes of lp_sim_request the library knows: 1.2.0's (up to ctx)
 * and 1.3.0's (options). */
static bool known_size(size_t size)
{
	return size == offsetof(lp_sim_request, options) || size == sizeof(lp_sim_request);
}

void lp_sim_request_init_sized(lp_sim_request *rq, size_t size)
{
	if (!rq)
		return;
	if (!known_size(size)) { /* recorded alone, for lp_simulate_request to refuse */
		if (size >= sizeof rq->size)
			rq->size = size;
		return;
	}
	memset(rq, 0, size);
	rq->size = size;
}

int lp_sim_plan_init(lp_sim_plan *plan, const lp_trace *t, const lp_policy_info *const *policies,
		     size_t n, const lp_sim_list *frames, const lp_sim_list *windows,
		     double sample_rate, uint64_t sample_pages, lp_sim_options *o, lp_error *err)
{
	*plan = (lp_sim_plan){0};
	plan->ranges[0] = lp_sim_list_ranges(frames, t->pages, &plan->nranges[0]);
	int rc = lp_sim_options_check(o->settings, policies, n, plan->ranges[0], plan->nranges[0],
				      err);
	if (rc)
		return rc;
	bool any_window = false, any_mini = false;
	for (size_t i = 0; i < n; i++) {
		any_window |= policies[i]->space == LP_SPACE_VARIABLE;
		any_mini |= lp_sim_miniature(policies[i]);
	}
	uint64_t window_cap = 1;
	if (t->n && any_window) {
		uint64_t most;
		lp_sim_window_bounds(t, &most, &window_cap);
		plan->ranges[1] = lp_sim_list_ranges(windows, most ? most : 1, &plan->nranges[1]);
	}
	if (t->n && any_mini && (sample_rate || sample_pages)) {
		if ((rc = lp_sim_sample(t, sample_rate, sample_pages, &plan->sample, &o->sample_rate,
					err)))
			return rc;
		plan->sampled = true;
		o->sample = &plan->sample;
	}
	plan->rows = g_new0(lp_sim_rows, n);
	plan->tasks = g_new0(lp_sim_task, n);
	plan->ntasks = n;
	for (size_t i = 0; i < n; i++) {
		int w = policies[i]->space == LP_SPACE_VARIABLE;
		/* An empty stream has no rows. */
		plan->rows[i] = (lp_sim_rows){plan->ranges[w], t->n ? plan->nranges[w] : 0,
					      w ? window_cap : lp_sim_fixed_cap(t, policies[i], o)};
		size_t m;
		uint64_t *sizes = lp_sim_sizes_upto(plan->rows[i].ranges, plan->rows[i].nranges,
						    plan->rows[i].cap, &m);
		plan->tasks[i] = (lp_sim_task){.policy = policies[i], .sizes = sizes, .nsizes = m,
					       .faults = g_new0(uint64_t, m + 1),
					       .space_time = g_new0(uint64_t, m + 1)};
	}
	return 0;
}

void lp_sim_plan_clear(lp_sim_plan *plan)
{
	for (size_t i = 0; i < plan->ntasks; i++) {
		g_free((uint64_t *)plan->tasks[i].sizes);
		g_free(plan->tasks[i].faults);
		g_free(plan->tasks[i].space_time);
	}
	g_free(plan->tasks);
	g_free(plan->rows);
	g_free(plan->ranges[0]);
	g_free(plan->ranges[1]);
	if (plan->sampled)
		lp_trace_clear(&plan->sample);
	*plan = (lp_sim_plan){0};
}

/* Rows handed over this many at a time. */
#define ROW_BLOCK 4096

int lp_simulate_request(const char *path, const uint64_t *canonical, size_t n,
			const lp_sim_request *given, lp_error *err)
{
	lp_error dropped = {0};
	if (!err)
		err = &dropped;
	if (!given)
		return lp_fail(err, LP_EUSAGE, "lp_simulate_request: argument rq: NULL"), -1;
	if (!known_size(given->size))
		return lp_fail(err, LP_EUSAGE, "lp_simulate_request: field size: %zu is not the size "
			       "of an lp_sim_request (%zu bytes, or %zu in 1.2.0): not set up by "
			       "lp_sim_request_init, or from a newer laplace.h than this library's "
			       "(%d.%d.%d)", given->size, sizeof *given,
			       offsetof(lp_sim_request, options), LP_VERSION_MAJOR, LP_VERSION_MINOR,
			       LP_VERSION_PATCH), -1;
	/* An older caller's request, its fields past its size at their defaults. */
	lp_sim_request whole = {0};
	memcpy(&whole, given, given->size);
	const lp_sim_request *rq = &whole;
	if (!path && !canonical && n)
		return lp_fail(err, LP_EUSAGE, "lp_simulate_request: arguments path and canonical: "
			       "NULL"), -1;
	if (rq->sample_rate && rq->sample_pages)
		return lp_fail(err, LP_EUSAGE, "--sample-rate and --sample-pages cannot both be "
			       "given"), -1;
	if (rq->sample_rate && !(rq->sample_rate > 0 && rq->sample_rate <= 1))
		return lp_fail(err, LP_EUSAGE, "--sample-rate must be a decimal number above 0 and "
			       "at most 1, not %g", rq->sample_rate), -1;
	if (rq->sample_pages > LP_TRACE_MAX_PAGES)
		return lp_fail(err, LP_EUSAGE, "--sample-pages must be a decimal number from 1 to "
			       "%u, not %" G_GUINT64_FORMAT, LP_TRACE_MAX_PAGES, rq->sample_pages), -1;

	const lp_policy_info **policy = NULL;
	size_t npolicies = 0;
	lp_sim_list lists[2] = {{0}, {0}};
	lp_trace t = {.spill = {-1, -1}}; /* as lp_trace_clear leaves it: no file to close */
	lp_sim_plan plan = {0};
	char **texts = g_new0(char *, LP_SIM_OPTION_TEXTS);
	lp_policy_settings *settings = g_new0(lp_policy_settings, lp_npolicies);
	lp_sim_options options = {.stop = (const int *)rq->stop, .settings = settings};
	int result = -1;
	const lp_policy_info *row;
	const lp_policy_option *unwanted;
	if (lp_sim_parse_policies(rq->policies ? rq->policies : "lru", &policy, &npolicies, err) ||
	    lp_sim_list_parse("--frames", rq->frames ? rq->frames : "pow2", &lists[0], err) ||
	    lp_sim_list_parse("--window", rq->windows ? rq->windows : "pow2", &lists[1], err) ||
	    (rq->options && lp_sim_options_split(rq->options, texts, err)))
		goto out;
	/* As laplace sim: an option for no policy asked, then the values. */
	if ((unwanted = lp_sim_options_unwanted(texts, policy, npolicies, &row))) {
		lp_sim_options_unwanted_fail(unwanted, row, !rq->policies, err);
		goto out;
	}
	if (lp_sim_options_parse(texts, settings, err))
		goto out;
	if ((rq->sample_rate || rq->sample_pages) &&
	    lp_sim_sampling_check(policy, npolicies, err))
		goto out;
	bool stopped;
	if (load(&t, path, canonical, n, rq->stop, &stopped, err))
		goto out;
	if (stopped) {
		result = 1;
		goto out;
	}
	if (lp_sim_check_space(&t, path ? path : "lp_simulate: canonical", err) ||
	    lp_sim_check_curves(&t, policy, npolicies, path ? path : "lp_simulate: canonical", err) ||
	    lp_sim_plan_init(&plan, &t, policy, npolicies, &lists[0], &lists[1], rq->sample_rate,
			     rq->sample_pages, &options, err))
		goto out;
	if (!t.n) { /* an empty stream gives no rows */
		result = 0;
		goto out;
	}
	if (lp_sim_run(&t, plan.tasks, npolicies, &options, g_get_num_processors())) {
		result = 1;
		goto out;
	}
	lp_sim_row *block = g_new0(lp_sim_row, ROW_BLOCK);
	result = 0;
	for (size_t i = 0; i < npolicies && !result; i++) {
		const lp_sim_rows *rows = &plan.rows[i];
		uint64_t total = lp_sim_range_count(rows->ranges, rows->nranges);
		lp_sim_size_walk walk;
		lp_sim_size_walk_init(&walk, rows->ranges, rows->nranges, rows->cap);
		uint64_t size;
		size_t s, k = 0;
		bool more = true;
		while (more && !result) {
			more = lp_sim_size_walk_next(&walk, &size, &s);
			if (more) {
				lp_sim_row *row = &block[k++];
				g_strlcpy(row->policy, policy[i]->name, sizeof row->policy);
				row->size = size;
				row->references = t.n;
				row->faults = plan.tasks[i].faults[s];
				row->space_time = plan.tasks[i].space_time[s];
			}
			if (k == ROW_BLOCK || (!more && k)) {
				if (rq->rows && rq->rows(rq->ctx, block, k, total))
					result = 1;
				k = 0;
				if (rq->stop && *rq->stop)
					result = 1;
			}
		}
	}
	g_free(block);
out:
	lp_sim_plan_clear(&plan);
	g_free(policy);
	lp_sim_options_free(texts);
	g_free(texts);
	g_free(settings);
	lp_sim_list_clear(&lists[0]);
	lp_sim_list_clear(&lists[1]);
	lp_trace_clear(&t);
	return result;
}

/* lp_simulate's rows, gathered. */
static int gather(void *ctx, const lp_sim_row *rows, size_t n, uint64_t policy_rows)
{
	(void)policy_rows;
	g_array_append_vals(ctx, rows, (guint)n);
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
	GArray *got = g_array_new(FALSE, FALSE, sizeof(lp_sim_row));
	lp_sim_request rq;
	lp_sim_request_init(&rq);
	rq.policies = policies;
	rq.frames = frames;
	rq.windows = windows;
	rq.rows = gather;
	rq.ctx = got;
	if (lp_simulate_request(path, canonical, n, &rq, err)) {
		g_array_free(got, TRUE);
		return -1;
	}
	ssize_t total = (ssize_t)got->len;
	*rows = total ? (lp_sim_row *)(void *)g_array_free(got, FALSE) : NULL;
	if (!total)
		g_array_free(got, TRUE);
	return total;
}

void lp_sim_free(lp_sim_row *rows)
{
	g_free(rows);
}
