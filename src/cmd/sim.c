/* laplace sim: page-replacement policies over a basic merge stream or a
 * capture (policies.md §4, laplace-sim(1)). The computation is
 * src/analysis/sim.h's; here are the options, their checks, the input
 * held whole (cli_trace_load) and the CSV. */
#include <inttypes.h>
#include <string.h>

#include "analysis/sim.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "core/numbers.h"

/* The options as given: NULL or FALSE when not. */
typedef struct sim_args {
	gchar *policy, *frames, *window, *output, *faults;
	gchar *clock_load_bit, *segq_lru_frames, *eelru_early, *eelru_late, *threads;
	gboolean user_only;
	cli_capture capture;
} sim_args;

/* What they ask, checked. */
typedef struct sim_request {
	const lp_policy_info **policies;
	size_t npolicies;
	lp_sim_list frames, windows;
	lp_sim_options opt;
	unsigned threads; /* simulations side by side (-j) */
} sim_request;

static GOptionContext *sim_options(sim_args *a)
{
	const GOptionEntry entries[] = {
		{"policy", 'p', 0, G_OPTION_ARG_STRING, &a->policy,
		 "Policies, comma-separated: lru opt fifo clock segq arc eelru ws vmin "
		 "(default lru)", "P[,P...]"},
		{"frames", 'm', 0, G_OPTION_ARG_STRING, &a->frames,
		 "Memory sizes of lru ... eelru: N, A-B, pow2, all, comma-separated "
		 "(default pow2)", "LIST"},
		{"window", 'w', 0, G_OPTION_ARG_STRING, &a->window,
		 "Windows of ws and vmin, in references, as --frames (default pow2)", "LIST"},
		{"user-only", 0, 0, G_OPTION_ARG_NONE, &a->user_only,
		 "Drop the kernel's references (R W I) first", NULL},
		{"clock-load-bit", 0, 0, G_OPTION_ARG_STRING, &a->clock_load_bit,
		 "clock: a page's reference bit when loaded, 0 (default) or 1", "B"},
		{"segq-lru-frames", 0, 0, G_OPTION_ARG_STRING, &a->segq_lru_frames,
		 "segq: frames S of the LRU back, 0 <= S < K (default K/2)", "S"},
		{"eelru-early", 0, 0, G_OPTION_ARG_STRING, &a->eelru_early,
		 "eelru: the early eviction point e, 1 <= e < K (default max(1, K/2))", "E"},
		{"eelru-late", 0, 0, G_OPTION_ARG_STRING, &a->eelru_late,
		 "eelru: the late eviction point l > K (default 2K)", "L"},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output,
		 "Write the CSV to FILE (default: standard output)", "FILE"},
		{"faults", 0, 0, G_OPTION_ARG_FILENAME, &a->faults,
		 "One fixed-space policy at one size: every fault to FILE, as 't page victim'",
		 "FILE"},
		{"threads", 'j', 0, G_OPTION_ARG_STRING, &a->threads,
		 "Run N simulations side by side (default: the processors available; the same "
		 "rows for any N)", "N"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("STREAM | REF KERN");
	g_option_context_set_summary(ctx,
		"Simulate page-replacement policies over a basic merge stream (any form,\n"
		"'-': standard input) or a capture merged on the way, and write one CSV\n"
		"row per policy and size: policy,size,references,faults,miss_ratio,\n"
		"space_time. lru and opt take their whole curves in one pass (opt runs\n"
		"at each size instead where its stack is too deep to pay), ws and vmin\n"
		"theirs from distance histograms; the others run at each size, side by\n"
		"side on every processor (-j). See laplace-sim(1).");
	g_option_context_set_description(ctx,
		"Examples:\n"
		"  laplace sim --policy lru,opt,arc --frames pow2 refs.bin\n"
		"  laplace sim --policy ws,vmin --window 1-1000 capture.ref capture.kern\n"
		"  laplace sim --policy clock --frames 64 --faults faults.txt refs.bin\n");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);
	cli_capture_add_options(&a->capture, ctx);
	return ctx;
}

static bool wants(const sim_request *rq, const char *name)
{
	for (size_t k = 0; k < rq->npolicies; k++)
		if (!strcmp(rq->policies[k]->name, name))
			return true;
	return false;
}

/* An option that no policy asked for would be ignored: a usage error. */
static bool check_applies(const sim_args *a, const sim_request *rq)
{
	bool fixed = false, variable = false;
	for (size_t k = 0; k < rq->npolicies; k++)
		*(rq->policies[k]->space == LP_SPACE_FIXED ? &fixed : &variable) = true;
	const struct {
		const char *option;
		bool given, applies;
		const char *policies;
	} rules[] = {
		{"--frames", a->frames, fixed, "lru opt fifo clock segq arc eelru"},
		{"--window", a->window, variable, "ws and vmin"},
		{"--clock-load-bit", a->clock_load_bit, wants(rq, "clock"), "clock"},
		{"--segq-lru-frames", a->segq_lru_frames, wants(rq, "segq"), "segq"},
		{"--eelru-early", a->eelru_early, wants(rq, "eelru"), "eelru"},
		{"--eelru-late", a->eelru_late, wants(rq, "eelru"), "eelru"},
	};
	for (size_t r = 0; r < G_N_ELEMENTS(rules); r++)
		if (rules[r].given && !rules[r].applies) {
			cli_usage_error("%s applies only to %s, and --policy names none of them%s",
					rules[r].option, rules[r].policies,
					a->policy ? "" : " (the default is lru)");
			return false;
		}
	return true;
}

static bool check_args(const sim_args *a, sim_request *rq)
{
	char **names = g_strsplit(a->policy ? a->policy : "lru", ",", -1);
	rq->npolicies = g_strv_length(names);
	rq->policies = g_new(const lp_policy_info *, rq->npolicies ? rq->npolicies : 1);
	bool ok = rq->npolicies > 0;
	if (!ok)
		cli_usage_error("--policy: no policy named");
	for (size_t k = 0; k < rq->npolicies && ok; k++)
		if (!(rq->policies[k] = lp_policy_find(names[k]))) {
			char q[LP_QUOTE_SIZE];
			cli_usage_error("--policy: unknown policy '%s' (lru opt fifo clock segq arc "
					"eelru ws vmin)", lp_quote(q, names[k], strlen(names[k])));
			ok = false;
		}
	g_strfreev(names);
	if (!ok || !check_applies(a, rq) || !cli_threads_apply(a->threads, &rq->threads))
		return false;
	lp_error err = {0};
	if (lp_sim_list_parse("--frames", a->frames ? a->frames : "pow2", &rq->frames, &err) ||
	    lp_sim_list_parse("--window", a->window ? a->window : "pow2", &rq->windows, &err)) {
		cli_usage_error("%s", err.msg);
		return false;
	}
	lp_sim_options *o = &rq->opt;
	uint64_t v;
	if (a->clock_load_bit) {
		if (!lp_parse_decimal(a->clock_load_bit, 0, 1, &v)) {
			cli_usage_error("--clock-load-bit must be 0 or 1, not '%s'", a->clock_load_bit);
			return false;
		}
		o->clock_load_bit = (unsigned)v;
	}
	o->segq_set = a->segq_lru_frames;
	o->early_set = a->eelru_early;
	o->late_set = a->eelru_late;
	if (!cli_decimal_apply("--segq-lru-frames", a->segq_lru_frames, 0, UINT64_MAX,
			       &o->segq_lru_frames) ||
	    !cli_decimal_apply("--eelru-early", a->eelru_early, 1, UINT64_MAX, &o->eelru_early) ||
	    !cli_decimal_apply("--eelru-late", a->eelru_late, 1, UINT64_MAX, &o->eelru_late))
		return false;
	if (a->faults) {
		if (rq->npolicies != 1 || rq->policies[0]->space != LP_SPACE_FIXED) {
			cli_usage_error("--faults takes one fixed-space policy (lru opt fifo clock "
					"segq arc eelru)");
			return false;
		}
	}
	return true;
}

/* The options that depend on K, at every size asked. */
static bool check_sizes(const sim_request *rq, const uint64_t *sizes, size_t n)
{
	const lp_sim_options *o = &rq->opt;
	for (size_t k = 0; k < n; k++) {
		uint64_t K = sizes[k];
		if (wants(rq, "segq") && o->segq_set && o->segq_lru_frames >= K)
			return cli_usage_error("--segq-lru-frames %" PRIu64 " must be below the frames "
					       "K (%" PRIu64 ")", o->segq_lru_frames, K), false;
		if (wants(rq, "eelru") && o->early_set && o->eelru_early >= K)
			return cli_usage_error("--eelru-early %" PRIu64 " must be below the frames K "
					       "(%" PRIu64 ")", o->eelru_early, K), false;
		if (wants(rq, "eelru") && o->late_set && o->eelru_late <= K)
			return cli_usage_error("--eelru-late %" PRIu64 " must be above the frames K "
					       "(%" PRIu64 ")", o->eelru_late, K), false;
	}
	return true;
}

/* --faults: its lines, written as they come. */
typedef struct fault_out {
	lp_output *out;
	const lp_trace *t;
	GString *buf;
	int rc;
	lp_error err;
} fault_out;

static void write_fault(void *ctx, uint64_t t, lp_pageno page, lp_pageno victim)
{
	fault_out *f = ctx;
	g_string_append_printf(f->buf, "%" PRIu64 " %" PRIx64, t, f->t->canonical[page]);
	if (victim == LP_NO_PAGE)
		g_string_append(f->buf, " -\n");
	else
		g_string_append_printf(f->buf, " %" PRIx64 "\n", f->t->canonical[victim]);
	if (f->buf->len >= 1 << 16 && !f->rc) {
		f->rc = lp_output_write(f->out, f->buf->str, f->buf->len, &f->err);
		g_string_truncate(f->buf, 0);
	}
}

/* Run the faults' policy into path, staged in *done. */
static int run_faults(const sim_request *rq, const lp_trace *t, uint64_t frames, const char *path,
		      lp_staged **done, lp_error *err)
{
	fault_out f = {.t = t, .buf = g_string_sized_new(1 << 16)};
	if (!(f.out = lp_output_open(path, LP_COMPRESS_AUTO, err))) {
		g_string_free(f.buf, TRUE);
		return err->status;
	}
	uint64_t *next = !strcmp(rq->policies[0]->name, "opt") ? lp_trace_next_use(t) : NULL;
	lp_policy_params p;
	lp_sim_params(&rq->opt, frames, t, next, &p);
	lp_sim_fixed(t, rq->policies[0], &p, write_fault, &f);
	if (next)
		lp_trace_next_use_free(t, next);
	if (!f.rc)
		f.rc = lp_output_write(f.out, f.buf->str, f.buf->len, &f.err);
	g_string_free(f.buf, TRUE);
	if (f.rc)
		*err = f.err;
	return lp_output_stage(f.out, f.rc, done, err);
}

/* The CSV into out, 64 KiB at a time: 0 or an lp_status with err set. */
static int write_csv(lp_output *out, const lp_sim_task *tasks, size_t ntasks, uint64_t n,
		     lp_error *err)
{
	GString *csv = g_string_sized_new(1 << 16);
	g_string_append(csv, "policy,size,references,faults,miss_ratio,space_time\n");
	int rc = 0;
	for (size_t k = 0; k < ntasks && !rc; k++)
		for (size_t s = 0; s < tasks[k].nsizes && !rc; s++) {
			const lp_sim_task *task = &tasks[k];
			g_string_append_printf(csv, "%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%" PRIu64
						    "\n",
					       task->policy->name, task->sizes[s], n, task->faults[s],
					       (double)task->faults[s] / (double)n,
					       task->space_time[s]);
			if (csv->len >= 1 << 16) {
				rc = lp_output_write(out, csv->str, csv->len, err);
				g_string_truncate(csv, 0);
			}
		}
	if (!rc)
		rc = lp_output_write(out, csv->str, csv->len, err);
	g_string_free(csv, TRUE);
	return rc;
}

static int simulate(const sim_request *rq, const lp_trace *t, const char *output,
		    const char *faults_path)
{
	uint64_t *sizes[2] = {NULL, NULL}; /* frames, windows */
	size_t nsizes[2] = {0, 0};
	/* The sizes named (N, A-B) are checked on an empty stream too, where
	 * pow2 and all name none; its rows are none. */
	sizes[0] = lp_sim_list_sizes(&rq->frames, t->pages, &nsizes[0]);
	if (t->n) {
		uint64_t most = lp_sim_max_backward(t);
		sizes[1] = lp_sim_list_sizes(&rq->windows, most ? most : 1, &nsizes[1]);
	}
	int rc = 0;
	if (!check_sizes(rq, sizes[0], nsizes[0]))
		rc = LP_EUSAGE;
	else if (faults_path && nsizes[0] > 1)
		rc = cli_usage_error("--faults takes one size, not the %zu sizes --frames gives "
				     "here", nsizes[0]);
	if (!t->n)
		nsizes[0] = 0;
	lp_sim_task *tasks = g_new0(lp_sim_task, rq->npolicies);
	for (size_t k = 0; k < rq->npolicies && !rc; k++) {
		int which = rq->policies[k]->space == LP_SPACE_VARIABLE;
		tasks[k] = (lp_sim_task){
			.policy = rq->policies[k],
			.sizes = sizes[which],
			.nsizes = nsizes[which],
			.faults = g_new(uint64_t, nsizes[which] + 1),
			.space_time = g_new(uint64_t, nsizes[which] + 1),
		};
	}
	lp_error err = {0};
	lp_staged *staged[2] = {NULL, NULL};
	/* An empty stream has no size, and no fault at any. */
	if (!rc && faults_path &&
	    (rc = run_faults(rq, t, nsizes[0] ? sizes[0][0] : 1, faults_path, &staged[1], &err)))
		cli_fail(&err);
	if (!rc) {
		lp_sim_run(t, tasks, rq->npolicies, &rq->opt, rq->threads);
		lp_output *out = lp_output_open(output, LP_COMPRESS_AUTO, &err);
		rc = out ? write_csv(out, tasks, rq->npolicies, t->n, &err) : err.status;
		if (out)
			rc = lp_output_stage(out, rc, &staged[0], &err);
		/* Publishing discards every item when it fails. */
		if (!rc && (rc = lp_stage_publish(staged, 2, &err)))
			staged[1] = NULL;
		if (rc)
			cli_fail(&err);
	}
	if (rc)
		lp_staged_discard(staged[1]);
	for (size_t k = 0; k < rq->npolicies; k++) {
		g_free(tasks[k].faults);
		g_free(tasks[k].space_time);
	}
	g_free(tasks);
	g_free(sizes[0]);
	g_free(sizes[1]);
	return rc;
}

int cmd_sim(int argc, char **argv)
{
	cli_set_command("laplace sim");
	sim_args a = {0};
	GOptionContext *ctx = sim_options(&a);
	sim_request rq = {0};
	int rc = LP_EUSAGE;
	lp_merge_job job;
	lp_merge_job_init(&job);
	if (!cli_parse(ctx, &argc, &argv))
		goto out;
	if (argc != 2 && argc != 3) {
		cli_usage_error("expected STREAM or REF KERN, got %d arguments", argc - 1);
		goto out;
	}
	if (argc == 2 && !cli_capture_stream_check(&a.capture))
		goto out;
	if (!check_args(&a, &rq) ||
	    (argc == 3 && !cli_capture_apply(&a.capture, argv[1], argv[2], &job)))
		goto out;
	lp_error err = {0};
	const char *inputs[] = {argv[1], argc == 3 ? argv[2] : NULL};
	const char *outputs[] = {a.output ? a.output : "-", a.faults};
	if ((rc = lp_check_outputs(inputs, 2, outputs, 2, &err))) {
		cli_fail(&err);
		goto out;
	}
	lp_trace t;
	if ((rc = cli_trace_load(argv[1], argc == 3 ? &job : NULL, a.user_only, &t, &err))) {
		cli_fail(&err);
		goto out;
	}
	rc = simulate(&rq, &t, a.output, a.faults);
	lp_trace_clear(&t);
out:
	g_option_context_free(ctx);
	cli_capture_free(&a.capture);
	lp_sim_list_clear(&rq.frames);
	lp_sim_list_clear(&rq.windows);
	g_free(rq.policies);
	g_free(a.policy);
	g_free(a.frames);
	g_free(a.window);
	g_free(a.output);
	g_free(a.faults);
	g_free(a.clock_load_bit);
	g_free(a.segq_lru_frames);
	g_free(a.eelru_early);
	g_free(a.eelru_late);
	g_free(a.threads);
	return rc;
}
