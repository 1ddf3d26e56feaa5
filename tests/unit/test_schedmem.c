/* The engine with a memory (laplace-formats(5) §9.4) on one unit: its
 * faults are those of the policy driven by access() alone, as laplace sim
 * drives it (§9.4.4: "a directory with a single unit ... has the faults of
 * laplace sim"), its ticks references + faults x F, its stream its own
 * order, on one processor or three, through a source with no view (the
 * references a blocked unit had read are kept), for streams longer than
 * a batch. */
#include <criterion/criterion.h>
#include <glib.h>
#include <string.h>

#include "analysis/policy.h"
#include "sched/schedule.h"

typedef struct one_stream {
	const uint64_t *pages;
	size_t n, pos;
} one_stream;

static ssize_t one_read(void *ctx, size_t stream, lp_sched_ref *refs, size_t cap, uint64_t last_ts,
			lp_sched_event *ev, lp_error *err)
{
	(void)stream;
	(void)last_ts;
	(void)err;
	one_stream *s = ctx;
	size_t n = 0;
	while (n < cap && s->pos < s->n) {
		refs[n] = (lp_sched_ref){s->pages[s->pos], s->pos, 'r'};
		n++;
		s->pos++;
	}
	if (!n)
		ev->tag = s->pos < s->n ? LP_SCHED_MORE : LP_SCHED_END;
	return (ssize_t)n;
}

typedef struct order_check {
	const uint64_t *pages;
	size_t seen;
} order_check;

static int check_order(void *ctx, const lp_sched_out *refs, size_t n, lp_error *err)
{
	(void)err;
	order_check *c = ctx;
	for (size_t i = 0; i < n; i++, c->seen++)
		cr_assert_eq(refs[i].canonical, c->pages[c->seen], "reference %zu", c->seen);
	return 0;
}

/* The faults of name with K frames, by access(), and the pages. */
static uint64_t sim_faults(const char *name, uint64_t frames, const uint64_t *pages, size_t n,
			   uint64_t *distinct)
{
	const lp_policy_ops *ops = lp_policy_find(name)->ops;
	lp_policy_params params = {.frames = frames, .pages = 64};
	void *s = ops->create(&params);
	uint64_t faults = 0;
	uint8_t seen[64] = {0};
	*distinct = 0;
	for (size_t t = 0; t < n; t++) {
		lp_pageno victim;
		faults += !ops->access(s, (lp_pageno)pages[t], t, &victim);
		*distinct += !seen[pages[t]];
		seen[pages[t]] = 1;
	}
	ops->destroy(s);
	return faults;
}

Test(schedmem, one_unit_has_the_policys_faults)
{
	enum { N = 3000 };
	static uint64_t pages[N];
	GRand *rng = g_rand_new_with_seed(9);
	/* Phases of locality over 40 pages. The engine numbers pages its own
	 * way; these policies do not look at the numbers. */
	for (size_t t = 0; t < N; t++)
		pages[t] = MIN((t / 500) * 5 + (uint64_t)g_rand_int_range(rng, 0, 12), 39);
	g_rand_free(rng);
	static const uint64_t frames[] = {1, 2, 5, 17, 39, 40, 100};
	for (size_t r = 0; r < lp_npolicies; r++)
		for (size_t k = 0; k < G_N_ELEMENTS(frames); k++)
			for (unsigned cpus = 1; cpus <= 3; cpus += 2) {
				uint64_t distinct;
				const lp_policy_info *replacement = lp_policies[r];
				if (!lp_policy_has_victim(replacement))
					continue;
				const char *name = replacement->name;
				uint64_t want = sim_faults(name, frames[k], pages,
							   N, &distinct);
				lp_sched_unit unit = {.pid = 1, .tid = 1};
				lp_sched_file file = {"f", 0, 1};
				one_stream s = {pages, N, 0};
				lp_sched_input in = {&unit, 1, &file, 1, {.ctx = &s, .read = one_read}};
				order_check c = {pages, 0};
				lp_sched_sink sink = {.ctx = &c, .refs = check_order};
				lp_sched_options opt = {.policy = LP_SCHED_RR, .quantum = 7, .cpus = cpus,
							.memory = frames[k],
							.replacement = replacement,
							.fault_ticks = 3};
				lp_sched_report rep;
				lp_error err = {0};
				cr_assert_eq(lp_schedule_run(&in, &opt, &sink, &rep, &err), 0, "%s", err.msg);
				cr_expect_eq(rep.mem.faults, want, "%s K=%lu cpus=%u: %lu faults, sim %lu",
					     name, (unsigned long)frames[k], cpus,
					     (unsigned long)rep.mem.faults, (unsigned long)want);
				cr_expect_eq(rep.mem.evictions, want - MIN(frames[k], distinct));
				cr_expect_eq(rep.mem.waits, 0);
				cr_expect_eq(rep.mem.frame_waits, 0);
				cr_expect_eq(rep.ticks, N + want * 3);
				cr_expect_eq(c.seen, N);
				cr_expect_eq(rep.unit[0].blocked_ticks, want * 3);
				lp_sched_report_free(&rep);
			}
}
