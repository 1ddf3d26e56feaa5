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
#include "sched/schedreport.h"
#include "sched/schedule.h"
#include "sched/sweep.h"
#include "scratch.h"

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

/* One unit of n references to pages 1, 2, 1, 2, ...: every one a fault
 * with one frame. */
static int alternate(uint64_t n, unsigned cpus, uint64_t fault_ticks, lp_sched_report *rep,
		     lp_error *err)
{
	static const uint64_t pages[] = {1, 2, 1, 2, 1, 2, 1, 2};
	lp_sched_unit unit = {.pid = 1, .tid = 1};
	lp_sched_file file = {"f", 0, 1};
	one_stream s = {pages, n, 0};
	lp_sched_input in = {&unit, 1, &file, 1, {.ctx = &s, .read = one_read}};
	lp_sched_sink sink = {0};
	lp_sched_options opt = {.policy = LP_SCHED_RR, .quantum = 10, .cpus = cpus, .memory = 1,
				.fault_ticks = fault_ticks};
	return lp_schedule_run(&in, &opt, &sink, rep, err);
}

/* Ticks x processors past 2^64 - 1 (issue: idle_ticks wrapped): the idle
 * ticks exact in the sweep's row and the report, read back as written. */
Test(schedmem, idle_ticks_past_64_bits_exact)
{
	lp_sched_report rep;
	lp_error err = {0};
	/* 4 + 4 x 2^53 ticks on 1024 processors: 2^65 + 4096 slots. */
	cr_assert_eq(alternate(4, 1024, UINT64_C(1) << 53, &rep, &err), 0, "%s", err.msg);
	cr_assert_eq(rep.ticks, (UINT64_C(1) << 55) + 4);
	char idle[LP_U128_DIGITS];
	cr_assert_str_eq(lp_fmt_u128(idle, lp_sched_report_idle(&rep)), "36893488147419107324");
	GString *row = g_string_new(NULL);
	lp_sweep_format_row(row, &rep);
	cr_assert_str_eq(row->str, "1,36028797018963972,4,4,0,3,4,36893488147419107324,0.000000\n");
	GString *yaml = lp_sched_report_yaml(&rep, &err);
	cr_assert(yaml, "%s", err.msg);
	cr_assert(strstr(yaml->str, "\nidle_ticks: 36893488147419107324\n"), "%s", yaml->str);

	/* As if of 4 x 2^53 / 2^32 faults of 2^32 - 1 ticks each (laplace
	 * schedule takes no more), as the 5,000,000 were. */
	char *at = strstr(yaml->str, "fault_ticks: 9007199254740992\n");
	cr_assert(at);
	g_string_erase(yaml, at - yaml->str, strlen("fault_ticks: 9007199254740992\n"));
	g_string_insert(yaml, at - yaml->str, "fault_ticks: 4294967295\n");
	char *dir = scratch_dir_new();
	char *path = scratch_file(dir, "report.yaml", yaml->str, yaml->len);
	lp_sched_unit unit = {.pid = 1, .tid = 1};
	lp_sched_report back;
	cr_assert_eq(lp_sched_report_read(path, &unit, 1, &back, &err), 0, "%s", err.msg);
	back.fault_ticks = UINT64_C(1) << 53;
	GString *again = lp_sched_report_yaml(&back, &err);
	cr_assert(strstr(again->str, "\nidle_ticks: 36893488147419107324\n"), "%s", again->str);
	lp_sched_report_free(&back);
	/* One tick more idle than that is refused. */
	char *off = g_strdup(yaml->str);
	memcpy(strstr(off, "107324\n"), "107325", 6);
	g_free(path);
	path = scratch_file(dir, "off.yaml", off, strlen(off));
	cr_assert_eq(lp_sched_report_read(path, &unit, 1, &back, &err), LP_EINPUT);
	cr_assert(strstr(err.msg, "field idle_ticks: not ticks x cpus less busy_ticks"), "%s", err.msg);

	g_free(off);
	g_free(path);
	scratch_dir_free(dir);
	g_string_free(again, TRUE);
	g_string_free(yaml, TRUE);
	g_string_free(row, TRUE);
	lp_sched_report_free(&rep);
}

/* A page that would arrive at or past tick 2^63 stops the run
 * (LP_EINPUT) rather than wrap the ticks: faults of F = 2^62 - 1 ticks
 * arrive at the ends of ticks F - 1, 2F and 3F + 1 >= 2^63. */
Test(schedmem, ticks_past_2_63_refused)
{
	lp_sched_report rep;
	lp_error err = {0};
	uint64_t f = (UINT64_C(1) << 62) - 1;
	cr_assert_eq(alternate(2, 1, f, &rep, &err), 0, "%s", err.msg);
	cr_assert_eq(rep.ticks, 2 + 2 * f);
	lp_sched_report_free(&rep);
	cr_assert_eq(alternate(3, 1, f, &rep, &err), LP_EINPUT);
	cr_assert_str_eq(err.msg, "a page faulted in tick 9223372036854775808 would arrive "
				  "4611686018427387902 ticks later, past tick 2^63: laplace schedule "
				  "counts ticks in 64 bits");
	cr_assert_null(rep.cpu);
}
