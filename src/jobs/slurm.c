/* A batch submitted to Slurm (jobs/batch.h, lp_slurm_submit): an array
 * job, one element per job, and a collector job that runs after it. */
#include "jobs/batch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

#include "io/staging.h"
#include "jobs/jobreport.h"
#include "jobs/slurm.h"

char *lp_slurm_job_id(void)
{
	const char *job = g_getenv("SLURM_JOB_ID");
	const char *array = g_getenv("SLURM_ARRAY_JOB_ID");
	const char *task = g_getenv("SLURM_ARRAY_TASK_ID");
	if (!job)
		return NULL;
	return array && task ? g_strdup_printf("%s_%s", array, task) : g_strdup(job);
}

char *lp_slurm_array_list(const size_t *indices, size_t n, size_t max_running)
{
	GString *s = g_string_new(NULL);
	for (size_t i = 0; i < n;) {
		size_t first = indices[i], last = first;
		for (i++; i < n && indices[i] == last + 1; i++)
			last++;
		g_string_append_printf(s, "%s%zu", s->len ? "," : "", first);
		if (last > first)
			g_string_append_printf(s, "-%zu", last);
	}
	if (max_running)
		g_string_append_printf(s, "%%%zu", max_running);
	return g_string_free(s, FALSE);
}

/* The array's indices: the jobs that have no entry. */
static char *array_indices(const lp_batch *b, size_t max_running)
{
	size_t *indices = g_new(size_t, b->njobs ? b->njobs : 1), n = 0;
	for (size_t i = 0; i < b->njobs; i++)
		if (!b->jobs[i].entry)
			indices[n++] = b->jobs[i].index;
	char *list = lp_slurm_array_list(indices, n, max_running);
	g_free(indices);
	return list;
}

/* What an earlier submission left in the parts directory: element reports
 * (N.yaml) and logs (N.log, collect.log). Anything else stays. */
static bool is_part(const char *name)
{
	if (!strcmp(name, "collect.log"))
		return true;
	size_t digits = strspn(name, "0123456789");
	return digits && (!strcmp(name + digits, ".yaml") || !strcmp(name + digits, ".log"));
}

static int clear_parts(const char *dir, lp_error *err)
{
	if (g_mkdir_with_parents(dir, 0777) < 0)
		return lp_fail(err, LP_EIO, "cannot create directory %s: %s", dir, g_strerror(errno));
	DIR *d = opendir(dir);
	if (!d)
		return lp_fail(err, LP_EIO, "cannot read directory %s: %s", dir, g_strerror(errno));
	int r = 0;
	const struct dirent *entry;
	while (!r && (entry = readdir(d))) {
		if (!is_part(entry->d_name))
			continue;
		char *path = g_build_filename(dir, entry->d_name, NULL);
		if (g_unlink(path) < 0 && errno != ENOENT)
			r = lp_fail(err, LP_EIO, "cannot remove %s: %s", path, g_strerror(errno));
		g_free(path);
	}
	closedir(d);
	return r;
}

int lp_slurm_write_script(const char *path, const char *submitter, const char *what,
			  const char *command, lp_error *err)
{
	char *text = g_strdup_printf("#!/bin/sh\n# Written by %s --submit slurm: %s\n"
				     "exec %s\n", submitter, what, command);
	int r = lp_write_file_atomic(AT_FDCWD, path, text, strlen(text), err);
	g_free(text);
	return r;
}

int lp_sbatch(GPtrArray *args, const char *what, bool wait, char **id, lp_error *err)
{
	g_ptr_array_add(args, NULL);
	char *found = g_find_program_in_path("sbatch");
	if (!found)
		return lp_fail(err, LP_EIO, "cannot submit %s: no sbatch on PATH (no Slurm here?)", what);
	g_free(found);
	char *out = NULL, *errs = NULL;
	int wait_status = 0;
	GError *gerr = NULL;
	int r = 0;
	if (!g_spawn_sync(NULL, (char **)args->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
			  &errs, &wait_status, &gerr)) {
		r = lp_fail(err, LP_EIO, "cannot run sbatch for %s: %s", what, gerr->message);
		g_error_free(gerr);
		return r;
	}
	g_strstrip(out);
	g_strstrip(errs);
	out[strcspn(out, ";\n")] = '\0';
	bool numeric = out[0] && strspn(out, "0123456789") == strlen(out);
	bool refused = !WIFEXITED(wait_status) || (!wait && WEXITSTATUS(wait_status) != 0);
	if (refused || !numeric) {
		char *first_line = g_strndup(errs, strcspn(errs, "\n"));
		if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) != 0)
			r = lp_fail(err, LP_EIO, "sbatch refused %s (exit status %d): %s", what,
				    WEXITSTATUS(wait_status), first_line[0] ? first_line : "no message");
		else
			r = lp_fail(err, LP_EIO, "sbatch gave no job id for %s%s%s", what,
				    first_line[0] ? ": " : "", first_line);
		g_free(first_line);
	} else {
		*id = g_strdup(out);
	}
	g_free(out);
	g_free(errs);
	return r;
}

void lp_sbatch_add_options(GPtrArray *args, char **options)
{
	for (char **o = options; o && *o; o++)
		g_ptr_array_add(args, *o);
}

int lp_slurm_submit(lp_slurm_submission *s, const lp_batch *b, lp_error *err)
{
	char *parts = g_strconcat(s->report, ".parts", NULL);
	char *array_script = g_strconcat(s->report, ".array.sh", NULL);
	char *collect_script = g_strconcat(s->report, ".collect.sh", NULL);
	char *q_program = g_shell_quote(s->program), *q_file = g_shell_quote(s->batch_file);
	char *q_parts = g_shell_quote(parts), *q_report = g_shell_quote(s->report);
	char timeout[32] = "";
	if (s->job_timeout)
		g_snprintf(timeout, sizeof timeout, " --job-timeout %u", s->job_timeout);
	const char *no_sync = lp_stage_syncs() ? "" : " --no-sync";
	char *element = g_strdup_printf(
		"%s batch -q%s%s --index \"$SLURM_ARRAY_TASK_ID\" --report %s/\"$SLURM_ARRAY_TASK_ID\".yaml %s",
		q_program, timeout, no_sync, q_parts, q_file);
	char *collector = g_strdup_printf("%s batch -q%s --collect %s --report %s %s", q_program,
					  no_sync, q_parts, q_report, q_file);
	char *indices = array_indices(b, s->max_running);
	char *array_opt = g_strconcat("--array=", indices, NULL);
	char *array_log = g_strdup_printf("--output=%s/%%a.log", parts);
	char *collect_log = g_strdup_printf("--output=%s/collect.log", parts);
	char *dependency = NULL;
	int r = clear_parts(parts, err);
	if (!r)
		r = lp_slurm_write_script(array_script, "laplace batch",
				 "array element I runs job I of the batch and reports in the parts directory.",
				 element, err);
	if (!r)
		r = lp_slurm_write_script(collect_script, "laplace batch",
				 "collects the elements' reports into the batch's report.", collector, err);
	if (!r) {
		GPtrArray *args = g_ptr_array_new();
		g_ptr_array_add(args, "sbatch");
		g_ptr_array_add(args, "--parsable");
		g_ptr_array_add(args, "--job-name=laplace-batch");
		g_ptr_array_add(args, array_opt);
		g_ptr_array_add(args, array_log);
		/* An element requeued after a node failure runs its job again:
		 * outputs are replaced atomically, and each is its own job's. */
		g_ptr_array_add(args, "--requeue");
		lp_sbatch_add_options(args, s->sbatch_options);
		g_ptr_array_add(args, array_script);
		r = lp_sbatch(args, "the array job", false, &s->array_job_id, err);
		g_ptr_array_free(args, TRUE);
	}
	if (!r) {
		dependency = g_strconcat("--dependency=afterany:", s->array_job_id, NULL);
		GPtrArray *args = g_ptr_array_new();
		g_ptr_array_add(args, "sbatch");
		g_ptr_array_add(args, "--parsable");
		g_ptr_array_add(args, "--job-name=laplace-collect");
		g_ptr_array_add(args, dependency);
		g_ptr_array_add(args, collect_log);
		if (s->wait)
			g_ptr_array_add(args, "--wait");
		lp_sbatch_add_options(args, s->sbatch_options);
		g_ptr_array_add(args, collect_script);
		char what[96];
		g_snprintf(what, sizeof what, "the collector job (array job %s is submitted)",
			   s->array_job_id);
		r = lp_sbatch(args, what, s->wait, &s->collector_job_id, err);
		g_ptr_array_free(args, TRUE);
	}
	g_free(dependency);
	g_free(collect_log);
	g_free(array_log);
	g_free(array_opt);
	g_free(indices);
	g_free(collector);
	g_free(element);
	g_free(q_report);
	g_free(q_parts);
	g_free(q_file);
	g_free(q_program);
	g_free(collect_script);
	g_free(array_script);
	g_free(parts);
	return r;
}

void lp_slurm_submission_clear(lp_slurm_submission *s)
{
	g_clear_pointer(&s->array_job_id, g_free);
	g_clear_pointer(&s->collector_job_id, g_free);
}
