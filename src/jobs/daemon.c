/* The daemon's engine: run merge jobs dropped into a spool directory,
 * each in a child process that can be killed without harming the others.
 * How jobs move through the spool is written down once, as numbered
 * invariants, at the top of src/jobs/spool.c; comments here cite them as
 * "spool invariant (N)". */
#include "jobs/daemon.h"

#include "jobs/confine.h"
#include "jobs/jobreport.h"
#include "jobs/runner.h"
#include "jobs/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib-unix.h>
#include <glib/gstdio.h>

#define DEFAULT_GRACE 30
#define DEFAULT_RESCAN 10
#define DEFAULT_MAX_ATTEMPTS 3
#define STATUS_INTERVAL_US (1000 * 1000)

typedef struct daemon_state daemon_state;

typedef struct running_job {
	daemon_state *d;
	char *name;         /* the job file's name in running/ */
	lp_job_spec spec;
	uid_t owner;        /* whose rights it runs with (LP_NO_OWNER: ours) */
	uid_t file_owner;   /* its job file's owner, who may cancel it */
	lp_job_proc *proc;
	char started[32];   /* wall-clock time, for status and report */
	uint64_t refs_done, events_done;
	gint64 last_status;
} running_job;

struct daemon_state {
	lp_spool *spool;
	char *root;            /* resolved output root */
	int root_fd;           /* the output root, held open from the start */
	const char *config;    /* settings file, reread on SIGHUP, or NULL */
	lp_daemon_settings given, active; /* given by the caller; in effect */
	lp_daemon_log_sink log;
	GHashTable *running;   /* name -> running_job */
	bool stopping;
	guint scan_source;
	guint rescan_source;
	guint grace_source;    /* the grace period's end, once stopping */
	GMainLoop *loop;
};

/* Log a message if the log level in effect lets it through. */
static void log_message(const daemon_state *d, enum lp_log_level level, const char *fmt, ...)
	G_GNUC_PRINTF(3, 4);
static void log_message(const daemon_state *d, enum lp_log_level level, const char *fmt, ...)
{
	if ((int)level > d->active.log_level)
		return;
	char msg[LP_DAEMON_MESSAGE_MAX + 1];
	va_list ap;
	va_start(ap, fmt);
	g_vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	d->log.write(d->log.ctx, level, msg);
}

static void now_iso(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
}

static void schedule_scan(daemon_state *d);

/* ---- reports and status ---- */

static void write_status(running_job *job)
{
	GString *text = g_string_new(NULL);
	g_string_append_printf(text,
		"job: %s\nstate: running\npid: %ld\nstarted: %s\nreferences: %" G_GUINT64_FORMAT
		"\nevents: %" G_GUINT64_FORMAT "\n",
		job->name, (long)lp_job_proc_pid(job->proc), job->started, job->refs_done,
		job->events_done);
	lp_error err = {0};
	if (lp_spool_status(job->d->spool, job->name, text->str, &err))
		log_message(job->d, LP_LOG_WARNING, "%s", err.msg);
	g_string_free(text, TRUE);
	job->last_status = g_get_monotonic_time();
}

/* Move a job from running/ (or incoming/, for a queued job failed without
 * running) to done/ or failed/ with its report (spool invariants (8) and
 * (9)). spec is NULL when the job file could not be read or parsed. */
static void finish_job(daemon_state *d, const char *from, const char *name, const char *started,
		       const lp_job_spec *spec, const lp_job_outcome *outcome)
{
	GString *text = g_string_new(NULL);
	yaml_emitter_t em;
	bool ok = outcome->status == LP_OK;
	int bad = lp_yaml_start(&em, text) || lp_yaml_pair(&em, "job", name) ||
		  lp_yaml_pair(&em, "started", started);
	if (!bad && spec)
		bad = lp_job_report_emit(&em, spec, outcome);
	else if (!bad)
		bad = lp_yaml_pair(&em, "status", "failed") ||
		      lp_yaml_pair_u64(&em, "exit_status", (uint64_t)outcome->status) ||
		      lp_yaml_pair_message(&em, "error", outcome->msg);
	bad = lp_yaml_finish(&em) || bad;
	lp_error err = {0};
	char *record = NULL;
	if (bad) {
		log_message(d, LP_LOG_ERROR, "job %s: cannot format its report", name);
	} else if (lp_spool_finish(d->spool, from, name, ok, text->str, &record, &err)) {
		log_message(d, LP_LOG_ERROR, "job %s: %s", name, err.msg);
	} else {
		/* Records kept beside an earlier job's of the same name. */
		char *kept = strcmp(record, name) ? g_strdup_printf(" (kept as %s/%s)",
								    ok ? "done" : "failed", record)
						  : g_strdup("");
		if (ok)
			log_message(d, LP_LOG_INFO, "job %s done in %.3f s%s", name, outcome->seconds,
				    kept);
		else
			log_message(d, LP_LOG_WARNING, "job %s failed: %s%s", name, outcome->msg, kept);
		g_free(kept);
	}
	g_free(record);
	g_string_free(text, TRUE);
}

static void fail_before_start(daemon_state *d, const char *from, const char *name,
			      const char *started, const lp_error *err)
{
	lp_job_outcome outcome;
	memset(&outcome, 0, sizeof outcome);
	outcome.status = err->status;
	g_strlcpy(outcome.msg, err->msg, sizeof outcome.msg);
	finish_job(d, from, name, started, NULL, &outcome);
}

/* A job whose run was cut short through no fault of its own: back into
 * incoming/, or failed after its last run (spool invariant (13)). why says
 * what cut it short; note, if not empty, is logged with the requeue. spec is
 * NULL when the job file could not be read or parsed. */
static void requeue_or_give_up(daemon_state *d, const char *name, const char *started,
			       const lp_job_spec *spec, double seconds, const char *why,
			       const char *note)
{
	unsigned attempts = lp_spool_attempts(d->spool, name) + 1;
	unsigned max = (unsigned)d->active.max_attempts;
	if (attempts >= max) {
		lp_job_outcome outcome;
		memset(&outcome, 0, sizeof outcome);
		outcome.status = LP_EIO;
		outcome.seconds = seconds;
		g_snprintf(outcome.msg, sizeof outcome.msg, "gave up after %u attempt%s: %s", attempts,
			   attempts == 1 ? "" : "s", why);
		finish_job(d, "running", name, started, spec, &outcome);
		return;
	}
	lp_error err = {0};
	int r = lp_spool_requeue(d->spool, name, attempts, &err);
	if (r == LP_SPOOL_NAME_TAKEN) {
		/* Spool invariant (13): the job that came while this one ran, not
		 * this one, pays for the clash of names. */
		char now[32];
		now_iso(now, sizeof now);
		fail_before_start(d, "incoming", name, now,
				  &(lp_error){LP_EIO, "a job of the same name, cut short, went back "
						      "to the queue before it; submit it again"});
		r = lp_spool_requeue(d->spool, name, attempts, &err);
		if (r == LP_SPOOL_NAME_TAKEN)
			r = lp_fail(&err, LP_EIO, "cannot requeue %s: incoming/ holds another job file "
				    "of that name", name);
	}
	if (r)
		log_message(d, LP_LOG_ERROR, "job %s: %s", name, err.msg);
	else
		log_message(d, LP_LOG_WARNING, "job %s %s: requeued after attempt %u of %u%s", name, why,
			    attempts, max, note);
}

/* ---- running jobs ---- */

static void running_job_free(gpointer data)
{
	running_job *job = data;
	lp_job_spec_clear(&job->spec);
	g_free(job->name);
	g_free(job);
}

static void on_progress(void *ctx, uint64_t refs_done, uint64_t events_done)
{
	running_job *job = ctx;
	job->refs_done = refs_done;
	job->events_done = events_done;
	if (g_get_monotonic_time() - job->last_status >= STATUS_INTERVAL_US)
		write_status(job);
}

static void on_warning(void *ctx, const char *msg)
{
	running_job *job = ctx;
	log_message(job->d, LP_LOG_WARNING, "job %s: %s", job->name, msg);
}

static void on_done(void *ctx, const lp_job_outcome *outcome)
{
	running_job *job = ctx;
	daemon_state *d = job->d;
	/* Spool invariant (10); no other job writes the same output (7). */
	if (outcome->status != LP_OK) {
		lp_job_confinement c = {d->root_fd, d->root, job->name};
		lp_job_remove_partials(&c, job->spec.output, job->owner);
	}
	if (outcome->killed)
		requeue_or_give_up(d, job->name, job->started, &job->spec, outcome->seconds,
				   "killed after the grace period", "");
	else
		finish_job(d, "running", job->name, job->started, &job->spec, outcome);
	g_hash_table_remove(d->running, job->name);
	if (d->stopping && g_hash_table_size(d->running) == 0)
		g_main_loop_quit(d->loop);
	else
		schedule_scan(d);
}

static const lp_job_proc_ops daemon_job_ops = {on_progress, on_warning, on_done};

static const running_job *job_writing(daemon_state *d, const char *output)
{
	GHashTableIter it;
	gpointer value;
	g_hash_table_iter_init(&it, d->running);
	while (g_hash_table_iter_next(&it, NULL, &value)) {
		const running_job *other = value;
		if (!strcmp(other->spec.output, output))
			return other;
	}
	return NULL;
}

/* Start a job just claimed into running/, once its outputs pass spool
 * invariant (7). */
static void start_job(daemon_state *d, const char *name)
{
	char started[32];
	now_iso(started, sizeof started);
	char *text = NULL;
	size_t len;
	lp_error err = {0};
	running_job *job = g_new0(running_job, 1);
	uid_t owner;
	int r = lp_spool_read_job(d->spool, name, &owner, &text, &len, &err);
	if (!r)
		r = lp_jobfile_parse_job(name, text, len, &job->spec, &err);
	if (!r)
		r = lp_job_confine(&job->spec, name, d->root, &err);
	if (!r && lp_spool_holds(d->spool, job->spec.output))
		r = lp_fail(&err, LP_EINPUT, "%s:%zu: key 'output': %s would overwrite the spool's "
			    "own files", name, job->spec.key_line[LP_JOB_KEY_OUTPUT], job->spec.output);
	const running_job *other;
	if (!r && (other = job_writing(d, job->spec.output)))
		r = lp_fail(&err, LP_EINPUT, "%s:%zu: key 'output': %s is being written by job %s",
			    name, job->spec.key_line[LP_JOB_KEY_OUTPUT], job->spec.output, other->name);
	g_free(text);
	if (!r) {
		job->d = d;
		job->name = g_strdup(name);
		g_strlcpy(job->started, started, sizeof job->started);
		lp_merge_job mj;
		lp_job_spec_to_merge(&job->spec, &mj);
		/* As root, each job runs with its job file's owner's rights. */
		job->owner = geteuid() == 0 ? owner : LP_NO_OWNER;
		job->file_owner = owner;
		char *what = g_strdup_printf("%s:%zu: key 'output'", name,
					     job->spec.key_line[LP_JOB_KEY_OUTPUT]);
		lp_job_confinement c = {d->root_fd, d->root, what};
		job->proc = lp_job_proc_start(&mj, job->owner, &c,
					      lp_job_spec_time_limit(&job->spec,
								     (unsigned)d->active.job_timeout),
					      &daemon_job_ops, job, &err);
		g_free(what);
		r = job->proc ? 0 : err.status;
	}
	if (r) {
		running_job_free(job);
		fail_before_start(d, "running", name, started, &err);
		return;
	}
	/* Never replaces an entry: running/ holds one job of each name (spool
	 * invariant (4)). */
	g_hash_table_insert(d->running, job->name, job);
	write_status(job);
	log_message(d, LP_LOG_INFO, "job %s started (pid %ld)", name, (long)lp_job_proc_pid(job->proc));
}

static bool may_cancel(uid_t requester, uid_t owner)
{
	return requester == owner || requester == 0 || requester == geteuid();
}

/* A cancel request for job id by requester: a running job is ended (its
 * done() fails it "cancelled"), a queued one fails at once. Only the job
 * file's owner, root and the daemon's own user may cancel a job; of a
 * running and a queued job of the same name, the requester's is meant,
 * the running one if both are. */
static void cancel(daemon_state *d, const char *id, uid_t requester)
{
	char *name = g_strconcat(id, ".yaml", NULL);
	running_job *job = g_hash_table_lookup(d->running, name);
	uid_t queued_owner;
	bool queued = lp_spool_job_owner(d->spool, "incoming", name, &queued_owner);
	if (job && may_cancel(requester, job->file_owner)) {
		log_message(d, LP_LOG_INFO, "job %s: cancel requested by uid %u", name,
			    (unsigned)requester);
		lp_job_proc_cancel(job->proc);
	} else if (queued && may_cancel(requester, queued_owner)) {
		log_message(d, LP_LOG_INFO, "job %s: cancel requested by uid %u", name,
			    (unsigned)requester);
		char started[32];
		now_iso(started, sizeof started);
		fail_before_start(d, "incoming", name, started, &(lp_error){LP_EIO, "cancelled"});
	} else if (job || queued) {
		log_message(d, LP_LOG_WARNING, "cancel request for job %s refused: it comes from uid %u, "
			    "the job belongs to uid %u", name, (unsigned)requester,
			    (unsigned)(job ? job->file_owner : queued_owner));
	} else {
		log_message(d, LP_LOG_WARNING, "cancel request for job %s: no such job waits or runs",
			    name);
	}
	g_free(name);
}

static gboolean scan(gpointer data)
{
	daemon_state *d = data;
	d->scan_source = 0;
	if (d->stopping)
		return G_SOURCE_REMOVE;
	GPtrArray *requests = lp_spool_take_cancel_requests(d->spool);
	for (guint i = 0; i < requests->len; i++) {
		const lp_cancel_request *rq = requests->pdata[i];
		cancel(d, rq->id, rq->requester);
	}
	g_ptr_array_unref(requests);
	GPtrArray *names = lp_spool_incoming(d->spool);
	for (guint i = 0; i < names->len && g_hash_table_size(d->running) < (guint)d->active.jobs; i++) {
		lp_error err = {0};
		int claimed = lp_spool_claim(d->spool, names->pdata[i], &err);
		if (claimed == LP_SPOOL_REFUSED)
			log_message(d, LP_LOG_WARNING, "incoming/%s", err.msg);
		else if (claimed < 0)
			log_message(d, LP_LOG_ERROR, "%s", err.msg);
		else if (claimed)
			start_job(d, names->pdata[i]);
	}
	g_ptr_array_unref(names);
	return G_SOURCE_REMOVE;
}

static void schedule_scan(daemon_state *d)
{
	if (!d->scan_source && !d->stopping)
		d->scan_source = g_idle_add(scan, d);
}

static gboolean on_rescan(gpointer data)
{
	schedule_scan(data);
	return G_SOURCE_CONTINUE;
}

static void on_incoming_changed(GFileMonitor *monitor, GFile *file, GFile *other,
				GFileMonitorEvent event, gpointer data)
{
	(void)monitor;
	(void)file;
	(void)other;
	if (event == G_FILE_MONITOR_EVENT_MOVED_IN || event == G_FILE_MONITOR_EVENT_CREATED ||
	    event == G_FILE_MONITOR_EVENT_CHANGES_DONE_HINT || event == G_FILE_MONITOR_EVENT_RENAMED)
		schedule_scan(data);
}

/* ---- settings and signals ---- */

static int setting(int given, int config, int fallback, int unset)
{
	return given != unset ? given : config != unset ? config : fallback;
}

/* Combine the caller's settings, the settings file and the defaults. */
static int apply_settings(daemon_state *d, lp_error *err)
{
	lp_daemon_settings file = LP_DAEMON_SETTINGS_UNSET;
	if (d->config) {
		char *text;
		size_t len;
		int r = lp_jobfile_read(d->config, LP_JOBFILE_MAX_BYTES, &text, &len, err);
		if (r)
			return r;
		r = lp_daemon_settings_parse(d->config, text, len, &file, err);
		g_free(text);
		if (r)
			return r;
	}
	d->active.jobs = setting(d->given.jobs, file.jobs, (int)g_get_num_processors(), 0);
	d->active.grace = setting(d->given.grace, file.grace, DEFAULT_GRACE, -1);
	d->active.log_level = setting(d->given.log_level, file.log_level, LP_LOG_INFO, -1);
	d->active.job_timeout = setting(d->given.job_timeout, file.job_timeout, 0, -1);
	d->active.max_attempts =
		setting(d->given.max_attempts, file.max_attempts, DEFAULT_MAX_ATTEMPTS, 0);
	int rescan = setting(d->given.rescan, file.rescan, DEFAULT_RESCAN, 0);
	if (rescan != d->active.rescan) {
		if (d->rescan_source)
			g_source_remove(d->rescan_source);
		d->rescan_source = g_timeout_add_seconds((guint)rescan, on_rescan, d);
		d->active.rescan = rescan;
	}
	return 0;
}

static gboolean on_grace_over(gpointer data)
{
	daemon_state *d = data;
	d->grace_source = 0;
	GHashTableIter it;
	gpointer value;
	g_hash_table_iter_init(&it, d->running);
	while (g_hash_table_iter_next(&it, NULL, &value))
		lp_job_proc_kill(((running_job *)value)->proc);
	return G_SOURCE_REMOVE;
}

static gboolean on_stop_signal(gpointer data)
{
	daemon_state *d = data;
	if (d->stopping)
		return G_SOURCE_CONTINUE;
	d->stopping = true;
	guint n = g_hash_table_size(d->running);
	if (n == 0) {
		log_message(d, LP_LOG_INFO, "stopping");
		g_main_loop_quit(d->loop);
		return G_SOURCE_CONTINUE;
	}
	log_message(d, LP_LOG_INFO, "stopping: waiting up to %d s for %u running job%s",
		    d->active.grace, n, n == 1 ? "" : "s");
	d->grace_source = g_timeout_add_seconds((guint)d->active.grace, on_grace_over, d);
	return G_SOURCE_CONTINUE;
}

static gboolean on_hangup(gpointer data)
{
	daemon_state *d = data;
	d->log.reopen(d->log.ctx);
	lp_error err = {0};
	if (apply_settings(d, &err))
		log_message(d, LP_LOG_ERROR, "settings not reloaded: %s", err.msg);
	else
		log_message(d, LP_LOG_INFO, "log reopened, settings reloaded (%d job%s at a time)",
			    d->active.jobs, d->active.jobs == 1 ? "" : "s");
	schedule_scan(d);
	return G_SOURCE_CONTINUE;
}

/* ---- start-up ---- */

/* Jobs left in running/ by a daemon that died (spool invariants (10) and
 * (13)). */
static void recover(daemon_state *d)
{
	GPtrArray *refused = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *names = lp_spool_leftovers(d->spool, refused);
	for (guint i = 0; i < refused->len; i++)
		log_message(d, LP_LOG_WARNING, "running/%s", (const char *)refused->pdata[i]);
	g_ptr_array_unref(refused);
	for (guint i = 0; i < names->len; i++) {
		const char *name = names->pdata[i];
		char *text = NULL;
		size_t len;
		lp_error err = {0};
		lp_job_spec spec;
		memset(&spec, 0, sizeof spec);
		int removed = 0;
		/* A job that does not pass the checks never started writing. */
		uid_t owner;
		bool parsed = !lp_spool_read_job(d->spool, name, &owner, &text, &len, &err) &&
			      !lp_jobfile_parse_job(name, text, len, &spec, &err) &&
			      !lp_job_confine(&spec, name, d->root, &err);
		if (parsed) {
			lp_job_confinement c = {d->root_fd, d->root, name};
			removed = lp_job_remove_partials(&c, spec.output,
							 geteuid() == 0 ? owner : LP_NO_OWNER);
		}
		char started[32], note[64];
		now_iso(started, sizeof started);
		g_snprintf(note, sizeof note, ", %d partial output%s removed", removed,
			   removed == 1 ? "" : "s");
		requeue_or_give_up(d, name, started, parsed ? &spec : NULL, 0,
				   "left running by a previous daemon", note);
		lp_job_spec_clear(&spec);
		g_free(text);
	}
	g_ptr_array_unref(names);
}


static int write_pid_file(const char *path, lp_error *err)
{
	char text[32];
	int len = g_snprintf(text, sizeof text, "%ld\n", (long)getpid());
	return lp_write_file_atomic(AT_FDCWD, path, text, (size_t)len, err);
}

/* Resolve the output root and hold it open. */
static int open_output_root(daemon_state *d, const char *output_root, lp_error *err)
{
	char *root = output_root ? g_strdup(output_root) : lp_spool_path(d->spool, "done", "");
	char real_root[PATH_MAX];
	int r = 0;
	if (!realpath(root, real_root))
		r = lp_fail(err, LP_EIO, "output root %s: %s", root, g_strerror(errno));
	g_free(root);
	if (r)
		return r;
	d->root = g_strdup(real_root);
	d->root_fd = open(d->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->root_fd < 0)
		return lp_fail(err, LP_EIO, "output root %s: %s", d->root, g_strerror(errno));
	return 0;
}

/* Watch incoming/ for new job files; without a watch, the rescans alone
 * find them. */
static GFileMonitor *watch_incoming(daemon_state *d)
{
	char *incoming = lp_spool_path(d->spool, "incoming", "");
	GFile *dir = g_file_new_for_path(incoming);
	GError *gerr = NULL;
	GFileMonitor *monitor = g_file_monitor_directory(dir, G_FILE_MONITOR_WATCH_MOVES, NULL, &gerr);
	if (monitor) {
		g_signal_connect(monitor, "changed", G_CALLBACK(on_incoming_changed), d);
	} else {
		log_message(d, LP_LOG_WARNING, "cannot watch %s (%s): rescanning every %d s only",
			    incoming, gerr->message, d->active.rescan);
		g_error_free(gerr);
	}
	g_object_unref(dir);
	g_free(incoming);
	return monitor;
}

/* Recover, then run jobs until a stop. */
static void run_jobs(daemon_state *d, const char *spool_dir)
{
	d->running = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, running_job_free);
	recover(d);
	/* A job file's writer may die before closing it: never let that kill us. */
	signal(SIGPIPE, SIG_IGN);
	GFileMonitor *monitor = watch_incoming(d);
	log_message(d, LP_LOG_INFO, "watching %s (pid %ld, %d job%s at a time, outputs under %s)",
		    spool_dir, (long)getpid(), d->active.jobs, d->active.jobs == 1 ? "" : "s",
		    d->root);
	schedule_scan(d);
	g_main_loop_run(d->loop);
	log_message(d, LP_LOG_INFO, "stopped");
	/* Nothing may call back into d once it is gone. */
	if (monitor)
		g_object_unref(monitor);
	if (d->scan_source)
		g_source_remove(d->scan_source);
	if (d->grace_source)
		g_source_remove(d->grace_source);
	g_hash_table_unref(d->running);
}

/* The daemon proper: the pid file, then the jobs. Returns 0, or
 * write_pid_file's failure. */
static int serve(daemon_state *d, const char *spool_dir, const char *pid_file, lp_error *err)
{
	/* The signals are taken before the pid file tells anyone whom to send
	 * them to: a SIGTERM sent as soon as it appears must stop the daemon
	 * as any other does (one came in between under AddressSanitizer, and
	 * the daemon died of it). Those that come before the loop runs are
	 * handled once it does. */
	guint signal_sources[] = {
		g_unix_signal_add(SIGTERM, on_stop_signal, d),
		g_unix_signal_add(SIGINT, on_stop_signal, d),
		g_unix_signal_add(SIGHUP, on_hangup, d),
	};
	int r = write_pid_file(pid_file, err);
	if (!r) {
		run_jobs(d, spool_dir);
		g_unlink(pid_file);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(signal_sources); i++)
		g_source_remove(signal_sources[i]);
	return r;
}

int lp_daemon_run(const lp_daemon_options *opt, lp_error *err)
{
	daemon_state d;
	memset(&d, 0, sizeof d);
	d.root_fd = -1;
	d.config = opt->config;
	d.given = opt->settings;
	d.log = opt->log;
	d.loop = g_main_loop_new(NULL, FALSE);
	char *pid_file = opt->pid_file ? g_strdup(opt->pid_file)
				       : g_build_filename(opt->spool, "daemon.pid", NULL);
	int r = apply_settings(&d, err);
	if (!r && !(d.spool = lp_spool_open(opt->spool, err)))
		r = err->status;
	if (!r)
		r = open_output_root(&d, opt->output_root, err);
	if (!r)
		r = serve(&d, opt->spool, pid_file, err);
	if (d.rescan_source)
		g_source_remove(d.rescan_source);
	if (d.spool)
		lp_spool_close(d.spool);
	g_main_loop_unref(d.loop);
	if (d.root_fd >= 0)
		close(d.root_fd);
	g_free(d.root);
	g_free(pid_file);
	return r;
}
