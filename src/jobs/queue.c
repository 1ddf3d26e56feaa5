/* The daemon's queue seen from outside (laplace jobs): which jobs wait,
 * run, succeeded or failed, read from the spool without taking it; and
 * cancel requests, which any user who may drop a job may drop too.
 *
 * A cancel request is a file incoming/.cancel-ID, never taken for a job
 * (spool invariant (6), src/jobs/spool.c); its owner is who asks.
 * The daemon honours it only for the job file's owner, root or its own
 * user (lp_spool_take_cancel_requests and the daemon's scan), and removes
 * it either way. */
#include "jobs/queue.h"
#include "jobs/jobfile.h"
#include "jobs/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/inbuf.h"
#include "core/numbers.h"
#include "io/yamlload.h"

const char *const lp_job_state_names[LP_JOB_STATE_COUNT] = {"queued", "running", "done",
							     "failed"};
/* The spool's directory of each state. */
static const char *const state_dirs[LP_JOB_STATE_COUNT] = {"incoming", "running", "done",
							    "failed"};

#define JOB_SUFFIX ".yaml"
#define REPORT_SUFFIX ".report.yaml"
#define STATUS_SUFFIX ".status"

static gint compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void lp_queued_job_free(gpointer p)
{
	lp_queued_job *job = p;
	g_free(job->name);
	g_free(job->started);
	g_free(job->error);
	g_free(job->submitted_as);
	g_free(job);
}

/* The scalar values of a small YAML mapping file in dir_fd (a status file
 * or a report), by key; NULL when it cannot be read. */
static GHashTable *read_mapping(int dir_fd, const char *file)
{
	int fd = openat(dir_fd, file, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	char *text = NULL;
	size_t len = 0;
	int r = fd < 0 ? -1 : lp_read_small_fd(fd, file, LP_JOBFILE_MAX_BYTES, "report", &text,
					       &len, NULL);
	if (fd >= 0)
		close(fd);
	if (r)
		return NULL;
	GHashTable *values = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	yaml_document_t doc;
	if (!lp_yaml_load(file, text, len, &doc, NULL)) {
		yaml_node_t *root = yaml_document_get_root_node(&doc);
		for (yaml_node_pair_t *p = root && root->type == YAML_MAPPING_NODE
						   ? root->data.mapping.pairs.start : NULL;
		     p && p < root->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(&doc, p->key);
			yaml_node_t *v = yaml_document_get_node(&doc, p->value);
			if (k->type == YAML_SCALAR_NODE && v->type == YAML_SCALAR_NODE)
				g_hash_table_insert(values, g_strdup((char *)k->data.scalar.value),
						    g_strdup((char *)v->data.scalar.value));
		}
	}
	yaml_document_delete(&doc);
	g_free(text);
	return values;
}

static uint64_t value_u64(GHashTable *values, const char *key)
{
	const char *v = values ? g_hash_table_lookup(values, key) : NULL;
	uint64_t n = 0;
	return v && lp_parse_decimal(v, 0, UINT64_MAX, &n) ? n : 0;
}

/* The job id of a report or status file name with suffix; NULL if it is
 * not one. */
static char *id_of(const char *entry, const char *suffix)
{
	if (entry[0] == '.' || !g_str_has_suffix(entry, suffix) || strlen(entry) == strlen(suffix))
		return NULL;
	return g_strndup(entry, strlen(entry) - strlen(suffix));
}

/* The jobs of one state, sorted by name. Done and failed jobs are those
 * with a report (spool invariant (9), src/jobs/spool.c). */
static void list_state(int dir_fd, enum lp_job_state state, GPtrArray *jobs)
{
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	const struct dirent *e;
	bool finished = state == LP_JOB_DONE || state == LP_JOB_FAILED;
	while (d && (e = readdir(d))) {
		char *id = id_of(e->d_name, finished ? REPORT_SUFFIX : JOB_SUFFIX);
		if (id)
			g_ptr_array_add(names, finished ? g_strconcat(id, JOB_SUFFIX, NULL)
							: g_strdup(e->d_name));
		g_free(id);
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	g_ptr_array_sort(names, compare_names);
	for (guint i = 0; i < names->len; i++) {
		lp_queued_job *job = g_new0(lp_queued_job, 1);
		job->name = g_strdup(names->pdata[i]);
		job->state = state;
		struct stat st;
		job->owner = fstatat(dir_fd, job->name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_uid
										       : (uid_t)-1;
		char *id = lp_spool_job_id(job->name);
		char *file = g_strconcat(id, state == LP_JOB_RUNNING ? STATUS_SUFFIX : REPORT_SUFFIX,
					 NULL);
		GHashTable *values = state == LP_JOB_QUEUED ? NULL : read_mapping(dir_fd, file);
		if (values) {
			job->started = g_strdup(g_hash_table_lookup(values, "started"));
			job->error = g_strdup(g_hash_table_lookup(values, "error"));
			if (finished)
				job->submitted_as = g_strdup(g_hash_table_lookup(values, "job"));
			job->references = value_u64(values, "references");
			job->events = value_u64(values, "events");
			const char *duration = g_hash_table_lookup(values, "duration");
			job->duration = duration ? g_ascii_strtod(duration, NULL) : -1;
			g_hash_table_unref(values);
		} else {
			job->duration = -1;
		}
		g_free(file);
		g_free(id);
		g_ptr_array_add(jobs, job);
	}
	g_ptr_array_unref(names);
}

int lp_queue_list(const char *spool_dir, GPtrArray **jobs, lp_error *err)
{
	*jobs = g_ptr_array_new_with_free_func(lp_queued_job_free);
	for (int s = 0; s < LP_JOB_STATE_COUNT; s++) {
		char *path = g_build_filename(spool_dir, state_dirs[s], NULL);
		int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			lp_fail(err, errno == ENOENT || errno == ENOTDIR ? LP_EUSAGE : LP_EIO,
				"%s is not a spool: cannot open %s: %s", spool_dir, path,
				g_strerror(errno));
			g_free(path);
			g_clear_pointer(jobs, g_ptr_array_unref);
			return err->status;
		}
		g_free(path);
		list_state(fd, s, *jobs);
		close(fd);
	}
	return 0;
}

bool lp_queue_daemon_running(const char *spool_dir)
{
	char *path = g_build_filename(spool_dir, "lock", NULL);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	g_free(path);
	if (fd < 0)
		return false;
	/* The daemon holds an exclusive lock while it runs. */
	bool held = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);
	return held;
}

char *lp_cancel_request_name(const char *id)
{
	return g_strconcat(LP_CANCEL_PREFIX, id, NULL);
}

int lp_queue_request_cancel(const char *spool_dir, const char *id, lp_error *err)
{
	char *file = lp_cancel_request_name(id);
	char *path = g_build_filename(spool_dir, "incoming", file, NULL);
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	int r = 0;
	if (fd < 0)
		r = lp_fail(err, LP_EIO, "cannot ask for the cancel: cannot create %s: %s", path,
			    g_strerror(errno));
	else
		close(fd);
	g_free(path);
	g_free(file);
	return r;
}
