/* laplace schedule: the tasks of a per-process directory under another
 * schedule (laplace-formats(5), "RE-SCHEDULING"). The engine is
 * src/sched/ (publish.h: the run and its outputs; schedreport.h: the picture),
 * the directory's reader src/formats/taskdir.c; here are the options and
 * the picture printed. */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/progress.h"
#include "core/numbers.h"
#include "formats/forms.h"
#include "formats/registry.h"
#include "sched/publish.h"
#include "sched/schedreport.h"
#include "sched/sweep.h"

/* The options as given (NULL: not given). */
typedef struct schedule_options {
	gchar *policy, *quantum, *cpus, *seed, *format, *threads;
	gchar *output, *per_cpu, *report;
	gchar *memory, *replacement, *fault_ticks;
	gboolean renumber, user_only, force, picture;
	char *forms; /* the registry's forms that need no address */
} schedule_options;

/* --memory's sizes: one, or a sweep's list (9.4.1). */
typedef struct memory_sizes {
	uint64_t *sizes;
	size_t n;
} memory_sizes;

/* Check the options of a memory (laplace-formats(5) 9.4.7), before any
 * input is read, and fill rq and sizes; on a usage error print it and
 * return false. */
static bool check_memory(const schedule_options *o, lp_schedule_request *rq, memory_sizes *sizes)
{
	if (!o->memory) {
		if (o->replacement || o->fault_ticks)
			cli_usage_error("%s goes with --memory",
					o->replacement ? "--replacement" : "--fault-ticks");
		return !o->replacement && !o->fault_ticks;
	}
	if (rq->opt.policy == LP_SCHED_AS_TRACED) {
		cli_usage_error("--memory goes with --policy rr or random");
		return false;
	}
	lp_error err = {0};
	bool bad = lp_sweep_memory_parse(o->memory, &sizes->sizes, &sizes->n, &err);
	const lp_policy_info *replacement = lp_policy_find("lru");
	if (bad)
		cli_usage_error("%s", err.msg);
	else if (o->replacement && !(replacement = lp_sched_replacement_find(o->replacement))) {
		char *names = lp_sched_replacement_names();
		cli_usage_error("--replacement must be %s, not '%s'", names, o->replacement);
		g_free(names);
	}
	else if (!cli_decimal_apply("--fault-ticks", o->fault_ticks, 1, LP_SCHED_MAX_MEMORY,
				    &rq->opt.fault_ticks))
		; /* said */
	else if (sizes->n > 1 && (o->report || o->per_cpu || o->renumber ||
				  (o->format && rq->form != LP_FORM_BASIC)))
		cli_usage_error("a sweep (--memory with several sizes) writes its table only: not with %s%s",
				o->report ? "--report" : o->per_cpu ? "--per-cpu" : o->renumber ? "--renumber"
				: "--format ", o->report || o->per_cpu || o->renumber ? "" : o->format);
	else {
		rq->opt.replacement = replacement;
		rq->opt.memory = sizes->n == 1 ? sizes->sizes[0] : 0;
		return true;
	}
	return false;
}

/* Check the options and fill rq (and sizes, with --memory); on a usage
 * error print it and return false. */
static bool check_options(const schedule_options *o, lp_schedule_request *rq, memory_sizes *sizes)
{
	uint64_t cpus = 1;
	if (o->policy && (int)(rq->opt.policy = lp_sched_policy_parse(o->policy)) < 0)
		cli_usage_error("--policy must be as-traced, rr or random, not '%s'", o->policy);
	else if (!cli_decimal_apply("--quantum", o->quantum, 1, UINT64_MAX, &rq->opt.quantum) ||
		 !cli_decimal_apply("--cpus", o->cpus, 1, LP_SCHED_MAX_CPUS, &cpus) ||
		 !cli_decimal_apply("--seed", o->seed, 0, UINT64_MAX, &rq->opt.seed))
		return false;
	else if (!cli_form_apply(o->format, false, &rq->form))
		return false;
	else if (!cli_threads_apply(o->threads, &rq->threads))
		return false;
	else if (!check_memory(o, rq, sizes))
		return false;
	else if (o->output && o->per_cpu)
		cli_usage_error("-o and --per-cpu exclude each other");
	else if (o->force && !o->per_cpu)
		cli_usage_error("--force goes with --per-cpu");
	else {
		/* as-traced: one stream, in timestamp order */
		rq->opt.cpus = rq->opt.policy == LP_SCHED_AS_TRACED ? 1 : (unsigned)cpus;
		rq->opt.renumber = o->renumber;
		rq->output = o->output;
		rq->per_cpu = o->per_cpu;
		rq->report = o->report;
		rq->user_only = o->user_only;
		rq->force = o->force;
		return true;
	}
	return false;
}

/* The schedule, run; its picture on standard error. */
static int schedule(const lp_schedule_request *rq, bool picture)
{
	lp_error err = {0};
	lp_sched_report rep;
	if (lp_schedule_write(rq, &rep, &err))
		return cli_fail(&err);
	if (picture) {
		GString *p = lp_sched_report_picture(&rep);
		fputs(p->str, stderr);
		g_string_free(p, TRUE);
	}
	lp_sched_report_free(&rep);
	return 0;
}

/* The sweep (9.4.6): its table. */
static int sweep(const lp_schedule_request *rq, const memory_sizes *sizes)
{
	lp_error err = {0};
	lp_sweep_plan sw = {
		.dir = rq->dir,
		.output = rq->output,
		.opt = rq->opt,
		.memory = sizes->sizes,
		.nmemory = sizes->n,
		.user_only = rq->user_only,
		.threads = rq->threads,
	};
	cli_progress *progress = cli_progress_new(cli_quiet());
	cli_progress_set_work(progress, "schedule", NULL);
	sw.progress = cli_progress_hook(progress);
	int rc = lp_schedule_sweep(&sw, &err);
	cli_progress_free(progress);
	return rc ? cli_fail(&err) : 0;
}

int cmd_schedule(int argc, char **argv)
{
	cli_set_command("laplace schedule");
	schedule_options o = {.forms = lp_form_names_list(false)};
	char *format_help = g_strdup_printf("Output form: %s (default basic)", o.forms);
	char *replacements = lp_sched_replacement_names();
	char *replacement_help = g_strdup_printf("With --memory: %s (default lru)", replacements);
	g_free(replacements);
	GOptionEntry entries[] = {
		{"policy", 0, 0, G_OPTION_ARG_STRING, &o.policy,
		 "as-traced (default), rr or random", "POLICY"},
		{"quantum", 0, 0, G_OPTION_ARG_STRING, &o.quantum,
		 "rr, random: references per slice, at least 1 (default 10000)", "Q"},
		{"cpus", 0, 0, G_OPTION_ARG_STRING, &o.cpus,
		 "rr, random: processors, 1 to 1024 (default 1)", "K"},
		{"seed", 0, 0, G_OPTION_ARG_STRING, &o.seed,
		 "random: seed of splitmix64 (default 0)", "N"},
		{"renumber", 0, 0, G_OPTION_ARG_NONE, &o.renumber,
		 "Number pages anew in the order the new schedule first references them", NULL},
		{"user-only", 0, 0, G_OPTION_ARG_NONE, &o.user_only,
		 "Leave kernel references (R W I) out", NULL},
		{"format", 0, 0, G_OPTION_ARG_STRING, &o.format, format_help, "FORM"},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output,
		 "Write the stream to FILE (default: standard output)", "FILE"},
		{"per-cpu", 0, 0, G_OPTION_ARG_FILENAME, &o.per_cpu,
		 "Write one stream per processor, DIR/cpu0 ...", "DIR"},
		{"force", 0, 0, G_OPTION_ARG_NONE, &o.force,
		 "Replace an existing --per-cpu directory", NULL},
		{"report", 0, 0, G_OPTION_ARG_FILENAME, &o.report,
		 "Write the schedule's report as YAML to FILE", "FILE"},
		{"memory", 0, 0, G_OPTION_ARG_STRING, &o.memory,
		 "rr, random: a memory of M frames shared by the tasks, where a fault blocks its task "
		 "(M1,M2,...: a sweep, its table as CSV)", "M"},
		{"replacement", 0, 0, G_OPTION_ARG_STRING, &o.replacement,
		 replacement_help, "POLICY"},
		{"fault-ticks", 0, 0, G_OPTION_ARG_STRING, &o.fault_ticks,
		 "With --memory: ticks a page takes to come in (default 1000)", "F"},
		{"picture", 0, 0, G_OPTION_ARG_NONE, &o.picture,
		 "Draw the schedule on standard error (the default when it is a terminal, unless -q)",
		 NULL},
		{"threads", 'j', 0, G_OPTION_ARG_STRING, &o.threads,
		 "Parse task files in N threads ahead of the schedule, and write the output in one "
		 "more; 1: all in one (default: the processors available)", "N"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("DIR");
	g_option_context_set_summary(ctx,
		"Write the references of the tasks of the per-process directory DIR\n"
		"(laplace merge --per-process, one file per task, plain or compressed) as\n"
		"a basic merge stream, interleaved as traced or under another schedule:\n"
		"round robin or random over K processors with a quantum of Q references,\n"
		"optionally sharing a memory of M page frames in which a fault blocks its\n"
		"task for F ticks (--memory M1,M2,...: a thrashing curve as a CSV table).\n"
		"Page numbers are those of DIR's files (--renumber: new ones).\n"
		"See laplace-schedule(1) and laplace-formats(5), RE-SCHEDULING.");
	g_option_context_set_description(ctx,
		"Examples:\n"
		"  laplace schedule pp > as-traced.basic\n"
		"  laplace schedule --policy rr --quantum 1000 --cpus 4 --report r.yaml -o rr.basic pp\n"
		"  laplace schedule --policy rr --memory 64,128,256,512 --fault-ticks 100 pp > sweep.csv\n");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);
	cli_add_quiet_option(ctx);

	int rc = LP_EUSAGE;
	lp_schedule_request rq = {
		.opt = {.policy = LP_SCHED_AS_TRACED, .quantum = LP_SCHED_DEFAULT_QUANTUM, .cpus = 1,
			.fault_ticks = LP_SCHED_DEFAULT_FAULT_TICKS},
		.form = LP_FORM_BASIC,
	};
	memory_sizes sizes = {0};
	if (cli_parse_one_input(ctx, &argc, &argv) && check_options(&o, &rq, &sizes)) {
		rq.dir = argv[1];
		rc = sizes.n > 1 ? sweep(&rq, &sizes)
				 : schedule(&rq, o.picture || (!cli_quiet() && isatty(STDERR_FILENO)));
	}
	g_free(sizes.sizes);
	g_free(o.memory);
	g_free(o.replacement);
	g_free(o.fault_ticks);
	g_option_context_free(ctx);
	g_free(o.policy);
	g_free(o.threads);
	g_free(o.quantum);
	g_free(o.cpus);
	g_free(o.seed);
	g_free(o.format);
	g_free(o.output);
	g_free(o.per_cpu);
	g_free(o.report);
	g_free(o.forms);
	g_free(format_help);
	g_free(replacement_help);
	return rc;
}
