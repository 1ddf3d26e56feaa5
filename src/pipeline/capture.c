/* lp_capture: the merge pipeline turned inside out, so that its caller
 * pulls merged references instead of a sink receiving them.
 *
 * The capture is the pipeline's sink. Its refs() only notes where the run
 * of references it is handed lies (the pipeline's own batch, valid until
 * the next step); lp_capture_read copies from there into the caller's
 * array and steps the pipeline again once the run is used up. Nothing is
 * allocated per reference. */
#include "laplace/laplace.h"

#include <stddef.h>
#include <string.h>

#include "core/merge.h"
#include "formats/refio.h"
#include "pipeline/job.h"

/* The layout of lp_merged_ref that the Python module's dtype copies
 * (python/laplace, MERGED_REF; tests/python checks the same offsets). */
_Static_assert(offsetof(lp_merged_ref, type) == 0 && offsetof(lp_merged_ref, length) == 1 &&
		       offsetof(lp_merged_ref, vas) == 8 && offsetof(lp_merged_ref, address) == 16 &&
		       offsetof(lp_merged_ref, timestamp) == 24 &&
		       offsetof(lp_merged_ref, canonical) == 32 && offsetof(lp_merged_ref, pid) == 40 &&
		       offsetof(lp_merged_ref, tid) == 48 && sizeof(lp_merged_ref) == 56,
	       "lp_merged_ref's layout is the ABI's: change it only with the soname");

struct lp_capture {
	lp_run run;      /* its pipeline is stepped: no threads */
	lp_pipeline_state *steps;
	bool user_only;
	/* The run handed over last: run_refs[run_pos, run_n) are still to be
	 * read, all made by one task (or none). */
	const lp_ref *run_refs;
	const uint64_t *run_canon;
	size_t run_pos, run_n;
	uint64_t run_pid, run_tid;
	bool finished;   /* the pipeline has nothing more */
	lp_error failed; /* once status is set, what every read returns */
};

static int capture_refs(void *ctx, const lp_ref *refs, const uint64_t *canon, size_t n,
			const lp_task_id *who, lp_error *err)
{
	(void)err;
	lp_capture *c = ctx;
	c->run_refs = refs;
	c->run_canon = canon;
	c->run_pos = 0;
	c->run_n = n;
	c->run_pid = who ? who->pid : LP_NO_TASK;
	c->run_tid = who ? who->tid : LP_NO_TASK;
	return 0;
}

static int capture_event(void *ctx, const lp_event *ev, const lp_event_route *route,
			 lp_error *err)
{
	(void)ctx, (void)ev, (void)route, (void)err;
	return 0; /* the merge core has applied it; nothing to hand on */
}

static int capture_finish(void *ctx, const lp_stats *stats, lp_error *err)
{
	(void)ctx, (void)stats, (void)err;
	return 0; /* the merge core keeps the statistics */
}

static const lp_sink capture_sink_ops = {
	.refs = capture_refs,
	.event = capture_event,
	.finish = capture_finish,
};

/* The options' layouts this library knows: one, so far. When the
 * structure grows, a smaller size will be an older caller's, whose fields
 * go over the defaults (laplace.h, the ABI). */
static bool options_size_known(size_t size)
{
	return size == sizeof(lp_capture_options);
}

void lp_capture_options_init_sized(lp_capture_options *opt, size_t size)
{
	if (!opt)
		return;
	if (!options_size_known(size)) {
		/* Recorded alone, for lp_capture_open to refuse. */
		if (size >= sizeof opt->size)
			opt->size = size;
		return;
	}
	*opt = (lp_capture_options){
		.size = size,
		.ref_format = LP_REF_AUTO,
		.endian = LP_LITTLE,
		.page_offset = LP_PAGE_OFFSET_BY_WIDTH,
	};
}

static int check_options(const char *ref, const char *kern, const lp_capture_options *opt,
			 lp_error *err)
{
	if (!ref)
		return lp_fail(err, LP_EUSAGE, "lp_capture_open: argument ref: NULL");
	if (!kern)
		return lp_fail(err, LP_EUSAGE, "lp_capture_open: argument kern: NULL");
	if (!options_size_known(opt->size))
		return lp_fail(err, LP_EUSAGE, "options: field size: %zu is not the size of an "
			       "lp_capture_options (%zu bytes): not set up by lp_capture_options_init, "
			       "or from a newer laplace.h than this library's (%d.%d.%d)", opt->size,
			       sizeof *opt, LP_VERSION_MAJOR, LP_VERSION_MINOR, LP_VERSION_PATCH);
	if (!strcmp(ref, "-") && !strcmp(kern, "-"))
		return lp_fail(err, LP_EUSAGE, "the reference and kernel traces cannot both be "
			       "standard input");
	if (lp_ref_format_check((int)opt->ref_format, "options: field ref_format", err))
		return err->status;
	if (opt->endian != LP_LITTLE && opt->endian != LP_BIG)
		return lp_fail(err, LP_EUSAGE, "options: field endian: %d is not LP_LITTLE or LP_BIG",
			       (int)opt->endian);
	return 0;
}

lp_capture *lp_capture_open(const char *ref, const char *kern, const lp_capture_options *opt,
			    lp_error *err)
{
	lp_error dropped = {0}; /* where an unwanted message goes */
	if (!err)
		err = &dropped;
	lp_capture_options defaults;
	if (!opt) {
		lp_capture_options_init(&defaults);
		opt = &defaults;
	}
	if (check_options(ref, kern, opt, err))
		return NULL;
	lp_merge_job job;
	lp_merge_job_init(&job);
	job.reference = ref;
	job.kernel = kern;
	job.ref_format = opt->ref_format;
	job.endian = opt->endian;
	if (opt->page_offset != LP_PAGE_OFFSET_BY_WIDTH) {
		job.page_offset = opt->page_offset;
		job.page_offset_set = true;
	}
	job.strict = opt->strict;
	job.warn = opt->warn;
	job.warn_ctx = opt->warn_ctx;
	lp_capture *c = g_new0(lp_capture, 1);
	c->user_only = opt->user_only;
	if (lp_run_open(&c->run, &job, err)) {
		g_free(c);
		return NULL;
	}
	c->run.pipeline.sink = &capture_sink_ops;
	c->run.pipeline.sink_ctx = c;
	c->steps = lp_pipeline_start(&c->run.pipeline);
	return c;
}

/* Copy what is left of the current run into out (room entries at most);
 * returns how many were written. */
static size_t take_run(lp_capture *c, lp_merged_ref *out, size_t room)
{
	size_t k = 0;
	while (k < room && c->run_pos < c->run_n) {
		const lp_ref *r = &c->run_refs[c->run_pos];
		uint64_t canonical = c->run_canon[c->run_pos];
		c->run_pos++;
		if (c->user_only && lp_ref_is_kernel(r->type))
			continue;
		out[k++] = (lp_merged_ref){
			.type = r->type,
			.length = r->length,
			.vas = r->vas,
			.address = r->address,
			.timestamp = r->timestamp,
			.canonical = canonical,
			.pid = c->run_pid,
			.tid = c->run_tid,
		};
	}
	return k;
}

ssize_t lp_capture_read(lp_capture *c, lp_merged_ref *refs, size_t n, lp_error *err)
{
	/* A caller's mistake, not the capture's: later reads are not failed. */
	if (!c)
		return lp_fail(err, LP_EUSAGE, "lp_capture_read: argument c: NULL"), -1;
	if (!refs && n > 0)
		return lp_fail(err, LP_EUSAGE, "lp_capture_read: argument refs: NULL, with n %zu", n), -1;
	size_t count = 0;
	while (count < n) {
		/* What the pipeline handed over goes first, also when an error
		 * came after it in the same step. */
		if (c->run_pos < c->run_n) {
			count += take_run(c, refs + count, n - count);
			continue;
		}
		if (c->finished || c->failed.status)
			break;
		c->finished = lp_pipeline_step(c->steps, &c->failed) == 0;
	}
	if (count == 0 && c->failed.status) {
		if (err)
			*err = c->failed;
		return -1;
	}
	return (ssize_t)count;
}

const lp_stats *lp_capture_stats(const lp_capture *c)
{
	return !c ? NULL : lp_merge_stats(c->run.merge);
}

void lp_capture_close(lp_capture *c)
{
	if (!c)
		return;
	lp_pipeline_stop(c->steps);
	lp_run_close(&c->run);
	g_free(c);
}
