/* A merge job in a child process: it can be killed when a grace period
 * runs out, and a crash fails only that job. The child is a fresh image of
 * the program, `laplace __job` (jobs/child.h),
 * and reports progress, warnings and its result through a pipe, as small
 * framed messages. */
#include "jobs/runner.h"
#include "jobs/confine.h"
#include "jobs/child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib-unix.h>

#include "io/staging.h"

/* Warnings beyond this many are counted in the statistics but not sent. */
#define MAX_FORWARDED_WARNINGS 20
#define PROGRESS_INTERVAL_US (250 * 1000)
enum message_kind { MSG_PROGRESS = 1, MSG_WARNING, MSG_RESULT };

typedef struct message_header {
	uint32_t kind;
	uint32_t len; /* payload bytes that follow */
} message_header;

typedef struct progress_message {
	uint64_t refs_done;
	uint64_t events_done;
} progress_message;

typedef struct result_message {
	int32_t status;
	lp_stats stats;
	char msg[sizeof ((lp_error *)0)->msg];
} result_message;

struct lp_job_proc {
	pid_t pid;
	GByteArray *pending; /* bytes read but not yet a whole message */
	bool exited;
	bool pipe_closed;
	int wait_status;
	bool have_result;
	result_message result;
	bool killed;
	unsigned timeout;    /* seconds, 0 for none */
	guint timer;         /* the time limit's source, while it runs */
	bool timed_out;
	bool cancelled;      /* lp_job_proc_cancel: ended on request */
	bool terminating;    /* SIGTERM sent (time limit or cancel): SIGKILL next */
	gint64 started;
	lp_job_proc_ops ops;
	void *ctx;
};

/* ---- the child ---- */

typedef struct child_state {
	gint64 last_progress;
	int warnings;
} child_state;

/* Messages are at most a few kilobytes: one blocking write each, retried
 * after signals. A parent gone away ends the child anyway. */
static void send_message(uint32_t kind, const void *payload, uint32_t len)
{
	char buf[sizeof(message_header) + sizeof(result_message)];
	message_header h = {kind, len};
	memcpy(buf, &h, sizeof h);
	memcpy(buf + sizeof h, payload, len);
	size_t total = sizeof h + len, done = 0;
	while (done < total) {
		ssize_t n = write(LP_CHILD_PIPE_FD, buf + done, total - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(LP_EIO);
		done += (size_t)n;
	}
}

static void child_progress(void *ctx, const lp_progress_info *info)
{
	child_state *st = ctx;
	gint64 now = g_get_monotonic_time();
	if (now - st->last_progress < PROGRESS_INTERVAL_US)
		return;
	st->last_progress = now;
	progress_message m = {info->records, info->events};
	send_message(MSG_PROGRESS, &m, sizeof m);
}

static void child_warning(void *ctx, const char *msg)
{
	child_state *st = ctx;
	if (st->warnings++ >= MAX_FORWARDED_WARNINGS)
		return;
	size_t len = strnlen(msg, sizeof ((result_message *)0)->msg - 1);
	send_message(MSG_WARNING, msg, (uint32_t)len);
}

/* A merge job's values as lp_job_proc_start writes them down and
 * lp_job_child_main reads them back, in this order; each number as a
 * uint64_t, converted back to its field's type (a negative level comes
 * back whole). */
#define JOB_STRINGS(X) X(reference) X(kernel) X(output) X(stats_path)
#define JOB_NUMBERS(X) X(ref_format) X(endian) X(user_only) X(strict) X(page_offset) \
	X(page_offset_set) \
	X(per_process) X(layout) X(discard) X(force) X(compress) X(level) X(form) X(threads)

/* What the child needs besides the job. */
typedef struct child_job {
	pid_t parent;
	uid_t owner;
	bool syncs;                 /* lp_stage_set_sync */
	lp_job_confinement confine; /* root NULL: not confined */
	lp_merge_job job;
} child_job;

static GByteArray *describe_job(const lp_merge_job *job, uid_t owner,
				const lp_job_confinement *confine)
{
	GByteArray *desc = lp_job_desc_new(LP_JOB_COMMAND);
	lp_job_desc_put_u64(desc, (uint64_t)getpid());
	lp_job_desc_put_u64(desc, owner);
	lp_job_desc_put_u64(desc, lp_stage_syncs());
	lp_job_desc_put_str(desc, confine ? confine->root : NULL);
	lp_job_desc_put_str(desc, confine ? confine->what : NULL);
#define PUT_STRING(field) lp_job_desc_put_str(desc, job->field);
#define PUT_NUMBER(field) lp_job_desc_put_u64(desc, (uint64_t)job->field);
	JOB_STRINGS(PUT_STRING)
	JOB_NUMBERS(PUT_NUMBER)
	return desc;
}

static void read_job(lp_job_desc *desc, child_job *c)
{
	c->parent = (pid_t)lp_job_desc_get_u64(desc);
	c->owner = (uid_t)lp_job_desc_get_u64(desc);
	c->syncs = lp_job_desc_get_u64(desc);
	c->confine.root_fd = LP_CHILD_ROOT_FD;
	c->confine.root = lp_job_desc_get_str(desc);
	c->confine.what = lp_job_desc_get_str(desc);
	lp_merge_job_init(&c->job);
#define GET_STRING(field) c->job.field = lp_job_desc_get_str(desc);
#define GET_NUMBER(field) c->job.field = (__typeof__(c->job.field))lp_job_desc_get_u64(desc);
	JOB_STRINGS(GET_STRING)
	JOB_NUMBERS(GET_NUMBER)
}

/* Run the job read back, its result into *res. */
static void run_job(child_job *c, result_message *res)
{
	lp_stage_set_sync(c->syncs);
	/* The ending signals are blocked since the spawn (lp_job_spawn): one
	 * sent already waits for this handling, which removes the job's
	 * temporary outputs before it ends the job. */
	lp_stage_handle_signals();
	child_state st = {0, 0};
	c->job.warn = child_warning;
	c->job.warn_ctx = &st;
	c->job.progress = child_progress;
	c->job.progress_ctx = &st;
	lp_error err = {0, ""};
	if (c->owner != LP_NO_OWNER) {
		res->status = lp_job_become(c->owner, &err);
		/* Changing credentials clears PR_SET_PDEATHSIG: set again, and
		 * the parent checked again, as in lp_job_child_main. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != c->parent)
			_exit(LP_EIO);
	}
	if (!res->status && c->confine.root) {
		c->job.output_dir_fd = lp_job_open_output_dir(&c->confine, c->job.output,
							      c->job.per_process, &err);
		if (c->job.output_dir_fd < 0)
			res->status = err.status;
	}
	if (!res->status)
		res->status = lp_merge_job_run(&c->job, &res->stats, &err);
	g_strlcpy(res->msg, err.msg, sizeof res->msg);
}

int lp_job_child_main(lp_error *err)
{
	/* Die with the parent, so that a daemon's restart never races a
	 * leftover job; set before the parent is checked below, so that its
	 * death cannot fall in between. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int r = lp_job_child_check_fd(LP_CHILD_PIPE_FD, err);
	if (!r)
		r = lp_job_child_check_fd(LP_CHILD_DESC_FD, err);
	if (r)
		return r;
	lp_job_desc desc;
	lp_error desc_err = {0, ""};
	r = lp_job_desc_receive(LP_JOB_COMMAND, &desc, &desc_err);
	child_job c = {0};
	if (!r) {
		read_job(&desc, &c);
		r = lp_job_desc_end(&desc, &desc_err);
	}
	result_message res;
	memset(&res, 0, sizeof res);
	if (r) {
		/* Failed as a job fails: the parent tells why. */
		res.status = r;
		g_strlcpy(res.msg, desc_err.msg, sizeof res.msg);
	} else if (getppid() != c.parent) {
		lp_job_desc_clear(&desc);
		return LP_EIO; /* nobody left to report to */
	} else {
		run_job(&c, &res);
	}
	send_message(MSG_RESULT, &res, sizeof res);
	lp_job_desc_clear(&desc);
	return 0;
}

/* ---- the parent ---- */

static void finish_if_over(lp_job_proc *proc)
{
	if (!proc->exited || !proc->pipe_closed)
		return;
	lp_job_outcome out;
	memset(&out, 0, sizeof out);
	out.seconds = (double)(g_get_monotonic_time() - proc->started) / 1e6;
	/* Killed counts only for a job that had not ended by itself, nor run
	 * out of time (it fails, even if a stop killed it since). */
	out.killed = proc->killed && !proc->have_result && !proc->timed_out && !proc->cancelled;
	if (proc->timer)
		g_source_remove(proc->timer);
	/* A result sent means the job ended by itself, its outputs published
	 * or not, whatever signal came after it. */
	if (proc->have_result) {
		out.status = proc->result.status;
		out.stats = proc->result.stats;
		g_strlcpy(out.msg, proc->result.msg, sizeof out.msg);
	} else if (proc->cancelled) {
		out.status = LP_EIO;
		g_strlcpy(out.msg, "cancelled", sizeof out.msg);
	} else if (proc->timed_out) {
		out.status = LP_EIO;
		g_snprintf(out.msg, sizeof out.msg, "timed out after %u s", proc->timeout);
	} else {
		out.status = LP_EIO;
		if (WIFSIGNALED(proc->wait_status))
			g_snprintf(out.msg, sizeof out.msg, "job process %s by signal %d (%s)",
				   proc->killed ? "killed" : "died", WTERMSIG(proc->wait_status),
				   g_strsignal(WTERMSIG(proc->wait_status)));
		else
			g_snprintf(out.msg, sizeof out.msg,
				   "job process exited with status %d without a result",
				   WEXITSTATUS(proc->wait_status));
	}
	proc->ops.done(proc->ctx, &out);
	g_byte_array_unref(proc->pending);
	g_free(proc);
}

static void handle_message(lp_job_proc *proc, uint32_t kind, const guint8 *payload, uint32_t len)
{
	if (kind == MSG_PROGRESS && len == sizeof(progress_message)) {
		progress_message m;
		memcpy(&m, payload, sizeof m);
		if (proc->ops.progress)
			proc->ops.progress(proc->ctx, m.refs_done, m.events_done);
	} else if (kind == MSG_WARNING && len < sizeof proc->result.msg) {
		char text[sizeof proc->result.msg];
		memcpy(text, payload, len);
		text[len] = '\0';
		if (proc->ops.warning)
			proc->ops.warning(proc->ctx, text);
	} else if (kind == MSG_RESULT && len == sizeof(result_message)) {
		memcpy(&proc->result, payload, sizeof proc->result);
		proc->result.msg[sizeof proc->result.msg - 1] = '\0';
		proc->have_result = true;
	}
}

static gboolean on_readable(gint fd, GIOCondition cond, gpointer data)
{
	lp_job_proc *proc = data;
	(void)cond;
	guint8 buf[8192];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		g_byte_array_append(proc->pending, buf, (guint)n);
	/* Saved now: handling the messages (a progress message writes the
	 * status file) may change errno, and taking a stale EAGAIN for the end
	 * of the pipe would close it under a running child (SIGPIPE). */
	bool drained = n < 0 && (errno == EAGAIN || errno == EINTR);
	size_t used = 0;
	while (proc->pending->len - used >= sizeof(message_header)) {
		message_header h;
		memcpy(&h, proc->pending->data + used, sizeof h);
		if (h.len > sizeof(result_message))
			break; /* cannot happen with our own child; wait for the end */
		if (proc->pending->len - used < sizeof h + h.len)
			break;
		handle_message(proc, h.kind, proc->pending->data + used + sizeof h, h.len);
		used += sizeof h + h.len;
	}
	g_byte_array_remove_range(proc->pending, 0, (guint)used);
	if (drained)
		return G_SOURCE_CONTINUE;
	close(fd);
	proc->pipe_closed = true;
	finish_if_over(proc);
	return G_SOURCE_REMOVE;
}

static void on_child_exit(GPid pid, gint wait_status, gpointer data)
{
	lp_job_proc *proc = data;
	(void)pid;
	proc->exited = true;
	proc->wait_status = wait_status;
	finish_if_over(proc);
}

/* SIGKILL for a job that outlived its SIGTERM by this long. */
#define TIMEOUT_KILL_DELAY_S 5

static gboolean on_timer(gpointer data);

/* First SIGTERM, so that the job removes its temporary outputs; SIGKILL
 * if it is still there TIMEOUT_KILL_DELAY_S later. */
static void terminate(lp_job_proc *proc)
{
	proc->terminating = true;
	kill(proc->pid, SIGTERM);
	proc->timer = g_timeout_add_seconds(TIMEOUT_KILL_DELAY_S, on_timer, proc);
}

static gboolean on_timer(gpointer data)
{
	lp_job_proc *proc = data;
	proc->timer = 0;
	if (proc->terminating) {
		kill(proc->pid, SIGKILL);
	} else {
		proc->timed_out = true;
		terminate(proc);
	}
	return G_SOURCE_REMOVE;
}

lp_job_proc *lp_job_proc_start(const lp_merge_job *job, uid_t owner,
			       const lp_job_confinement *confine, unsigned timeout,
			       const lp_job_proc_ops *ops, void *ctx, lp_error *err)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		lp_fail(err, LP_EIO, "cannot create a pipe: %s", g_strerror(errno));
		return NULL;
	}
	GByteArray *desc = describe_job(job, owner, confine);
	pid_t pid;
	int r = lp_job_spawn(LP_JOB_COMMAND, desc, fds[1], confine ? confine->root_fd : -1, &pid,
			     err);
	g_byte_array_unref(desc);
	close(fds[1]);
	if (r) {
		close(fds[0]);
		return NULL;
	}
	g_unix_set_fd_nonblocking(fds[0], TRUE, NULL);
	lp_job_proc *proc = g_new0(lp_job_proc, 1);
	proc->pid = pid;
	proc->pending = g_byte_array_new();
	proc->started = g_get_monotonic_time();
	proc->ops = *ops;
	proc->ctx = ctx;
	proc->timeout = timeout;
	if (timeout)
		proc->timer = g_timeout_add_seconds(timeout, on_timer, proc);
	g_unix_fd_add(fds[0], G_IO_IN | G_IO_HUP | G_IO_ERR, on_readable, proc);
	g_child_watch_add(pid, on_child_exit, proc);
	return proc;
}

pid_t lp_job_proc_pid(const lp_job_proc *proc) { return proc->pid; }

void lp_job_proc_cancel(lp_job_proc *proc)
{
	if (proc->terminating)
		return;
	proc->cancelled = true;
	if (proc->timer)
		g_source_remove(proc->timer);
	terminate(proc);
}

void lp_job_proc_kill(lp_job_proc *proc)
{
	proc->killed = true;
	kill(proc->pid, SIGKILL);
}
