/* Reports of a batch read back: an earlier run's, an array's elements',
 * a collector's. */
#include "jobs/gather.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>

int lp_batch_check_report(const lp_batch *b, const char *report, lp_error *err)
{
	const char **inputs = g_new(const char *, 2 * b->nspecs + 1);
	inputs[0] = b->file;
	for (size_t i = 0; i < b->nspecs; i++) {
		inputs[1 + 2 * i] = b->specs[i].reference;
		inputs[2 + 2 * i] = b->specs[i].kernel;
	}
	const char *outputs[] = {report};
	int r = lp_check_outputs(inputs, 2 * b->nspecs + 1, outputs, 1, err);
	g_free(inputs);
	return r;
}

int lp_batch_load_earlier(const char *report, lp_batch_report **earlier, lp_error *err)
{
	*earlier = NULL;
	if (!g_file_test(report, G_FILE_TEST_EXISTS))
		return 0;
	return lp_batch_report_load(report, earlier, err);
}

/* g_ptr_array_sort hands over pointers to the elements. */
static gint by_name(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void warn_ignored(lp_warn_fn warn, void *warn_ctx, const char *what, const lp_error *err)
{
	char *msg = g_strdup_printf("ignoring %s: %s", what, err->msg);
	warn(warn_ctx, msg);
	g_free(msg);
}

GPtrArray *lp_batch_collect(lp_batch *b, const char *dir, const char *report, lp_warn_fn warn,
			    void *warn_ctx, lp_error *err)
{
	DIR *d = opendir(dir);
	if (!d) {
		lp_fail(err, LP_EIO, "cannot read directory %s: %s", dir, g_strerror(errno));
		return NULL;
	}
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	const struct dirent *entry;
	while ((entry = readdir(d)))
		if (entry->d_name[0] != '.' && g_str_has_suffix(entry->d_name, ".yaml"))
			g_ptr_array_add(names, g_strdup(entry->d_name));
	closedir(d);
	g_ptr_array_sort(names, by_name);
	GPtrArray *reports = g_ptr_array_new_with_free_func((GDestroyNotify)lp_batch_report_free);
	for (guint i = 0; i < names->len; i++) {
		char *path = g_build_filename(dir, g_ptr_array_index(names, i), NULL);
		lp_batch_report *part;
		if (lp_batch_report_load(path, &part, err)) {
			warn_ignored(warn, warn_ctx, "a report", err);
		} else {
			g_ptr_array_add(reports, part);
			lp_batch_take_entries(b, part);
		}
		g_free(path);
	}
	g_ptr_array_free(names, TRUE);
	lp_batch_report *earlier = NULL;
	if (lp_batch_load_earlier(report, &earlier, err))
		warn_ignored(warn, warn_ctx, "the earlier report", err);
	else if (earlier) {
		g_ptr_array_add(reports, earlier);
		lp_batch_skip_done(b, earlier);
	}
	b->missing_why = "no report from its array element";
	return reports;
}

size_t lp_batch_pending(const lp_batch *b)
{
	size_t n = 0;
	for (size_t i = 0; i < b->njobs; i++)
		n += !b->jobs[i].entry;
	return n;
}

int lp_batch_submit(lp_batch *b, lp_slurm_submission *s, lp_error *err)
{
	char *program = g_file_read_link("/proc/self/exe", NULL);
	s->program = program ? program : "laplace";
	lp_job_pool_release_signals(&b->pool);
	int r = lp_slurm_submit(s, b, err);
	s->program = NULL;
	g_free(program);
	return r;
}

lp_batch_report *lp_batch_take_collected(lp_batch *b, const char *report,
					 const char *collector_job_id, lp_error *err)
{
	lp_batch_report *collected;
	if (lp_batch_report_load(report, &collected, err))
		return NULL;
	if (g_strcmp0(collected->collector_job_id, collector_job_id)) {
		lp_fail(err, LP_EIO, "collector job %s ended without writing %s", collector_job_id,
			report);
		lp_batch_report_free(collected);
		return NULL;
	}
	for (size_t i = 0; i < b->njobs; i++)
		b->jobs[i].entry = NULL;
	lp_batch_take_entries(b, collected);
	return collected;
}
