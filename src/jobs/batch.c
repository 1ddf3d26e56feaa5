/* The batch engine (jobs/batch.h): a batch file's jobs run N at a time,
 * each in its own process; a failed job does not stop the others. */
#include "jobs/batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "jobs/confine.h"
#include "jobs/jobreport.h"
#include "jobs/slurm.h"
#include "core/numbers.h"
#include "io/yamlload.h"

/* Reports are small: a few hundred bytes a job. */
#define REPORT_MAX_BYTES (256u << 20)

static void start_jobs(void *batch);

void lp_batch_init(lp_batch *b, const char *command)
{
	memset(b, 0, sizeof *b);
	b->command = command;
	lp_job_pool_init(&b->pool, start_jobs, b);
}

/* ---- reports read back ---- */

static bool parse_index(const char *text, size_t *index)
{
	uint64_t v;
	if (!text || !lp_parse_decimal(text, 0, SIZE_MAX - 1, &v))
		return false;
	*index = (size_t)v;
	return true;
}

void lp_batch_report_free(lp_batch_report *report)
{
	if (!report)
		return;
	yaml_document_delete(&report->doc);
	g_hash_table_destroy(report->entries);
	g_free(report->collector_job_id);
	g_free(report);
}

int lp_batch_report_load(const char *path, lp_batch_report **out, lp_error *err)
{
	char *text;
	size_t len;
	int r = lp_jobfile_read(path, REPORT_MAX_BYTES, &text, &len, err);
	if (r)
		return r;
	lp_batch_report *report = g_new0(lp_batch_report, 1);
	report->entries = g_hash_table_new(g_direct_hash, g_direct_equal);
	r = lp_yaml_load(path, text, len, &report->doc, err);
	bool loaded = !r;
	g_free(text);
	yaml_document_t *doc = &report->doc;
	yaml_node_t *top = loaded ? yaml_document_get_root_node(doc) : NULL;
	yaml_node_t *jobs = lp_yaml_value(doc, top, "jobs");
	if (loaded && (!jobs || jobs->type != YAML_SEQUENCE_NODE))
		r = lp_fail(err, LP_EINPUT, "%s: not a batch report (no list 'jobs')", path);
	for (yaml_node_item_t *it = jobs && !r ? jobs->data.sequence.items.start : NULL;
	     it && it < jobs->data.sequence.items.top; it++) {
		yaml_node_t *entry = yaml_document_get_node(doc, *it);
		size_t index;
		if (!parse_index(lp_yaml_text(doc, entry, "index"), &index) ||
		    !lp_yaml_text(doc, entry, "status")) {
			r = lp_fail(err, LP_EINPUT, "%s:%zu: a job without an index or a status", path,
				    entry ? entry->start_mark.line + 1 : 0);
			break;
		}
		g_hash_table_insert(report->entries, GSIZE_TO_POINTER(index + 1), entry);
	}
	if (!r)
		report->collector_job_id = g_strdup(lp_yaml_text(doc, top, "collector_job_id"));
	if (r) {
		lp_batch_report_free(report);
		return r;
	}
	*out = report;
	return 0;
}

static yaml_node_t *report_entry(const lp_batch_report *report, size_t index)
{
	return g_hash_table_lookup(report->entries, GSIZE_TO_POINTER(index + 1));
}

/* Emit a node of a loaded document as it was. */
static int emit_node(yaml_emitter_t *em, yaml_document_t *doc, yaml_node_t *node)
{
	yaml_event_t ev;
	switch (node->type) {
	case YAML_SCALAR_NODE:
		if (!yaml_scalar_event_initialize(&ev, NULL, NULL, node->data.scalar.value,
						  (int)node->data.scalar.length, 1, 1,
						  node->data.scalar.style))
			return -1;
		return yaml_emitter_emit(em, &ev) ? 0 : -1;
	case YAML_SEQUENCE_NODE:
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							  node->data.sequence.style) ||
		    !yaml_emitter_emit(em, &ev))
			return -1;
		for (yaml_node_item_t *it = node->data.sequence.items.start;
		     it < node->data.sequence.items.top; it++)
			if (emit_node(em, doc, yaml_document_get_node(doc, *it)))
				return -1;
		return lp_yaml_end(em, true);
	case YAML_MAPPING_NODE:
		if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							 node->data.mapping.style) ||
		    !yaml_emitter_emit(em, &ev))
			return -1;
		for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
		     p < node->data.mapping.pairs.top; p++)
			if (emit_node(em, doc, yaml_document_get_node(doc, p->key)) ||
			    emit_node(em, doc, yaml_document_get_node(doc, p->value)))
				return -1;
		return lp_yaml_end(em, false);
	default:
		return -1;
	}
}

/* ---- choosing the jobs ---- */

int lp_batch_set_jobs(lp_batch *b, const char *file, lp_job_spec *specs, size_t nspecs,
		      lp_error *err)
{
	/* Two jobs writing one output would race (and an array element rerun
	 * would overwrite the other's). */
	GHashTable *outputs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	int r = 0;
	for (size_t i = 0; i < nspecs && !r; i++) {
		char *path = g_canonicalize_filename(specs[i].output, NULL);
		gpointer first;
		if (g_hash_table_lookup_extended(outputs, path, NULL, &first)) {
			size_t j = GPOINTER_TO_SIZE(first);
			r = lp_fail(err, LP_EINPUT, "%s:%zu: job %zu writes '%s' like job %zu (line %zu)",
				    file, specs[i].key_line[LP_JOB_KEY_OUTPUT], i, specs[i].output, j,
				    specs[j].line);
			g_free(path);
		} else {
			g_hash_table_insert(outputs, path, GSIZE_TO_POINTER(i));
		}
	}
	g_hash_table_destroy(outputs);
	if (r)
		return r;
	b->file = file;
	b->specs = specs;
	b->nspecs = nspecs;
	g_free(b->jobs);
	b->jobs = g_new0(lp_batch_job, nspecs);
	b->njobs = nspecs;
	for (size_t i = 0; i < nspecs; i++) {
		b->jobs[i].batch = b;
		b->jobs[i].index = i;
	}
	return 0;
}

static void keep_jobs(lp_batch *b, const bool *keep)
{
	size_t kept = 0;
	for (size_t i = 0; i < b->njobs; i++)
		if (keep[i])
			b->jobs[kept++] = b->jobs[i];
	b->njobs = kept;
}

typedef struct sized_job {
	size_t pos;      /* in b->jobs */
	uint64_t bytes;
} sized_job;

static int largest_first(const void *a, const void *b)
{
	const sized_job *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

void lp_batch_select_shard(lp_batch *b, size_t k, size_t n, bool by_size)
{
	bool *keep = g_new0(bool, b->njobs ? b->njobs : 1);
	if (by_size) {
		sized_job *order = g_new(sized_job, b->njobs ? b->njobs : 1);
		for (size_t i = 0; i < b->njobs; i++) {
			lp_input_state ref, kern;
			lp_input_state_read(b->specs[b->jobs[i].index].reference, &ref);
			lp_input_state_read(b->specs[b->jobs[i].index].kernel, &kern);
			order[i] = (sized_job){i, ref.size + kern.size};
		}
		qsort(order, b->njobs, sizeof *order, largest_first);
		uint64_t *load = g_new0(uint64_t, n);
		for (size_t i = 0; i < b->njobs; i++) {
			size_t lightest = 0;
			for (size_t s = 1; s < n; s++)
				if (load[s] < load[lightest])
					lightest = s;
			load[lightest] += order[i].bytes;
			keep[order[i].pos] = lightest == k;
		}
		g_free(load);
		g_free(order);
	} else {
		for (size_t i = 0; i < b->njobs; i++)
			keep[i] = b->jobs[i].index % n == k;
	}
	keep_jobs(b, keep);
	g_free(keep);
}

void lp_batch_select_index(lp_batch *b, size_t index)
{
	bool *keep = g_new0(bool, b->njobs ? b->njobs : 1);
	for (size_t i = 0; i < b->njobs; i++)
		keep[i] = b->jobs[i].index == index;
	keep_jobs(b, keep);
	g_free(keep);
}

static bool same_text(const char *a, const char *b) { return a && b && !strcmp(a, b); }

static bool same_input(yaml_document_t *doc, yaml_node_t *entry, const char *key,
		       const char *path)
{
	lp_input_state now;
	lp_input_state_read(path, &now);
	char size_key[32], mtime_key[32], size[24];
	g_snprintf(size_key, sizeof size_key, "%s_size", key);
	g_snprintf(mtime_key, sizeof mtime_key, "%s_mtime", key);
	g_snprintf(size, sizeof size, "%" G_GUINT64_FORMAT, now.size);
	return now.known && same_text(lp_yaml_text(doc, entry, key), path) &&
	       same_text(lp_yaml_text(doc, entry, size_key), size) &&
	       same_text(lp_yaml_text(doc, entry, mtime_key), now.mtime);
}

size_t lp_batch_skip_done(lp_batch *b, const lp_batch_report *earlier)
{
	size_t skipped = 0;
	yaml_document_t *doc = (yaml_document_t *)&earlier->doc;
	for (size_t i = 0; i < b->njobs; i++) {
		lp_batch_job *job = &b->jobs[i];
		const lp_job_spec *spec = &b->specs[job->index];
		yaml_node_t *entry = report_entry(earlier, job->index);
		GStatBuf sb;
		if (job->entry || !entry || !same_text(lp_yaml_text(doc, entry, "status"), "succeeded") ||
		    !same_text(lp_yaml_text(doc, entry, "output"), spec->output) ||
		    !same_text(lp_yaml_text(doc, entry, "mode"),
			       spec->per_process ? "per-process" : "basic") ||
		    !same_input(doc, entry, "reference", spec->reference) ||
		    !same_input(doc, entry, "kernel", spec->kernel) || g_lstat(spec->output, &sb) < 0)
			continue;
		job->entry_report = earlier;
		job->entry = entry;
		job->done_before = true;
		skipped++;
	}
	return skipped;
}

size_t lp_batch_take_entries(lp_batch *b, const lp_batch_report *report)
{
	size_t taken = 0;
	for (size_t i = 0; i < b->njobs; i++) {
		lp_batch_job *job = &b->jobs[i];
		yaml_node_t *entry = report_entry(report, job->index);
		if (job->entry || !entry)
			continue;
		job->entry_report = report;
		job->entry = entry;
		taken++;
	}
	return taken;
}

/* ---- running ---- */

static void erase_progress(lp_batch *b)
{
	if (b->progress_shown)
		fputs("\r\033[K", stderr);
	b->progress_shown = false;
}

static void draw_progress(lp_batch *b)
{
	uint64_t refs = 0;
	for (size_t i = 0; i < b->njobs; i++)
		refs += b->jobs[i].refs_done;
	fprintf(stderr, "\r\033[K%s: %zu/%zu done, %zu failed, %zu running, %" G_GUINT64_FORMAT
		" reference%s", b->command, b->succeeded + b->failed, b->njobs, b->failed,
		b->pool.running, refs, refs == 1 ? "" : "s");
	fflush(stderr);
	b->progress_shown = true;
}

static gboolean on_redraw(gpointer data)
{
	draw_progress(data);
	return G_SOURCE_CONTINUE;
}

static void on_progress(void *ctx, uint64_t refs_done, uint64_t events_done)
{
	lp_batch_job *job = ctx;
	(void)events_done;
	job->refs_done = refs_done;
}

static void on_warning(void *ctx, const char *msg)
{
	lp_batch_job *job = ctx;
	erase_progress(job->batch);
	fprintf(stderr, "%s: job %zu (%s:%zu): warning: %s\n", job->batch->command, job->index,
		job->batch->file, job->batch->specs[job->index].line, msg);
}

static void on_done(void *ctx, const lp_job_outcome *outcome)
{
	lp_batch_job *job = ctx;
	lp_batch *b = job->batch;
	lp_job_proc *proc = job->proc;
	job->outcome = *outcome;
	job->proc = NULL;
	job->finished = true;
	job->stopped = b->pool.stopped_by != 0;
	if (outcome->status == LP_OK)
		b->succeeded++;
	else
		b->failed++;
	lp_job_pool_ended(&b->pool, proc);
	if (b->show_progress)
		draw_progress(b);
}

static const lp_job_proc_ops batch_job_ops = {on_progress, on_warning, on_done};

static void fail_job(lp_batch_job *job, const lp_error *err)
{
	job->finished = true;
	job->outcome.status = err->status;
	g_strlcpy(job->outcome.msg, err->msg, sizeof job->outcome.msg);
	job->batch->failed++;
}

static void start_jobs(void *batch)
{
	lp_batch *b = batch;
	while (lp_job_pool_has_room(&b->pool) && b->next < b->njobs) {
		lp_batch_job *job = &b->jobs[b->next++];
		if (job->entry)
			continue;
		const lp_job_spec *spec = &b->specs[job->index];
		lp_input_state_read(spec->reference, &job->reference);
		lp_input_state_read(spec->kernel, &job->kernel);
		lp_error err = {0};
		if (lp_make_output_dir(spec->output, &err)) {
			fail_job(job, &err);
			continue;
		}
		lp_merge_job mj;
		lp_job_spec_to_merge(spec, &mj);
		unsigned timeout = lp_job_spec_time_limit(spec, b->job_timeout);
		if ((job->proc = lp_job_proc_start(&mj, LP_NO_OWNER, NULL, timeout, &batch_job_ops, job, &err)))
			lp_job_pool_started(&b->pool, job->proc);
		else
			fail_job(job, &err);
	}
}

void lp_batch_run(lp_batch *b)
{
	guint redraw = 0;
	if (b->show_progress)
		redraw = g_timeout_add(LP_BATCH_PROGRESS_REDRAW_MS, on_redraw, b);
	lp_job_pool_run(&b->pool);
	if (redraw)
		g_source_remove(redraw);
	erase_progress(b);
}

/* ---- how each job ended ---- */

enum job_state { JOB_SUCCEEDED, JOB_FAILED, JOB_INTERRUPTED };
static const char *const job_state_names[] = {"succeeded", "failed", "interrupted"};

typedef struct job_end {
	enum job_state state;
	int exit_status;
	char msg[sizeof ((lp_job_outcome *)0)->msg + 64]; /* the job's, or why it did not run */
} job_end;

static void job_ended(const lp_batch *b, const lp_batch_job *job, job_end *end)
{
	memset(end, 0, sizeof *end);
	if (job->entry) {
		yaml_document_t *doc = (yaml_document_t *)&job->entry_report->doc;
		const char *status = lp_yaml_text(doc, job->entry, "status");
		const char *error = lp_yaml_text(doc, job->entry, "error");
		size_t code = LP_EIO;
		end->state = same_text(status, "succeeded") ? JOB_SUCCEEDED
			     : same_text(status, "failed")  ? JOB_FAILED
							    : JOB_INTERRUPTED;
		if (end->state == JOB_SUCCEEDED)
			code = 0;
		else if (!parse_index(lp_yaml_text(doc, job->entry, "exit_status"), &code) || !code ||
			 code > 255)
			code = LP_EIO;
		end->exit_status = (int)code;
		g_strlcpy(end->msg, error ? error : "", sizeof end->msg);
	} else if (job->finished && job->outcome.status == LP_OK) {
		end->state = JOB_SUCCEEDED;
	} else if (job->finished && !job->stopped) {
		end->state = JOB_FAILED;
		end->exit_status = job->outcome.status;
		g_strlcpy(end->msg, job->outcome.msg, sizeof end->msg);
	} else {
		end->state = JOB_INTERRUPTED;
		end->exit_status = LP_EIO;
		if (b->pool.stopped_by)
			g_snprintf(end->msg, sizeof end->msg, "%s by %s",
				   job->finished ? "interrupted" : "not started: the batch was interrupted",
				   g_strsignal(b->pool.stopped_by));
		else
			g_strlcpy(end->msg, b->missing_why ? b->missing_why : "not started",
				  sizeof end->msg);
	}
}

void lp_batch_count(const lp_batch *b, lp_batch_counts *c)
{
	memset(c, 0, sizeof *c);
	for (size_t i = 0; i < b->njobs; i++) {
		job_end end;
		job_ended(b, &b->jobs[i], &end);
		if (end.state == JOB_SUCCEEDED)
			c->succeeded++;
		else if (end.state == JOB_FAILED)
			c->failed++;
		else
			c->interrupted++;
		c->done_before += b->jobs[i].done_before;
	}
}

int lp_batch_list_failures(const lp_batch *b)
{
	int rc = 0;
	for (size_t i = 0; i < b->njobs; i++) {
		const lp_batch_job *job = &b->jobs[i];
		job_end end;
		job_ended(b, job, &end);
		if (end.state == JOB_SUCCEEDED)
			continue;
		fprintf(stderr, "%s: job %zu (%s:%zu) %s: %s\n", b->command, job->index, b->file,
			b->specs[job->index].line, job_state_names[end.state], end.msg);
		if (end.exit_status > rc)
			rc = end.exit_status;
	}
	return rc;
}

/* ---- the report ---- */

static int emit_input_state(yaml_emitter_t *em, const char *key, const lp_input_state *st)
{
	if (!st->known)
		return 0;
	char size_key[32], mtime_key[32];
	g_snprintf(size_key, sizeof size_key, "%s_size", key);
	g_snprintf(mtime_key, sizeof mtime_key, "%s_mtime", key);
	return lp_yaml_pair_u64(em, size_key, st->size) || lp_yaml_pair(em, mtime_key, st->mtime);
}

/* Under Slurm: the job (ARRAYID_INDEX for an array element) and the host
 * that ran the batch, for each entry. */
static int emit_slurm_origin(yaml_emitter_t *em)
{
	char *id = lp_slurm_job_id();
	if (!id)
		return 0;
	int r = lp_yaml_pair(em, "slurm_job_id", id) || lp_yaml_pair(em, "host", g_get_host_name());
	g_free(id);
	return r;
}

static int emit_job(yaml_emitter_t *em, const lp_batch *b, const lp_batch_job *job)
{
	const lp_job_spec *spec = &b->specs[job->index];
	if (job->entry)
		return emit_node(em, (yaml_document_t *)&job->entry_report->doc, job->entry);
	job_end end;
	job_ended(b, job, &end);
	if (lp_yaml_begin(em, false) || lp_yaml_pair_u64(em, "index", job->index) ||
	    lp_yaml_pair_u64(em, "line", spec->line))
		return -1;
	/* A job that never started was run nowhere and read nothing. */
	if (end.state != JOB_INTERRUPTED || job->finished) {
		if (emit_slurm_origin(em) || emit_input_state(em, "reference", &job->reference) ||
		    emit_input_state(em, "kernel", &job->kernel))
			return -1;
	}
	if (end.state != JOB_INTERRUPTED) {
		if (lp_job_report_emit(em, spec, &job->outcome))
			return -1;
	} else if (lp_yaml_pair(em, "reference", spec->reference) ||
		   lp_yaml_pair(em, "kernel", spec->kernel) ||
		   lp_yaml_pair(em, "mode", spec->per_process ? "per-process" : "basic") ||
		   lp_yaml_pair(em, "output", spec->output) ||
		   lp_yaml_pair(em, "status", job_state_names[end.state]) ||
		   lp_yaml_pair_u64(em, "exit_status", (uint64_t)end.exit_status) ||
		   lp_yaml_pair_message(em, "error", end.msg)) {
		return -1;
	}
	return lp_yaml_end(em, false);
}

int lp_batch_write_report(lp_output *out, const lp_batch *b, const char *shard,
			  const char *collector_job_id, lp_error *err)
{
	lp_batch_counts c;
	lp_batch_count(b, &c);
	GString *text = g_string_new(NULL);
	yaml_emitter_t em;
	int bad = lp_yaml_start(&em, text) || lp_yaml_pair(&em, "batch", b->file) ||
		  (shard && lp_yaml_pair(&em, "shard", shard)) ||
		  (collector_job_id && lp_yaml_pair(&em, "collector_job_id", collector_job_id)) ||
		  lp_yaml_pair_u64(&em, "succeeded", c.succeeded) ||
		  lp_yaml_pair_u64(&em, "failed", c.failed) ||
		  lp_yaml_pair_u64(&em, "interrupted", c.interrupted) ||
		  lp_yaml_key(&em, "jobs") || lp_yaml_begin(&em, true);
	for (size_t i = 0; !bad && i < b->njobs; i++)
		bad = emit_job(&em, b, &b->jobs[i]);
	bad = bad || lp_yaml_end(&em, true) || lp_yaml_finish(&em);
	int r = bad ? lp_fail(err, LP_EIO, "cannot format the report for %s", lp_output_name(out))
		    : lp_output_write(out, text->str, text->len, err);
	g_string_free(text, TRUE);
	if (r) {
		lp_output_abort(out);
		return r;
	}
	return lp_output_commit(out, err);
}

void lp_batch_clear(lp_batch *b)
{
	lp_job_pool_clear(&b->pool);
	g_free(b->jobs);
	b->jobs = NULL;
	b->njobs = 0;
}
