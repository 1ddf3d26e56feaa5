/* A study's cells (jobs/study.h): what each runs, the manifest written as
 * they end and read back to skip what is done, the run itself (each cell
 * one child of the job runner, lp_cell_proc_start), and the table. */
#include "jobs/study.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>
#include <yaml.h>

#include "core/numbers.h"
#include "io/staging.h"
#include "io/yamlload.h"
#include "io/yamlout.h"
#include "jobs/jobfile.h"
#include "jobs/jobreport.h"
#include "jobs/slurm.h"

const char *const lp_cell_status_names[4] = {"pending", "ok", "failed", "interrupted"};

/* Manifests hold a few hundred bytes a cell. */
#define MANIFEST_MAX_BYTES (64u << 20)

/* ---- the cells ---- */

static void add_input(lp_study_cell *c, const char *path)
{
	c->inputs = g_renew(lp_cell_input, c->inputs, c->ninputs + 1);
	memset(&c->inputs[c->ninputs], 0, sizeof c->inputs[0]);
	c->inputs[c->ninputs++].path = g_strdup(path);
}

static char **strv_of(GPtrArray *args)
{
	g_ptr_array_add(args, NULL);
	return (char **)g_ptr_array_free(args, FALSE);
}

static void add(GPtrArray *args, const char *s) { g_ptr_array_add(args, g_strdup(s)); }

/* The merge options of the study, for merge and for sim REF KERN. */
static void add_merge_options(GPtrArray *args, const lp_study *s)
{
	if (s->merge_user_only)
		add(args, "--user-only");
	if (s->merge_strict)
		add(args, "--strict");
}

static void add_sync_option(GPtrArray *args)
{
	if (!lp_stage_syncs())
		add(args, "--no-sync");
}

static lp_study_cell *new_cell(lp_study_run *run, enum lp_cell_kind kind, size_t capture,
			       char *name)
{
	run->cells = g_renew(lp_study_cell, run->cells, run->ncells + 1);
	lp_study_cell *c = &run->cells[run->ncells];
	memset(c, 0, sizeof *c);
	c->index = run->ncells++;
	c->kind = kind;
	c->capture = capture;
	c->name = name;
	c->output = g_build_filename(run->dir, "cells", name, NULL);
	c->depends = -1;
	c->exit_status = -1;
	return c;
}

/* The command line as one list: laplace ARGS [| laplace ARGS]. */
static void set_command(lp_study_cell *c)
{
	GPtrArray *cmd = g_ptr_array_new();
	for (size_t i = 0; i < c->nstages; i++) {
		if (i)
			add(cmd, "|");
		add(cmd, "laplace");
		for (char **a = c->stages[i]; *a; a++)
			add(cmd, *a);
	}
	c->command = strv_of(cmd);
}

static void add_merge_cell(lp_study_run *run, size_t ci)
{
	const lp_study_capture *cap = &run->study->captures[ci];
	lp_study_cell *c = new_cell(run, LP_CELL_MERGE, ci, g_strconcat(cap->name, ".merge", NULL));
	GPtrArray *a = g_ptr_array_new();
	add(a, "merge");
	add(a, "-q");
	add(a, "--per-process");
	add(a, c->output);
	add(a, "--format");
	add(a, "bin");
	add(a, "--force");
	add_merge_options(a, run->study);
	add_sync_option(a);
	add(a, "--"); /* inputs whose names start with '-' */
	add(a, cap->reference);
	add(a, cap->kernel);
	c->stages[0] = strv_of(a);
	c->nstages = 1;
	add_input(c, cap->reference);
	add_input(c, cap->kernel);
	set_command(c);
}

static void add_sim_cell(lp_study_run *run, size_t ci)
{
	const lp_study *s = run->study;
	const lp_study_capture *cap = &s->captures[ci];
	lp_study_cell *c = new_cell(run, LP_CELL_SIM, ci, g_strconcat(cap->name, ".sim.csv", NULL));
	GPtrArray *a = g_ptr_array_new();
	if (cap->kind == LP_STUDY_DIRECTORY) {
		/* Its basic merge order, piped. */
		GPtrArray *first = g_ptr_array_new();
		add(first, "schedule");
		add(first, "-q");
		add(first, "--");
		add(first, cap->path);
		c->stages[c->nstages++] = strv_of(first);
	}
	add(a, "sim");
	add(a, "--policy");
	add(a, s->sim_policies);
	if (s->sim_frames) {
		add(a, "--frames");
		add(a, s->sim_frames);
	}
	if (s->sim_windows) {
		add(a, "--window");
		add(a, s->sim_windows);
	}
	for (guint i = 0; i < s->sim_options->len; i++)
		add(a, s->sim_options->pdata[i]);
	if (cap->kind == LP_STUDY_CAPTURE)
		add_merge_options(a, s);
	add_sync_option(a);
	add(a, "-o");
	add(a, c->output);
	add(a, "--");
	if (cap->kind == LP_STUDY_CAPTURE) {
		add(a, cap->reference);
		add(a, cap->kernel);
		add_input(c, cap->reference);
		add_input(c, cap->kernel);
	} else {
		add(a, cap->kind == LP_STUDY_STREAM ? cap->path : "-");
		add_input(c, cap->path);
	}
	c->stages[c->nstages++] = strv_of(a);
	set_command(c);
}

/* The schedule cells of capture ci, one per combination, its per-process
 * directory dir (made by cell depends, or -1). */
static void add_schedule_cells(lp_study_run *run, size_t ci, const char *dir, ptrdiff_t depends)
{
	const lp_study *s = run->study;
	size_t n[LP_SCHED_KEY_COUNT], total = 1;
	for (int k = 0; k < LP_SCHED_KEY_COUNT; k++) {
		n[k] = s->sched[k]->len;
		if (k != LP_SCHED_SEED)
			total *= n[k];
	}
	size_t index = 0;
	for (size_t combo = 0; combo < total; combo++) {
		size_t pick[LP_SCHED_KEY_COUNT] = {0}, rest = combo;
		for (int k = LP_SCHED_SEED - 1; k >= 0; k--) {
			pick[k] = rest % n[k];
			rest /= n[k];
		}
		bool random = !strcmp(s->sched[LP_SCHED_POLICY]->pdata[pick[LP_SCHED_POLICY]], "random");
		/* Seeds vary for the random policy only. */
		size_t seeds = random ? n[LP_SCHED_SEED] : 1;
		for (size_t seed = 0; seed < seeds; seed++, index++) {
			char *name = g_strdup_printf("%s.schedule.%zu.csv", s->captures[ci].name, index);
			lp_study_cell *c = new_cell(run, LP_CELL_SCHEDULE, ci, name);
			c->combination = index;
			c->depends = depends;
			pick[LP_SCHED_SEED] = seed;
			for (int k = 0; k < LP_SCHED_KEY_COUNT; k++)
				c->values[k] = k == LP_SCHED_SEED && !random ? "" : s->sched[k]->pdata[pick[k]];
			GPtrArray *a = g_ptr_array_new();
			add(a, "schedule");
			add(a, "-q");
			static const char *const flags[LP_SCHED_KEY_COUNT] = {
				"--policy", "--quantum", "--cpus", "--replacement", "--fault-ticks", "--seed",
			};
			for (int k = 0; k < LP_SCHED_KEY_COUNT; k++)
				if (c->values[k][0]) {
					add(a, flags[k]);
					add(a, c->values[k]);
				}
			add(a, "--memory");
			add(a, s->memory);
			add_sync_option(a);
			add(a, "-o");
			add(a, c->output);
			add(a, "--");
			add(a, dir);
			c->stages[0] = strv_of(a);
			c->nstages = 1;
			add_input(c, dir);
			set_command(c);
		}
	}
}

static void start_cells(void *run);

void lp_study_run_init(lp_study_run *run, const char *command, const lp_study *study,
		       const char *dir)
{
	memset(run, 0, sizeof *run);
	lp_job_pool_init(&run->pool, start_cells, run);
	run->command = command;
	run->study = study;
	run->dir = g_strdup(dir);
	run->manifest_path = g_build_filename(dir, "manifest.yaml", NULL);
	run->parts_dir = g_build_filename(dir, "parts", NULL);
	for (size_t ci = 0; ci < study->ncaptures; ci++) {
		const lp_study_capture *cap = &study->captures[ci];
		ptrdiff_t merge = -1;
		if (study->schedule && cap->kind == LP_STUDY_CAPTURE) {
			merge = (ptrdiff_t)run->ncells;
			add_merge_cell(run, ci);
		}
		if (study->sim)
			add_sim_cell(run, ci);
		if (study->schedule) {
			/* The merge cell's output, its name kept apart: cells move. */
			char *dir_path = merge >= 0 ? g_strdup(run->cells[merge].output) : g_strdup(cap->path);
			add_schedule_cells(run, ci, dir_path, merge);
			g_free(dir_path);
		}
	}
	for (size_t i = 0; i < run->ncells; i++) {
		run->cells[i].run = run;
		run->cells[i].selected = true;
	}
}

void lp_study_run_clear(lp_study_run *run)
{
	lp_job_pool_clear(&run->pool);
	for (size_t i = 0; i < run->ncells; i++) {
		lp_study_cell *c = &run->cells[i];
		g_free(c->name);
		g_free(c->output);
		for (size_t s = 0; s < c->nstages; s++)
			g_strfreev(c->stages[s]);
		g_strfreev(c->command);
		for (size_t k = 0; k < c->ninputs; k++)
			g_free(c->inputs[k].path);
		g_free(c->inputs);
		g_free(c->job_id);
		g_free(c->error);
	}
	g_free(run->cells);
	g_free(run->dir);
	g_free(run->manifest_path);
	g_free(run->parts_dir);
	g_free(run->part);
	memset(run, 0, sizeof *run);
}

/* ---- the manifest read back ---- */

static bool same(const char *a, const char *b) { return a && b && !strcmp(a, b); }

static gint compare_paths(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether a list node holds the strings of strv, --no-sync aside (it
 * changes no result). */
static bool same_list(yaml_document_t *doc, yaml_node_t *list, char **strv)
{
	if (!list || list->type != YAML_SEQUENCE_NODE)
		return false;
	yaml_node_item_t *it = list->data.sequence.items.start;
	for (;;) {
		const char *item = NULL;
		for (; it < list->data.sequence.items.top; it++) {
			yaml_node_t *n = yaml_document_get_node(doc, *it);
			if (!n || n->type != YAML_SCALAR_NODE)
				return false;
			if (strcmp((const char *)n->data.scalar.value, "--no-sync")) {
				item = (const char *)n->data.scalar.value;
				it++;
				break;
			}
		}
		while (*strv && !strcmp(*strv, "--no-sync"))
			strv++;
		if (!item || !*strv)
			return !item && !*strv;
		if (strcmp(item, *strv++))
			return false;
	}
}

/* Whether the entry's inputs are the cell's, as they are now. */
static bool same_inputs(yaml_document_t *doc, yaml_node_t *entry, lp_study_cell *c)
{
	yaml_node_t *list = lp_yaml_value(doc, entry, "inputs");
	if (!list || list->type != YAML_SEQUENCE_NODE ||
	    (size_t)(list->data.sequence.items.top - list->data.sequence.items.start) != c->ninputs)
		return false;
	for (size_t i = 0; i < c->ninputs; i++) {
		yaml_node_t *in = yaml_document_get_node(doc, list->data.sequence.items.start[i]);
		lp_input_state now;
		lp_input_state_read(c->inputs[i].path, &now);
		char size[24];
		g_snprintf(size, sizeof size, "%" G_GUINT64_FORMAT, now.size);
		if (!now.known || !same(lp_yaml_text(doc, in, "path"), c->inputs[i].path) ||
		    !same(lp_yaml_text(doc, in, "size"), size) || !same(lp_yaml_text(doc, in, "mtime"), now.mtime))
			return false;
		c->inputs[i].state = now;
	}
	return true;
}

/* Take a cell's state from an entry: done when it says ok with the same
 * command, inputs as they are now, and the output there; else its status
 * (an ok entry that is stale: pending). */
static void take_entry(yaml_document_t *doc, yaml_node_t *entry, lp_study_cell *c,
		       const lp_study_run *run)
{
	const char *v;
	uint64_t n;
	GStatBuf sb;
	const char *status = lp_yaml_text(doc, entry, "status");
	c->done = same(status, "ok") && same_list(doc, lp_yaml_value(doc, entry, "command"), c->command) &&
		  same_inputs(doc, entry, c) && g_lstat(c->output, &sb) == 0 &&
		  (c->depends < 0 || run->cells[c->depends].done);
	c->status = c->done                        ? LP_CELL_OK
		    : same(status, "failed")       ? LP_CELL_FAILED
		    : same(status, "interrupted")  ? LP_CELL_INTERRUPTED
						   : LP_CELL_PENDING;
	c->exit_status = (v = lp_yaml_text(doc, entry, "exit_status")) && lp_parse_decimal(v, 0, 255, &n)
				 ? (int)n : -1;
	c->wall_seconds = (v = lp_yaml_text(doc, entry, "wall_seconds")) ? g_ascii_strtod(v, NULL) : 0;
	c->cpu_seconds = (v = lp_yaml_text(doc, entry, "cpu_seconds")) ? g_ascii_strtod(v, NULL) : 0;
	c->peak_rss_kib = (v = lp_yaml_text(doc, entry, "peak_rss_kib")) &&
				  lp_parse_decimal(v, 0, UINT64_MAX, &n) ? n : 0;
	g_free(c->job_id);
	c->job_id = g_strdup(lp_yaml_text(doc, entry, "job_id"));
	g_free(c->error);
	c->error = c->status == LP_CELL_OK ? NULL : g_strdup(lp_yaml_text(doc, entry, "error"));
}

/* An entry read back, and the document it lies in. */
typedef struct entry {
	yaml_document_t *doc;
	yaml_node_t *node;
} entry;

/* Load the manifest or part at path into docs, its entries into entries
 * by name (replacing those of the files read before). */
static int load_manifest(const char *path, GPtrArray *docs, GHashTable *entries, lp_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = lp_jobfile_read(path, MANIFEST_MAX_BYTES, &text, &len, err);
	if (rc)
		return rc;
	yaml_document_t *doc = g_new(yaml_document_t, 1);
	rc = lp_yaml_load(path, text, len, doc, err);
	g_free(text);
	g_ptr_array_add(docs, doc);
	yaml_node_t *cells = rc ? NULL : lp_yaml_value(doc, yaml_document_get_root_node(doc), "cells");
	if (!rc && (!cells || cells->type != YAML_SEQUENCE_NODE))
		rc = lp_fail(err, LP_EINPUT, "%s: not a study manifest (no list 'cells')", path);
	for (yaml_node_item_t *it = rc ? NULL : cells->data.sequence.items.start;
	     it && it < cells->data.sequence.items.top; it++) {
		yaml_node_t *node = yaml_document_get_node(doc, *it);
		const char *name = lp_yaml_text(doc, node, "name");
		if (!name)
			continue;
		entry *e = g_new(entry, 1);
		*e = (entry){doc, node};
		g_hash_table_insert(entries, (gpointer)name, e);
	}
	return rc;
}

static void document_free(gpointer p)
{
	yaml_document_delete(p);
	g_free(p);
}

/* The parts in DIR/parts/ (each array element's or shard's manifest), in
 * name order; NULL-terminated. */
static char **list_parts(const lp_study_run *run)
{
	GPtrArray *paths = g_ptr_array_new();
	GDir *d = g_dir_open(run->parts_dir, 0, NULL);
	const char *name;
	while (d && (name = g_dir_read_name(d)))
		if (g_str_has_suffix(name, ".yaml") && name[0] != '.')
			g_ptr_array_add(paths, g_build_filename(run->parts_dir, name, NULL));
	if (d)
		g_dir_close(d);
	g_ptr_array_sort(paths, compare_paths);
	g_ptr_array_add(paths, NULL);
	return (char **)g_ptr_array_free(paths, FALSE);
}

int lp_study_select(lp_study_run *run, bool redo, lp_error *err)
{
	for (size_t i = 0; i < run->ncells; i++)
		for (size_t k = 0; k < run->cells[i].ninputs; k++)
			lp_input_state_read(run->cells[i].inputs[k].path, &run->cells[i].inputs[k].state);
	if (redo)
		return 0;
	GPtrArray *docs = g_ptr_array_new_with_free_func(document_free);
	GHashTable *entries = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
	int rc = 0;
	if (g_file_test(run->manifest_path, G_FILE_TEST_EXISTS))
		rc = load_manifest(run->manifest_path, docs, entries, err);
	char **parts = list_parts(run);
	for (char **p = parts; *p && !rc; p++)
		rc = load_manifest(*p, docs, entries, err);
	g_strfreev(parts);
	/* In index order, once every file is read: a merge is taken before
	 * the cells that need it, whichever part holds it. */
	for (size_t i = 0; i < run->ncells && !rc; i++) {
		entry *e = g_hash_table_lookup(entries, run->cells[i].name);
		if (e)
			take_entry(e->doc, e->node, &run->cells[i], run);
	}
	g_hash_table_destroy(entries);
	g_ptr_array_unref(docs);
	return rc;
}

int lp_study_collect(lp_study_run *run, lp_error *err)
{
	g_clear_pointer(&run->part, g_free);
	if (g_mkdir_with_parents(run->dir, 0777) < 0)
		return lp_fail(err, LP_EIO, "cannot create directory %s: %s", run->dir, g_strerror(errno));
	int rc = lp_study_write_manifest(run, err);
	if (rc)
		return rc;
	/* Taken into the manifest: a later run must not take them again. */
	char **parts = list_parts(run);
	for (char **p = parts; *p && !rc; p++)
		if (g_unlink(*p) < 0 && errno != ENOENT)
			rc = lp_fail(err, LP_EIO, "cannot remove %s: %s", *p, g_strerror(errno));
	g_strfreev(parts);
	return rc;
}

void lp_study_select_shard(lp_study_run *run, size_t k, size_t n)
{
	for (size_t i = 0; i < run->ncells; i++)
		run->cells[i].selected = i % n == k;
	/* A shard's cells need their merges here: any shard may make them
	 * (the same bytes), and one not done is made. */
	for (size_t i = 0; i < run->ncells; i++) {
		const lp_study_cell *c = &run->cells[i];
		if (c->selected && c->depends >= 0 && !run->cells[c->depends].done)
			run->cells[c->depends].selected = true;
	}
}

void lp_study_select_index(lp_study_run *run, size_t index)
{
	for (size_t i = 0; i < run->ncells; i++)
		run->cells[i].selected = i == index;
}

/* ---- the manifest ---- */

static int emit_cell(yaml_emitter_t *em, const lp_study_cell *c)
{
	char number[32];
	if (lp_yaml_begin(em, false) || lp_yaml_pair(em, "name", c->name) ||
	    lp_yaml_key(em, "command") || lp_yaml_begin_flow(em, true))
		return -1;
	for (char **a = c->command; *a; a++)
		if (lp_yaml_str(em, *a))
			return -1;
	if (lp_yaml_end(em, true) || lp_yaml_key(em, "inputs") || lp_yaml_begin(em, true))
		return -1;
	for (size_t i = 0; i < c->ninputs; i++) {
		const lp_cell_input *in = &c->inputs[i];
		if (lp_yaml_begin_flow(em, false) || lp_yaml_pair(em, "path", in->path) ||
		    (in->state.known && (lp_yaml_pair_u64(em, "size", in->state.size) ||
					 lp_yaml_pair(em, "mtime", in->state.mtime))) ||
		    lp_yaml_end(em, false))
			return -1;
	}
	if (lp_yaml_end(em, true) || lp_yaml_pair(em, "status", lp_cell_status_names[c->status]))
		return -1;
	if (c->status == LP_CELL_OK || c->status == LP_CELL_FAILED || c->exit_status >= 0) {
		if (c->exit_status >= 0 && lp_yaml_pair_u64(em, "exit_status", (uint64_t)c->exit_status))
			return -1;
		g_snprintf(number, sizeof number, "%.3f", c->wall_seconds);
		if (lp_yaml_pair(em, "wall_seconds", number))
			return -1;
		g_snprintf(number, sizeof number, "%.3f", c->cpu_seconds);
		if (lp_yaml_pair(em, "cpu_seconds", number) ||
		    lp_yaml_pair_u64(em, "peak_rss_kib", c->peak_rss_kib))
			return -1;
	}
	if (c->job_id && lp_yaml_pair(em, "job_id", c->job_id))
		return -1;
	if (c->error && lp_yaml_pair_message(em, "error", c->error))
		return -1;
	return lp_yaml_end(em, false);
}

int lp_study_write_manifest(const lp_study_run *run, lp_error *err)
{
	GString *text = g_string_new(NULL);
	yaml_emitter_t em;
	char *study_path = g_canonicalize_filename(run->study->file, NULL);
	int bad = lp_yaml_start(&em, text) || lp_yaml_pair(&em, "version", LP_VERSION) ||
		  lp_yaml_pair(&em, "study", study_path) ||
		  lp_yaml_pair(&em, "study_sha256", run->study->sha256) ||
		  lp_yaml_key(&em, "cells") || lp_yaml_begin(&em, true);
	/* A part holds the cells its run started. */
	for (size_t i = 0; !bad && i < run->ncells; i++)
		if (!run->part || run->cells[i].started)
			bad = emit_cell(&em, &run->cells[i]);
	bad = bad || lp_yaml_end(&em, true) || lp_yaml_finish(&em);
	g_free(study_path);
	const char *path = run->part ? run->part : run->manifest_path;
	int rc = bad ? lp_fail(err, LP_EIO, "cannot format the manifest %s", path)
		     : lp_write_file_atomic(AT_FDCWD, path, text->str, text->len, err);
	g_string_free(text, TRUE);
	return rc;
}

/* ---- running ---- */

static bool to_run(const lp_study_cell *c) { return c->selected && !c->done && !c->started; }

static void fail_cell(lp_study_cell *c, int status, const char *why)
{
	c->started = true;
	c->status = LP_CELL_FAILED;
	c->exit_status = status;
	g_free(c->error);
	c->error = g_strdup(why);
}

static void on_done(void *ctx, const lp_job_outcome *outcome)
{
	lp_study_cell *c = ctx;
	lp_study_run *run = c->run;
	lp_job_proc *proc = c->proc;
	c->proc = NULL;
	c->wall_seconds = outcome->seconds;
	c->cpu_seconds = outcome->cpu_seconds;
	c->peak_rss_kib = outcome->peak_rss_kib;
	c->exit_status = outcome->status;
	g_free(c->error);
	c->error = NULL;
	if (outcome->status == LP_OK) {
		c->status = LP_CELL_OK;
	} else if (run->pool.stopped_by) {
		c->status = LP_CELL_INTERRUPTED;
		c->error = g_strdup_printf("interrupted by %s", g_strsignal(run->pool.stopped_by));
	} else {
		fail_cell(c, outcome->status, outcome->msg);
	}
	lp_error err = {0};
	if (lp_study_write_manifest(run, &err))
		fprintf(stderr, "%s: %s\n", run->command, err.msg);
	lp_job_pool_ended(&run->pool, proc);
}

static const lp_job_proc_ops cell_ops = {NULL, NULL, on_done};

static void start_cells(void *study_run)
{
	lp_study_run *run = study_run;
	/* In index order: a merge comes before the cells that need it. A
	 * cell whose merge failed fails with it. */
	for (size_t i = 0; i < run->ncells && lp_job_pool_has_room(&run->pool); i++) {
		lp_study_cell *c = &run->cells[i];
		if (!to_run(c))
			continue;
		if (c->depends >= 0) {
			const lp_study_cell *m = &run->cells[c->depends];
			bool merge_ends_here = m->selected && !m->done;
			bool merge_ended = !merge_ends_here || (m->started && !m->proc);
			if (merge_ends_here && !merge_ended)
				continue; /* it runs first */
			if (m->status != LP_CELL_OK) {
				char *why = g_strdup_printf("its merge %s %s", m->name,
							    merge_ends_here ? "failed" : "is not done");
				fail_cell(c, LP_EIO, why);
				g_free(why);
				continue;
			}
		}
		c->started = true;
		c->status = LP_CELL_PENDING;
		g_clear_pointer(&c->error, g_free);
		g_clear_pointer(&c->job_id, g_free);
		c->job_id = lp_slurm_job_id();
		for (size_t k = 0; k < c->ninputs; k++)
			lp_input_state_read(c->inputs[k].path, &c->inputs[k].state);
		lp_error err = {0};
		if (!lp_make_output_dir(c->output, &err))
			c->proc = lp_cell_proc_start(c->stages, c->nstages, 0, &cell_ops, c, &err);
		if (c->proc)
			lp_job_pool_started(&run->pool, c->proc);
		else
			fail_cell(c, err.status, err.msg);
	}
}

int lp_study_run_cells(lp_study_run *run, lp_error *err)
{
	const char *dir = run->part ? run->parts_dir : run->dir;
	if (g_mkdir_with_parents(dir, 0777) < 0)
		return lp_fail(err, LP_EIO, "cannot create directory %s: %s", dir, g_strerror(errno));
	int rc = lp_study_write_manifest(run, err);
	if (!rc)
		lp_job_pool_run(&run->pool);
	return rc ? rc : lp_study_write_manifest(run, err);
}

size_t lp_study_list_failures(const lp_study_run *run)
{
	size_t n = 0;
	for (size_t i = 0; i < run->ncells; i++) {
		const lp_study_cell *c = &run->cells[i];
		if ((!c->selected && !c->started) || c->status == LP_CELL_OK)
			continue;
		n++;
		if (c->status == LP_CELL_PENDING)
			fprintf(stderr, "%s: cell %s not run\n", run->command, c->name);
		else
			fprintf(stderr, "%s: cell %s %s: %s\n", run->command, c->name,
				lp_cell_status_names[c->status], c->error ? c->error : "");
	}
	return n;
}

/* ---- the table ---- */

/* The rows of one cell's CSV file (the header checked, then skipped),
 * each as a table row. */
static int append_rows(const lp_study_run *run, const lp_study_cell *c, GString *table,
		       lp_error *err)
{
	static const char sim_header[] = "policy,size,references,faults,miss_ratio,space_time";
	static const char sweep_header[] =
		"memory,ticks,references,faults,waits,evictions,busy_ticks,idle_ticks,utilization";
	char *text = NULL;
	gsize len = 0;
	GError *gerr = NULL;
	if (!g_file_get_contents(c->output, &text, &len, &gerr)) {
		int rc = lp_fail(err, LP_EIO, "cannot read %s: %s", c->output, gerr->message);
		g_error_free(gerr);
		return rc;
	}
	const char *capture = run->study->captures[c->capture].name;
	char **lines = g_strsplit(text, "\n", -1);
	int rc = 0;
	const char *header = c->kind == LP_CELL_SIM ? sim_header : sweep_header;
	size_t want = c->kind == LP_CELL_SIM ? 6 : 9;
	if (!lines[0] || strcmp(lines[0], header))
		rc = lp_fail(err, LP_EINPUT, "%s:1: expected the header %s", c->output, header);
	char *last_size = NULL;
	for (size_t i = 1; !rc && lines[i] && lines[i][0]; i++) {
		char **f = g_strsplit(lines[i], ",", -1);
		if (g_strv_length(f) == want && c->kind == LP_CELL_SCHEDULE && same(last_size, f[0])) {
			g_strfreev(f); /* a one-size sweep's second run (study.c, read_memory) */
			continue;
		}
		if (g_strv_length(f) != want)
			rc = lp_fail(err, LP_EINPUT, "%s:%zu: expected %zu fields", c->output, i + 1, want);
		else if (c->kind == LP_CELL_SIM)
			g_string_append_printf(table, "%s,sim,%s,,,,,,%s,%s,%s,%s,%s,,,,,,\n", capture,
					       f[0], f[1], f[2], f[3], f[4], f[5]);
		else
			g_string_append_printf(table, "%s,schedule,%s,%s,%s,%s,%s,%s,%s,%s,%s,,,%s,%s,%s,%s,%s,%s\n",
					       capture, c->values[LP_SCHED_POLICY],
					       c->values[LP_SCHED_QUANTUM], c->values[LP_SCHED_CPUS],
					       c->values[LP_SCHED_REPLACEMENT],
					       c->values[LP_SCHED_FAULT_TICKS], c->values[LP_SCHED_SEED],
					       f[0], f[2], f[3], f[1], f[4], f[5], f[6], f[7], f[8]);
		if (c->kind == LP_CELL_SCHEDULE && g_strv_length(f) == want) {
			g_free(last_size);
			last_size = g_strdup(f[0]);
		}
		g_strfreev(f);
	}
	g_free(last_size);
	g_strfreev(lines);
	g_free(text);
	return rc;
}

int lp_study_write_table(const lp_study_run *run, const char *path, lp_error *err)
{
	GString *table = g_string_new(LP_STUDY_TABLE_HEADER);
	int rc = 0;
	for (size_t i = 0; i < run->ncells && !rc; i++) {
		const lp_study_cell *c = &run->cells[i];
		if (c->kind != LP_CELL_MERGE && c->status == LP_CELL_OK)
			rc = append_rows(run, c, table, err);
	}
	if (!rc)
		rc = lp_write_file_atomic(AT_FDCWD, path, table->str, table->len, err);
	g_string_free(table, TRUE);
	return rc;
}
