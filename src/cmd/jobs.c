/* laplace jobs: the merge daemon's queue (queued, running, done, failed),
 * and cancelling a job through a request the daemon honours. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "jobs/spool.h"
#include "jobs/queue.h"
#include "io/yamlout.h"

#define DEFAULT_WAIT 30

/* Seconds since an ISO 8601 time the daemon wrote; -1 if it is not one. */
static gint64 seconds_since(const char *iso)
{
	GDateTime *t = iso ? g_date_time_new_from_iso8601(iso, NULL) : NULL;
	if (!t)
		return -1;
	GDateTime *now = g_date_time_new_now_utc();
	gint64 s = g_date_time_difference(now, t) / G_TIME_SPAN_SECOND;
	g_date_time_unref(now);
	g_date_time_unref(t);
	return s < 0 ? 0 : s;
}

/* Text from the spool (names, reasons) made safe for a terminal. */
typedef struct shown_text {
	char text[4 * sizeof ((lp_error *)0)->msg];
} shown_text;

static shown_text escaped(const char *s)
{
	shown_text t;
	lp_escape(t.text, sizeof t.text, s, strlen(s));
	return t;
}

static void print_text(GString *to, const GPtrArray *jobs)
{
	for (guint i = 0; i < jobs->len; i++) {
		const lp_queued_job *job = jobs->pdata[i];
		g_string_append_printf(to, "%-8s %s", lp_job_state_names[job->state],
				       escaped(job->name).text);
		if (job->state == LP_JOB_RUNNING)
			g_string_append_printf(to, "  %" G_GINT64_FORMAT " s, %" G_GUINT64_FORMAT
					       " reference%s, %" G_GUINT64_FORMAT " event%s",
					       seconds_since(job->started), job->references,
					       job->references == 1 ? "" : "s", job->events,
					       job->events == 1 ? "" : "s");
		else if (job->state == LP_JOB_DONE && job->duration >= 0)
			g_string_append_printf(to, "  in %.3f s", job->duration);
		else if (job->state == LP_JOB_FAILED && job->error)
			g_string_append_printf(to, "  %s", escaped(job->error).text);
		g_string_append_c(to, '\n');
	}
}

/* queued, running, done and failed: each a list of mappings. */
static int print_yaml(GString *to, const GPtrArray *jobs)
{
	yaml_emitter_t em;
	int bad = lp_yaml_start(&em, to);
	for (int s = 0; s < LP_JOB_STATE_COUNT && !bad; s++) {
		bad = lp_yaml_key(&em, lp_job_state_names[s]) || lp_yaml_begin(&em, true);
		for (guint i = 0; i < jobs->len && !bad; i++) {
			const lp_queued_job *job = jobs->pdata[i];
			if ((int)job->state != s)
				continue;
			bad = lp_yaml_begin(&em, false) || lp_yaml_pair(&em, "job", job->name);
			if (!bad && job->started)
				bad = lp_yaml_pair(&em, "started", job->started);
			if (!bad && job->state == LP_JOB_RUNNING) {
				gint64 elapsed = seconds_since(job->started);
				bad = (elapsed >= 0 && lp_yaml_pair_u64(&em, "elapsed", (uint64_t)elapsed)) ||
				      lp_yaml_pair_u64(&em, "references", job->references) ||
				      lp_yaml_pair_u64(&em, "events", job->events);
			}
			if (!bad && job->duration >= 0) {
				char text[G_ASCII_DTOSTR_BUF_SIZE];
				bad = lp_yaml_pair(&em, "duration",
						   g_ascii_formatd(text, sizeof text, "%.3f", job->duration));
			}
			if (!bad && job->error)
				bad = lp_yaml_pair_message(&em, "error", job->error);
			bad = bad || lp_yaml_end(&em, false);
		}
		bad = bad || lp_yaml_end(&em, true);
	}
	return lp_yaml_finish(&em) || bad;
}

static bool is_queue_entry(const lp_queued_job *job)
{
	return job->state == LP_JOB_QUEUED || job->state == LP_JOB_RUNNING;
}

/* The daemon honours a cancel request from the job file's owner, root and
 * its own user, who owns the spool (laplace-daemon(1)). */
static bool may_cancel(uid_t me, uid_t owner, uid_t daemon)
{
	return me == owner || me == 0 || me == daemon;
}

/* What tells a record in done/ from one in failed/ of the same name. */
static char *record_key(const lp_queued_job *job)
{
	return g_strconcat(lp_job_state_names[job->state], "/", job->name, NULL);
}

/* The record, among jobs, that the job name of owner left in done/ or
 * failed/ since the records known (by record_key) were listed. */
static const lp_queued_job *new_record(const GPtrArray *jobs, const char *name, uid_t owner,
				       GHashTable *known)
{
	for (guint i = 0; i < jobs->len; i++) {
		const lp_queued_job *job = jobs->pdata[i];
		if (is_queue_entry(job) || !job->submitted_as || strcmp(job->submitted_as, name) ||
		    job->owner != owner)
			continue;
		char *key = record_key(job);
		bool seen = g_hash_table_contains(known, key);
		g_free(key);
		if (!seen)
			return job;
	}
	return NULL;
}

/* Ask the daemon to cancel job NAME and wait up to wait seconds for it to
 * end in failed/. A request the daemon would refuse is refused here, at
 * once. */
static int cancel(const char *spool, const char *arg, int wait)
{
	char *id = lp_spool_job_id(arg);
	char *name = g_strconcat(id, ".yaml", NULL);
	shown_text shown_name = escaped(name);
	const char *shown = shown_name.text;
	lp_error err = {0};
	GPtrArray *jobs = NULL;
	GHashTable *known = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	int rc = lp_queue_list(spool, &jobs, &err);
	/* Of a queued and a running job of that name, the one the daemon
	 * cancels: the running one if we may cancel it, else the queued one
	 * if we may; else any, to say whose it is, or a record to say it has
	 * ended. */
	uid_t me = geteuid();
	struct stat st;
	uid_t daemon = !rc && g_stat(spool, &st) == 0 ? st.st_uid : (uid_t)-1;
	const lp_queued_job *mine = NULL, *other = NULL, *ended = NULL;
	for (guint i = 0; !rc && i < jobs->len; i++) {
		const lp_queued_job *job = jobs->pdata[i];
		if (!is_queue_entry(job))
			g_hash_table_add(known, record_key(job));
		if (strcmp(job->name, name))
			continue;
		if (!is_queue_entry(job))
			ended = ended ? ended : job;
		else if (!may_cancel(me, job->owner, daemon))
			other = other ? other : job;
		else if (!mine || job->state == LP_JOB_RUNNING)
			mine = job;
	}
	if (rc) {
		cli_fail(&err);
	} else if (!mine && other) {
		fprintf(stderr, "%s: job %s belongs to uid %u: only its owner, root or the daemon's "
			"user (uid %u) may cancel it\n", cli_command(), shown, (unsigned)other->owner,
			(unsigned)daemon);
		rc = LP_EUSAGE;
	} else if (!mine && ended) {
		fprintf(stderr, "%s: job %s has already ended (%s)\n", cli_command(), shown,
			lp_job_state_names[ended->state]);
		rc = LP_EUSAGE;
	} else if (!mine) {
		fprintf(stderr, "%s: no job %s in %s\n", cli_command(), shown, spool);
		rc = LP_EUSAGE;
	} else if (!lp_queue_daemon_running(spool)) {
		fprintf(stderr, "%s: no daemon is running on %s to cancel job %s\n", cli_command(),
			spool, shown);
		rc = LP_EIO;
	} else if ((rc = lp_queue_request_cancel(spool, id, &err))) {
		cli_fail(&err);
	}
	uid_t owner = mine ? mine->owner : (uid_t)-1;
	for (int tick = 0; !rc; tick++) {
		g_ptr_array_unref(jobs);
		if ((rc = lp_queue_list(spool, &jobs, &err))) {
			cli_fail(&err);
			break;
		}
		const lp_queued_job *job = new_record(jobs, name, owner, known);
		if (job && job->state == LP_JOB_FAILED && job->error && !strcmp(job->error, "cancelled")) {
			if (strcmp(job->name, name))
				printf("cancelled %s (kept as failed/%s)\n", shown, escaped(job->name).text);
			else
				printf("cancelled %s\n", shown);
			break;
		}
		if (job) {
			fprintf(stderr, "%s: job %s ended before it could be cancelled (%s)\n",
				cli_command(), shown, lp_job_state_names[job->state]);
			rc = LP_EUSAGE;
		} else if (tick >= wait * 10) {
			fprintf(stderr, "%s: job %s is not cancelled after %d s; the daemon has the "
				"request\n", cli_command(), shown, wait);
			rc = LP_EIO;
		} else {
			g_usleep(G_USEC_PER_SEC / 10);
		}
	}
	if (jobs)
		g_ptr_array_unref(jobs);
	g_hash_table_unref(known);
	g_free(name);
	g_free(id);
	return rc;
}

int cmd_jobs(int argc, char **argv)
{
	cli_set_command("laplace jobs");
	gchar *spool = NULL, *format = NULL, *cancel_name = NULL, *wait_arg = NULL;
	int wait = DEFAULT_WAIT;
	GOptionEntry entries[] = {
		{"spool", 0, 0, G_OPTION_ARG_FILENAME, &spool,
		 "The daemon's spool directory (required)", "DIR"},
		{"format", 0, 0, G_OPTION_ARG_STRING, &format,
		 "text (the default) or yaml, for scripts", "FORM"},
		{"cancel", 0, 0, G_OPTION_ARG_FILENAME, &cancel_name,
		 "Cancel the queued or running job NAME (NAME.yaml or its id)", "NAME"},
		{"wait", 0, 0, G_OPTION_ARG_STRING, &wait_arg,
		 "With --cancel, wait at most SECONDS for the job to end (default 30)", "SECONDS"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("");
	g_option_context_set_summary(ctx,
		"List the jobs of a merge daemon's spool: queued, running (with progress\n"
		"and elapsed time), done and failed (with the reason); or cancel one.");
	g_option_context_set_description(ctx, "See laplace-jobs(1).");
	g_option_context_add_main_entries(ctx, entries, NULL);
	int rc = LP_EUSAGE;
	if (!cli_parse(ctx, &argc, &argv))
		goto out;
	if (argc != 1) {
		cli_usage_error("unexpected argument '%s'", argv[1]);
		goto out;
	}
	if (!spool) {
		cli_usage_error("--spool DIR is required");
		goto out;
	}
	bool yaml = format && !strcmp(format, "yaml");
	if (format && !yaml && strcmp(format, "text")) {
		cli_usage_error("--format must be text or yaml, not '%s'", format);
		goto out;
	}
	if (!cli_count_apply("--wait", wait_arg, 0, G_MAXINT, &wait))
		goto out;
	if (cancel_name) {
		rc = cancel(spool, cancel_name, wait);
		goto out;
	}
	lp_error err = {0};
	GPtrArray *jobs = NULL;
	if ((rc = lp_queue_list(spool, &jobs, &err))) {
		cli_fail(&err);
		goto out;
	}
	GString *to = g_string_new(NULL);
	if (yaml)
		rc = print_yaml(to, jobs) ? LP_EIO : 0;
	else
		print_text(to, jobs);
	fputs(to->str, stdout);
	if (fflush(stdout) != 0)
		rc = LP_EIO;
	g_string_free(to, TRUE);
	g_ptr_array_unref(jobs);
out:
	g_option_context_free(ctx);
	g_free(spool);
	g_free(format);
	g_free(cancel_name);
	g_free(wait_arg);
	return rc;
}
