/* libFuzzer target: laplace sim's size lists, policy names and stream
 * (analysis/sim.h, trace.h). The input's first line is "POLICIES FRAMES
 * WINDOWS" (fields apart by spaces; a missing one takes its default),
 * the rest a basic merge stream in any form. Checks: a list parsed
 * resolves to sizes ascending, each once, at least 1; a stream read is
 * numbered densely in order of first reference; every run's faults lie
 * between D and n, opt's are at most every fixed policy's at every size,
 * ws's and vmin's are the same, and a curve at one size equals the
 * simulation there. The work is bounded: lists of ranges longer than
 * 4096, and runs of more than about 2^21 references times sizes, are
 * only parsed. */
#include "fuzz_input.h"

#include <glib.h>

#include "analysis/sim.h"

#define WORK_MAX (UINT64_C(1) << 21)

/* Whether list's ranges resolve to a bounded number of sizes. */
static bool small(const lp_sim_list *list)
{
	for (size_t k = 0; k < list->n; k++)
		if (list->items[k].kind == LP_SIM_RANGE && list->items[k].to - list->items[k].from > 4096)
			return false;
	return true;
}

static void check_sizes(const uint64_t *sizes, size_t n)
{
	for (size_t k = 0; k < n; k++)
		FUZZ_CHECK(sizes[k] >= 1 && (k == 0 || sizes[k - 1] < sizes[k]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t head = nl ? (size_t)(nl - data) : size;
	char *line = g_strndup((const char *)data, MIN(head, 512));
	char **field = g_strsplit(line, " ", 3);
	size_t nfields = g_strv_length(field);
	const char *policies = nfields > 0 && *field[0] ? field[0] : "lru";
	lp_error err = {0};
	lp_sim_list frames, windows;
	bool lists = !lp_sim_list_parse("--frames", nfields > 1 ? field[1] : "pow2", &frames, &err);
	if (lists && lp_sim_list_parse("--window", nfields > 2 ? field[2] : "pow2", &windows, &err)) {
		lp_sim_list_clear(&frames);
		lists = false;
	}
	if (!lists)
		FUZZ_CHECK(err.status == LP_EUSAGE);
	/* The policies named, known ones only. */
	char **names = g_strsplit(policies, ",", 8);
	const lp_policy_info *asked[8];
	size_t nasked = 0;
	/* At most 5, leaving room for opt, ws and vmin. */
	for (char **n = names; *n && nasked < 5; n++)
		if ((asked[nasked] = lp_policy_find(*n)))
			nasked++;
	g_strfreev(names);

	const uint8_t *stream = nl ? nl + 1 : data + size;
	const char *path = fuzz_file(stream, (size_t)(data + size - stream));
	lp_trace t;
	int rc = lp_trace_load(&t, path, false, NULL, &err);
	if (rc) {
		FUZZ_CHECK(err.status == LP_EINPUT || err.status == LP_EIO);
	} else {
		lp_pageno seen = 0;
		lp_trace_iter it;
		lp_trace_iter_init(&it, &t, false);
		for (lp_trace_block b; (b = lp_trace_iter_next(&it)).len;)
			for (size_t k = 0; k < b.len; k++) {
				FUZZ_CHECK(b.page[k] <= seen);
				seen += b.page[k] == seen;
			}
		lp_trace_iter_clear(&it);
		FUZZ_CHECK(seen == t.pages);
	}
	if (!rc && lists && small(&frames) && small(&windows) && t.n) {
		size_t nf, nw;
		uint64_t most = lp_sim_max_backward(&t);
		uint64_t *fs = lp_sim_list_sizes(&frames, t.pages, &nf);
		uint64_t *ws = lp_sim_list_sizes(&windows, most ? most : 1, &nw);
		check_sizes(fs, nf);
		check_sizes(ws, nw);
		/* Every policy asked, opt, ws and vmin beside them. */
		static const char *const always[] = {"opt", "ws", "vmin"};
		for (size_t k = 0; k < 3; k++)
			asked[nasked++] = lp_policy_find(always[k]);
		if (t.n * (nf + nw) * nasked <= WORK_MAX) {
			lp_sim_task task[8];
			for (size_t k = 0; k < nasked; k++) {
				bool fixed = asked[k]->space == LP_SPACE_FIXED;
				size_t n = fixed ? nf : nw;
				task[k] = (lp_sim_task){asked[k], fixed ? fs : ws, n, g_new(uint64_t, n + 1),
							g_new(uint64_t, n + 1), false};
			}
			lp_policy_settings given[16] = {0};
			FUZZ_CHECK(lp_npolicies <= G_N_ELEMENTS(given));
			given[lp_policy_index(lp_policy_find("clock"))] =
				(lp_policy_settings){.value = {size & 1}, .set = {true}};
			lp_sim_options o = {.settings = given};
			lp_sim_run(&t, task, nasked, &o, 2);
			const lp_sim_task *opt = &task[nasked - 3], *w = &task[nasked - 2];
			for (size_t k = 0; k < nasked; k++)
				for (size_t s = 0; s < task[k].nsizes; s++) {
					FUZZ_CHECK(task[k].faults[s] >= t.pages && task[k].faults[s] <= t.n);
					if (task[k].policy->space == LP_SPACE_FIXED)
						FUZZ_CHECK(opt->faults[s] <= task[k].faults[s]);
					else
						FUZZ_CHECK(task[k].faults[s] == w->faults[s]);
				}
			/* A sample of every page (--sample-pages D): the exact rows. */
			lp_trace sample;
			if (!lp_sim_sample(&t, 0, t.pages, &sample, &o.sample_rate, &err)) {
				o.sample = &sample;
				for (size_t k = 0; k < nasked; k++) {
					if (!lp_sim_miniature(task[k].policy))
						continue;
					uint64_t *f = g_new(uint64_t, task[k].nsizes + 1);
					lp_sim_task mini = task[k];
					mini.faults = f;
					lp_sim_run(&t, &mini, 1, &o, 2);
					FUZZ_CHECK(!memcmp(f, task[k].faults,
							   task[k].nsizes * sizeof *f));
					g_free(f);
				}
				o.sample = NULL;
				lp_trace_clear(&sample);
			}
			if (nf) {
				lp_policy_params p;
				uint64_t *next = lp_trace_next_use(&t);
				lp_sim_params(&o, opt->policy, fs[0], &t, next, &p);
				FUZZ_CHECK(lp_sim_fixed(&t, opt->policy, &p, NULL, NULL) == opt->faults[0]);
				lp_trace_next_use_free(&t, next);
			}
			for (size_t k = 0; k < nasked; k++) {
				g_free(task[k].faults);
				g_free(task[k].space_time);
			}
		}
		g_free(fs);
		g_free(ws);
	}
	if (!rc)
		lp_trace_clear(&t);
	if (lists) {
		lp_sim_list_clear(&frames);
		lp_sim_list_clear(&windows);
	}
	g_strfreev(field);
	g_free(line);
	return 0;
}
