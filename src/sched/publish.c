/* laplace schedule's outputs: streams, report, publication. */
#include "sched/publish.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/taskdir.h"
#include "io/staging.h"
#include "formats/forms.h"
#include "sched/run.h"
#include "sched/report.h"

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

typedef struct outputs_ready_ctx {
	const lp_schedule_request *rq;
	outputs *o;
} outputs_ready_ctx;

/* lp_sched_dir_options.ready: the outputs must not replace a file the
 * run reads; then they are opened. */
static int outputs_ready(void *ctx, const lp_sched_input *in, const char *const *inputs,
			 lp_error *err)
{
	(void)in;
	const outputs_ready_ctx *r = ctx;
	const lp_schedule_request *rq = r->rq;
	size_t nin = 0;
	while (inputs[nin])
		nin++;
	const char *outs[] = {rq->per_cpu ? rq->per_cpu : rq->output, rq->report};
	int rc = lp_check_outputs(inputs, nin, outs, 2, err);
	if (!rc)
		rc = outputs_open(r->o, rq->output, rq->per_cpu, rq->opt.cpus, rq->force, rq->form, err);
	return rc;
}

/* A directory that is not a per-process one, said as such rather than
 * as the first file it lacks. */
static int check_directory(const char *dir, lp_error *err)
{
	struct stat st;
	if (stat(dir, &st) < 0)
		return lp_fail(err, LP_EIO, "cannot open %s: %s", dir, g_strerror(errno));
	char *index = g_build_filename(dir, "index.yaml", NULL);
	bool no_index = !S_ISDIR(st.st_mode) || (access(index, F_OK) < 0 && errno == ENOENT);
	g_free(index);
	if (no_index)
		return lp_fail(err, LP_EINPUT, "%s: not a per-process directory: %s", dir,
			       S_ISDIR(st.st_mode) ? "no index.yaml" : "not a directory");
	return 0;
}

/* Stage the report (already run) beside the streams. */
static int report_stage(const char *path, const lp_sched_report *rep, lp_staged **staged,
			lp_error *err)
{
	GString *yaml = lp_sched_report_yaml(rep, err);
	lp_output *out = yaml ? lp_output_open(path, LP_COMPRESS_NONE, err) : NULL;
	int rc = out ? lp_output_stage(out, lp_output_write(out, yaml->str, yaml->len, err), staged, err)
		     : err->status;
	if (yaml)
		g_string_free(yaml, TRUE);
	return rc;
}

int lp_schedule_write(const lp_schedule_request *rq, lp_sched_report *rep, lp_error *err)
{
	unsigned nout = rq->per_cpu ? rq->opt.cpus : 1;
	outputs o = {0};
	lp_sched_dir_options dopt = {
		.sched = rq->opt,
		.user_only = rq->user_only,
		.max_open = open_file_budget(nout),
		.threads = rq->threads,
		.ready = outputs_ready,
		.ready_ctx = &(outputs_ready_ctx){.rq = rq, .o = &o},
	};
	memset(rep, 0, sizeof *rep);
	if (!dopt.max_open)
		return lp_fail(err, LP_EUSAGE, "too few file descriptors (ulimit -n) for %u output%s",
			       nout, nout == 1 ? "" : "s");
	int rc = check_directory(rq->dir, err);
	if (rc)
		return rc;
	lp_sched_sink sink = {.ctx = &o, .refs = outputs_refs};
	rc = lp_sched_dir_run(rq->dir, &dopt, &sink, rep, err);
	lp_staged **staged = g_new0(lp_staged *, o.nstreams + 2);
	rc = outputs_finish(&o, rc, staged, err);
	if (!rc && rq->report)
		rc = report_stage(rq->report, rep, &staged[o.nstreams + 1], err);
	if (!rc)
		rc = lp_stage_publish(staged, o.nstreams + 2, err);
	else
		for (unsigned i = 0; i < o.nstreams + 2; i++)
			lp_staged_discard(staged[i]);
	g_free(staged);
	outputs_free(&o);
	if (rc && rep->cpu)
		lp_sched_report_free(rep);
	return rc;
}
