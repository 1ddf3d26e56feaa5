/* lp_simulate (laplace.h): laplace sim's rows for a program, with the
 * command's lists (simlist.h, sim.h) and computation (sim.h). */
#include "laplace/laplace.h"

#include <glib.h>
#include <stddef.h>
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
		return lp_trace_load(t, path, false, NULL, err);
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
	bool sampled = rq->sample_rate || rq->sample_pages;

	const lp_policy_info **policy = NULL;
	size_t npolicies = 0;
	lp_sim_list lists[2] = {{0}, {0}};
	lp_trace t = {0}, sample = {0};
	lp_sim_task *tasks = NULL;
	lp_sim_range *ranges[2] = {NULL, NULL};
	size_t nranges[2] = {0, 0};
	uint64_t caps[2] = {1, 1};
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
	bool any_window = false, any_mini = false;
	for (size_t i = 0; i < npolicies; i++) {
		any_window |= policy[i]->space == LP_SPACE_VARIABLE;
		any_mini |= lp_sim_miniature(policy[i]);
	}
	if (sampled && lp_sim_sampling_check(policy, npolicies, err))
		goto out;
	if (load(&t, path, canonical, n, err) ||
	    lp_sim_check_space(&t, path ? path : "lp_simulate: canonical", err) ||
	    lp_sim_check_curves(&t, policy, npolicies, path ? path : "lp_simulate: canonical", err))
		goto out;
	/* The sizes named are checked against the options on an empty stream
	 * too, as laplace sim checks them. */
	ranges[0] = lp_sim_list_ranges(&lists[0], t.pages, &nranges[0]);
	if (lp_sim_options_check(settings, policy, npolicies, ranges[0], nranges[0], err))
		goto out;
	if (!t.n) { /* an empty stream gives no rows */
		result = 0;
		goto out;
	}
	if (sampled && any_mini) {
		if (lp_sim_sample(&t, rq->sample_rate, rq->sample_pages, &sample,
				  &options.sample_rate, err))
			goto out;
		options.sample = &sample;
	}
	/* As laplace sim: a window's pow2 and all reach the largest backward
	 * distance, or 1 when there is none. */
	uint64_t most = 0;
	if (any_window)
		lp_sim_window_bounds(&t, &most, &caps[1]);
	ranges[1] = lp_sim_list_ranges(&lists[1], most ? most : 1, &nranges[1]);
	tasks = g_new0(lp_sim_task, npolicies);
	for (size_t i = 0; i < npolicies; i++) {
		int w = policy[i]->space == LP_SPACE_VARIABLE;
		uint64_t cap = w ? caps[1] : lp_sim_fixed_cap(&t, policy[i], &options);
		size_t m;
		uint64_t *sizes = lp_sim_sizes_upto(ranges[w], nranges[w], cap, &m);
		tasks[i] = (lp_sim_task){.policy = policy[i], .sizes = sizes, .nsizes = m,
					 .faults = g_new0(uint64_t, m + 1),
					 .space_time = g_new0(uint64_t, m + 1)};
	}
	if (lp_sim_run(&t, tasks, npolicies, &options, g_get_num_processors())) {
		result = 1;
		goto out;
	}
	lp_sim_row *block = g_new0(lp_sim_row, ROW_BLOCK);
	result = 0;
	for (size_t i = 0; i < npolicies && !result; i++) {
		int w = policy[i]->space == LP_SPACE_VARIABLE;
		uint64_t cap = w ? caps[1] : lp_sim_fixed_cap(&t, policy[i], &options);
		uint64_t total = lp_sim_range_count(ranges[w], nranges[w]);
		lp_sim_size_walk walk;
		lp_sim_size_walk_init(&walk, ranges[w], nranges[w], cap);
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
				row->faults = tasks[i].faults[s];
				row->space_time = tasks[i].space_time[s];
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
	for (size_t i = 0; tasks && i < npolicies; i++) {
		g_free((uint64_t *)tasks[i].sizes);
		g_free(tasks[i].faults);
		g_free(tasks[i].space_time);
	}
	g_free(tasks);
	g_free(ranges[0]);
	g_free(ranges[1]);
	g_free(policy);
	lp_sim_options_free(texts);
	g_free(texts);
	g_free(settings);
	lp_sim_list_clear(&lists[0]);
	lp_sim_list_clear(&lists[1]);
	if (options.sample)
		lp_trace_clear(&sample);
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
