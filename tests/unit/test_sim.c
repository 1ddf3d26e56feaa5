/* The policies of laplace sim (policies.md §2-§3): hand-derived cases for
 * each, and properties over random streams that tie the one-pass curves
 * to the per-size simulations. */
#include <criterion/criterion.h>

#include <glib.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "analysis/optdist.h"
#include "analysis/sim.h"
#include "analysis/stackdist.h"

/* window: the trace's window_refs (0: the default); a small one puts the
 * stream in temporary files. */
static lp_trace trace_in(const uint64_t *pages, size_t n, uint64_t window)
{
	lp_trace t;
	lp_trace_init(&t, false);
	if (window)
		t.window_refs = window;
	lp_error err = {0};
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(lp_trace_add(&t, 'r', pages[i], &err), 0);
	lp_trace_done(&t);
	return t;
}

static lp_trace trace_of(const uint64_t *pages, size_t n)
{
	return trace_in(pages, n, 0);
}

/* The pages of every reference, through a block reader. */
static lp_pageno *pages_of(const lp_trace *t)
{
	lp_pageno *page = g_new(lp_pageno, t->n ? t->n : 1);
	lp_trace_iter it;
	lp_trace_iter_init(&it, t, false);
	for (lp_trace_block b; (b = lp_trace_iter_next(&it)).len;)
		memcpy(page + b.at, b.page, b.len * sizeof *page);
	lp_trace_iter_clear(&it);
	return page;
}

/* ws and vmin at taus[0, m) in one pass: faults, their space_times. */
static void windows(const lp_trace *t, const uint64_t *taus, size_t m, uint64_t *faults,
		    uint64_t *ws, uint64_t *vmin)
{
	const lp_policy_info *rows[] = {lp_policy_find("ws"), lp_policy_find("vmin")};
	uint64_t *space[] = {ws, vmin};
	lp_sim_windows(t, taus, m, faults, rows, space, 2, NULL);
}

typedef struct fault_log {
	GArray *victims; /* lp_pageno per fault */
} fault_log;

static void note_fault(void *ctx, uint64_t t, lp_pageno page, lp_pageno victim)
{
	(void)t, (void)page;
	g_array_append_val(((fault_log *)ctx)->victims, victim);
}

/* laplace sim's options with policy's first option set to v (used
 * before the next call). */
static const lp_sim_options *with(const char *policy, uint64_t v)
{
	static lp_policy_settings given[16];
	static lp_sim_options o = {.settings = given};
	cr_assert_leq(lp_npolicies, G_N_ELEMENTS(given));
	memset(given, 0, sizeof given);
	given[lp_policy_index(lp_policy_find(policy))] =
		(lp_policy_settings){.value = {v}, .set = {true}};
	return &o;
}

/* The faults of policy at frames, each victim into *victims (when not
 * NULL; g_array_free it). */
static uint64_t run(const lp_trace *t, const char *policy, uint64_t frames,
		    const lp_sim_options *o, GArray **victims)
{
	static const lp_sim_options none = {0};
	lp_policy_params p;
	uint64_t *next = lp_trace_next_use(t);
	lp_sim_params(o ? o : &none, lp_policy_find(policy), frames, t, next, &p);
	fault_log log = {g_array_new(FALSE, FALSE, sizeof(lp_pageno))};
	uint64_t faults = lp_sim_fixed(t, lp_policy_find(policy), &p, note_fault, &log);
	lp_trace_next_use_free(t, next);
	cr_assert_eq(faults, log.victims->len);
	if (victims)
		*victims = log.victims;
	else
		g_array_free(log.victims, TRUE);
	return faults;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define F LP_NO_PAGE

static void assert_victims(GArray *got, const lp_pageno *want, size_t n)
{
	cr_assert_eq(got->len, n);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(g_array_index(got, lp_pageno, i), want[i], "fault %zu: %u, not %u", i,
			     g_array_index(got, lp_pageno, i), want[i]);
	g_array_free(got, TRUE);
}

/* Belady's anomaly: FIFO faults 9 times with 3 frames, 10 with 4. */
Test(sim, fifo_anomaly)
{
	uint64_t s[] = {1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5};
	lp_trace t = trace_of(s, N(s));
	cr_assert_eq(run(&t, "fifo", 3, NULL, NULL), 9);
	cr_assert_eq(run(&t, "fifo", 4, NULL, NULL), 10);
	/* opt at the same sizes: 7 and 6. */
	cr_assert_eq(run(&t, "opt", 3, NULL, NULL), 7);
	cr_assert_eq(run(&t, "opt", 4, NULL, NULL), 6);
	lp_trace_clear(&t);
}

/* A loop over 4 pages with 3 frames: LRU faults on every reference. EELRU
 * (e = 1, l = 6): the first 4 fault cold (the 4th evicts by LRU, no
 * counter set yet); from then on every reference is at position 4, so
 * early eviction wins (2 * B > 5 * 0) and evicts the page at position 2,
 * and every other reference hits: 4 + 16 / 2 = 12 faults in 20. */
Test(sim, loop_one_page_larger_lru_against_eelru)
{
	uint64_t s[20];
	for (size_t i = 0; i < 20; i++)
		s[i] = i % 4;
	lp_trace t = trace_of(s, 20);
	cr_assert_eq(run(&t, "lru", 3, NULL, NULL), 20);
	GArray *v;
	cr_assert_eq(run(&t, "eelru", 3, NULL, &v), 12);
	lp_pageno want[] = {F, F, F, 0, 2, 0, 2, 0, 2, 0, 2, 0};
	assert_victims(v, want, N(want));
	/* K = 1 is LRU. */
	cr_assert_eq(run(&t, "eelru", 1, NULL, NULL), 20);
	lp_trace_clear(&t);
}

/* c = 2, 0 1 1 2 0 1: 2 evicts 0 from T1 into B1; 0's ghost hit moves p
 * to 1, so REPLACE spares T1 (|T1| = 1 is not > p) and evicts 1 from T2
 * into B2; 1's ghost hit moves p back to 0 and evicts T1's 2. */
Test(sim, arc_ghost_hits_move_p)
{
	uint64_t s[] = {0, 1, 1, 2, 0, 1};
	lp_trace t = trace_of(s, N(s));
	GArray *v;
	cr_assert_eq(run(&t, "arc", 2, NULL, &v), 5);
	lp_pageno want[] = {F, F, 0, 1, 2};
	assert_victims(v, want, N(want));
	lp_trace_clear(&t);
}

/* 0 1 0 2 1 with 2 frames. Load bit 0: 0's hit sets its bit, so the hand
 * passes it and evicts 1, then 0. Load bit 1: every bit is set, the hand
 * clears both and evicts 0; 1 then hits. */
Test(sim, clock_load_bits)
{
	uint64_t s[] = {0, 1, 0, 2, 1};
	lp_trace t = trace_of(s, N(s));
	GArray *v;
	cr_assert_eq(run(&t, "clock", 2, NULL, &v), 4);
	lp_pageno want0[] = {F, F, 1, 0};
	assert_victims(v, want0, N(want0));
	cr_assert_eq(run(&t, "clock", 2, with("clock", 1), &v), 3);
	lp_pageno want1[] = {F, F, 0};
	assert_victims(v, want1, N(want1));
	lp_trace_clear(&t);
}

/* K = 3, S = 1: 0 1 2 fill (0 moves to the back), 0 hits in the back and
 * goes to the front's tail (pushing 1 back), 3 pushes 2 back and evicts
 * the back's least recent, 1; 0 hits in the front. */
Test(sim, segq_hand_checked)
{
	uint64_t s[] = {0, 1, 2, 0, 3, 0};
	lp_trace t = trace_of(s, N(s));
	GArray *v;
	cr_assert_eq(run(&t, "segq", 3, with("segq", 1), &v), 4);
	lp_pageno want[] = {F, F, F, 1};
	assert_victims(v, want, N(want));
	lp_trace_clear(&t);
}

/* SEGQ's extremes on Belady's stream, 3 frames: S = 0 is FIFO (9 faults,
 * the anomaly's), F = 1 (S = 2) is LRU (10). */
Test(sim, segq_extremes_by_hand)
{
	uint64_t s[] = {1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5};
	lp_trace t = trace_of(s, N(s));
	GArray *v;
	cr_assert_eq(run(&t, "segq", 3, with("segq", 0), &v), 9);
	/* FIFO: 1 2 3 fill; 4 evicts 1, 1 evicts 2, 2 evicts 3, 5 evicts 4,
	 * 3 evicts 1, 4 evicts 2 (pages are numbered from 0). */
	lp_pageno fifo[] = {F, F, F, 0, 1, 2, 3, 0, 1};
	assert_victims(v, fifo, N(fifo));
	cr_assert_eq(run(&t, "segq", 3, with("segq", 2), &v), 10);
	/* LRU: 4 evicts 1, 1 evicts 2, 2 evicts 3, 5 evicts 4, then 1 2
	 * hit, 3 evicts 5, 4 evicts 1, 5 evicts 2. */
	lp_pageno lru[] = {F, F, F, 0, 1, 2, 3, 4, 0, 1};
	assert_victims(v, lru, N(lru));
	lp_trace_clear(&t);
}

/* ---- properties over random streams ---- */

/* Every third stream in temporary files, 5 or 64 references a window. */
static lp_trace random_trace(GRand *rng, int round, uint64_t *n_out)
{
	uint64_t n = (uint64_t)g_rand_int_range(rng, 1, 300);
	uint64_t span = (uint64_t)g_rand_int_range(rng, 1, 25);
	uint64_t *s = g_new(uint64_t, n);
	for (uint64_t i = 0; i < n; i++)
		/* Some locality: a small hot set most of the time. */
		s[i] = g_rand_int_range(rng, 0, 4) ? (uint64_t)g_rand_int_range(rng, 0, (gint32)(span / 3 + 1))
						    : (uint64_t)g_rand_int_range(rng, 0, (gint32)span) * 7919;
	static const uint64_t window[] = {0, 5, 64};
	lp_trace t = trace_in(s, n, window[round % 3]);
	g_free(s);
	*n_out = n;
	return t;
}

static void assert_same_victims(GArray *a, GArray *b, const char *what, uint64_t k)
{
	cr_assert_eq(a->len, b->len, "%s, K %lu: %u faults, not %u", what, (unsigned long)k, a->len,
		     b->len);
	cr_assert_arr_eq(a->data, b->data, a->len * sizeof(lp_pageno), "%s, K %lu", what,
			 (unsigned long)k);
	g_array_free(a, TRUE);
	g_array_free(b, TRUE);
}

Test(sim, curves_equal_simulation_and_opt_bounds_all)
{
	GRand *rng = g_rand_new_with_seed(34);
	static const char *const fixed[] = {"lru", "fifo", "clock", "segq", "arc", "eelru"};
	for (int round = 0; round < 300; round++) {
		uint64_t n;
		lp_trace t = random_trace(rng, round, &n);
		lp_pageno *page = pages_of(&t);
		uint64_t *lru = lp_sim_lru_distances(&t, NULL), *opt = lp_sim_opt_distances(&t, NULL);
		uint64_t sizes[64], m = 0;
		for (uint64_t k = 1; k <= (uint64_t)t.pages + 2 && m < 64; k++)
			sizes[m++] = k;
		uint64_t lru_f[64], opt_f[64], space[64];
		lp_sim_stack_faults(lru, t.pages, sizes, m, lru_f);
		lp_sim_stack_faults(opt, t.pages, sizes, m, opt_f);
		lp_sim_fixed_space(&t, sizes, m, space);
		for (uint64_t i = 0; i < m; i++) {
			uint64_t k = sizes[i];
			cr_assert_eq(run(&t, "lru", k, NULL, NULL), lru_f[i], "lru K %lu", (unsigned long)k);
			cr_assert_eq(run(&t, "opt", k, NULL, NULL), opt_f[i], "opt K %lu round %d",
				     (unsigned long)k, round);
			for (size_t f = 0; f < G_N_ELEMENTS(fixed); f++)
				cr_assert_leq(opt_f[i], run(&t, fixed[f], k, NULL, NULL), "%s K %lu",
					      fixed[f], (unsigned long)k);
			/* space_time by its definition. */
			uint64_t want = 0, seen = 0;
			for (uint64_t j = 0; j < n; j++) {
				seen += page[j] == seen;
				want += MIN(k, seen);
			}
			cr_assert_eq(space[i], want);
			/* SEGQ's extremes, victim for victim. */
			GArray *a, *b;
			run(&t, "segq", k, with("segq", 0), &a);
			run(&t, "fifo", k, NULL, &b);
			assert_same_victims(a, b, "segq S = 0 against fifo", k);
			run(&t, "segq", k, with("segq", k - 1), &a);
			run(&t, "lru", k, NULL, &b);
			assert_same_victims(a, b, "segq F = 1 against lru", k);
		}
		g_free(lru);
		g_free(opt);
		lp_trace_clear(&t);
		g_free(page);
	}
	g_rand_free(rng);
}

/* ws and vmin by their definitions, window by window. */
Test(sim, windows_by_definition)
{
	GRand *rng = g_rand_new_with_seed(35);
	for (int round = 0; round < 200; round++) {
		uint64_t n;
		lp_trace t = random_trace(rng, round, &n);
		lp_pageno *page = pages_of(&t);
		uint64_t *next = lp_trace_next_use(&t);
		uint64_t most = lp_sim_max_backward(&t);
		uint64_t taus[41], m = 0;
		for (uint64_t tau = 1; tau <= most + 3 && m < 40; tau++)
			taus[m++] = tau;
		taus[m++] = n + 5;
		uint64_t faults[41], ws[41], vmin[41];
		windows(&t, taus, m, faults, ws, vmin);
		uint64_t *last = g_new(uint64_t, t.pages);
		bool *kept = g_new(bool, t.pages);
		for (uint64_t i = 0; i < m; i++) {
			uint64_t tau = taus[i], wf = 0, ws_want = 0, vf = 0, vmin_want = 0;
			for (lp_pageno p = 0; p < t.pages; p++) {
				last[p] = UINT64_MAX;
				kept[p] = false;
			}
			for (uint64_t j = 0; j < n; j++) {
				lp_pageno p = page[j];
				wf += last[p] == UINT64_MAX || j - last[p] > tau;
				last[p] = j;
				for (lp_pageno q = 0; q < t.pages; q++)
					ws_want += last[q] != UINT64_MAX && j - last[q] < tau;
				/* vmin: a page stays after j iff its next use is within tau. */
				vf += !kept[p];
				kept[p] = next[j] != LP_NEVER && next[j] - j <= tau;
				vmin_want += 1 + (next[j] != LP_NEVER && next[j] - j <= tau ? next[j] - j - 1
											     : 0);
			}
			cr_assert_eq(vf, wf, "vmin's faults, tau %lu", (unsigned long)tau);
			cr_assert_eq(faults[i], wf, "tau %lu", (unsigned long)tau);
			cr_assert_eq(ws[i], ws_want, "tau %lu", (unsigned long)tau);
			cr_assert_eq(vmin[i], vmin_want, "tau %lu", (unsigned long)tau);
		}
		cr_assert_eq(most == 0, n == t.pages);
		g_free(last);
		g_free(kept);
		lp_trace_next_use_free(&t, next);
		lp_trace_clear(&t);
		g_free(page);
	}
	g_rand_free(rng);
}

/* Size lists: pow2 stops below top, then top; all is 1 .. top; items in
 * any order, ascending and once. */
Test(sim, size_lists)
{
	static const struct {
		const char *text;
		uint64_t top;
		uint64_t want[12];
		size_t n;
	} cases[] = {
		{"pow2", 1, {1}, 1},
		{"pow2", 4, {1, 2, 4}, 3},
		{"pow2", 5, {1, 2, 4, 5}, 4},
		{"all", 3, {1, 2, 3}, 3},
		{"9,2-4,pow2,3", 6, {1, 2, 3, 4, 6, 9}, 6},
		{"18446744073709551614-18446744073709551615,1", 2,
		 {1, UINT64_MAX - 1, UINT64_MAX}, 3},
		/* An empty stream (D = 0): pow2 and all name no size. */
		{"pow2", 0, {0}, 0},
		{"all,pow2", 0, {0}, 0},
		{"pow2,3,all,1-2", 0, {1, 2, 3}, 3},
	};
	for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
		lp_sim_list list;
		lp_error err = {0};
		cr_assert_eq(lp_sim_list_parse("--frames", cases[c].text, &list, &err), 0, "%s",
			     err.msg);
		size_t n;
		uint64_t *sizes = lp_sim_list_sizes(&list, cases[c].top, &n);
		cr_assert_eq(n, cases[c].n, "%s", cases[c].text);
		if (n) /* none: sizes may be NULL, which memcmp may not take */
			cr_assert_arr_eq(sizes, cases[c].want, n * sizeof *sizes, "%s", cases[c].text);
		g_free(sizes);
		lp_sim_list_clear(&list);
	}
	lp_sim_list list;
	lp_error err = {0};
	static const char *const bad[] = {"", "0", "1,", "2-1", "x", "1-", "-1", "pow2x", "1 2",
					  "18446744073709551616", "1-67108865", "1-67108864,70000000"};
	for (size_t c = 0; c < G_N_ELEMENTS(bad); c++) {
		err = (lp_error){0};
		cr_assert_eq(lp_sim_list_parse("--window", bad[c], &list, &err), LP_EUSAGE, "'%s'",
			     bad[c]);
		cr_assert(g_str_has_prefix(err.msg, "--window: "), "%s", err.msg);
	}
}

/* A deeper stack (2000 pages, levels over a tree of 2048 leaves): the
 * curves still equal the simulations, at sizes across the depth. */
Test(sim, deep_curves_equal_simulation)
{
	GRand *rng = g_rand_new_with_seed(36);
	const size_t n = 40000;
	uint64_t *s = g_new(uint64_t, n);
	for (size_t i = 0; i < n; i++)
		s[i] = g_rand_int_range(rng, 0, 3) ? (uint64_t)g_rand_int_range(rng, 0, 200)
						    : (uint64_t)g_rand_int_range(rng, 0, 2000);
	lp_trace t = trace_of(s, n);
	g_free(s);
	uint64_t *lru = lp_sim_lru_distances(&t, NULL), *opt = lp_sim_opt_distances(&t, NULL);
	uint64_t sizes[] = {1, 7, 64, 150, 333, 1024, 1999, 2000, 2001};
	uint64_t lru_f[N(sizes)], opt_f[N(sizes)];
	lp_sim_stack_faults(lru, t.pages, sizes, N(sizes), lru_f);
	lp_sim_stack_faults(opt, t.pages, sizes, N(sizes), opt_f);
	for (size_t i = 0; i < N(sizes); i++) {
		cr_assert_eq(run(&t, "lru", sizes[i], NULL, NULL), lru_f[i], "lru K %lu",
			     (unsigned long)sizes[i]);
		cr_assert_eq(run(&t, "opt", sizes[i], NULL, NULL), opt_f[i], "opt K %lu",
			     (unsigned long)sizes[i]);
	}
	g_free(lru);
	g_free(opt);
	lp_trace_clear(&t);
	g_rand_free(rng);
}

/* A curve counted as the stream is added (flags LP_TRACE_LRU_ONLY or
 * LP_TRACE_OPT_ONLY, no copy of the stream kept) is the kept stream's,
 * window after window, pages numbered from sparse canonical numbers as
 * the stack grows; and space_time comes from the same first references. */
static void counted_while_adding_equals_kept(unsigned flags,
					     uint64_t *(*distances)(const lp_trace *,
								    const lp_curve_tick *))
{
	GRand *rng = g_rand_new_with_seed(41);
	const size_t n = 50000;
	uint64_t *s = g_new(uint64_t, n);
	for (size_t i = 0; i < n; i++)
		s[i] = (uint64_t)(g_rand_int_range(rng, 0, 4) ? g_rand_int_range(rng, 0, 300)
							      : g_rand_int_range(rng, 0, 5000)) * 7919;
	lp_trace kept = trace_in(s, n, 1000), counted;
	lp_trace_init(&counted, flags);
	counted.window_refs = 1000;
	lp_error err = {0};
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(lp_trace_add(&counted, 'r', s[i], &err), 0);
	lp_trace_done(&counted);
	cr_assert(kept.filed > 0, "the kept stream went to its files");
	cr_assert_eq(counted.filed, counted.n, "the counted stream was not kept");
	cr_assert_eq(counted.spill[0], -1);
	cr_assert_eq(counted.n, kept.n);
	cr_assert_eq(counted.pages, kept.pages);
	uint64_t *want = distances(&kept, NULL), *got = distances(&counted, NULL);
	cr_assert_arr_eq(got, want, ((size_t)kept.pages + 1) * sizeof *want);
	uint64_t sizes[] = {1, 10, 300, 4000, 5000}, space_kept[N(sizes)], space_counted[N(sizes)];
	lp_sim_fixed_space(&kept, sizes, N(sizes), space_kept);
	lp_sim_fixed_space(&counted, sizes, N(sizes), space_counted);
	cr_assert_arr_eq(space_counted, space_kept, sizeof space_kept);
	g_free(want);
	g_free(got);
	lp_trace_clear(&kept);
	lp_trace_clear(&counted);
	g_free(s);
	g_rand_free(rng);
}

Test(sim, lru_counted_while_adding_equals_the_kept_streams)
{
	counted_while_adding_equals_kept(LP_TRACE_LRU_ONLY, lp_sim_lru_distances);
}

/* OPT's likewise, its stack grown (renumbered into more room) as pages
 * come. */
Test(sim, opt_counted_while_adding_equals_the_kept_streams)
{
	counted_while_adding_equals_kept(LP_TRACE_OPT_ONLY, lp_sim_opt_distances);
}

/* Ranges: items merged where they overlap or touch; the walk gives each
 * size its row among the sizes up to cap, cap's past it. */
Test(sim, size_ranges_and_walk)
{
	lp_sim_list list;
	lp_error err = {0};
	cr_assert_eq(lp_sim_list_parse("--frames", "9,2-4,pow2,3,5,20-30,10", &list, &err), 0);
	size_t m;
	lp_sim_range *r = lp_sim_list_ranges(&list, 6, &m);
	/* pow2 to 6: 1 2 4 6; with 2-4, 5, 9, 10, 20-30. */
	static const lp_sim_range want[] = {{1, 6}, {9, 10}, {20, 30}};
	cr_assert_eq(m, N(want));
	cr_assert_arr_eq(r, want, sizeof want);
	cr_assert_eq(lp_sim_range_count(r, m), 19);
	size_t n;
	uint64_t *upto = lp_sim_sizes_upto(r, m, 8, &n);
	static const uint64_t want_upto[] = {1, 2, 3, 4, 5, 6, 8};
	cr_assert_eq(n, N(want_upto));
	cr_assert_arr_eq(upto, want_upto, sizeof want_upto);
	lp_sim_size_walk w;
	lp_sim_size_walk_init(&w, r, m, 8);
	uint64_t size, last = 0;
	size_t index, count = 0;
	while (lp_sim_size_walk_next(&w, &size, &index)) {
		cr_assert_gt(size, last);
		cr_assert_eq(upto[index], MIN(size, 8), "size %" PRIu64, size);
		last = size;
		count++;
	}
	cr_assert_eq(count, 19);
	g_free(upto);
	/* cap among the sizes asked: no extra row. */
	upto = lp_sim_sizes_upto(r, m, 9, &n);
	cr_assert_eq(n, 7);
	cr_assert_eq(upto[6], 9);
	g_free(upto);
	g_free(r);
	lp_sim_list_clear(&list);
	/* 14,000 copies of one range: one range, at once. */
	GString *text = g_string_new("1-4793");
	for (int k = 1; k < 14000; k++)
		g_string_append(text, ",1-4793");
	cr_assert_eq(lp_sim_list_parse("--frames", text->str, &list, &err), 0);
	r = lp_sim_list_ranges(&list, 100, &m);
	cr_assert_eq(m, 1);
	cr_assert_eq(r[0].from, 1);
	cr_assert_eq(r[0].to, 4793);
	g_free(r);
	lp_sim_list_clear(&list);
	g_string_free(text, TRUE);
}

/* Miniature simulation (policies.md §8): the rows are a plain simulation
 * of the sampled references (h(page) < R * 2^64) at K' = max(1,
 * nearbyint(K * R)) frames, faults scaled by 1/R and rounded; R = 1 gives
 * the exact rows. */
static uint64_t splitmix_finalizer(uint64_t x)
{
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

static void mini_rows(const lp_trace *t, const lp_sim_options *o, const char *policy,
		      const uint64_t *sizes, size_t m, uint64_t *faults)
{
	lp_sim_task task = {lp_policy_find(policy), sizes, m, faults, g_new(uint64_t, m), false};
	cr_assert_eq(lp_sim_run(t, &task, 1, o, 2), 0);
	g_free(task.space_time);
}

Test(sim, miniature_equals_plain_simulation_of_the_sample)
{
	GRand *rng = g_rand_new_with_seed(40);
	enum { REFS = 6000, PAGES = 400 };
	uint64_t *pages = g_new(uint64_t, REFS);
	for (size_t i = 0; i < REFS; i++) /* a hot set and a cold tail */
		pages[i] = g_rand_int_range(rng, 0, 4) ? g_rand_int_range(rng, 0, 60)
						       : g_rand_int_range(rng, 0, PAGES);
	lp_trace t = trace_in(pages, REFS, 512);
	static const uint64_t sizes[] = {1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 400, 1000};
	enum { M = G_N_ELEMENTS(sizes) };
	static const char *const policies[] = {"fifo", "clock", "segq", "arc"};
	struct {
		double rate;
		uint64_t pages;
	} samples[] = {{0.5, 0}, {0.3, 0}, {0.0625, 0}, {0, 40}, {0, 150}};
	for (size_t c = 0; c < G_N_ELEMENTS(samples); c++) {
		lp_trace sample;
		double rate;
		lp_error err = {0};
		cr_assert_eq(lp_sim_sample(&t, samples[c].rate, samples[c].pages, &sample, &rate,
					   &err), 0, "%s", err.msg);
		/* R and the sample by the rule, independently. */
		uint64_t limit;
		if (samples[c].pages) {
			uint64_t *h = g_new(uint64_t, t.pages);
			for (lp_pageno p = 0; p < t.pages; p++)
				h[p] = splitmix_finalizer(t.canonical[p]);
			for (size_t i = 0; i < t.pages; i++) /* a sort, slowly: few pages */
				for (size_t j = i + 1; j < t.pages; j++)
					if (h[j] < h[i]) {
						uint64_t x = h[i];
						h[i] = h[j];
						h[j] = x;
					}
			limit = h[samples[c].pages - 1];
			cr_assert_eq(rate, ldexp((double)limit, -64));
			g_free(h);
		} else {
			cr_assert_eq(rate, samples[c].rate);
			limit = (uint64_t)ceil(ldexp(rate, 64));
		}
		GArray *kept = g_array_new(FALSE, FALSE, sizeof(uint64_t));
		for (size_t i = 0; i < REFS; i++)
			if (splitmix_finalizer(pages[i]) < limit)
				g_array_append_val(kept, pages[i]);
		lp_trace plain = trace_of((uint64_t *)(void *)kept->data, kept->len);
		cr_assert_eq(sample.n, plain.n);
		cr_assert_eq(sample.pages, plain.pages);
		lp_sim_options o = {.sample = &sample, .sample_rate = rate};
		for (size_t k = 0; k < G_N_ELEMENTS(policies); k++) {
			uint64_t got[M];
			mini_rows(&t, &o, policies[k], sizes, M, got);
			for (size_t s = 0; s < M; s++) {
				uint64_t K = sizes[s];
				double kr = nearbyint((double)K * rate);
				uint64_t k2 = kr < 1 ? 1 : (uint64_t)kr;
				double sr = nearbyint((double)(K / 2) * rate);
				uint64_t f = run(&plain, policies[k], k2,
						 with("segq", MIN(k2 - 1, (uint64_t)sr)), NULL);
				uint64_t want = (uint64_t)nearbyint((double)f / rate);
				cr_assert_eq(got[s], want, "%s at %" PRIu64 " (R %g, K' %" PRIu64 "): %"
					     PRIu64 ", not %" PRIu64, policies[k], K, rate, k2, got[s],
					     want);
			}
		}
		lp_trace_clear(&plain);
		g_array_free(kept, TRUE);
		lp_trace_clear(&sample);
	}
	/* R = 1 (a rate of 1, or at least D pages): the exact rows. */
	for (size_t c = 0; c < 2; c++) {
		lp_trace sample;
		double rate;
		lp_error err = {0};
		cr_assert_eq(lp_sim_sample(&t, c ? 0 : 1, c ? PAGES : 0, &sample, &rate, &err), 0);
		cr_assert_eq(rate, 1);
		lp_sim_options o = {.sample = &sample, .sample_rate = rate}, exact = {0};
		for (size_t k = 0; k < G_N_ELEMENTS(policies); k++) {
			uint64_t got[M], want[M];
			mini_rows(&t, &o, policies[k], sizes, M, got);
			mini_rows(&t, &exact, policies[k], sizes, M, want);
			cr_assert_arr_eq(got, want, sizeof got, "%s", policies[k]);
		}
		lp_trace_clear(&sample);
	}
	/* The size past which the rows are all the same. */
	lp_trace sample;
	double rate;
	lp_error err = {0};
	cr_assert_eq(lp_sim_sample(&t, 0.25, 0, &sample, &rate, &err), 0);
	lp_sim_options o = {.sample = &sample, .sample_rate = rate};
	uint64_t cap = lp_sim_fixed_cap(&t, lp_policy_find("fifo"), &o);
	cr_assert_geq(cap, t.pages);
	cr_assert_geq(lp_sim_mini_frames(cap, rate), sample.pages);
	cr_assert(cap == t.pages || lp_sim_mini_frames(cap - 1, rate) < sample.pages);
	cr_assert_eq(lp_sim_fixed_cap(&t, lp_policy_find("lru"), &o), t.pages);
	lp_trace_clear(&sample);
	lp_trace_clear(&t);
	g_free(pages);
	g_rand_free(rng);
}

/* Past the window cap every window has the same ws and vmin rows. */
Test(sim, window_cap_rows_stay)
{
	static const uint64_t pages[] = {1, 2, 1, 3, 2, 4, 1, 1, 5, 2};
	lp_trace t = trace_of(pages, N(pages));
	uint64_t most, cap;
	lp_sim_window_bounds(&t, &most, &cap);
	cr_assert_eq(cap, 7); /* page 3, at 3, to the end */
	uint64_t taus[] = {cap, cap + 1, 1000};
	uint64_t f[3], ws[3], vmin[3];
	windows(&t, taus, 3, f, ws, vmin);
	for (int k = 1; k < 3; k++) {
		cr_assert_eq(f[k], f[0]);
		cr_assert_eq(ws[k], ws[0]);
		cr_assert_eq(vmin[k], vmin[0]);
	}
	lp_trace_clear(&t);
}

/* space_time is at most n x (D + 1): a stream where that passes 2^64 - 1
 * is refused (LP_EINPUT) rather than given wrapped sums. */
Test(sim, space_time_that_could_wrap_refused)
{
	lp_trace t = {.n = UINT64_C(1) << 32, .pages = UINT32_MAX - 1};
	lp_error err = {0};
	cr_assert(lp_sim_space_fits(&t)); /* 2^32 x (2^32 - 1) */
	cr_assert_eq(lp_sim_check_space(&t, "s.txt", &err), 0);
	t.n++; /* 2^64 - 1 */
	cr_assert(lp_sim_space_fits(&t));
	t.n++;
	cr_assert_not(lp_sim_space_fits(&t));
	cr_assert_eq(lp_sim_check_space(&t, "s.txt", &err), LP_EINPUT);
	cr_assert_str_eq(err.msg, "s.txt: 4294967298 references of 4294967294 pages: a space_time "
				  "could pass 2^64 - 1, the largest count laplace sim writes");
}

static void note_progress(void *ctx, const lp_progress_info *info)
{
	g_array_append_val((GArray *)ctx, *info);
}

/* The one-pass curves (lru, opt, and ws with vmin, one pass for both)
 * tell their progress a block at a time, as the per-size runs do, out of
 * a total that counts each pass once (policies.md §9). Two threads run
 * the jobs (the pool's and the caller's), so the reports may come in any
 * order, and a report that finds another one drawing is dropped. */
Test(sim, one_pass_curves_tell_progress_as_they_go)
{
	enum { N = 3 * LP_TRACE_BLOCK_REFS + 5 };
	uint64_t *pages = g_new(uint64_t, N);
	for (size_t i = 0; i < N; i++)
		pages[i] = i * 7919 % 101;
	lp_trace t = trace_of(pages, N);
	static const uint64_t sizes[] = {1, 10, 100};
	uint64_t faults[4][3], space[4][3];
	lp_sim_task tasks[4];
	static const char *const names[] = {"lru", "opt", "ws", "vmin"};
	for (size_t k = 0; k < 4; k++)
		tasks[k] = (lp_sim_task){lp_policy_find(names[k]), sizes, 3, faults[k], space[k],
					 false};
	GArray *seen = g_array_new(FALSE, FALSE, sizeof(lp_progress_info));
	lp_sim_options o = {.progress = note_progress, .progress_ctx = seen};
	cr_assert_eq(lp_sim_run(&t, tasks, 4, &o, 1), 0);
	uint64_t within = 0, total = 3 * (uint64_t)N; /* lru, opt, the windows' pass */
	for (guint i = 0; i < seen->len; i++) {
		lp_progress_info *info = &g_array_index(seen, lp_progress_info, i);
		cr_assert_leq(info->records, total);
		cr_assert_float_eq(info->fraction, (double)info->records / (double)total, 1e-12);
		within += info->records % N != 0;
	}
	cr_assert_geq(within, 1, "told within the passes %" PRIu64 " times", within);
	g_array_free(seen, TRUE);
	lp_trace_clear(&t);
	g_free(pages);
}

/* The whole LRU and OPT curves hold at most 2^30 and 2^29 - 1 pages
 * (stackdist.h, optdist.h): a stream of more is bad input, refused
 * before the curve is begun, naming the stream and the limit; the
 * policies without a one-pass curve take it. */
Test(sim, whole_curves_refuse_more_pages_than_they_hold)
{
	const lp_policy_info *lru = lp_policy_find("lru"), *opt = lp_policy_find("opt"),
			     *fifo = lp_policy_find("fifo");
	lp_trace t = {.n = 1, .pages = (lp_pageno)LP_OPTDIST_MAX_PAGES};
	lp_error err = {0};
	cr_assert_eq(lp_sim_check_curves(&t, (const lp_policy_info *[]){lru, opt}, 2, "s.bin", &err),
		     0);
	t.pages++;
	cr_assert_eq(lp_sim_check_curves(&t, (const lp_policy_info *[]){lru, opt}, 2, "s.bin", &err),
		     LP_EINPUT);
	cr_assert_str_eq(err.msg, "s.bin: 536870912 distinct pages, more than opt's whole curve "
				  "holds (536870911)");
	t.pages = (lp_pageno)LP_STACKDIST_MAX_PAGES;
	cr_assert_eq(lp_sim_check_curves(&t, (const lp_policy_info *[]){lru}, 1, "s.bin", &err), 0);
	t.pages++;
	cr_assert_eq(lp_sim_check_curves(&t, (const lp_policy_info *[]){fifo, lru}, 2, "s.bin", &err),
		     LP_EINPUT);
	cr_assert_str_eq(err.msg, "s.bin: 1073741825 distinct pages, more than lru's whole curve "
				  "holds (1073741824)");
	t.pages = UINT32_MAX - 1;
	cr_assert_eq(lp_sim_check_curves(&t, (const lp_policy_info *[]){fifo}, 1, "s.bin", &err), 0);
}
