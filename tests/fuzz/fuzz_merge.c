/* libFuzzer target: the whole merge. The input is an options byte, then a
 * kernel event trace, then "\n--\n" and the raw reference trace (binary or
 * text; without the separator there are no references). Both parts go to
 * in-memory files, read as every input is (compressed or not).
 *
 * Options: bit 0 big-endian references, bit 1 strict, bit 2 user-only,
 * bits 3-4 page offset (default, 0, 80000000, the unaligned c0000800),
 * bits 5-6 reference format (auto, auto, binary, text), bit 7 also run the
 * whole job (lp_merge_job_run) without output and as a per-process
 * directory, and compare.
 *
 * The pipeline runs into the basic writer (to /dev/null) through a sink
 * that records the merged stream and checks, as the stream goes by:
 * references in timestamp order, an event never after a reference of the
 * same timestamp; canonical numbers handed out in order from 0 (3.5);
 * within one run of references (no event between them) the same page
 * reached the same way gets the same number, unless a write may have
 * copied it; the final statistics count what the sink saw. The same capture read through lp_capture, a few references
 * at a time, must give exactly the recorded stream, then the same error
 * or statistics. The whole job must agree with the pipeline, statistics
 * and error message alike, and a per-process index must account for every
 * reference. */
#include "fuzz_input.h"

#include <stdbool.h>

#include <glib.h>

#include "pipeline/job.h"
#include "laplace/laplace.h"
#include "pipeline/pipeline.h"
#include "formats/procindex.h"
#include "formats/forms.h"

static const uint8_t separator[] = "\n--\n";

typedef struct checker {
	lp_basic_sink *basic;
	uint64_t page_offset;
	uint64_t next_canon;
	uint64_t refs[6], events;
	uint64_t last_ref_ts, last_event_ts;
	bool any_ref, any_event;
	GHashTable *seen; /* per run: how a page was reached -> canonical */
	bool user_only;
	GArray *merged;   /* lp_merged_ref: what lp_capture must give */
} checker;

static int check_refs(void *ctx, const lp_ref *refs, const uint64_t *canon, size_t n,
		      const lp_task_id *who, lp_error *err)
{
	checker *c = ctx;
	FUZZ_CHECK(n > 0);
	g_hash_table_remove_all(c->seen);
	for (size_t i = 0; i < n; i++) {
		const lp_ref *r = &refs[i];
		int type = lp_ref_type_index(r->type);
		FUZZ_CHECK(type >= 0);
		c->refs[type]++;
		FUZZ_CHECK(!c->any_ref || r->timestamp >= c->last_ref_ts);
		FUZZ_CHECK(!c->any_event || r->timestamp >= c->last_event_ts);
		c->last_ref_ts = r->timestamp;
		c->any_ref = true;
		/* 3.5: numbers in order of first reference, from 0. */
		FUZZ_CHECK(canon[i] <= c->next_canon);
		if (canon[i] == c->next_canon)
			c->next_canon++;
		/* 3.2, 3.4: kernel references at or above the page offset go by
		 * frame (and vpn) and never copy; the others go by vas and vpn,
		 * and only a write may change the page. */
		uint64_t vpn = r->address >> LP_PAGE_SHIFT;
		uint64_t key;
		bool by_frame = lp_ref_is_kernel(r->type) && r->address >= c->page_offset;
		if (by_frame)
			key = 1ull << 63 | ((r->address - c->page_offset) >> LP_PAGE_SHIFT) << 20 | vpn;
		else
			key = (uint64_t)r->vas << 20 | vpn;
		gpointer old;
		if (g_hash_table_lookup_extended(c->seen, GSIZE_TO_POINTER(key), NULL, &old) &&
		    (by_frame || !lp_ref_is_write(r->type)))
			FUZZ_CHECK(GPOINTER_TO_SIZE(old) == canon[i]);
		g_hash_table_insert(c->seen, GSIZE_TO_POINTER(key), GSIZE_TO_POINTER(canon[i]));
		if (c->user_only && lp_ref_is_kernel(r->type))
			continue;
		lp_merged_ref m = {
			.type = r->type, .length = r->length, .address = r->address,
			.timestamp = r->timestamp, .canonical = canon[i],
			.pid = who ? who->pid : LP_NO_TASK, .tid = who ? who->tid : LP_NO_TASK,
		};
		g_array_append_val(c->merged, m);
	}
	return lp_basic_sink_ops.refs(c->basic, refs, canon, n, who, err);
}

static int check_event(void *ctx, const lp_event *ev, const lp_event_route *route, lp_error *err)
{
	checker *c = ctx;
	FUZZ_CHECK((int)ev->tag >= 0 && ev->tag < LP_TAG_COUNT);
	FUZZ_CHECK(!c->any_event || ev->timestamp >= c->last_event_ts);
	/* On a tie the event goes first. */
	FUZZ_CHECK(!c->any_ref || ev->timestamp > c->last_ref_ts);
	FUZZ_CHECK(route->ntasks >= 0 && route->ntasks <= 2);
	c->last_event_ts = ev->timestamp;
	c->any_event = true;
	c->events++;
	return lp_basic_sink_ops.event(c->basic, ev, route, err);
}

static int check_finish(void *ctx, const lp_stats *stats, lp_error *err)
{
	checker *c = ctx;
	for (int t = 0; t < 6; t++)
		FUZZ_CHECK(stats->refs[t] == c->refs[t]);
	uint64_t events = 0;
	for (int t = 0; t < LP_TAG_COUNT; t++)
		events += stats->events[t];
	FUZZ_CHECK(events == c->events);
	FUZZ_CHECK(lp_stats_total_pages(stats) == c->next_canon);
	return lp_basic_sink_ops.finish(c->basic, stats, err);
}

static const lp_sink checking_sink = {check_refs, check_event, check_finish};

static void ignore(void *ctx, const char *msg)
{
	(void)ctx, (void)msg;
}

/* The per-process directory's index accounts for every reference it
 * should hold. */
static void check_index(const char *dir, const lp_stats *stats, bool user_only)
{
	lp_error err;
	lp_index *ix = lp_index_read(dir, &err);
	if (!ix) {
		fprintf(stderr, "%s\n", err.msg);
		FUZZ_CHECK(ix);
	}
	uint64_t refs = ix->kernel.references + ix->orphan.references;
	for (size_t i = 0; i < ix->nprocesses; i++)
		for (size_t t = 0; t < ix->processes[i].ntasks; t++)
			refs += ix->processes[i].tasks[t].file.references;
	uint64_t want = stats->refs[0] + stats->refs[1] + stats->refs[2];
	if (!user_only)
		want += stats->refs[3] + stats->refs[4] + stats->refs[5];
	FUZZ_CHECK(refs == want);
	lp_index_free(ix);
}

/* The capture read through lp_capture, batch references at a time, gives
 * the stream the pipeline's sink recorded (merged), then the pipeline's
 * error (rc, err) or its statistics. */
static void check_capture(const lp_merge_job *job, size_t batch, const GArray *merged, int rc,
			  const lp_error *err, const lp_stats *stats)
{
	lp_capture_options opt;
	lp_capture_options_init(&opt);
	opt.ref_format = job->ref_format;
	opt.endian = job->endian;
	opt.page_offset = job->page_offset;
	opt.user_only = job->user_only;
	opt.strict = job->strict;
	lp_error cerr = {0};
	lp_capture *c = lp_capture_open(job->reference, job->kernel, &opt, &cerr);
	if (!c) {
		FUZZ_CHECK(rc != 0 && cerr.status == rc && !strcmp(cerr.msg, err->msg));
		FUZZ_CHECK(merged->len == 0);
		return;
	}
	lp_merged_ref buf[8];
	size_t at = 0;
	ssize_t n;
	while ((n = lp_capture_read(c, buf, batch, &cerr)) > 0) {
		FUZZ_CHECK((size_t)n <= batch);
		for (ssize_t i = 0; i < n; i++, at++) {
			FUZZ_CHECK(at < merged->len);
			const lp_merged_ref *w = &g_array_index(merged, lp_merged_ref, at);
			FUZZ_CHECK(buf[i].type == w->type && buf[i].length == w->length &&
				   buf[i].address == w->address && buf[i].timestamp == w->timestamp &&
				   buf[i].canonical == w->canonical && buf[i].pid == w->pid &&
				   buf[i].tid == w->tid);
		}
	}
	FUZZ_CHECK(at == merged->len);
	if (n < 0)
		FUZZ_CHECK(cerr.status == rc && !strcmp(cerr.msg, err->msg));
	else
		FUZZ_CHECK(rc == 0 && !memcmp(lp_capture_stats(c), stats, sizeof *stats));
	FUZZ_CHECK(lp_capture_read(c, buf, batch, &cerr) == n);
	lp_capture_close(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	uint8_t opt = data[0];
	data++, size--;
	const uint8_t *sep = memmem(data, size, separator, sizeof separator - 1);
	size_t kern_size = sep ? (size_t)(sep - data) : size;
	const uint8_t *ref_data = sep ? sep + sizeof separator - 1 : data + size;
	const char *kern_path = fuzz_memfile(0, data, kern_size);
	const char *ref_path = fuzz_memfile(1, ref_data, (size_t)(data + size - ref_data));

	static const uint64_t offsets[4] = {LP_DEFAULT_PAGE_OFFSET, 0, 0x80000000u, 0xc0000800u};
	static const enum lp_ref_format formats[4] = {LP_REF_AUTO, LP_REF_AUTO, LP_REF_BIN,
						      LP_REF_TEXT};
	lp_merge_job job;
	lp_merge_job_init(&job);
	job.reference = ref_path;
	job.kernel = kern_path;
	job.endian = opt & 1 ? LP_BIG : LP_LITTLE;
	job.strict = opt & 2;
	job.user_only = opt & 4;
	job.page_offset = offsets[opt >> 3 & 3];
	job.page_offset_set = true;
	job.ref_format = formats[opt >> 5 & 3];
	job.warn = ignore;

	/* The run, as lp_merge_job_run opens it, into the checker. */
	lp_error err = {0};
	int rc;
	lp_stats stats = {0};
	GArray *merged = g_array_new(FALSE, FALSE, sizeof(lp_merged_ref));
	lp_run run;
	if (lp_run_open(&run, &job, &err)) {
		rc = err.status;
		FUZZ_CHECK(rc == LP_EIO || rc == LP_EINPUT);
	} else {
		checker c = {
			.basic = lp_basic_sink_new(fuzz_sink(), job.user_only, LP_FORM_BASIC),
			.page_offset = job.page_offset,
			.seen = g_hash_table_new(NULL, NULL),
			.user_only = job.user_only,
			.merged = merged,
		};
		run.pipeline.sink = &checking_sink;
		run.pipeline.sink_ctx = &c;
		rc = lp_pipeline_run(&run.pipeline, &err);
		FUZZ_CHECK(rc == LP_OK || rc == LP_EINPUT || rc == LP_EIO);
		stats = *lp_merge_stats(run.merge);
		g_hash_table_destroy(c.seen);
		lp_basic_sink_free(c.basic);
		lp_run_close(&run);
	}
	check_capture(&job, 1 + size % 8, merged, rc, &err, &stats);
	g_array_free(merged, TRUE);

	if (opt & 0x80) {
		lp_error job_err = {0};
		lp_stats job_stats;
		job.discard = true;
		int job_rc = lp_merge_job_run(&job, &job_stats, &job_err);
		FUZZ_CHECK(job_rc == rc);
		if (rc == 0)
			FUZZ_CHECK(!memcmp(&job_stats, &stats, sizeof stats));
		else
			FUZZ_CHECK(!strcmp(job_err.msg, err.msg));

		static char *dir;
		if (!dir)
			dir = fuzz_dir_path_of("per-process");
		job.discard = false;
		job.per_process = true;
		job.output = dir;
		job.force = true;
		job_rc = lp_merge_job_run(&job, &job_stats, &job_err);
		FUZZ_CHECK(job_rc == rc);
		if (rc == 0) {
			FUZZ_CHECK(!memcmp(&job_stats, &stats, sizeof stats));
			check_index(dir, &stats, job.user_only);
		}
	}
	return 0;
}
