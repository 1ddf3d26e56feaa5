/* The re-scheduling engine (section 9) on streams held in memory: each
 * stream is a list of tokens, "r10@2" a read of page 10 at timestamp 2,
 * "T1.2@1" a thread record (parent 1, child 2), "X5@9" an exit of task 5.
 * Expected outputs are worked out by hand in the comments. */
#include <criterion/criterion.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "sched/schedreport.h"
#include "sched/schedule.h"
#include "scratch.h"

typedef struct mem_source {
	char **tokens[8]; /* per stream, NULL-terminated */
	size_t pos[8];
} mem_source;

static ssize_t mem_read(void *ctx, size_t stream, lp_sched_ref *refs, size_t cap, uint64_t last_ts,
			lp_sched_event *ev, lp_error *err)
{
	(void)err;
	mem_source *m = ctx;
	size_t n = 0;
	for (char *t; (t = m->tokens[stream][m->pos[stream]]);) {
		char *at = strchr(t, '@');
		uint64_t ts = strtoull(at + 1, NULL, 16);
		if (strchr("rwiRWI", t[0])) {
			if (n == cap || ts > last_ts)
				break;
			refs[n++] = (lp_sched_ref){strtoull(t + 1, NULL, 16), ts, t[0]};
			m->pos[stream]++;
			continue;
		}
		if (n)
			return (ssize_t)n;
		m->pos[stream]++;
		*ev = (lp_sched_event){.tag = t[0], .timestamp = ts};
		char *end;
		if (t[0] == 'F' || t[0] == 'T') {
			ev->parent = strtoull(t + 1, &end, 16);
			ev->child = strtoull(end + 1, NULL, 16);
		} else if (t[0] == 'X') {
			ev->task = strtoull(t + 1, NULL, 16);
		}
		return 0;
	}
	if (n)
		return (ssize_t)n;
	ev->tag = m->tokens[stream][m->pos[stream]] ? LP_SCHED_MORE : LP_SCHED_END;
	return 0;
}

typedef struct collected {
	GString *text;
	lp_sched_out own[3]; /* the buffer handed to the engine, if any */
	size_t buffers;      /* handed so far */
} collected;

static int collect(void *ctx, const lp_sched_out *refs, size_t n, lp_error *err)
{
	(void)err;
	collected *c = ctx;
	if (c->buffers)
		cr_assert(refs == c->own && n <= 3, "the references are not where the sink said");
	for (size_t i = 0; i < n; i++)
		g_string_append_printf(c->text, "%s%u:%c%" G_GINT64_MODIFIER "x", c->text->len ? " " : "",
				       refs[i].cpu, refs[i].type, refs[i].canonical);
	return 0;
}

/* lp_sched_sink.buffer: room for one to three references, in turn. */
static lp_sched_out *collect_buffer(void *ctx, size_t *cap)
{
	collected *c = ctx;
	*cap = 1 + c->buffers++ % 3;
	return c->own;
}

/* Whether run_units hands the engine collect_buffer. */
static bool with_buffer;

/* Run units (one stream each) under opt; the emitted references as
 * "cpu:type canonical" tokens. */
static char *run_units(const lp_sched_unit *units, size_t n, const char *const *streams,
		       const lp_sched_options *opt, lp_sched_report *rep)
{
	mem_source m = {0};
	lp_sched_file files[8];
	for (size_t i = 0; i < n; i++) {
		m.tokens[i] = g_strsplit(streams[i], " ", -1);
		files[i] = (lp_sched_file){"f", i, units[i].tid};
	}
	lp_sched_input in = {units, n, files, n, {.ctx = &m, .read = mem_read}};
	collected c = {.text = g_string_new(NULL)};
	lp_sched_sink sink = {.ctx = &c, .refs = collect, .buffer = with_buffer ? collect_buffer : NULL};
	lp_error err = {0};
	int rc = lp_schedule_run(&in, opt, &sink, rep, &err);
	cr_assert_eq(rc, 0, "%s", err.msg);
	cr_assert_eq(c.buffers > 0, with_buffer);
	for (size_t i = 0; i < n; i++)
		g_strfreev(m.tokens[i]);
	return g_string_free(c.text, FALSE);
}

Test(schedule, splitmix64_constants)
{
	uint64_t state = 0;
	cr_assert_eq(lp_splitmix64_next(&state), UINT64_C(0xe220a8397b1dcdaf));
	cr_assert_eq(lp_splitmix64_next(&state), UINT64_C(0x6e789e6aa1b965f4));
	cr_assert_eq(lp_splitmix64_next(&state), UINT64_C(0x06c45d188009454f));
}

/* Queue at tick 0: u2 (first ts 0), u0 (ts 1); u1 waits for T 1 1 2.
 * Q 2, one CPU: u2 emits 30 31 (ticks 0-1) and is done; u0 consumes its
 * T (u1 ready), emits 10 11 (2-3), slice ends: queue u1, u0; u1 emits
 * 20 21 (4-5), done; u0 emits 12 (6). */
static const lp_sched_unit three_units[] = {
	{.pid = 1, .tid = 1, .first_ts = 1},
	{.pid = 1, .tid = 2, .first_ts = 1, .creator = 'T', .creator_parent = 1},
	{.pid = 3, .tid = 3, .first_ts = 0, .file = 2},
};
static const char *const three_streams[] = {
	"T1.2@1 r10@2 r11@3 r12@4 X1@5",
	"T1.2@1 r20@2 r21@3",
	"r30@0 r31@5",
};

Test(schedule, rr_one_cpu)
{
	lp_sched_options opt = {.policy = LP_SCHED_RR, .quantum = 2, .cpus = 1};
	lp_sched_report rep;
	char *got = run_units(three_units, 3, three_streams, &opt, &rep);
	cr_assert_str_eq(got, "0:r30 0:r31 0:r10 0:r11 0:r20 0:r21 0:r12");
	cr_assert_eq(rep.ticks, 7);
	cr_assert_eq(rep.cpu[0].slices, 4);
	cr_assert_eq(rep.unit[0].slices, 2);
	cr_assert_eq(rep.unit[0].first_tick, 2);
	cr_assert_eq(rep.unit[0].last_tick, 6);
	cr_assert_eq(rep.unit_order[0], 2);
	lp_sched_report_free(&rep);
	g_free(got);
}

/* Two CPUs, Q 2: tick 0: cpu0 takes u2 (30), cpu1 takes u0 (consumes T:
 * u1 ready at the end of tick 0, emits 10). Tick 1: 31, 11; both slices
 * end, u2 is done, u0 requeued after u1. Tick 2: cpu0 u1 (20), cpu1 u0
 * (12, then X: done). Tick 3: cpu0 21; cpu1 idle. */
Test(schedule, rr_two_cpus)
{
	lp_sched_options opt = {.policy = LP_SCHED_RR, .quantum = 2, .cpus = 2};
	lp_sched_report rep;
	char *got = run_units(three_units, 3, three_streams, &opt, &rep);
	cr_assert_str_eq(got, "0:r30 1:r10 0:r31 1:r11 0:r20 1:r12 0:r21");
	cr_assert_eq(rep.ticks, 4);
	cr_assert_eq(rep.cpu[1].idle_ticks, 1);
	cr_assert_eq(rep.cpu[1].references, 3);
	lp_sched_report_free(&rep);
	g_free(got);
}

/* Seed 0: x1 = e220a8397b1dcdaf, x1 mod 2 = 1, so with the queue u2 u0
 * the first dispatch takes u0 (10 11, u1 ready). Queue u2 u1 u0; x2 =
 * 6e789e6aa1b965f4, mod 3 = 0: u2 (30 31, done). Queue u1 u0; x3 =
 * 06c45d188009454f, mod 2 = 1: u0 (12, done). Then u1 alone: 20 21. */
Test(schedule, random_seed_zero)
{
	lp_sched_options opt = {.policy = LP_SCHED_RANDOM, .quantum = 2, .cpus = 1, .seed = 0};
	lp_sched_report rep;
	char *got = run_units(three_units, 3, three_streams, &opt, &rep);
	cr_assert_str_eq(got, "0:r10 0:r11 0:r30 0:r31 0:r12 0:r20 0:r21");
	lp_sched_report_free(&rep);
	g_free(got);
}

/* A sink that gives the engine its own memory for the references, a
 * little at a time, gets the same references as one that does not. */
Test(schedule, references_into_the_sinks_buffer)
{
	static const lp_sched_options opts[] = {
		{.policy = LP_SCHED_RR, .quantum = 2, .cpus = 1},
		{.policy = LP_SCHED_RR, .quantum = 2, .cpus = 2},
		{.policy = LP_SCHED_RANDOM, .quantum = 2, .cpus = 1},
		{.policy = LP_SCHED_RR, .quantum = 3, .cpus = 1, .renumber = true},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(opts); i++) {
		lp_sched_report rep;
		with_buffer = false;
		char *want = run_units(three_units, 3, three_streams, &opts[i], &rep);
		lp_sched_report_free(&rep);
		with_buffer = true;
		char *got = run_units(three_units, 3, three_streams, &opts[i], &rep);
		lp_sched_report_free(&rep);
		cr_assert_str_eq(got, want, "options %zu", i);
		g_free(got);
		g_free(want);
	}
}

/* Renumbering in emission order: 30 31 10 11 20 21 12 become 0 to 6. */
Test(schedule, renumber)
{
	lp_sched_options opt = {.policy = LP_SCHED_RR, .quantum = 2, .cpus = 1, .renumber = true};
	lp_sched_report rep;
	char *got = run_units(three_units, 3, three_streams, &opt, &rep);
	cr_assert_str_eq(got, "0:r0 0:r1 0:r2 0:r3 0:r4 0:r5 0:r6");
	lp_sched_report_free(&rep);
	g_free(got);
}

/* A unit whose creating record no file holds is an error naming its file. */
Test(schedule, missing_creator)
{
	static const lp_sched_unit units[] = {
		{.pid = 1, .tid = 2, .first_ts = 1, .creator = 'T', .creator_parent = 1},
	};
	mem_source m = {.tokens = {g_strsplit("T1.2@1 r1@2", " ", -1)}};
	lp_sched_file files[] = {{"d/1/2", 0, 2}};
	lp_sched_input in = {units, 1, files, 1, {.ctx = &m, .read = mem_read}};
	collected c = {.text = g_string_new(NULL)};
	lp_sched_sink sink = {.ctx = &c, .refs = collect};
	lp_sched_options opt = {.policy = LP_SCHED_RR, .quantum = 2, .cpus = 1};
	lp_sched_report rep;
	lp_error err = {0};
	cr_assert_eq(lp_schedule_run(&in, &opt, &sink, &rep, &err), LP_EINPUT);
	cr_assert(strstr(err.msg, "d/1/2: "), "%s", err.msg);
	g_strfreev(m.tokens[0]);
	g_string_free(c.text, TRUE);
}

/* as-traced: files kernel (R90@2), then task 1 (two units, split at its
 * X) and task 3. Timestamps: 1:r10@1, kernel R90@2, 3:r30@2, 1:r11@3,
 * 1:r12@5 (second unit). The tie at 2 goes to the kernel (file 0). */
Test(schedule, as_traced_ties_and_units)
{
	static const lp_sched_unit units[] = {
		{.pid = 1, .tid = 1, .first_ts = 1, .file = 1},
		{.pid = 1, .tid = 1, .incarnation = 1, .first_ts = 5, .file = 1},
		{.pid = 3, .tid = 3, .first_ts = 2, .file = 2},
	};
	mem_source m = {.tokens = {
		g_strsplit("R90@2", " ", -1),
		g_strsplit("r10@1 r11@3 X1@4 r12@5", " ", -1),
		g_strsplit("r30@2", " ", -1),
	}};
	lp_sched_file files[] = {{"kernel", SIZE_MAX, 0}, {"1/1", 0, 1}, {"3/3", 2, 3}};
	lp_sched_input in = {units, 3, files, 3, {.ctx = &m, .read = mem_read}};
	collected c = {.text = g_string_new(NULL)};
	lp_sched_sink sink = {.ctx = &c, .refs = collect};
	lp_sched_options opt = {.policy = LP_SCHED_AS_TRACED};
	lp_sched_report rep;
	lp_error err = {0};
	cr_assert_eq(lp_schedule_run(&in, &opt, &sink, &rep, &err), 0, "%s", err.msg);
	cr_assert_str_eq(c.text->str, "0:r10 0:R90 0:r30 0:r11 0:r12");
	cr_assert_eq(rep.ticks, 5);
	cr_assert_eq(rep.unit[0].slices, 2);
	cr_assert_eq(rep.unit[1].first_tick, 4);
	cr_assert_eq(rep.cpu[0].slices, 4);
	lp_sched_report_free(&rep);
	for (int i = 0; i < 3; i++)
		g_strfreev(m.tokens[i]);
	g_string_free(c.text, TRUE);
}

/* The report's reader takes back what its writer wrote: the same report
 * written again is the same text. Listing the units in another order than
 * the directory's is refused, and leaves nothing. */
Test(schedule, report_reads_back_as_written)
{
	lp_sched_options opt = {.policy = LP_SCHED_RR, .quantum = 2, .cpus = 2};
	lp_sched_report rep;
	g_free(run_units(three_units, 3, three_streams, &opt, &rep));
	lp_error err = {0};
	GString *text = lp_sched_report_yaml(&rep, &err);
	cr_assert(text, "%s", err.msg);
	lp_sched_unit listed[3];
	for (size_t i = 0; i < 3; i++)
		listed[i] = three_units[rep.unit_order[i]];
	char *dir = scratch_dir_new();
	char *path = scratch_file(dir, "report.yaml", text->str, text->len);

	lp_sched_report back;
	cr_assert_eq(lp_sched_report_read(path, listed, 3, &back, &err), 0, "%s", err.msg);
	cr_assert_eq(back.policy, LP_SCHED_RR);
	cr_assert_eq(back.cpus, 2);
	cr_assert_eq(back.ticks, rep.ticks);
	GString *again = lp_sched_report_yaml(&back, &err);
	cr_assert(again, "%s", err.msg);
	cr_assert_str_eq(again->str, text->str);

	lp_sched_report_free(&back);
	lp_sched_unit swapped[3] = {listed[1], listed[0], listed[2]};
	cr_assert_eq(lp_sched_report_read(path, swapped, 3, &back, &err), LP_EINPUT);
	cr_assert(strstr(err.msg, ": field units: pid 3 tid 3 incarnation 0: out of order"), "%s", err.msg);
	cr_assert_null(back.cpu);
	cr_assert_null(back.unit);

	g_string_free(again, TRUE);
	g_string_free(text, TRUE);
	g_free(path);
	scratch_dir_free(dir);
	lp_sched_report_free(&rep);
}
