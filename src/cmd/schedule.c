/* laplace schedule: the tasks of a per-process directory under another
 * schedule (laplace-formats(5), "RE-SCHEDULING"). The engine is
 * src/sched/schedule.c, the directory's reader src/formats/taskdir.c; here
 * are options, outputs and the report. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "formats/forms.h"
#include "sched/schedule.h"
#include "pipeline/sinks.h"
#include "formats/taskdir.h"
#include "core/numbers.h"
#include "io/yamlout.h"

/* Descriptors kept for everything but task files: standard streams, the
 * output and report with their directories, index.yaml, slack. */
#define FD_RESERVE 16
#define SINK_BATCH 4096

/* The references of one output stream on their way to its basic sink. */
typedef struct stream_out {
	lp_output *out;
	lp_basic_sink *sink;
	lp_ref refs[SINK_BATCH];
	uint64_t canon[SINK_BATCH];
	size_t n;
} stream_out;

typedef struct outputs {
	stream_out *streams; /* one, or one per processor */
	unsigned nstreams;
	lp_staged *dir;      /* --per-cpu: the staged directory */
	int dir_fd;
} outputs;

static int stream_flush(stream_out *s, lp_error *err)
{
	int rc = s->n ? lp_basic_sink_ops.refs(s->sink, s->refs, s->canon, s->n, NULL, err) : 0;
	s->n = 0;
	return rc;
}

/* lp_sched_sink.refs: each reference to its processor's stream, or all
 * to the one stream. */
static int outputs_refs(void *ctx, const lp_sched_out *refs, size_t n, lp_error *err)
{
	outputs *o = ctx;
	if (o->nstreams == 1) {
		/* All to one stream: a batch at a time, no test per reference. */
		stream_out *s = &o->streams[0];
		while (n) {
			if (s->n == SINK_BATCH && stream_flush(s, err))
				return err->status;
			size_t k = MIN(n, (size_t)SINK_BATCH - s->n);
			for (size_t i = 0; i < k; i++) {
				s->refs[s->n + i].type = refs[i].type;
				s->canon[s->n + i] = refs[i].canonical;
			}
			s->n += k;
			refs += k;
			n -= k;
		}
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		stream_out *s = &o->streams[refs[i].cpu];
		if (s->n == SINK_BATCH && stream_flush(s, err))
			return err->status;
		s->refs[s->n].type = refs[i].type;
		s->canon[s->n++] = refs[i].canonical;
	}
	return 0;
}

static int stream_open(stream_out *s, int dir_fd, const char *path, enum lp_form form, lp_error *err)
{
	s->out = dir_fd >= 0 ? lp_output_open_in(dir_fd, path, LP_COMPRESS_NONE, err)
			     : lp_output_open(path, LP_COMPRESS_AUTO, err);
	if (!s->out)
		return err->status;
	s->sink = lp_basic_sink_new(s->out, false, form);
	return 0;
}

/* The outputs: path (NULL: standard output), or with per_cpu the
 * directory per_cpu holding cpu0 ... cpuK-1. */
static int outputs_open(outputs *o, const char *path, const char *per_cpu, unsigned cpus, bool force,
			enum lp_form form, lp_error *err)
{
	o->dir_fd = -1;
	if (!per_cpu) {
		o->nstreams = 1;
		o->streams = g_new0(stream_out, 1);
		return stream_open(&o->streams[0], -1, path, form, err);
	}
	struct stat st;
	if (lstat(per_cpu, &st) == 0 && !force)
		return lp_fail(err, LP_EUSAGE, "%s: already exists; use --force to replace it", per_cpu);
	o->dir = lp_stage_dir(AT_FDCWD, per_cpu, force);
	if (!o->dir) {
		int saved = errno;
		char *pattern = lp_tmp_pattern(per_cpu, true);
		lp_fail(err, LP_EIO, "cannot create %s: %s", pattern, g_strerror(saved));
		g_free(pattern);
		return err->status;
	}
	o->dir_fd = lp_staged_open_dir(o->dir);
	if (o->dir_fd < 0)
		return lp_fail(err, LP_EIO, "cannot open %s: %s", lp_staged_path(o->dir), g_strerror(errno));
	o->streams = g_new0(stream_out, cpus);
	for (unsigned i = 0; i < cpus; i++) {
		o->nstreams = i + 1;
		char name[32];
		snprintf(name, sizeof name, "cpu%u", i);
		if (stream_open(&o->streams[i], o->dir_fd, name, form, err))
			return err->status;
	}
	return 0;
}

/* Finish every stream (rc: how the run went) and stage them; the staged
 * items, the directory last, go to staged[] (nstreams + 1 entries). */
static int outputs_finish(outputs *o, int rc, lp_staged **staged, lp_error *err)
{
	for (unsigned i = 0; i < o->nstreams; i++) {
		stream_out *s = &o->streams[i];
		if (!rc)
			rc = stream_flush(s, err);
		if (!rc)
			rc = lp_basic_sink_ops.finish(s->sink, NULL, err);
		rc = lp_output_stage(s->out, rc, &staged[i], err);
		s->out = NULL;
	}
	staged[o->nstreams] = o->dir;
	o->dir = NULL;
	return rc;
}

static void outputs_free(outputs *o)
{
	for (unsigned i = 0; i < o->nstreams; i++) {
		lp_output_abort(o->streams[i].out);
		lp_basic_sink_free(o->streams[i].sink);
	}
	g_free(o->streams);
	if (o->dir_fd >= 0)
		close(o->dir_fd);
	lp_staged_discard(o->dir);
}

/* ---- the report ---- */

static int emit_report(yaml_emitter_t *em, const lp_sched_report *rep, const lp_sched_input *in)
{
	if (lp_yaml_pair(em, "policy", lp_sched_policy_names[rep->policy]) ||
	    lp_yaml_pair_u64(em, "quantum", rep->quantum) || lp_yaml_pair_u64(em, "cpus", rep->cpus) ||
	    lp_yaml_pair_u64(em, "ticks", rep->ticks) || lp_yaml_key(em, "cpu_stats") ||
	    lp_yaml_begin(em, true))
		return -1;
	for (unsigned i = 0; i < rep->cpus; i++)
		if (lp_yaml_begin_flow(em, false) || lp_yaml_pair_u64(em, "cpu", i) ||
		    lp_yaml_pair_u64(em, "references", rep->cpu[i].references) ||
		    lp_yaml_pair_u64(em, "idle_ticks", rep->cpu[i].idle_ticks) ||
		    lp_yaml_pair_u64(em, "slices", rep->cpu[i].slices) || lp_yaml_end(em, false))
			return -1;
	if (lp_yaml_end(em, true) || lp_yaml_key(em, "units") ||
	    (rep->nunits ? lp_yaml_begin(em, true) : lp_yaml_begin_flow(em, true)))
		return -1;
	for (size_t k = 0; k < rep->nunits; k++) {
		size_t u = rep->unit_order[k];
		const lp_sched_unit *unit = &in->units[u];
		const lp_sched_unit_stats *us = &rep->unit[u];
		if (lp_yaml_begin_flow(em, false) || lp_yaml_pair_u64(em, "pid", unit->pid) ||
		    lp_yaml_pair_u64(em, "tid", unit->tid) ||
		    lp_yaml_pair_u64(em, "incarnation", unit->incarnation) ||
		    lp_yaml_pair_u64(em, "references", us->references) ||
		    lp_yaml_pair_u64(em, "slices", us->slices))
			return -1;
		if (us->references && (lp_yaml_pair_u64(em, "first_tick", us->first_tick) ||
				       lp_yaml_pair_u64(em, "last_tick", us->last_tick)))
			return -1;
		if (lp_yaml_end(em, false))
			return -1;
	}
	return lp_yaml_end(em, true);
}

/* The report (laplace-formats(5), "RE-SCHEDULING"), through the one YAML emitter. */
static GString *report_yaml(const lp_sched_report *rep, const lp_sched_input *in, lp_error *err)
{
	GString *y = g_string_new(NULL);
	yaml_emitter_t em;
	bool failed = lp_yaml_start(&em, y) || emit_report(&em, rep, in);
	if (lp_yaml_finish(&em) || failed) { /* finish frees the emitter in any case */
		g_string_free(y, TRUE);
		lp_fail(err, LP_EIO, "cannot write the report: YAML emitter failed");
		return NULL;
	}
	return y;
}

/* Letters for tasks in the picture, in report order; '*' past them. */
static const char task_letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* One line per processor, as drmemtrace's schedule_stats draws it: a
 * letter per slice (its task's), '_' for a stretch of idle ticks; then
 * the legend. */
static GString *report_picture(const lp_sched_report *rep, const lp_sched_input *in)
{
	GString *p = g_string_new(NULL);
	char *letter = g_new(char, in->nunits ? in->nunits : 1);
	GString *legend = g_string_new(NULL);
	size_t ntasks = 0;
	for (size_t k = 0; k < rep->nunits; k++) {
		size_t u = rep->unit_order[k];
		const lp_sched_unit *unit = &in->units[u];
		letter[u] = 0;
		for (size_t j = 0; j < k && !letter[u]; j++) {
			const lp_sched_unit *other = &in->units[rep->unit_order[j]];
			if (other->pid == unit->pid && other->tid == unit->tid)
				letter[u] = letter[rep->unit_order[j]];
		}
		if (letter[u])
			continue;
		letter[u] = ntasks < sizeof task_letters - 1 ? task_letters[ntasks] : '*';
		if (ntasks < sizeof task_letters - 1)
			g_string_append_printf(legend, " %c=%" PRIx64 "/%" PRIx64, letter[u], unit->pid,
					       unit->tid);
		ntasks++;
	}
	g_string_append_printf(p, "%s schedule, %u CPU%s, %" PRIu64 " tick%s\n",
			       lp_sched_policy_names[rep->policy], rep->cpus, rep->cpus == 1 ? "" : "s",
			       rep->ticks, rep->ticks == 1 ? "" : "s");
	for (unsigned i = 0; i < rep->cpus; i++) {
		g_string_append_printf(p, "Core #%u schedule: ", i);
		uint64_t next_tick = 0;
		for (size_t s = 0; s < rep->nslices[i]; s++) {
			const lp_sched_slice *sl = &rep->slices[i][s];
			if (sl->first_tick > next_tick)
				g_string_append_c(p, '_');
			g_string_append_c(p, letter[sl->unit]);
			next_tick = sl->last_tick + 1;
		}
		if (rep->cpu[i].slices > rep->nslices[i])
			g_string_append_printf(p, "... (%" PRIu64 " slice%s)", rep->cpu[i].slices,
					       rep->cpu[i].slices == 1 ? "" : "s");
		else if (next_tick < rep->ticks)
			g_string_append_c(p, '_');
		g_string_append_c(p, '\n');
	}
	g_string_append_printf(p, "Tasks (pid/tid):%s%s\n", legend->str,
			       ntasks > sizeof task_letters - 1 ? " *=others" : "");
	g_string_append(p, rep->policy == LP_SCHED_AS_TRACED
			? "_: references of the kernel or of no task\n" : "_: idle\n");
	g_string_free(legend, TRUE);
	g_free(letter);
	return p;
}

/* ---- the command ---- */

typedef struct schedule_request {
	const char *dir, *output, *per_cpu, *report;
	lp_sched_options opt;
	enum lp_form form;
	bool user_only, force, picture;
	unsigned threads;
} schedule_request;

/* How many task files may be open at once beside the run's outputs. */
static unsigned open_file_budget(unsigned outputs)
{
	struct rlimit rl;
	uint64_t limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
		? rl.rlim_cur : 1024;
	uint64_t reserve = FD_RESERVE + 2 * (uint64_t)outputs; /* a file and its directory each */
	if (limit <= reserve)
		return 0;
	return (unsigned)MIN(limit - reserve, (uint64_t)LP_TASKDIR_MAX_OPEN);
}

static int schedule_run(const schedule_request *rq, lp_error *err)
{
	unsigned nout = rq->per_cpu ? rq->opt.cpus : 1;
	lp_taskdir_options topt = {
		.unit_streams = rq->opt.policy != LP_SCHED_AS_TRACED,
		.user_only = rq->user_only,
		.max_open = open_file_budget(nout),
		.threads = rq->threads,
		.slice = rq->opt.quantum,
	};
	if (!topt.max_open)
		return lp_fail(err, LP_EUSAGE, "too few file descriptors (ulimit -n) for %u output%s",
			       nout, nout == 1 ? "" : "s");
	struct stat st;
	if (stat(rq->dir, &st) < 0)
		return lp_fail(err, LP_EIO, "cannot open %s: %s", rq->dir, g_strerror(errno));
	char *index = g_build_filename(rq->dir, "index.yaml", NULL);
	bool no_index = !S_ISDIR(st.st_mode) || (access(index, F_OK) < 0 && errno == ENOENT);
	g_free(index);
	if (no_index)
		return lp_fail(err, LP_EINPUT, "%s: not a per-process directory: %s", rq->dir,
			       S_ISDIR(st.st_mode) ? "no index.yaml" : "not a directory");
	lp_taskdir *t = lp_taskdir_open(rq->dir, &topt, err);
	if (!t)
		return err->status;
	const char *const *inputs = lp_taskdir_paths(t);
	size_t nin = 0;
	while (inputs[nin])
		nin++;
	const char *outs[] = {rq->per_cpu ? rq->per_cpu : rq->output, rq->report};
	int rc = lp_check_outputs(inputs, nin, outs, 2, err);
	if (rc) {
		lp_taskdir_close(t);
		return rc;
	}
	outputs o = {0};
	lp_sched_report rep = {0};
	const lp_sched_input *in = lp_taskdir_input(t);
	rc = outputs_open(&o, rq->output, rq->per_cpu, rq->opt.cpus, rq->force, rq->form, err);
	if (!rc) {
		lp_sched_sink sink = {.ctx = &o, .refs = outputs_refs};
		rc = lp_schedule_run(in, &rq->opt, &sink, &rep, err);
	}
	lp_staged **staged = g_new0(lp_staged *, o.nstreams + 2);
	rc = outputs_finish(&o, rc, staged, err);
	if (!rc && rq->report) {
		GString *yaml = report_yaml(&rep, in, err);
		lp_output *out = yaml ? lp_output_open(rq->report, LP_COMPRESS_NONE, err) : NULL;
		rc = out ? lp_output_stage(out, lp_output_write(out, yaml->str, yaml->len, err),
					   &staged[o.nstreams + 1], err)
			 : err->status;
		if (yaml)
			g_string_free(yaml, TRUE);
	}
	if (!rc)
		rc = lp_stage_publish(staged, o.nstreams + 2, err);
	else
		for (unsigned i = 0; i < o.nstreams + 2; i++)
			lp_staged_discard(staged[i]);
	if (!rc && rq->picture) {
		GString *picture = report_picture(&rep, in);
		fputs(picture->str, stderr);
		g_string_free(picture, TRUE);
	}
	g_free(staged);
	if (rep.cpu)
		lp_sched_report_free(&rep);
	outputs_free(&o);
	lp_taskdir_close(t);
	return rc;
}

int cmd_schedule(int argc, char **argv)
{
	cli_set_command("laplace schedule");
	gchar *policy = NULL, *quantum = NULL, *cpus = NULL, *seed = NULL, *format = NULL;
	gchar *output = NULL, *per_cpu = NULL, *report = NULL;
	gboolean renumber = FALSE, user_only = FALSE, force = FALSE, picture = FALSE;
	gchar *threads = NULL;
	GOptionEntry entries[] = {
		{"policy", 0, 0, G_OPTION_ARG_STRING, &policy,
		 "as-traced (default), rr or random", "POLICY"},
		{"quantum", 0, 0, G_OPTION_ARG_STRING, &quantum,
		 "rr, random: references per slice, at least 1 (default 10000)", "Q"},
		{"cpus", 0, 0, G_OPTION_ARG_STRING, &cpus,
		 "rr, random: processors, 1 to 1024 (default 1)", "K"},
		{"seed", 0, 0, G_OPTION_ARG_STRING, &seed,
		 "random: seed of splitmix64 (default 0)", "N"},
		{"renumber", 0, 0, G_OPTION_ARG_NONE, &renumber,
		 "Number pages anew in the order the new schedule first references them", NULL},
		{"user-only", 0, 0, G_OPTION_ARG_NONE, &user_only,
		 "Leave kernel references (R W I) out", NULL},
		{"format", 0, 0, G_OPTION_ARG_STRING, &format,
		 "Output form: basic (default) or bin", "FORM"},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
		 "Write the stream to FILE (default: standard output)", "FILE"},
		{"per-cpu", 0, 0, G_OPTION_ARG_FILENAME, &per_cpu,
		 "Write one stream per processor, DIR/cpu0 ...", "DIR"},
		{"force", 0, 0, G_OPTION_ARG_NONE, &force,
		 "Replace an existing --per-cpu directory", NULL},
		{"report", 0, 0, G_OPTION_ARG_FILENAME, &report,
		 "Write the schedule's report as YAML to FILE", "FILE"},
		{"picture", 0, 0, G_OPTION_ARG_NONE, &picture,
		 "Draw the schedule on standard error (the default when it is a terminal)", NULL},
		{"threads", 'j', 0, G_OPTION_ARG_STRING, &threads,
		 "Parse task files in N threads ahead of the schedule; 1: all in one (default: the "
		 "processors available)", "N"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("DIR");
	g_option_context_set_summary(ctx,
		"Write the references of the tasks of the per-process directory DIR\n"
		"(laplace merge --per-process, one file per task, plain or compressed) as\n"
		"a basic merge stream, interleaved as traced or under another schedule:\n"
		"round robin or random over K processors with a quantum of Q references.\n"
		"Page numbers are those of DIR's files (--renumber: new ones).\n"
		"See laplace-schedule(1) and laplace-formats(5), RE-SCHEDULING.");
	g_option_context_set_description(ctx,
		"Examples:\n"
		"  laplace schedule pp > as-traced.basic\n"
		"  laplace schedule --policy rr --quantum 1000 --cpus 4 --report r.yaml -o rr.basic pp\n");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);

	int rc = LP_EUSAGE;
	schedule_request rq = {
		.opt = {.policy = LP_SCHED_AS_TRACED, .quantum = LP_SCHED_DEFAULT_QUANTUM, .cpus = 1},
		.form = LP_FORM_BASIC,
	};
	uint64_t value;
	if (!cli_parse_one_input(ctx, &argc, &argv))
		goto out;
	if (policy && (int)(rq.opt.policy = lp_sched_policy_parse(policy)) < 0) {
		cli_usage_error("--policy must be as-traced, rr or random, not '%s'", policy);
		goto out;
	}
	if (quantum && !lp_parse_decimal(quantum, 1, UINT64_MAX, &rq.opt.quantum)) {
		cli_usage_error("--quantum must be a decimal number of at least 1, not '%s'", quantum);
		goto out;
	}
	if (cpus && !lp_parse_decimal(cpus, 1, LP_SCHED_MAX_CPUS, &value)) {
		cli_usage_error("--cpus must be a decimal number from 1 to %d, not '%s'",
				LP_SCHED_MAX_CPUS, cpus);
		goto out;
	}
	rq.opt.cpus = cpus ? (unsigned)value : 1;
	if (seed && !lp_parse_decimal(seed, 0, UINT64_MAX, &rq.opt.seed)) {
		cli_usage_error("--seed must be a decimal number, not '%s'", seed);
		goto out;
	}
	if (format && ((int)(rq.form = lp_form_parse(format)) < 0 ||
		       (rq.form != LP_FORM_BASIC && rq.form != LP_FORM_BIN))) {
		cli_usage_error("--format must be basic or bin, not '%s'", format);
		goto out;
	}
	if (!cli_threads_apply(threads, &rq.threads))
		goto out;
	if (output && per_cpu) {
		cli_usage_error("-o and --per-cpu exclude each other");
		goto out;
	}
	if (force && !per_cpu) {
		cli_usage_error("--force goes with --per-cpu");
		goto out;
	}
	if (rq.opt.policy == LP_SCHED_AS_TRACED)
		rq.opt.cpus = 1; /* one stream, in timestamp order */
	rq.dir = argv[1];
	rq.output = output;
	rq.per_cpu = per_cpu;
	rq.report = report;
	rq.opt.renumber = renumber;
	rq.user_only = user_only;
	rq.force = force;
	rq.picture = picture || isatty(STDERR_FILENO);
	lp_error err = {0};
	rc = schedule_run(&rq, &err);
	if (rc)
		cli_fail(&err);
out:
	g_option_context_free(ctx);
	g_free(policy);
	g_free(threads);
	g_free(quantum);
	g_free(cpus);
	g_free(seed);
	g_free(format);
	g_free(output);
	g_free(per_cpu);
	g_free(report);
	return rc;
}
