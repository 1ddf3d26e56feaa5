/* laplace index: write the index.yaml of a per-process directory that has
 * none (laplace-formats(5), "PER-PROCESS MERGE OUTPUT"), from its files:
 * pids and tids from the PID/TID paths, counts, timestamps and programs
 * from the records. The merge's statistics are not in the files, so the
 * manifest has none. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "core/numbers.h"
#include "formats/procindex.h"
#include "io/yamlout.h"

/* name without a compression suffix, if it has one. */
static char *base_name(const char *name)
{
	static const char *const suffixes[] = {".gz", ".zst"};
	for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++)
		if (g_str_has_suffix(name, suffixes[i]) && strlen(name) > strlen(suffixes[i]))
			return g_strndup(name, strlen(name) - strlen(suffixes[i]));
	return g_strdup(name);
}

/* An id as the merge names files: lowercase hex, no leading zeros. */
static bool parse_id(const char *s, uint64_t *id)
{
	size_t n = strlen(s);
	if (!n || n > 16 || (n > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isdigit(s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
			return false;
	return !lp_parse_hex(s, n, id);
}

static int by_pid(const void *a, const void *b)
{
	const lp_index_process *x = a, *y = b;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int by_tid(const void *a, const void *b)
{
	const lp_index_task *x = a, *y = b;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static bool is_kind(const char *path, mode_t kind)
{
	struct stat st;
	return !lstat(path, &st) && (st.st_mode & S_IFMT) == kind;
}

static int by_name(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names in directory path, sorted (so that the first of two files
 * of a task, say, is the same on every file system); NULL with err set. */
static GPtrArray *entries_of(const char *path, lp_error *err)
{
	GError *gerr = NULL;
	GDir *d = g_dir_open(path, 0, &gerr);
	if (!d) {
		lp_fail(err, LP_EIO, "cannot read %s: %s", path, gerr->message);
		g_error_free(gerr);
		return NULL;
	}
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	for (const char *entry; (entry = g_dir_read_name(d));)
		g_ptr_array_add(names, g_strdup(entry));
	g_dir_close(d);
	g_ptr_array_sort(names, by_name);
	return names;
}

/* The tasks of process directory PID: its files TID, TID.gz or TID.zst. */
static int read_process(const char *dir, const char *name, lp_index_process *p, lp_error *err)
{
	char *path = g_build_filename(dir, name, NULL);
	GPtrArray *entries = entries_of(path, err);
	if (!entries) {
		g_free(path);
		return err->status;
	}
	int rc = 0;
	GArray *tasks = g_array_new(FALSE, TRUE, sizeof(lp_index_task));
	for (guint i = 0; !rc && i < entries->len; i++) {
		const char *entry = g_ptr_array_index(entries, i);
		char *base = base_name(entry);
		char *file = g_build_filename(path, entry, NULL);
		lp_index_task t = {.file.path = g_build_filename(name, entry, NULL)};
		if (!parse_id(base, &t.tid) || !is_kind(file, S_IFREG))
			rc = lp_fail(err, LP_EINPUT, "%s: not a task file (TID, TID.gz or TID.zst, a "
				     "regular file named by its hex tid)", file);
		for (guint k = 0; !rc && k < tasks->len; k++)
			if (g_array_index(tasks, lp_index_task, k).tid == t.tid)
				rc = lp_fail(err, LP_EINPUT, "%s: a second file of task %s of process %s",
					     file, base, name);
		if (rc)
			g_free(t.file.path);
		else
			g_array_append_val(tasks, t);
		g_free(base);
		g_free(file);
	}
	g_ptr_array_free(entries, TRUE);
	g_free(path);
	g_array_sort(tasks, by_tid);
	p->ntasks = tasks->len;
	p->tasks = (lp_index_task *)(void *)g_array_free(tasks, FALSE);
	return rc;
}

/* What DIR holds: the processes' directories and the kernel and orphan
 * files, none of them counted yet. */
static int read_directory(const char *dir, lp_index *ix, lp_error *err)
{
	GPtrArray *entries = entries_of(dir, err);
	if (!entries)
		return err->status;
	GArray *procs = g_array_new(FALSE, TRUE, sizeof(lp_index_process));
	int rc = 0;
	for (guint i = 0; !rc && i < entries->len; i++) {
		const char *entry = g_ptr_array_index(entries, i);
		if (!strcmp(entry, "index.yaml"))
			continue;
		char *base = base_name(entry);
		char *path = g_build_filename(dir, entry, NULL);
		uint64_t pid;
		lp_index_file *own = !strcmp(base, "kernel")   ? &ix->kernel
				     : !strcmp(base, "orphan") ? &ix->orphan
							       : NULL;
		if (own && own->path)
			rc = lp_fail(err, LP_EINPUT, "%s: a second %s file, beside %s", path, base,
				     own->path);
		else if (own && !is_kind(path, S_IFREG))
			rc = lp_fail(err, LP_EINPUT, "%s: not a regular file", path);
		else if (own)
			own->path = g_strdup(entry);
		else if (parse_id(entry, &pid) && is_kind(path, S_IFDIR)) {
			lp_index_process p = {.pid = pid};
			rc = read_process(dir, entry, &p, err);
			g_array_append_val(procs, p);
		} else if (parse_id(base, &pid) && is_kind(path, S_IFREG))
			rc = lp_fail(err, LP_EINPUT, "%s: a file per process (merge --by process): "
				     "laplace index reads a directory of one file per task", path);
		else
			rc = lp_fail(err, LP_EINPUT, "%s: not a file of a per-process directory (PID/TID, "
				     "kernel, orphan)", path);
		g_free(base);
		g_free(path);
	}
	g_ptr_array_free(entries, TRUE);
	g_array_sort(procs, by_pid);
	ix->nprocesses = procs->len;
	ix->processes = (lp_index_process *)(void *)g_array_free(procs, FALSE);
	if (!rc && !ix->kernel.path)
		rc = lp_fail(err, LP_EINPUT, "%s: no kernel file (kernel, kernel.gz or kernel.zst), "
			     "which every per-process directory has", dir);
	if (!ix->orphan.path)
		ix->orphan.counted = true; /* none: nothing in it */
	return rc;
}

static int write_index(const char *dir, const lp_index *ix, lp_error *err)
{
	GString *text = g_string_new(NULL);
	yaml_emitter_t em;
	bool failed = lp_yaml_start(&em, text) || lp_index_emit(&em, ix, NULL);
	int rc = 0;
	if (lp_yaml_finish(&em) || failed) /* finish frees the emitter in any case */
		rc = lp_fail(err, LP_EIO, "cannot write %s/index.yaml: YAML emitter failed", dir);
	char *name = g_build_filename(dir, "index.yaml", NULL);
	lp_output *out = rc ? NULL : lp_output_open(name, LP_COMPRESS_NONE, err);
	if (!rc && !out)
		rc = err->status;
	if (out && (rc = lp_output_write(out, text->str, text->len, err)))
		lp_output_abort(out);
	else if (out)
		rc = lp_output_commit(out, err);
	g_free(name);
	g_string_free(text, TRUE);
	return rc;
}

int cmd_index(int argc, char **argv)
{
	cli_set_command("laplace index");
	gboolean force = FALSE;
	GOptionEntry entries[] = {
		{"force", 'f', 0, G_OPTION_ARG_NONE, &force, "Replace an index.yaml that DIR has", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("DIR");
	g_option_context_set_summary(ctx,
		"Write DIR/index.yaml, the manifest of a per-process directory of task\n"
		"files (PID/TID, kernel, orphan; gzip or zstd compressed allowed) that\n"
		"has none: pids and tids from the paths; records, references, first and\n"
		"last timestamps and programs (E records) from the files. The merge's\n"
		"statistics cannot be told from the files: the manifest has none.");
	g_option_context_set_description(ctx,
		"Examples:\n"
		"  laplace index pp\n"
		"  laplace stat pp\n"
		"See laplace-index(1).");
	g_option_context_add_main_entries(ctx, entries, NULL);
	cli_add_sync_option(ctx);
	int rc = LP_EUSAGE;
	lp_index *ix = g_new0(lp_index, 1);
	if (!cli_parse_one_input(ctx, &argc, &argv))
		goto out;
	const char *dir = argv[1];
	lp_error err = {0};
	char *name = g_build_filename(dir, "index.yaml", NULL);
	struct stat st;
	bool exists = !lstat(name, &st);
	g_free(name);
	if (stat(dir, &st))
		rc = lp_fail(&err, LP_EIO, "cannot open %s: %s", dir, g_strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		rc = lp_fail(&err, LP_EINPUT, "%s: not a directory", dir);
	else if (exists && !force)
		rc = lp_fail(&err, LP_EUSAGE, "%s/index.yaml: already exists; use --force to replace it",
			     dir);
	else if (!(rc = read_directory(dir, ix, &err)) && !(rc = lp_index_count(dir, ix, &err)))
		rc = write_index(dir, ix, &err);
	if (rc)
		cli_fail(&err);
out:
	lp_index_free(ix);
	g_option_context_free(ctx);
	return rc;
}
