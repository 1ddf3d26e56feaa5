/* laplace sim: page-replacement policies over a basic merge stream or a
 * capture (policies.md §4, laplace-sim(1)). The computation is
 * src/analysis/sim.h's; here are the options, their checks, the input
 * held whole (cli_trace_load) and the CSV. */
#include <inttypes.h>
#include <string.h>

#include "analysis/sim.h"
#include "analysis/simlist.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/progress.h"
#include "core/numbers.h"

/* The options as given: NULL or FALSE when not. */
typedef struct sim_args {
	gchar *policy, *frames, *window, *output, *faults, *sample_rate, *sample_pages, *threads;
	/* The policies' options (policy.h): [row * LP_POLICY_OPTIONS_MAX + i]
	 * the i-th option of lp_policies[row]. */
	gchar **option_text;
	gboolean user_only, list_policies;
	cli_capture capture;
	GPtrArray *help; /* the texts of --help built from the table */
} sim_args;

/* Fewer sampled pages than this get a warning: miniature curves are
 * noisy below a few hundred. */
#define FEW_PAGES 256

/* What they ask, checked. */
typedef struct sim_request {
	const lp_policy_info **policies;
	size_t npolicies;
	lp_sim_list frames, windows;
	lp_policy_settings *settings; /* one per row of lp_policies */
	lp_sim_options opt;
	double sample_rate;    /* with --sample-rate, else 0 */
	uint64_t sample_pages; /* with --sample-pages, else 0 */
	unsigned threads;      /* simulations side by side (-j) */
} sim_request;

static bool fixed_space(const lp_policy_info *p)
{
	return p->space == LP_SPACE_FIXED;
}

static bool variable_space(const lp_policy_info *p)
{
	return p->space == LP_SPACE_VARIABLE;
}

/* A --help text, kept until the command ends. */
static const char *help_text(sim_args *a, char *text)
{
	g_ptr_array_add(a->help, text);
	return text;
}

/* The first and last rows of space joined by " ... ". */
static char *first_to_last(bool (*keep)(const lp_policy_info *))
{
	char *all = lp_policy_names(keep, " ", NULL);
	const char *last = strrchr(all, ' ');
	char *text = last ? g_strdup_printf("%.*s ...%s", (int)strcspn(all, " "), all, last)
			  : g_strdup(all);
	g_free(all);
	return text;
}

static GOptionContext *sim_options(sim_args *a)
{
	a->help = g_ptr_array_new_with_free_func(g_free);
	a->option_text = g_new0(gchar *, lp_npolicies * LP_POLICY_OPTIONS_MAX);
	char *names = lp_policy_names(NULL, " ", NULL), *fixed = first_to_last(fixed_space);
	char *windows = lp_policy_names(variable_space, ", ", " and ");
	char *mini = lp_policy_names(lp_sim_miniature, " ", NULL);
	const GOptionEntry before[] = {
		{"policy", 'p', 0, G_OPTION_ARG_STRING, &a->policy,
		 help_text(a, g_strdup_printf("Policies, comma-separated: %s (default lru)", names)),
		 "P[,P...]"},
		{"list-policies", 0, 0, G_OPTION_ARG_NONE, &a->list_policies,
		 "Print the policies, their kinds, options and defaults, and exit", NULL},
		{"frames", 'm', 0, G_OPTION_ARG_STRING, &a->frames,
		 help_text(a, g_strdup_printf("Memory sizes of %s: N, A-B, pow2, all, "
					      "comma-separated (default pow2)", fixed)),
		 "LIST"},
		{"window", 'w', 0, G_OPTION_ARG_STRING, &a->window,
		 help_text(a, g_strdup_printf("Windows of %s, in references, as --frames "
					      "(default pow2)", windows)),
		 "LIST"},
		{"user-only", 0, 0, G_OPTION_ARG_NONE, &a->user_only,
		 "Drop the kernel's references (R W I) first", NULL},
	};
	const GOptionEntry after[] = {
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output,
		 "Write the CSV to FILE (default: standard output)", "FILE"},
		{"faults", 0, 0, G_OPTION_ARG_FILENAME, &a->faults,
		 "One fixed-space policy at one size: every fault to FILE, as 't page victim'",
		 "FILE"},
		{"sample-rate", 0, 0, G_OPTION_ARG_STRING, &a->sample_rate,
		 help_text(a, g_strdup_printf("%s: miniature simulations of the pages sampled at "
					      "the rate 0 < R <= 1, every size scaled by R", mini)),
		 "R"},
		{"sample-pages", 0, 0, G_OPTION_ARG_STRING, &a->sample_pages,
		 "As --sample-rate, R fixed to sample about S pages", "S"},
		{"threads", 'j', 0, G_OPTION_ARG_STRING, &a->threads,
		 "Run N simulations side by side (default: the processors available; the same "
		 "rows for any N)", "N"},
	};
	g_free(names);
	g_free(fixed);
	g_free(windows);
	g_free(mini);
	/* Between them, each policy's options: "--NAME V: POLICY: HELP
	 * (default D)". */
	GArray *entries = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));
	g_array_append_vals(entries, before, G_N_ELEMENTS(before));
	for (size_t row = 0; row < lp_npolicies; row++) {
		const lp_policy_info *p = lp_policies[row];
		for (size_t i = 0; i < p->noptions; i++) {
			const lp_policy_option *o = &p->options[i];
			GOptionEntry e = {o->name, 0, 0, G_OPTION_ARG_STRING,
					  &a->option_text[row * LP_POLICY_OPTIONS_MAX + i],
					  help_text(a, g_strdup_printf("%s: %s (default %s)", p->name,
								       o->help, o->fallback)),
					  o->metavar};
			g_array_append_val(entries, e);
		}
	}
	g_array_append_vals(entries, after, G_N_ELEMENTS(after));
	GOptionContext *ctx = g_option_context_new("STREAM | REF KERN");
	g_option_context_set_summary(ctx,
		"Simulate page-replacement policies over a basic merge stream (any form,\n"
		"'-': standard input) or a capture merged on the way, and write one CSV\n"
		"row per policy and size: policy,size,references,faults,miss_ratio,\n"
		"space_time. lru and opt take their whole curves in one pass, ws and\n"
		"vmin theirs from distance histograms; the others run at each size, side\n"
		"by side on every processor (-j), or as miniature simulations of a sample of the\n"
		"pages (--sample-rate, --sample-pages). See laplace-sim(1).");
	g_option_context_set_description(ctx,
		"Examples:\n"
		"  laplace sim --policy lru,opt,arc --frames pow2 refs.bin\n"
		"  laplace sim --policy ws,vmin --window 1-1000 capture.ref capture.kern\n"
		"  laplace sim --policy clock --frames 64 --faults faults.txt refs.bin\n"
		"  laplace sim --policy fifo,arc --frames 256-131072 --sample-pages 8192 refs.bin\n");
	g_option_context_add_main_entries(ctx, (const GOptionEntry *)(void *)entries->data, NULL);
	g_array_free(entries, TRUE);
	cli_add_sync_option(ctx);
	cli_add_quiet_option(ctx);
	cli_capture_add_options(&a->capture, ctx);
	return ctx;
}

/* --list-policies: the table, one policy a line, tab-separated: name,
 * kind (fixed: --frames; variable: --window), its options as
 * --NAME=DEFAULT (space-separated; - for none), what it is. */
static int list_policies(void)
{
	GString *s = g_string_new("policy\tkind\toptions\tdescription\n");
	for (size_t row = 0; row < lp_npolicies; row++) {
		const lp_policy_info *p = lp_policies[row];
		g_string_append_printf(s, "%s\t%s\t", p->name,
				       p->space == LP_SPACE_FIXED ? "fixed" : "variable");
		for (size_t i = 0; i < p->noptions; i++)
			g_string_append_printf(s, "%s--%s=%s", i ? " " : "", p->options[i].name,
					       p->options[i].fallback);
		g_string_append_printf(s, "%s\t%s\n", p->noptions ? "" : "-", p->rule);
	}
	lp_error err = {0};
	lp_staged *staged = NULL;
	lp_output *out = lp_output_open("-", LP_COMPRESS_AUTO, &err);
	int rc = out ? lp_output_write(out, s->str, s->len, &err) : err.status;
	if (out)
		rc = lp_output_stage(out, rc, &staged, &err);
	if (!rc)
		rc = lp_stage_publish(&staged, 1, &err);
	g_string_free(s, TRUE);
	if (rc)
		cli_fail(&err);
	return rc;
}

/* An option that no policy asked for would be ignored: a usage error. */
static bool check_applies(const sim_args *a, const sim_request *rq)
{
	bool fixed = false, variable = false;
	for (size_t k = 0; k < rq->npolicies; k++)
		*(fixed_space(rq->policies[k]) ? &fixed : &variable) = true;
	const char *option = NULL, *policies = NULL;
	char *names = NULL;
	if (a->frames && !fixed)
		option = "--frames", policies = names = lp_policy_names(fixed_space, " ", NULL);
	else if (a->window && !variable)
		option = "--window", policies = names = lp_policy_names(variable_space, ", ", " and ");
	if (option) {
		cli_usage_error("%s applies only to %s, and --policy names none of them%s", option,
				policies, a->policy ? "" : " (the default is lru)");
		g_free(names);
		return false;
	}
	lp_error err = {0};
	const lp_policy_info *row;
	const lp_policy_option *unwanted = lp_sim_options_unwanted(a->option_text, rq->policies,
								   rq->npolicies, &row);
	if (unwanted) {
		lp_sim_options_unwanted_fail(unwanted, row, !a->policy, &err);
		cli_usage_error("%s", err.msg);
	}
	return !unwanted;
}

static bool check_args(const sim_args *a, sim_request *rq)
{
	lp_error err = {0};
	if (lp_sim_parse_policies(a->policy ? a->policy : "lru", &rq->policies, &rq->npolicies,
				  &err) ||
	    lp_sim_list_parse("--frames", a->frames ? a->frames : "pow2", &rq->frames, &err) ||
	    lp_sim_list_parse("--window", a->window ? a->window : "pow2", &rq->windows, &err)) {
		cli_usage_error("%s", err.msg);
		return false;
	}
	if (!check_applies(a, rq) || !cli_threads_apply(a->threads, &rq->threads))
		return false;
	/* Every policy's options given are parsed by its row, wanted or not. */
	rq->settings = g_new0(lp_policy_settings, lp_npolicies);
	rq->opt.settings = rq->settings;
	if (lp_sim_options_parse(a->option_text, rq->settings, &err)) {
		cli_usage_error("%s", err.msg);
		return false;
	}
	if (a->faults) {
		if (rq->npolicies != 1 || rq->policies[0]->space != LP_SPACE_FIXED) {
			char *fixed = lp_policy_names(fixed_space, " ", NULL);
			cli_usage_error("--faults takes one fixed-space policy (%s)", fixed);
			g_free(fixed);
			return false;
		}
	}
	if (!cli_sample_apply(a->sample_rate, a->sample_pages, &rq->sample_rate,
			      &rq->sample_pages))
		return false;
	if (a->sample_rate || a->sample_pages) {
		lp_error err = {0};
		if (lp_sim_sampling_check(rq->policies, rq->npolicies, &err))
			return cli_usage_error("%s", err.msg), false;
		if (a->faults)
			return cli_usage_error("--faults does not go with --sample-rate or "
					       "--sample-pages"), false;
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
	uint64_t *next = rq->policies[0]->needs_next_use ? lp_trace_next_use(t) : NULL;
	lp_policy_params p;
	lp_sim_params(&rq->opt, rq->policies[0], frames, t, next, &p);
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

/* The CSV into out, 64 KiB at a time, row after row as the sizes come:
 * 0 or an lp_status with err set. The rows past a task's cap differ in
 * their size alone: the rest of a row is formatted once for each row
 * computed. */
static int write_csv(lp_output *out, const lp_sim_plan *plan, uint64_t n, lp_error *err)
{
	GString *csv = g_string_sized_new(1 << 16);
	g_string_append(csv, "policy,size,references,faults,miss_ratio,space_time\n");
	/* ",n,faults,miss_ratio,space_time\n": 3 counts, the ratio, 5 bytes. */
	char rest[3 * 20 + LP_FIXED6_DIGITS + 5];
	size_t rest_len = 0;
	int rc = 0;
	for (size_t k = 0; k < plan->ntasks && !rc; k++) {
		const lp_sim_task *task = &plan->tasks[k];
		const lp_sim_rows *rows = &plan->rows[k];
		lp_sim_size_walk w;
		lp_sim_size_walk_init(&w, rows->ranges, rows->nranges, rows->cap);
		uint64_t size;
		size_t s, formatted = SIZE_MAX;
		while (!rc && lp_sim_size_walk_next(&w, &size, &s)) {
			if (s != formatted) {
				/* Formatted by hand: printf was most of a row's cost. */
				char *p = rest;
				*p++ = ',';
				p += lp_fmt_decimal(p, n);
				*p++ = ',';
				p += lp_fmt_decimal(p, task->faults[s]);
				*p++ = ',';
				p += lp_fmt_fixed6(p, (double)task->faults[s] / (double)n);
				*p++ = ',';
				p += lp_fmt_decimal(p, task->space_time[s]);
				*p++ = '\n';
				rest_len = (size_t)(p - rest);
				formatted = s;
			}
			char digits[24];
			g_string_append(csv, task->policy->name);
			g_string_append_c(csv, ',');
			g_string_append_len(csv, digits, (gssize)lp_fmt_decimal(digits, size));
			g_string_append_len(csv, rest, (gssize)rest_len);
			if (csv->len >= 1 << 16) {
				rc = lp_output_write(out, csv->str, csv->len, err);
				g_string_truncate(csv, 0);
			}
		}
	}
	if (!rc)
		rc = lp_output_write(out, csv->str, csv->len, err);
	g_string_free(csv, TRUE);
	return rc;
}

/* §9: a curve that costs one simulation a size says so before it runs. */
static void tell_simulations(const sim_request *rq, const lp_sim_task *tasks, uint64_t n)
{
	uint64_t runs = 0;
	GString *names = g_string_new(NULL);
	for (size_t k = 0; k < rq->npolicies; k++) {
		const lp_policy_info *p = tasks[k].policy;
		if (p->curve || p->space != LP_SPACE_FIXED || (rq->opt.sample && lp_sim_miniature(p)))
			continue;
		runs += tasks[k].nsizes;
		g_string_append_printf(names, "%s%s", names->len ? ", " : "", p->name);
	}
	bool all = false;
	for (size_t k = 0; k < rq->frames.n; k++)
		all |= rq->frames.items[k].kind == LP_SIM_ALL;
	if (all && runs > 1)
		fprintf(stderr, "%s: %s: %" PRIu64 " simulations of %" PRIu64 " references each\n",
			cli_command(), names->str, runs, n);
	g_string_free(names, TRUE);
}

static int simulate(sim_request *rq, const lp_trace *t, const char *output,
		    const char *faults_path)
{
	lp_error err = {0};
	lp_sim_plan plan;
	int rc = lp_sim_plan_init(&plan, t, rq->policies, rq->npolicies, &rq->frames, &rq->windows,
				  rq->sample_rate, rq->sample_pages, &rq->opt, &err);
	if (rc == LP_EUSAGE)
		cli_usage_error("%s", err.msg);
	else if (rc)
		cli_fail(&err);
	uint64_t nframes = lp_sim_range_count(plan.ranges[0], plan.nranges[0]);
	if (!rc && faults_path && nframes > 1)
		rc = cli_usage_error("--faults takes one size, not the %" PRIu64 " sizes --frames "
				     "gives here", nframes);
	if (!rc && plan.sampled && rq->opt.sample_rate < 1 && plan.sample.pages < FEW_PAGES)
		fprintf(stderr, "%s: warning: only %" PRIu32 " pages sampled (R = %g): "
			"miniature curves want a few hundred or more\n", cli_command(),
			plan.sample.pages, rq->opt.sample_rate);
	lp_staged *staged[2] = {NULL, NULL};
	/* --faults' one policy: its one size; an empty stream has none, and
	 * no fault at any. */
	if (!rc && faults_path &&
	    (rc = run_faults(rq, t, plan.rows[0].nranges ? plan.rows[0].ranges[0].from : 1,
			     faults_path, &staged[1], &err)))
		cli_fail(&err);
	if (!rc) {
		if (!cli_quiet())
			tell_simulations(rq, plan.tasks, t->n);
		cli_progress *progress = cli_progress_new(cli_quiet());
		cli_progress_set_work(progress, "reference", "simulated");
		rq->opt.progress = progress ? cli_progress_update : NULL;
		rq->opt.progress_ctx = progress;
		lp_sim_run(t, plan.tasks, plan.ntasks, &rq->opt, rq->threads);
		cli_progress_free(progress);
		lp_output *out = lp_output_open(output, LP_COMPRESS_AUTO, &err);
		rc = out ? write_csv(out, &plan, t->n, &err) : err.status;
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
	lp_sim_plan_clear(&plan);
	return rc;
}

/* The LRU curve alone, or OPT's, needs no copy of the stream: its stack
 * distances are counted as the stream is read (LP_TRACE_LRU_ONLY,
 * LP_TRACE_OPT_ONLY). */
static unsigned trace_flags(const sim_request *rq, const sim_args *a)
{
	const lp_policy_info *lru = lp_policy_find("lru"), *opt = lp_policy_find("opt");
	bool one_curve = !a->faults && !rq->sample_rate && !rq->sample_pages,
	     lru_alone = one_curve, opt_alone = one_curve;
	for (size_t k = 0; k < rq->npolicies; k++) {
		lru_alone &= rq->policies[k] == lru;
		opt_alone &= rq->policies[k] == opt;
	}
	return (a->user_only ? LP_TRACE_USER_ONLY : 0) | (lru_alone ? LP_TRACE_LRU_ONLY : 0) |
	       (opt_alone ? LP_TRACE_OPT_ONLY : 0);
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
	if (a.list_policies) {
		if (argc != 1)
			cli_usage_error("--list-policies takes no argument, got %d", argc - 1);
		else
			rc = list_policies();
		goto out;
	}
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
	cli_progress *loading = cli_progress_new(cli_quiet());
	cli_progress_set_work(loading, "reference", "read");
	lp_progress hook = cli_progress_hook(loading);
	rc = cli_trace_load(argv[1], argc == 3 ? &job : NULL, trace_flags(&rq, &a), &hook, &t, &err);
	cli_progress_free(loading);
	if (rc) {
		cli_fail(&err);
		goto out;
	}
	if ((rc = lp_sim_check_space(&t, argv[1], &err)) ||
	    (rc = lp_sim_check_curves(&t, rq.policies, rq.npolicies, argv[1], &err)))
		cli_fail(&err);
	else
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
	for (size_t k = 0; k < lp_npolicies * LP_POLICY_OPTIONS_MAX; k++)
		g_free(a.option_text[k]);
	g_free(a.option_text);
	g_ptr_array_free(a.help, TRUE);
	g_free(rq.settings);
	g_free(a.sample_rate);
	g_free(a.sample_pages);
	g_free(a.threads);
	return rc;
}
