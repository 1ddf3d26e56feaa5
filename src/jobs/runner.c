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
#include <poll.h>
#include <spawn.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
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
	double cpu_seconds;
	uint64_t peak_rss_kib;
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
	/* A command of the program run as it is (lp_cell_proc_start, one
	 * stage): the pipe carries its standard error, not messages, and its
	 * exit status is its result. */
	bool raw;
	bool have_rusage;    /* reaped with wait4: its CPU time and peak memory */
	double cpu_seconds;
	uint64_t peak_rss_kib;
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

static double cpu_seconds(const struct rusage *ru)
{
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
	       (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
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
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	res->cpu_seconds = cpu_seconds(&ru);
	res->peak_rss_kib = (uint64_t)ru.ru_maxrss;
}

/* What a hidden child does first: die with the parent, so that a daemon's
 * restart never races a leftover job (set before the parent is checked,
 * so that its death cannot fall in between); check its descriptors
 * (LP_EUSAGE returned with err set: run by hand); read its description
 * into desc, *desc_status 0 or the status of a failure that desc_err
 * tells, which the child reports to its parent as its result. */
static int child_begin(const char *command, lp_job_desc *desc, int *desc_status,
		       lp_error *desc_err, lp_error *err)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int r = lp_job_child_check_fd(LP_CHILD_PIPE_FD, err);
	if (!r)
		r = lp_job_child_check_fd(LP_CHILD_DESC_FD, err);
	if (!r)
		*desc_status = lp_job_desc_receive(command, desc, desc_err);
	return r;
}

int lp_job_child_main(lp_error *err)
{
	lp_job_desc desc;
	lp_error desc_err = {0, ""};
	int r, usage = child_begin(LP_JOB_COMMAND, &desc, &r, &desc_err, err);
	if (usage)
		return usage;
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

/* ---- a cell: commands of this program (lp_cell_proc_start) ---- */

#define CELL_MAX_STAGES 8
#define CELL_MAX_ARGS 4096
/* The end of the stages' standard error kept for the message. */
#define CELL_STDERR_TAIL 4096

extern char **environ;

static int stage_status(int wait_status)
{
	return WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status) : WEXITSTATUS(wait_status);
}

/* The last line of text that is not empty, into out. */
static void last_line(const GString *text, char *out, size_t size)
{
	size_t end = text->len;
	while (end && (text->str[end - 1] == '\n' || text->str[end - 1] == '\r'))
		end--;
	size_t start = end;
	while (start && text->str[start - 1] != '\n')
		start--;
	g_strlcpy(out, "", size);
	if (end > start)
		g_snprintf(out, size, "%.*s", (int)(end - start), text->str + start);
}

/* Start one stage: `laplace argv...` reading in, writing out, its errors
 * to err_fd, with the signals this process blocks unblocked. */
static int spawn_stage(char **argv, int in, int out, int err_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	sigset_t none;
	sigemptyset(&none);
	int e = posix_spawn_file_actions_adddup2(&fa, in, 0);
	if (!e)
		e = posix_spawn_file_actions_adddup2(&fa, out, 1);
	if (!e)
		e = posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	if (!e)
		e = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	if (!e)
		e = posix_spawnattr_setsigmask(&attr, &none);
	if (!e)
		e = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	if (!e)
		e = posix_spawn(pid, "/proc/self/exe", &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return e;
}

/* Run the stages, the ending signals passed on to them; how they ended
 * into *res. */
static void run_cell(char ***stages, size_t n, result_message *res)
{
	sigset_t ending;
	sigemptyset(&ending);
	sigaddset(&ending, SIGINT);
	sigaddset(&ending, SIGTERM);
	sigaddset(&ending, SIGHUP);
	/* Blocked since the spawn (lp_job_spawn): read here, not handled. */
	int sig_fd = signalfd(-1, &ending, SFD_CLOEXEC | SFD_NONBLOCK);
	int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	int err_pipe[2];
	pid_t pids[CELL_MAX_STAGES];
	size_t started = 0;
	int spawn_error = 0;
	if (sig_fd < 0 || null_fd < 0 || pipe2(err_pipe, O_CLOEXEC) < 0) {
		res->status = LP_EIO;
		g_snprintf(res->msg, sizeof res->msg, "cannot set up the cell's processes: %s",
			   g_strerror(errno));
		return;
	}
	int in = null_fd;
	for (size_t i = 0; i < n && !spawn_error; i++) {
		int p[2] = {-1, -1};
		if (i + 1 < n && pipe2(p, O_CLOEXEC) < 0) {
			spawn_error = errno;
			break;
		}
		int out = i + 1 < n ? p[1] : null_fd;
		spawn_error = spawn_stage(stages[i], in, out, err_pipe[1], &pids[i]);
		if (!spawn_error)
			started++;
		if (in != null_fd)
			close(in);
		if (out != null_fd)
			close(out);
		in = p[0] >= 0 ? p[0] : null_fd;
	}
	if (in != null_fd)
		close(in);
	close(err_pipe[1]);
	GString *tail = g_string_new(NULL);
	struct pollfd fds[2] = {{err_pipe[0], POLLIN, 0}, {sig_fd, POLLIN, 0}};
	for (;;) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		struct signalfd_siginfo si;
		while (read(sig_fd, &si, sizeof si) == sizeof si)
			for (size_t i = 0; i < started; i++)
				kill(pids[i], (int)si.ssi_signo);
		if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		char buf[4096];
		ssize_t got = read(err_pipe[0], buf, sizeof buf);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		g_string_append_len(tail, buf, got);
		if (tail->len > 2 * CELL_STDERR_TAIL)
			g_string_erase(tail, 0, (gssize)(tail->len - CELL_STDERR_TAIL));
	}
	close(err_pipe[0]);
	int status = 0, last = 0;
	double cpu = 0;
	uint64_t rss = 0;
	for (size_t i = 0; i < started; i++) {
		int ws = 0;
		struct rusage ru;
		while (wait4(pids[i], &ws, 0, &ru) < 0 && errno == EINTR)
			;
		cpu += cpu_seconds(&ru);
		rss = MAX(rss, (uint64_t)ru.ru_maxrss);
		int st = stage_status(ws);
		if (st && !status)
			status = st;
		if (i + 1 == n)
			last = st;
	}
	res->status = last ? last : status;
	res->cpu_seconds = cpu;
	res->peak_rss_kib = rss;
	last_line(tail, res->msg, sizeof res->msg);
	if (spawn_error) {
		res->status = LP_EIO;
		g_snprintf(res->msg, sizeof res->msg, "cannot start the cell's process: %s",
			   g_strerror(spawn_error));
	} else if (res->status && !res->msg[0]) {
		g_snprintf(res->msg, sizeof res->msg, "exit status %d", res->status);
	}
	g_string_free(tail, TRUE);
	close(sig_fd);
	close(null_fd);
}

int lp_cell_child_main(lp_error *err)
{
	lp_job_desc desc;
	lp_error desc_err = {0, ""};
	int r, usage = child_begin(LP_CELL_COMMAND, &desc, &r, &desc_err, err);
	if (usage)
		return usage;
	pid_t parent = 0;
	char **stages[CELL_MAX_STAGES] = {NULL};
	size_t n = 0;
	if (!r) {
		parent = (pid_t)lp_job_desc_get_u64(&desc);
		n = (size_t)lp_job_desc_get_u64(&desc);
		if (!n || n > CELL_MAX_STAGES)
			n = 0, desc.bad = true;
		for (size_t i = 0; i < n; i++) {
			size_t argc = (size_t)lp_job_desc_get_u64(&desc);
			if (!argc || argc > CELL_MAX_ARGS) {
				desc.bad = true;
				argc = 0;
			}
			stages[i] = g_new0(char *, argc + 2);
			stages[i][0] = "laplace";
			for (size_t a = 0; a < argc; a++)
				stages[i][a + 1] = (char *)lp_job_desc_get_str(&desc);
		}
		r = lp_job_desc_end(&desc, &desc_err);
	}
	result_message res;
	memset(&res, 0, sizeof res);
	bool orphan = !r && getppid() != parent; /* nobody left to report to */
	if (r) {
		/* Failed as a cell fails: the parent tells why. */
		res.status = r;
		g_strlcpy(res.msg, desc_err.msg, sizeof res.msg);
	} else if (!orphan) {
		run_cell(stages, n, &res);
	}
	if (!orphan)
		send_message(MSG_RESULT, &res, sizeof res);
	for (size_t i = 0; i < n; i++)
		g_free(stages[i]);
	lp_job_desc_clear(&desc);
	return orphan ? LP_EIO : 0;
}

/* ---- the parent ---- */

/* A command's outcome: its exit status and its last line on standard
 * error. */
static void raw_outcome(lp_job_proc *proc, lp_job_outcome *out)
{
	out->status = stage_status(proc->wait_status);
	GString *text = g_string_new_len((const char *)proc->pending->data, proc->pending->len);
	last_line(text, out->msg, sizeof out->msg);
	g_string_free(text, TRUE);
	if (out->status && !out->msg[0])
		g_snprintf(out->msg, sizeof out->msg, "exit status %d", out->status);
}

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
	if (proc->raw) {
		raw_outcome(proc, &out);
	} else if (proc->have_result) {
		out.status = proc->result.status;
		out.stats = proc->result.stats;
		out.cpu_seconds = proc->result.cpu_seconds;
		out.peak_rss_kib = proc->result.peak_rss_kib;
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
	if (proc->have_rusage) {
		out.cpu_seconds = proc->cpu_seconds;
		out.peak_rss_kib = proc->peak_rss_kib;
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
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		g_byte_array_append(proc->pending, buf, (guint)n);
		/* A command's standard error: its end is enough. */
		if (proc->raw && proc->pending->len > 2 * CELL_STDERR_TAIL)
			g_byte_array_remove_range(proc->pending, 0,
						  proc->pending->len - CELL_STDERR_TAIL);
	}
	if (proc->raw) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return G_SOURCE_CONTINUE;
		close(fd);
		proc->pipe_closed = true;
		finish_if_over(proc);
		return G_SOURCE_REMOVE;
	}
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

/* The child's pidfd is readable: it has ended; reaped with wait4 for its
 * CPU time and peak memory (its own and its waited-for children's). */
static gboolean on_pidfd(gint fd, GIOCondition cond, gpointer data)
{
	lp_job_proc *proc = data;
	(void)cond;
	int ws = 0;
	struct rusage ru;
	pid_t r = wait4(proc->pid, &ws, WNOHANG, &ru);
	if (r == 0 || (r < 0 && errno == EINTR))
		return G_SOURCE_CONTINUE;
	close(fd);
	proc->exited = true;
	proc->wait_status = r < 0 ? 0 : ws;
	if (r > 0) {
		proc->have_rusage = true;
		proc->cpu_seconds = cpu_seconds(&ru);
		proc->peak_rss_kib = (uint64_t)ru.ru_maxrss;
	}
	finish_if_over(proc);
	return G_SOURCE_REMOVE;
}

/* Watch for the child's end: through a pidfd, else (an older kernel)
 * GLib's child watch, without CPU time and memory. */
static void watch_exit(lp_job_proc *proc)
{
	int fd = pidfd_open(proc->pid, 0);
	if (fd >= 0) {
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		g_unix_fd_add(fd, G_IO_IN, on_pidfd, proc);
	} else {
		g_child_watch_add(proc->pid, on_child_exit, proc);
	}
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

/* Start `laplace command` with desc, watched as the runner watches its
 * children. */
static lp_job_proc *start_child(const char *command, GByteArray *desc, char *const *argv,
				int root_fd, unsigned timeout, const lp_job_proc_ops *ops,
				void *ctx, lp_error *err)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		lp_fail(err, LP_EIO, "cannot create a pipe: %s", g_strerror(errno));
		if (desc)
			g_byte_array_unref(desc);
		return NULL;
	}
	pid_t pid;
	int r = desc ? lp_job_spawn(command, desc, fds[1], root_fd, &pid, err)
		     : lp_command_spawn(argv, fds[1], &pid, err);
	if (desc)
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
	proc->raw = !desc;
	proc->timeout = timeout;
	if (timeout)
		proc->timer = g_timeout_add_seconds(timeout, on_timer, proc);
	g_unix_fd_add(fds[0], G_IO_IN | G_IO_HUP | G_IO_ERR, on_readable, proc);
	watch_exit(proc);
	return proc;
}

lp_job_proc *lp_job_proc_start(const lp_merge_job *job, uid_t owner,
			       const lp_job_confinement *confine, unsigned timeout,
			       const lp_job_proc_ops *ops, void *ctx, lp_error *err)
{
	return start_child(LP_JOB_COMMAND, describe_job(job, owner, confine), NULL,
			   confine ? confine->root_fd : -1, timeout, ops, ctx, err);
}

lp_job_proc *lp_cell_proc_start(char **const *stages, size_t nstages, unsigned timeout,
				const lp_job_proc_ops *ops, void *ctx, lp_error *err)
{
	/* One command is run as it is: no process in between. */
	if (nstages == 1)
		return start_child(NULL, NULL, stages[0], -1, timeout, ops, ctx, err);
	GByteArray *desc = lp_job_desc_new(LP_CELL_COMMAND);
	lp_job_desc_put_u64(desc, (uint64_t)getpid());
	lp_job_desc_put_u64(desc, nstages);
	for (size_t i = 0; i < nstages; i++) {
		size_t argc = g_strv_length((char **)stages[i]);
		lp_job_desc_put_u64(desc, argc);
		for (size_t a = 0; a < argc; a++)
			lp_job_desc_put_str(desc, stages[i][a]);
	}
	return start_child(LP_CELL_COMMAND, desc, NULL, -1, timeout, ops, ctx, err);
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
