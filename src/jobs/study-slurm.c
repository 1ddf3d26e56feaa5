/* A study submitted to Slurm (jobs/study.h, lp_study_submit): the merges'
 * array job, the other cells' array job after it, and the collector;
 * sbatch is called as laplace batch calls it (jobs/slurm.h). */
#include "jobs/study.h"

#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "io/staging.h"
#include "jobs/slurm.h"

/* Submit one array job of the cells of the given kind that are to run;
 * *id stays NULL when there is none. */
static int submit_array(lp_study_run *run, lp_study_submission *s, bool merges,
			const char *script, const char *dependency, char **id, lp_error *err)
{
	size_t *indices = g_new(size_t, run->ncells ? run->ncells : 1), n = 0;
	for (size_t i = 0; i < run->ncells; i++) {
		const lp_study_cell *c = &run->cells[i];
		if (c->selected && !c->done && (c->kind == LP_CELL_MERGE) == merges)
			indices[n++] = i;
	}
	int rc = 0;
	if (n) {
		char *list = lp_slurm_array_list(indices, n, s->max_running);
		char *array = g_strconcat("--array=", list, NULL);
		char *log = g_strdup_printf("--output=%s/slurm/%%a.log", run->dir);
		GPtrArray *args = g_ptr_array_new();
		g_ptr_array_add(args, "sbatch");
		g_ptr_array_add(args, "--parsable");
		g_ptr_array_add(args, merges ? "--job-name=laplace-study-merge" : "--job-name=laplace-study");
		g_ptr_array_add(args, array);
		g_ptr_array_add(args, log);
		/* An element requeued after a node failure runs its cell again:
		 * its output is replaced atomically, and its part is its own. */
		g_ptr_array_add(args, "--requeue");
		if (dependency) {
			g_ptr_array_add(args, (char *)dependency);
			g_ptr_array_add(args, "--kill-on-invalid-dep=yes");
		}
		lp_sbatch_add_options(args, s->sbatch_options);
		g_ptr_array_add(args, (char *)script);
		rc = lp_sbatch(args, merges ? "the merges' array job" : "the cells' array job", false,
			       id, err);
		g_ptr_array_free(args, TRUE);
		g_free(log);
		g_free(array);
		g_free(list);
	}
	g_free(indices);
	return rc;
}

int lp_study_submit(lp_study_run *run, lp_study_submission *s, lp_error *err)
{
	char *slurm_dir = g_build_filename(run->dir, "slurm", NULL);
	char *element_script = g_build_filename(slurm_dir, "cell.sh", NULL);
	char *collect_script = g_build_filename(slurm_dir, "collect.sh", NULL);
	char *q_program = g_shell_quote(s->program), *q_file = g_shell_quote(s->study_file);
	char *q_dir = g_shell_quote(run->dir);
	char *q_table = s->table ? g_shell_quote(s->table) : NULL;
	const char *no_sync = lp_stage_syncs() ? "" : " --no-sync";
	char *element = g_strdup_printf("%s study -q%s --cell \"$SLURM_ARRAY_TASK_ID\" -d %s %s",
					q_program, no_sync, q_dir, q_file);
	char *collector = g_strdup_printf("%s study -q%s --collect -d %s%s%s %s", q_program, no_sync,
					  q_dir, q_table ? " -o " : "", q_table ? q_table : "", q_file);
	char *dependency = NULL, *after = NULL;
	int rc = lp_study_collect(run, err);
	if (!rc && g_mkdir_with_parents(slurm_dir, 0777) < 0)
		rc = lp_fail(err, LP_EIO, "cannot create directory %s: %s", slurm_dir, g_strerror(errno));
	if (!rc)
		rc = lp_slurm_write_script(element_script, "laplace study",
					   "array element I runs cell I of the study.", element, err);
	if (!rc)
		rc = lp_slurm_write_script(collect_script, "laplace study",
					   "collects the cells' parts into the manifest and the table.",
					   collector, err);
	if (!rc)
		rc = submit_array(run, s, true, element_script, NULL, &s->merges_job_id, err);
	if (!rc && s->merges_job_id)
		dependency = g_strconcat("--dependency=afterok:", s->merges_job_id, NULL);
	if (!rc)
		rc = submit_array(run, s, false, element_script, dependency, &s->cells_job_id, err);
	if (!rc) {
		after = g_strdup_printf("--dependency=afterany%s%s%s%s",
					s->merges_job_id ? ":" : "", s->merges_job_id ? s->merges_job_id : "",
					s->cells_job_id ? ":" : "", s->cells_job_id ? s->cells_job_id : "");
		char *log = g_strdup_printf("--output=%s/collect.log", slurm_dir);
		GPtrArray *args = g_ptr_array_new();
		g_ptr_array_add(args, "sbatch");
		g_ptr_array_add(args, "--parsable");
		g_ptr_array_add(args, "--job-name=laplace-study-collect");
		if (s->merges_job_id || s->cells_job_id)
			g_ptr_array_add(args, after);
		g_ptr_array_add(args, log);
		if (s->wait)
			g_ptr_array_add(args, "--wait");
		lp_sbatch_add_options(args, s->sbatch_options);
		g_ptr_array_add(args, collect_script);
		rc = lp_sbatch(args, "the collector job", s->wait, &s->collector_job_id, err);
		g_ptr_array_free(args, TRUE);
		g_free(log);
	}
	g_free(after);
	g_free(dependency);
	g_free(collector);
	g_free(element);
	g_free(q_table);
	g_free(q_dir);
	g_free(q_file);
	g_free(q_program);
	g_free(collect_script);
	g_free(element_script);
	g_free(slurm_dir);
	return rc;
}

void lp_study_submission_clear(lp_study_submission *s)
{
	g_clear_pointer(&s->merges_job_id, g_free);
	g_clear_pointer(&s->cells_job_id, g_free);
	g_clear_pointer(&s->collector_job_id, g_free);
}
