/* index.yaml, both directions: written by the per-process sink
 * (src/formats/procdir.c, through lp_index_write_at) and by laplace index,
 * read back with libyaml's document loader. Ids and timestamps are hex
 * strings, counts decimal numbers. Readers need only layout, form and the
 * tasks' paths (laplace-formats(5), "PER-PROCESS MERGE OUTPUT"): every
 * other key may be absent, and keys not known are ignored; a key that is
 * there is read as strictly as when the merge wrote it. */
#include "formats/procindex.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "io/inbuf.h"
#include "io/staging.h"
#include "formats/refio.h"
#include "core/numbers.h"
#include "io/yamlout.h"
#include "io/yamlload.h"

static const char *get_text(lp_yaml_doc *r, yaml_node_t *map, const char *key)
{
	yaml_node_t *v = lp_yaml_get(r, map, key, YAML_SCALAR_NODE);
	return v ? (const char *)v->data.scalar.value : NULL;
}

static int get_hex(lp_yaml_doc *r, yaml_node_t *map, const char *key, uint64_t *out)
{
	yaml_node_t *v = lp_yaml_get(r, map, key, YAML_SCALAR_NODE);
	if (!v)
		return -1;
	if (lp_parse_hex((char *)v->data.scalar.value, v->data.scalar.length, out))
		return lp_yaml_bad(r, v, key, "not a hex number");
	return 0;
}

/* A count or timestamp, when key is there: *has says whether it was. */
static int get_opt_count(lp_yaml_doc *r, yaml_node_t *map, const char *key, uint64_t *out,
			 bool *has)
{
	*has = lp_yaml_find(r, map, key) != NULL;
	return *has ? lp_yaml_get_count(r, map, key, out) : 0;
}

static int get_opt_hex(lp_yaml_doc *r, yaml_node_t *map, const char *key, uint64_t *out, bool *has)
{
	*has = lp_yaml_find(r, map, key) != NULL;
	return *has ? get_hex(r, map, key, out) : 0;
}

/* The path when required (task files) or present (kernel, orphan); the
 * counts when all of them are there: records, references, and the
 * timestamps of a file with records. With any of them left out the file
 * is counted from itself (lp_index_count), those given read as strictly
 * all the same. */
static int get_file(lp_yaml_doc *r, yaml_node_t *map, bool need_path, lp_index_file *f)
{
	if (need_path || lp_yaml_find(r, map, "path")) {
		yaml_node_t *v = lp_yaml_get(r, map, "path", YAML_SCALAR_NODE);
		if (!v)
			return -1;
		const char *path = (const char *)v->data.scalar.value;
		/* A NUL (a "\0" in a quoted scalar) would end the name early:
		 * another file than the manifest names. */
		if (memchr(path, 0, v->data.scalar.length))
			return lp_yaml_bad(r, v, "path", "holds a NUL byte");
		char **parts = g_strsplit(path, "/", 0);
		bool inside = *path && !g_path_is_absolute(path) &&
			      !g_strv_contains((const char *const *)parts, "..");
		g_strfreev(parts);
		if (!inside)
			return lp_yaml_bad(r, map, "path", "not a path inside the directory");
		f->path = g_strdup(path);
	}
	bool records = false, references = false, first = false, last = false;
	if (get_opt_count(r, map, "records", &f->records, &records) ||
	    get_opt_count(r, map, "references", &f->references, &references) ||
	    get_opt_hex(r, map, "first_timestamp", &f->first_ts, &first) ||
	    get_opt_hex(r, map, "last_timestamp", &f->last_ts, &last))
		return -1;
	if (records && references && f->references > f->records)
		return lp_yaml_bad(r, map, "references", "more than records");
	f->counted = records && references && (!f->records || (first && last));
	uint64_t given = f->records;
	if (!f->counted)
		*f = (lp_index_file){.path = f->path};
	f->expect_records = records;
	f->expected_records = given;
	return 0;
}

/* The records expected of each task file as a whole: the sum of its
 * entries' when every entry gives them (a reused tid's file, layout
 * task), none in layout process (an entry gives a task's records of the
 * process's file). */
static void expect_whole_files(lp_index *ix)
{
	GHashTable *sums = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < ix->nprocesses; i++)
			for (size_t k = 0; k < ix->processes[i].ntasks; k++) {
				lp_index_file *f = &ix->processes[i].tasks[k].file;
				if (ix->layout != LP_LAYOUT_TASK) {
					f->expect_records = false;
					continue;
				}
				char *key = g_canonicalize_filename(f->path, "/");
				lp_index_file *sum = g_hash_table_lookup(sums, key);
				if (!pass && !sum) {
					sum = g_new(lp_index_file, 1);
					*sum = (lp_index_file){.expect_records = true};
					g_hash_table_insert(sums, key, sum);
					key = NULL;
				}
				if (!pass) {
					sum->expect_records &= f->expect_records;
					/* Past 2^64 - 1: no file holds that many. */
					if (__builtin_add_overflow(sum->expected_records,
								   f->expected_records,
								   &sum->expected_records))
						sum->expected_records = UINT64_MAX;
				} else {
					f->expect_records = sum->expect_records;
					f->expected_records = sum->expected_records;
				}
				g_free(key);
			}
	g_hash_table_destroy(sums);
}

int lp_index_check_records(const lp_index_file *f, const char *path, const char *index,
			   uint64_t records, lp_error *err)
{
	if (!f->expect_records || records == f->expected_records)
		return 0;
	return lp_fail(err, LP_EINPUT, "%s: %" PRIu64 " record%s, where %s gives %" PRIu64
		       " (a file cut short, or not the one listed)", path, records,
		       records == 1 ? "" : "s", index, f->expected_records);
}

/* The path of a file as written, without the suffix of its compression. */
static char *uncompressed_name(const char *path)
{
	static const char *const suffixes[] = {".gz", ".zst"};
	for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++)
		if (g_str_has_suffix(path, suffixes[i]))
			return g_strndup(path, strlen(path) - strlen(suffixes[i]));
	return g_strdup(path);
}

/* The ids a task file's path gives: PID/TID for layout task, PID for
 * layout process (no tid); false when it does not have that form. */
static bool ids_of_path(enum lp_layout layout, const char *path, uint64_t *pid, uint64_t *tid,
			bool *has_tid)
{
	char *name = uncompressed_name(path);
	char **parts = g_strsplit(name, "/", 0);
	guint n = g_strv_length(parts);
	bool ok = n == (layout == LP_LAYOUT_TASK ? 2u : 1u) &&
		  !lp_parse_hex(parts[0], strlen(parts[0]), pid) &&
		  (n == 1 || !lp_parse_hex(parts[1], strlen(parts[1]), tid));
	*has_tid = n == 2;
	g_strfreev(parts);
	g_free(name);
	return ok;
}

/* The task files listed so far, to refuse one listed twice: read twice,
 * or in place of another, it would make a schedule or a count of
 * records that are not the directory's. */
typedef struct listing {
	enum lp_layout layout;
	GHashTable *nodes; /* task entries' YAML nodes: an alias lists one again */
	GHashTable *paths; /* a path made canonical -> listed_file */
} listing;

typedef struct listed_file {
	size_t process; /* the entry in processes */
	uint64_t pid, tid;
	bool counted;
} listed_file;

/* Task t of process entry p listed at node id: a file listed again is
 * refused, but where the merge lists it so: a pid reused while tasks of
 * the old process lived on makes two entries of that pid, each with the
 * file of a reused tid and the counts of its own records in it (layout
 * task), or the process's file (layout process, where every task of the
 * process lists it). */
static int list_task(lp_yaml_doc *r, listing *l, yaml_node_t *node, int id, size_t p,
		     uint64_t pid, const lp_index_task *t)
{
	if (!g_hash_table_add(l->nodes, GINT_TO_POINTER(id)))
		return lp_yaml_bad(r, node, "tasks", "a task listed twice (a YAML alias)");
	char *key = g_canonicalize_filename(t->file.path, "/");
	const listed_file *before = g_hash_table_lookup(l->paths, key);
	if (!before) {
		listed_file *now = g_new(listed_file, 1);
		*now = (listed_file){p, pid, t->tid, t->file.counted};
		g_hash_table_insert(l->paths, key, now);
		return 0;
	}
	g_free(key);
	bool reused = l->layout == LP_LAYOUT_PROCESS
			      ? before->pid == pid
			      : before->process != p && before->pid == pid && before->tid == t->tid &&
					before->counted && t->file.counted;
	if (reused)
		return 0;
	char q[LP_QUOTE_SIZE];
	lp_fail(r->err, LP_EINPUT, "%s:%zu: field path: '%s' listed twice (only the processes of "
		"a reused pid list a file again%s)", r->name, node->start_mark.line + 1,
		lp_quote(q, t->file.path, strlen(t->file.path)),
		l->layout == LP_LAYOUT_TASK ? ", each with its counts" : "");
	return -1;
}

static int get_process(lp_yaml_doc *r, yaml_node_t *map, listing *l, size_t index,
		       lp_index_process *proc)
{
	/* No tasks: a process whose tasks' files are not listed. */
	yaml_node_t *tasks = lp_yaml_find(r, map, "tasks")
				     ? lp_yaml_get(r, map, "tasks", YAML_SEQUENCE_NODE)
				     : NULL;
	if (!tasks && lp_yaml_find(r, map, "tasks"))
		return -1;
	size_t nt = tasks ? (size_t)(tasks->data.sequence.items.top -
				     tasks->data.sequence.items.start)
			  : 0;
	proc->tasks = g_new0(lp_index_task, nt);
	bool has_pid = lp_yaml_find(r, map, "pid");
	if (has_pid && get_hex(r, map, "pid", &proc->pid))
		return -1;
	if (!has_pid && !nt)
		return lp_yaml_bad(r, map, "pid", "missing, and no task's path names one");
	for (size_t i = 0; i < nt; i++) {
		int id = tasks->data.sequence.items.start[i];
		yaml_node_t *t = yaml_document_get_node(&r->doc, id);
		if (t->type != YAML_MAPPING_NODE)
			return lp_yaml_bad(r, t, "tasks", "not a task mapping");
		proc->ntasks = i + 1;
		lp_index_task *task = &proc->tasks[i];
		if (get_file(r, t, true, &task->file))
			return -1;
		/* Ids the manifest leaves out are those of the file's path. */
		bool has_tid = lp_yaml_find(r, t, "tid");
		uint64_t pid = 0, tid = 0;
		bool path_tid = false;
		bool named = ids_of_path(l->layout, task->file.path, &pid, &tid, &path_tid);
		if (has_tid && get_hex(r, t, "tid", &task->tid))
			return -1;
		if (!has_tid && !(named && path_tid))
			return lp_yaml_bad(r, t, "tid", l->layout == LP_LAYOUT_TASK
							? "missing, and the path is not PID/TID"
							: "missing (a process file's path has no tid)");
		if (!has_tid)
			task->tid = tid;
		if (!has_pid && !named)
			return lp_yaml_bad(r, t, "pid", "missing, and the path does not name one");
		if (!has_pid && i == 0)
			proc->pid = pid;
		else if (!has_pid && pid != proc->pid)
			return lp_yaml_bad(r, t, "pid", "missing, and the tasks' paths name two");
		if (list_task(r, l, t, id, index, proc->pid, task))
			return -1;
	}
	if (!lp_yaml_find(r, map, "programs"))
		return 0; /* NULL: not known */
	yaml_node_t *programs = lp_yaml_get(r, map, "programs", YAML_SEQUENCE_NODE);
	if (!programs)
		return -1;
	size_t n = (size_t)(programs->data.sequence.items.top - programs->data.sequence.items.start);
	proc->programs = g_new0(char *, n + 1);
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *v = yaml_document_get_node(&r->doc, programs->data.sequence.items.start[i]);
		if (v->type != YAML_SCALAR_NODE)
			return lp_yaml_bad(r, v, "programs", "not a program name");
		proc->programs[i] = g_strdup((const char *)v->data.scalar.value);
	}
	return 0;
}

/* A group of counts of the statistics entry, when it is there. */
static int get_opt_group(lp_yaml_doc *r, yaml_node_t *map, const char *key, yaml_node_t **group)
{
	*group = NULL;
	if (!lp_yaml_find(r, map, key))
		return 0;
	*group = lp_yaml_get(r, map, key, YAML_MAPPING_NODE);
	return *group ? 0 : -1;
}

/* The statistics entry (laplace-formats(5), "STATISTICS"), as
 * lp_stats_emit writes it: *complete when every count is there (a reader
 * then takes them), those there read strictly in any case. */
static int get_stats(lp_yaml_doc *r, yaml_node_t *map, lp_stats *st, bool *complete)
{
	char key[2] = {0, 0};
	bool has;
	yaml_node_t *refs, *events, *pages;
	if (get_opt_group(r, map, "references", &refs) || get_opt_group(r, map, "events", &events) ||
	    get_opt_group(r, map, "canonical_pages", &pages))
		return -1;
	*complete = refs && events && pages;
	for (int i = 0; refs && i < 6; i++) {
		key[0] = lp_ref_types[i];
		if (get_opt_count(r, refs, key, &st->refs[i], &has))
			return -1;
		*complete &= has;
	}
	for (int t = 0; events && t < LP_TAG_COUNT; t++) {
		key[0] = lp_tag_chars[t];
		if (get_opt_count(r, events, key, &st->events[t], &has))
			return -1;
		*complete &= has;
	}
	for (int k = 0; pages && k < LP_PAGE_KIND_COUNT; k++) {
		if (get_opt_count(r, pages, lp_page_kind_names[k], &st->pages[k], &has))
			return -1;
		*complete &= has;
	}
	struct {
		const char *key;
		uint64_t *value;
	} const counts[] = {
		{"cow_copies", &st->cow_copies},       {"unmapped_pages", &st->unmapped_pages},
		{"orphan_spaces", &st->orphan_spaces}, {"mismatches", &st->mismatches},
		{"warnings", &st->warnings},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(counts); i++) {
		if (get_opt_count(r, map, counts[i].key, counts[i].value, &has))
			return -1;
		*complete &= has;
	}
	return 0;
}

const char *const lp_layout_names[2] = {"task", "process"};

/* The name of one of the directory's own files (kernel, orphan) as it
 * stands in dir: plain, .gz or .zst; NULL when there is none. */
static char *own_file(const char *dir, const char *name)
{
	static const char *const suffixes[] = {"", ".gz", ".zst"};
	for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++) {
		char *rel = g_strconcat(name, suffixes[i], NULL);
		char *path = g_build_filename(dir, rel, NULL);
		struct stat st;
		bool there = !lstat(path, &st);
		g_free(path);
		if (there)
			return rel;
		g_free(rel);
	}
	return NULL;
}

/* The kernel or orphan entry: as the manifest gives it, or when it has
 * none the file that is there (a kernel entry is listed, to be found
 * missing by readers when its file is not there). */
static int get_own_file(lp_yaml_doc *r, yaml_node_t *root, const char *dir, const char *key,
			lp_index_file *f)
{
	yaml_node_t *entry = lp_yaml_find(r, root, key) ? lp_yaml_get(r, root, key, YAML_MAPPING_NODE)
						       : NULL;
	if (lp_yaml_find(r, root, key) && !entry)
		return -1;
	if (entry && get_file(r, entry, false, f))
		return -1;
	bool is_kernel = !strcmp(key, "kernel");
	/* An orphan entry without a path: there is no orphan file. */
	if (!f->path && (is_kernel || !entry))
		f->path = own_file(dir, key);
	/* Not listed and not there: the directory is incomplete. */
	if (!f->path && is_kernel && !entry)
		return lp_fail(r->err, LP_EINPUT, "%s: no kernel file (kernel, kernel.gz or "
			       "kernel.zst), which every per-process directory has", dir);
	if (!f->path && is_kernel)
		f->path = g_strdup(key);
	if (!f->path)
		f->counted = true; /* no file: nothing in it */
	return 0;
}

static int get_index(lp_yaml_doc *r, const char *dir, lp_index *ix)
{
	yaml_node_t *root = yaml_document_get_root_node(&r->doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		return lp_fail(r->err, LP_EINPUT, "%s: not a per-process index (no mapping at the top)",
			       r->name);
	/* format is written but not needed to read the directory: readers
	 * ignore it, so that manifests of other writers are read. A version
	 * other than 1 says the keys mean something else. */
	if (lp_yaml_find(r, root, "version")) {
		uint64_t version;
		if (lp_yaml_get_count(r, root, "version", &version))
			return -1;
		if (version != 1) {
			lp_fail(r->err, LP_EINPUT, "%s:%zu: field version: %" PRIu64 " is not 1", r->name,
				lp_yaml_find(r, root, "version")->start_mark.line + 1, version);
			return -1;
		}
	}
	if (lp_yaml_find(r, root, "layout")) {
		const char *layout = get_text(r, root, "layout");
		if (!layout)
			return -1;
		if (!strcmp(layout, lp_layout_names[LP_LAYOUT_PROCESS]))
			ix->layout = LP_LAYOUT_PROCESS;
		else if (strcmp(layout, lp_layout_names[LP_LAYOUT_TASK]))
			return lp_yaml_bad(r, lp_yaml_find(r, root, "layout"), "layout",
					   "neither task nor process");
	}
	if (lp_yaml_find(r, root, "form")) {
		const char *form = get_text(r, root, "form");
		if (!form)
			return -1;
		ix->binary = !strcmp(form, "bin");
		if (!ix->binary && strcmp(form, "text"))
			return lp_yaml_bad(r, lp_yaml_find(r, root, "form"), "form", "neither text nor bin");
	}
	/* The merge's inputs: only shown, so taken when they are names. */
	yaml_node_t *inputs = lp_yaml_find(r, root, "inputs");
	if (inputs && inputs->type == YAML_MAPPING_NODE) {
		yaml_node_t *reference = lp_yaml_find(r, inputs, "reference");
		yaml_node_t *kernel = lp_yaml_find(r, inputs, "kernel");
		if (reference && reference->type == YAML_SCALAR_NODE)
			ix->reference = g_strdup((const char *)reference->data.scalar.value);
		if (kernel && kernel->type == YAML_SCALAR_NODE)
			ix->kernel_input = g_strdup((const char *)kernel->data.scalar.value);
	}
	/* No processes: a manifest that lists no task's file. */
	yaml_node_t *procs = lp_yaml_find(r, root, "processes")
				     ? lp_yaml_get(r, root, "processes", YAML_SEQUENCE_NODE)
				     : NULL;
	if (!procs && lp_yaml_find(r, root, "processes"))
		return -1;
	size_t n = procs ? (size_t)(procs->data.sequence.items.top - procs->data.sequence.items.start)
			 : 0;
	ix->processes = g_new0(lp_index_process, n);
	listing l = {
		.layout = ix->layout,
		.nodes = g_hash_table_new(NULL, NULL),
		.paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
	};
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		yaml_node_t *p = yaml_document_get_node(&r->doc, procs->data.sequence.items.start[i]);
		if (p->type != YAML_MAPPING_NODE) {
			rc = lp_yaml_bad(r, p, "processes", "not a process mapping");
			break;
		}
		ix->nprocesses = i + 1;
		rc = get_process(r, p, &l, i, &ix->processes[i]);
	}
	if (!rc)
		rc = get_own_file(r, root, dir, "kernel", &ix->kernel) ||
		     get_own_file(r, root, dir, "orphan", &ix->orphan) ? -1 : 0;
	/* The kernel's or orphan file read again as a task's. */
	const lp_index_file *own[] = {&ix->kernel, &ix->orphan};
	for (size_t i = 0; i < G_N_ELEMENTS(own) && !rc && own[i]->path; i++) {
		char *key = g_canonicalize_filename(own[i]->path, "/");
		if (g_hash_table_contains(l.paths, key))
			rc = lp_fail(r->err, LP_EINPUT, "%s: the %s file %s is listed as a task's too",
				     r->name, i ? "orphan" : "kernel", own[i]->path);
		g_free(key);
	}
	g_hash_table_destroy(l.nodes);
	g_hash_table_destroy(l.paths);
	if (rc)
		return -1;
	if (lp_yaml_find(r, root, "statistics")) {
		yaml_node_t *stats = lp_yaml_get(r, root, "statistics", YAML_MAPPING_NODE);
		if (!stats || get_stats(r, stats, &ix->stats, &ix->has_stats))
			return -1;
	}
	return 0;
}

lp_index *lp_index_read(const char *dir, lp_error *err)
{
	char *name = g_build_filename(dir, "index.yaml", NULL);
	char *text = NULL;
	size_t len = 0;
	if (lp_read_small_file(name, true, LP_INDEX_MAX_BYTES, "per-process index", &text, &len,
			       err)) {
		g_free(name);
		return NULL;
	}
	lp_yaml_doc r = {.name = name, .err = err};
	lp_index *ix = g_new0(lp_index, 1);
	int rc = lp_yaml_load(name, text, len, &r.doc, err) ? -1 : get_index(&r, dir, ix);
	if (!rc)
		expect_whole_files(ix);
	yaml_document_delete(&r.doc);
	g_free(text);
	g_free(name);
	if (rc) {
		lp_index_free(ix);
		return NULL;
	}
	return ix;
}

void lp_index_free(lp_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->nprocesses; i++) {
		lp_index_process *p = &ix->processes[i];
		g_strfreev(p->programs);
		for (size_t t = 0; t < p->ntasks; t++)
			g_free(p->tasks[t].file.path);
		g_free(p->tasks);
	}
	g_free(ix->processes);
	g_free(ix->kernel.path);
	g_free(ix->orphan.path);
	g_free(ix->reference);
	g_free(ix->kernel_input);
	g_free(ix);
}

/* ---- the writer's side ---- */

/* The counts every file shares: records, references and, when it holds
 * any record, the first and last timestamps. */
static int emit_counts(yaml_emitter_t *em, const lp_index_file *f)
{
	if (lp_yaml_pair_u64(em, "records", f->records) ||
	    lp_yaml_pair_u64(em, "references", f->references))
		return -1;
	if (f->records && (lp_yaml_pair_hex(em, "first_timestamp", f->first_ts) ||
			   lp_yaml_pair_hex(em, "last_timestamp", f->last_ts)))
		return -1;
	return 0;
}

static int emit_top_file(yaml_emitter_t *em, const char *key, const lp_index_file *f)
{
	if (lp_yaml_key(em, key) || lp_yaml_begin(em, false))
		return -1;
	if (f->path && lp_yaml_pair(em, "path", f->path))
		return -1;
	if (emit_counts(em, f))
		return -1;
	return lp_yaml_end(em, false);
}

static int emit_process(yaml_emitter_t *em, const lp_index_process *p)
{
	if (lp_yaml_begin(em, false) || lp_yaml_pair_hex(em, "pid", p->pid))
		return -1;
	if (lp_yaml_key(em, "programs") || lp_yaml_begin_flow(em, true))
		return -1;
	for (size_t k = 0; p->programs[k]; k++)
		if (lp_yaml_str(em, p->programs[k]))
			return -1;
	if (lp_yaml_end(em, true))
		return -1;
	if (lp_yaml_key(em, "tasks") || lp_yaml_begin(em, true))
		return -1;
	for (size_t k = 0; k < p->ntasks; k++) {
		const lp_index_task *t = &p->tasks[k];
		if (lp_yaml_begin(em, false) || lp_yaml_pair_hex(em, "tid", t->tid) ||
		    lp_yaml_pair(em, "path", t->file.path) || emit_counts(em, &t->file) ||
		    lp_yaml_end(em, false))
			return -1;
	}
	return lp_yaml_end(em, true) || lp_yaml_end(em, false) ? -1 : 0;
}

int lp_index_emit(yaml_emitter_t *em, const lp_index *ix, const lp_stats *stats)
{
	if (lp_yaml_pair(em, "format", "laplace-per-process") || lp_yaml_pair_u64(em, "version", 1) ||
	    lp_yaml_pair(em, "layout", lp_layout_names[ix->layout]) ||
	    (ix->binary && lp_yaml_pair(em, "form", "bin")))
		return -1;
	if (ix->reference && ix->kernel_input &&
	    (lp_yaml_key(em, "inputs") || lp_yaml_begin(em, false) ||
	     lp_yaml_pair(em, "reference", ix->reference) ||
	     lp_yaml_pair(em, "kernel", ix->kernel_input) || lp_yaml_end(em, false)))
		return -1;
	if (lp_yaml_key(em, "processes") || lp_yaml_begin(em, true))
		return -1;
	for (size_t i = 0; i < ix->nprocesses; i++)
		if (emit_process(em, &ix->processes[i]))
			return -1;
	if (lp_yaml_end(em, true))
		return -1;
	if (emit_top_file(em, "kernel", &ix->kernel) || emit_top_file(em, "orphan", &ix->orphan))
		return -1;
	if (stats && (lp_yaml_key(em, "statistics") || lp_yaml_begin(em, false) ||
		      lp_stats_emit(em, stats) || lp_yaml_end(em, false)))
		return -1;
	return 0;
}

static int write_all(int fd, const char *dir, const char *data, size_t n, lp_error *err)
{
	while (n > 0) {
		ssize_t k = write(fd, data, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return lp_fail(err, LP_EIO, "cannot write %s/index.yaml: %s", dir, g_strerror(errno));
		}
		data += k;
		n -= (size_t)k;
	}
	return 0;
}

int lp_index_write_at(int dirfd, const char *dir, const lp_index *ix, const lp_stats *stats,
		      lp_error *err)
{
	GString *text = g_string_new(NULL);
	yaml_emitter_t em;
	int rc = 0;
	bool failed = lp_yaml_start(&em, text) || lp_index_emit(&em, ix, stats);
	const char *problem = em.problem ? em.problem : "YAML emitter failed"; /* a literal */
	if (lp_yaml_finish(&em) || failed) /* finish frees the emitter in any case */
		rc = lp_fail(err, LP_EIO, "cannot write %s/index.yaml: %s", dir, problem);
	if (!rc) {
		int fd = openat(dirfd, "index.yaml", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0) {
			rc = lp_fail(err, LP_EIO, "cannot open %s/index.yaml: %s", dir, g_strerror(errno));
		} else {
			rc = write_all(fd, dir, text->str, text->len, err);
			if (!rc && lp_fsync(fd) < 0)
				rc = lp_fail(err, LP_EIO, "cannot sync %s/index.yaml to disk: %s", dir,
					     g_strerror(errno));
			if (close(fd) && !rc)
				rc = lp_fail(err, LP_EIO, "cannot write %s/index.yaml: %s", dir,
					     g_strerror(errno));
		}
	}
	g_string_free(text, TRUE);
	return rc;
}
