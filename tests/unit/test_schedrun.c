/* The one way a per-process directory is scheduled (sched/run.h): the
 * directory read, ready called with its input and files before the run,
 * the references to the sink, the units in the report; ready's error ends
 * the run before any reference. */
#include <criterion/criterion.h>
#include <glib.h>
#include <string.h>

#include "core/error.h"
#include "formats/taskdir.h"
#include "sched/run.h"
#include "scratch.h"

SCRATCH_SUITE(schedrun);

static const char index_yaml[] =
	"format: laplace-per-process\nversion: 1\nlayout: task\n"
	"inputs:\n  reference: ref.txt\n  kernel: kern.txt\n"
	"processes:\n- pid: \"7\"\n  programs: []\n  tasks:\n  - tid: \"9\"\n    path: 7/9\n"
	"    records: 3\n    references: 2\n    first_timestamp: \"0\"\n    last_timestamp: \"2\"\n"
	"kernel:\n  path: kernel\n  records: 0\n  references: 0\n"
	"orphan:\n  records: 0\n  references: 0\n";

static char *make_dir(void)
{
	char *sub = g_build_filename(dir, "d", "7", NULL);
	g_mkdir_with_parents(sub, 0755);
	g_free(sub);
	g_free(scratch_file(dir, "d/index.yaml", index_yaml, sizeof index_yaml - 1));
	g_free(scratch_file(dir, "d/kernel", "", 0));
	static const char task[] = "S 0 9 100\nr 1 4 1 5\nw 2 4 2 6\n";
	g_free(scratch_file(dir, "d/7/9", task, sizeof task - 1));
	return g_build_filename(dir, "d", NULL);
}

typedef struct seen {
	size_t nunits, npaths, refs;
	bool index_listed;
	int fail; /* ready's status, 0: go on */
} seen;

static int note_ready(void *ctx, const lp_sched_input *in, const char *const *paths, lp_error *e)
{
	seen *s = ctx;
	s->nunits = in->nunits;
	for (; paths[s->npaths]; s->npaths++)
		s->index_listed |= g_str_has_suffix(paths[s->npaths], "index.yaml");
	return s->fail ? lp_fail(e, s->fail, "not ready") : 0;
}

static int count_refs(void *ctx, const lp_sched_out *refs, size_t n, lp_error *e)
{
	(void)refs, (void)e;
	((seen *)ctx)->refs += n;
	return 0;
}

Test(schedrun, ready_then_run)
{
	char *d = make_dir();
	seen s = {0};
	lp_sched_dir_options opt = {.sched = {.policy = LP_SCHED_RR, .quantum = 1, .cpus = 2},
				    .max_open = LP_TASKDIR_MAX_OPEN, .ready = note_ready,
				    .ready_ctx = &s};
	lp_sched_sink sink = {.ctx = &s, .refs = count_refs};
	lp_sched_report rep;
	cr_assert_eq(lp_sched_dir_run(d, &opt, &sink, &rep, &err), 0, "%s", err.msg);
	cr_assert_eq(s.nunits, 1);
	cr_assert(s.index_listed);
	cr_assert_eq(s.refs, 2);
	cr_assert_eq(rep.nunits, 1);
	cr_assert(rep.units[0].pid == 7 && rep.units[0].tid == 9);
	cr_assert_eq(rep.cpus, 2);
	lp_sched_report_free(&rep);
	g_free(d);
}

Test(schedrun, ready_error_ends_the_run)
{
	char *d = make_dir();
	seen s = {.fail = LP_EUSAGE};
	lp_sched_dir_options opt = {.sched = {.policy = LP_SCHED_AS_TRACED, .cpus = 1},
				    .max_open = 1, .ready = note_ready, .ready_ctx = &s};
	lp_sched_sink sink = {.ctx = &s, .refs = count_refs};
	lp_sched_report rep;
	cr_assert_eq(lp_sched_dir_run(d, &opt, &sink, &rep, &err), LP_EUSAGE);
	cr_assert_str_eq(err.msg, "not ready");
	cr_assert_eq(s.refs, 0);
	g_free(d);
}

Test(schedrun, not_a_directory)
{
	char *d = g_build_filename(dir, "none", NULL);
	seen s = {0};
	lp_sched_dir_options opt = {.sched = {.policy = LP_SCHED_AS_TRACED, .cpus = 1},
				    .max_open = 1, .ready = note_ready, .ready_ctx = &s};
	lp_sched_sink sink = {.ctx = &s, .refs = count_refs};
	lp_sched_report rep;
	cr_assert_neq(lp_sched_dir_run(d, &opt, &sink, &rep, &err), 0);
	cr_assert_eq(err.status, LP_EIO, "%d %s", err.status, err.msg);
	cr_assert_eq(s.nunits, 0, "ready was called");
	g_free(d);
}
