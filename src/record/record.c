/* laplace record's front end (record.h). */
#include "record/record.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "io/staging.h"

extern char **environ;

/* The capture's references are compressed at zstd's fast level -1, not the
   level 1 of every other output: compressing 26 bytes a reference is most
   of what a recording costs (bench/record), level -1 costs about 30% less
   CPU for these records than level 1, and they stay small (2.6 bytes a
   reference against 2.3 on sort, bench/RESULTS.md, "laplace record"). */
#define RECORD_ZSTD_LEVEL (-1)

/* Valgrind's slots for threads of a process (its default, 500, ends a
   process of 600 threads): each costs about 7 KB of every traced
   process's memory, whether used or not. laplace-record(1) says it. */
#define RECORD_MAX_THREADS 1024

/* The directory holding the tool: LAPLACE_RECORDER_DIR when set; else, for
   laplace in BINDIR, BINDIR/../libexec/laplace (make install); else, for
   laplace in the build tree, BUILD/record (make). NULL with err set. */
static char *find_tool(lp_error *err)
{
	const char *env = g_getenv(LP_RECORDER_DIR_ENV);
	if (env) {
		char *tool = g_build_filename(env, LP_RECORD_TOOL_FILE, NULL);
		if (g_file_test(tool, G_FILE_TEST_IS_EXECUTABLE))
			return tool;
		lp_fail(err, LP_EIO, "%s: no recorder there (%s=%s)", tool, LP_RECORDER_DIR_ENV, env);
		g_free(tool);
		return NULL;
	}
	char *self = g_file_read_link("/proc/self/exe", NULL);
	char *bindir = self ? g_path_get_dirname(self) : g_strdup(".");
	char *libexec = g_build_filename(bindir, "..", "libexec", "laplace", LP_RECORD_TOOL_FILE, NULL);
	char *installed = g_canonicalize_filename(libexec, NULL);
	g_free(libexec);
	char *built = g_build_filename(bindir, "record", LP_RECORD_TOOL_FILE, NULL);
	char *tool = NULL;
	if (g_file_test(installed, G_FILE_TEST_IS_EXECUTABLE))
		tool = g_strdup(installed);
	else if (g_file_test(built, G_FILE_TEST_IS_EXECUTABLE))
		tool = g_strdup(built);
	else
		lp_fail(err, LP_EIO,
			"the recorder is not installed: no %s or %s (make builds it when Valgrind's "
			"development files, the valgrind package, are there)",
			installed, built);
	g_free(self);
	g_free(bindir);
	g_free(installed);
	g_free(built);
	return tool;
}

/* Valgrind's launcher itself: Debian's valgrind is a shell script that
   adds LD_LIBRARY_PATH, GLIBCPP_FORCE_NEW, GLIBCXX_FORCE_NEW and PWD to
   the program's environment before it runs valgrind.bin beside it; the
   command is given its own environment (record.md 7), so valgrind.bin
   is run instead when it is there. Takes launcher. */
static char *valgrind_binary(char *launcher)
{
	char *bin = g_strconcat(launcher, ".bin", NULL);
	char head[2] = {0};
	FILE *f = fopen(launcher, "rb");
	bool script = f && fread(head, 1, 2, f) == 2 && head[0] == '#' && head[1] == '!';
	if (f)
		fclose(f);
	if (script && g_file_test(bin, G_FILE_TEST_IS_EXECUTABLE)) {
		g_free(launcher);
		return bin;
	}
	g_free(bin);
	return launcher;
}

/* Valgrind's own directory of tools and preloaded libraries: beside its
   launcher, as Valgrind installs it (/usr/bin/valgrind,
   /usr/libexec/valgrind). */
static char *find_valgrind_lib(const char *launcher, lp_error *err)
{
	char *bindir = g_path_get_dirname(launcher);
	char *lib = g_build_filename(bindir, "..", "libexec", "valgrind", NULL);
	g_free(bindir);
	char *preload = g_build_filename(lib, "vgpreload_core-amd64-linux.so", NULL);
	bool there = g_file_test(preload, G_FILE_TEST_EXISTS);
	g_free(preload);
	if (there)
		return lib;
	lp_fail(err, LP_EIO, "%s: not Valgrind's directory of tools (no vgpreload_core-amd64-linux.so)",
		lib);
	g_free(lib);
	return NULL;
}

/* Valgrind looks for every tool, and its own preloaded libraries, in one
   directory (VALGRIND_LIB): LIB, made of links to Valgrind's and one to
   ours. */
static int make_tool_dir(const char *lib, const char *valgrind_lib, const char *tool,
			 lp_error *err)
{
	if (g_mkdir(lib, 0777) != 0)
		return lp_fail(err, LP_EIO, "cannot create %s: %s", lib, g_strerror(errno));
	GDir *dir = g_dir_open(valgrind_lib, 0, NULL);
	if (!dir)
		return lp_fail(err, LP_EIO, "cannot read %s: %s", valgrind_lib, g_strerror(errno));
	int rc = 0;
	const char *name;
	while (!rc && (name = g_dir_read_name(dir))) {
		char *target = g_build_filename(valgrind_lib, name, NULL);
		char *link = g_build_filename(lib, name, NULL);
		if (symlink(target, link) != 0)
			rc = lp_fail(err, LP_EIO, "cannot create %s: %s", link, g_strerror(errno));
		g_free(target);
		g_free(link);
	}
	g_dir_close(dir);
	if (rc)
		return rc;
	char *absolute = g_canonicalize_filename(tool, NULL);
	char *link = g_build_filename(lib, LP_RECORD_TOOL_FILE, NULL);
	unlink(link); /* a Valgrind that ships a tool of that name: ours */
	if (symlink(absolute, link) != 0)
		rc = lp_fail(err, LP_EIO, "cannot create %s: %s", link, g_strerror(errno));
	g_free(absolute);
	g_free(link);
	return rc;
}

/* Whether the recorder cannot run the program, which then runs untraced:
   Valgrind refuses one that asks for privileges (set-user-id,
   set-group-id, file capabilities: it would run without them), as it
   checks; and has no tool for a 32-bit one. */
static bool untraceable(const char *program)
{
	struct stat st;
	if (stat(program, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)))
		return true;
	if (getxattr(program, "security.capability", NULL, 0) >= 0)
		return true;
	unsigned char ident[5];
	FILE *f = fopen(program, "rb");
	size_t n = f ? fread(ident, 1, sizeof ident, f) : 0;
	if (f)
		fclose(f);
	return n == sizeof ident && !memcmp(ident, "\x7f" "ELF", 4) && ident[4] != 2 /* ELFCLASS64 */;
}

/* Whatever the command starts is reaped here when its parent is gone, so
   that the recording lasts until every traced process has written its
   stream. */
static void become_subreaper(void)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
}

/* The parent of process pid, from /proc/PID/stat; 0 when it is gone. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	/* pid (comm) state ppid ...: the name may hold anything but ends at
	   the last parenthesis. */
	const char *end = strrchr(buf, ')');
	int ppid = 0;
	if (!end || sscanf(end + 1, " %*c %d", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

/* Kills (SIGKILL) every process descended from this one that /proc
   shows. */
static void kill_descendants(pid_t self)
{
	GHashTable *parents = g_hash_table_new(g_direct_hash, g_direct_equal);
	DIR *proc = opendir("/proc");
	struct dirent *de;
	while (proc && (de = readdir(proc))) {
		pid_t pid = (pid_t)atoi(de->d_name);
		pid_t ppid = pid > 0 ? parent_of(pid) : 0;
		if (ppid > 0)
			g_hash_table_insert(parents, GINT_TO_POINTER(pid), GINT_TO_POINTER(ppid));
	}
	if (proc)
		closedir(proc);
	GHashTableIter it;
	gpointer key, value;
	g_hash_table_iter_init(&it, parents);
	while (g_hash_table_iter_next(&it, &key, &value)) {
		pid_t up = GPOINTER_TO_INT(value);
		/* Up the chain to this process, or to one that is not ours. */
		for (guint steps = g_hash_table_size(parents); up != self && up > 1 && steps > 0; steps--)
			up = GPOINTER_TO_INT(g_hash_table_lookup(parents, GINT_TO_POINTER(up)));
		if (up == self)
			kill(GPOINTER_TO_INT(key), SIGKILL);
	}
	g_hash_table_destroy(parents);
}

/* Abandoning: every process the recording started, and every descendant
   of theirs, ends before laplace does. Those whose parent ends are
   adopted here (become_subreaper), so that once none is left to kill and
   reap, none is left at all. */
static void end_descendants(void)
{
	pid_t self = getpid();
	for (;;) {
		kill_descendants(self);
		pid_t reaped;
		while ((reaped = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (reaped < 0 && errno == ECHILD)
			return;
		g_usleep(1000);
	}
}

/* The command's run: started, then waited for with its descendants. */
typedef struct rec_run {
	pid_t pid;
	int status;       /* its wait status */
	bool ended;       /* the command itself was reaped */
	bool interrupted; /* a first SIGINT came */
	siginfo_t interrupt; /* who sent it */
} rec_run;

/* Waits until the command and everything it started have ended, handling
   the signals record.h describes; abandoning, it removes everything staged
   (the streams, the capture being written) and exits. */
static void wait_for_command(rec_run *run, const sigset_t *waited)
{
	for (;;) {
		pid_t pid;
		int status;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			if (pid == run->pid) {
				run->status = status;
				run->ended = true;
			}
		if (pid < 0 && errno == ECHILD)
			return;
		siginfo_t info;
		int sig = sigwaitinfo(waited, &info);
		if (sig < 0 || sig == SIGCHLD)
			continue;
		if (sig == SIGINT && !run->interrupted) {
			run->interrupted = true;
			run->interrupt = info;
			continue;
		}
		end_descendants();
		fprintf(stderr, "laplace record: %s: the capture is abandoned\n",
			sig == SIGINT ? "interrupted again" : strsignal(sig));
		lp_stage_abandon(128 + sig);
	}
}

static int start_command(rec_run *run, const char *program, char **argv, char **envp,
			 const sigset_t *mask, lp_error *err)
{
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, mask);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	int e = posix_spawn(&run->pid, program, NULL, &attr, argv, envp);
	posix_spawnattr_destroy(&attr);
	if (e)
		return lp_fail(err, LP_EIO, "cannot start %s: %s", program, g_strerror(e));
	return 0;
}

/* The outputs that exist, when they must not be replaced: a usage error
   naming them. */
static int refuse_existing(const char *const *paths, size_t n, lp_error *err)
{
	GString *found = g_string_new(NULL);
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (lstat(paths[i], &st) == 0) {
			g_string_append_printf(found, "%s%s", count ? " and " : "", paths[i]);
			count++;
		}
	}
	int rc = 0;
	if (count)
		rc = lp_fail(err, LP_EUSAGE, "%s already exist%s; use --force to replace %s",
			     found->str, count > 1 ? "" : "s", count > 1 ? "them" : "it");
	g_string_free(found, TRUE);
	return rc;
}

/* The recorder's own failure, told by the tool in DIR/failed. */
static int tool_failed(const char *streams, lp_error *err)
{
	char *path = g_build_filename(streams, "failed", NULL);
	char *text = NULL;
	int rc = 0;
	if (g_file_get_contents(path, &text, NULL, NULL)) {
		g_strchomp(text);
		char *newline = strchr(text, '\n');
		if (newline)
			*newline = '\0';
		rc = lp_fail(err, LP_EIO, "the recorder failed: %s", text);
	}
	g_free(text);
	g_free(path);
	return rc;
}

/* The capture being written: its outputs, and the merge of the streams
   into them, which follows the streams on a thread of its own while the
   command runs (decode.h), so that the merging and compressing are mostly
   done when it ends. */
typedef struct rec_capture {
	lp_output *ref, *kern;
	lp_record_decoder *dec;
	GThread *thread;
	gint stop;
	int rc; /* the thread's failure, err */
	lp_error err;
} rec_capture;

/* How long the following thread waits when the streams had nothing new. */
#define FOLLOW_PAUSE_US 10000

static gpointer follow_streams(gpointer data)
{
	rec_capture *cap = data;
	while (!g_atomic_int_get(&cap->stop)) {
		bool progress = false;
		if ((cap->rc = lp_record_decoder_step(cap->dec, false, &progress, &cap->err)))
			break;
		if (!progress)
			g_usleep(FOLLOW_PAUSE_US);
	}
	return NULL;
}

static int capture_open(rec_capture *cap, const lp_record_request *rq, const char *streams,
			lp_record_result *res, lp_error *err)
{
	cap->ref = lp_output_open_level(res->ref_path, rq->compress, RECORD_ZSTD_LEVEL, err);
	if (!cap->ref)
		return err->status;
	cap->kern = lp_output_open(res->kern_path, LP_COMPRESS_NONE, err);
	if (!cap->kern) {
		lp_output_abort(cap->ref);
		cap->ref = NULL;
		return err->status;
	}
	cap->dec = lp_record_decoder_new(streams, cap->ref, cap->kern, &res->sum);
	lp_record_decoder_pace(cap->dec);
	return 0;
}

static void capture_stop_following(rec_capture *cap)
{
	if (!cap->thread)
		return;
	g_atomic_int_set(&cap->stop, 1);
	g_thread_join(cap->thread);
	cap->thread = NULL;
}

static void capture_abort(rec_capture *cap)
{
	capture_stop_following(cap);
	lp_record_decoder_free(cap->dec);
	lp_output_abort(cap->ref);
	lp_output_abort(cap->kern);
	memset(cap, 0, sizeof *cap);
}

/* Busy time and all time of each processor so far (/proc/stat), into
   busy[] and all[] (CPU_SETSIZE each). */
static void cpu_times(uint64_t *busy, uint64_t *all)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512];
	while (f && fgets(line, sizeof line, f)) {
		unsigned cpu;
		uint64_t t[8] = {0};
		if (sscanf(line, "cpu%u %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
				 " %" SCNu64 " %" SCNu64 " %" SCNu64,
			   &cpu, &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6], &t[7]) < 5 ||
		    cpu >= CPU_SETSIZE)
			continue;
		uint64_t sum = 0;
		for (int k = 0; k < 8; k++)
			sum += t[k];
		all[cpu] = sum;
		busy[cpu] = sum - t[3] - t[4]; /* idle, iowait */
	}
	if (f)
		fclose(f);
}

/* The processes pinned to one processor alone (as every recording pins
   its traced processes, and its own main thread), counted by processor. */
static void count_pinned(unsigned *pinned)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid();
	while (proc && (de = readdir(proc))) {
		pid_t pid = (pid_t)atoi(de->d_name);
		if (pid <= 0 || pid == self)
			continue;
		char path[64], line[256];
		snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
		FILE *f = fopen(path, "r");
		while (f && fgets(line, sizeof line, f)) {
			unsigned cpu;
			char rest;
			if (sscanf(line, "Cpus_allowed_list: %u%c", &cpu, &rest) == 2 && rest == '\n' &&
			    cpu < CPU_SETSIZE)
				pinned[cpu]++;
		}
		if (f)
			fclose(f);
	}
	if (proc)
		closedir(proc);
}

/* How long the processors' busy time is sampled. */
#define LOAD_SAMPLE_US 50000

/* The processor of *allowed least loaded: the fewest processes pinned to
   it alone (other recordings'), then the least busy over a short sample,
   then the first. */
static unsigned least_loaded(const cpu_set_t *allowed)
{
	static uint64_t busy0[CPU_SETSIZE], all0[CPU_SETSIZE], busy1[CPU_SETSIZE],
		all1[CPU_SETSIZE];
	static unsigned pinned[CPU_SETSIZE];
	memset(pinned, 0, sizeof pinned);
	memset(all0, 0, sizeof all0);
	memset(all1, 0, sizeof all1);
	cpu_times(busy0, all0);
	g_usleep(LOAD_SAMPLE_US);
	cpu_times(busy1, all1);
	count_pinned(pinned);
	unsigned best = CPU_SETSIZE;
	double best_load = 0;
	for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, allowed))
			continue;
		uint64_t total = all1[cpu] - all0[cpu];
		double load = pinned[cpu] + (total ? (double)(busy1[cpu] - busy0[cpu]) / (double)total : 0);
		if (best == CPU_SETSIZE || load < best_load) {
			best = cpu;
			best_load = load;
		}
	}
	return best;
}

/* Recordings that start together choose one after the other: each holds
   this lock (in the temporary directory, shared by every user) until its
   main thread is pinned to its choice, which the next then counts. A lock
   that another holds too long is not waited for. */
#define CHOICE_LOCK "laplace-record-processors.lock"
#define CHOICE_WAIT_US 2000000

static int lock_choice(void)
{
	char *path = g_build_filename(g_get_tmp_dir(), CHOICE_LOCK, NULL);
	int fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
	g_free(path);
	for (gint64 waited = 0; fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 && waited < CHOICE_WAIT_US;
	     waited += 10000)
		g_usleep(10000);
	return fd;
}

/* The processors: the traced processes run on one of those allowed (the
   tool pins them there, as the clock page made here says), the least
   loaded (least_loaded), said in res; while they run, laplace record's
   own threads (following the streams, compressing) run on the others,
   out of their way, when there are others. The processors this process
   may use are in *all. Called before any thread is started (threads take
   their creator's processors); the caller pins its own thread to the
   choice (pin_main_thread) once its threads are started, and unlocks
   *lock. */
static int choose_processor(const char *streams, cpu_set_t *all, lp_record_result *res, int *lock,
			    lp_error *err)
{
	*lock = -1;
	if (sched_getaffinity(0, sizeof *all, all) != 0)
		return lp_fail(err, LP_EIO, "cannot read the processor affinity: %s", g_strerror(errno));
	res->cpus_allowed = (unsigned)CPU_COUNT(all);
	*lock = res->cpus_allowed > 1 ? lock_choice() : -1;
	res->cpu = least_loaded(all);
	if (lp_record_clock_create(streams, res->cpu, err))
		return err->status;
	if (res->cpus_allowed < 2)
		return 0;
	cpu_set_t others = *all;
	CPU_CLR(res->cpu, &others);
	sched_setaffinity(0, sizeof others, &others);
	return 0;
}

/* This thread (the process's main one, which waits for the command) on
   the chosen processor: the sign other recordings count (count_pinned).
   The lock of the choice is released. */
static void pin_main_thread(const lp_record_result *res, int *lock)
{
	if (res->cpus_allowed > 1) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(res->cpu, &one);
		sched_setaffinity(0, sizeof one, &one);
	}
	if (*lock >= 0)
		close(*lock);
	*lock = -1;
}

/* Once the command has ended, or the run failed: every thread of this
   process may use all of *set again (nothing when it was not split);
   *set is emptied, so that a second call does nothing. */
static void allow_processors(cpu_set_t *set)
{
	if (CPU_COUNT(set) < 2)
		return;
	DIR *tasks = opendir("/proc/self/task");
	struct dirent *de;
	while (tasks && (de = readdir(tasks)))
		if (de->d_name[0] != '.')
			sched_setaffinity((pid_t)atoi(de->d_name), sizeof *set, set);
	if (tasks)
		closedir(tasks);
	CPU_ZERO(set);
}

/* Merges the rest of the streams and publishes the two outputs together. */
static int capture_finish(rec_capture *cap, lp_error *err)
{
	capture_stop_following(cap);
	int rc = cap->rc;
	if (rc)
		*err = cap->err;
	else
		rc = lp_record_decoder_step(cap->dec, true, NULL, err);
	lp_record_decoder_free(cap->dec);
	lp_staged *staged[2] = {NULL, NULL};
	rc = lp_output_stage(cap->ref, rc, &staged[0], err);
	rc = lp_output_stage(cap->kern, rc, &staged[1], err);
	memset(cap, 0, sizeof *cap);
	if (rc) {
		lp_staged_discard(staged[0]);
		lp_staged_discard(staged[1]);
		return rc;
	}
	return lp_stage_publish(staged, 2, err);
}

static bool has_streams(const char *streams)
{
	GDir *dir = g_dir_open(streams, 0, NULL);
	const char *name;
	bool found = false;
	while (dir && !found && (name = g_dir_read_name(dir)))
		found = g_str_has_suffix(name, ".lps");
	if (dir)
		g_dir_close(dir);
	return found;
}

static uint64_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* What a recording makes and holds, from its start to its end. */
typedef struct rec_job {
	const lp_record_request *rq;
	lp_record_result *res;
	char *program;  /* the command, found through PATH */
	bool untraced;  /* run without the recorder (untraceable) */
	char *launcher; /* Valgrind's, its directory of tools, and ours */
	char *valgrind_lib;
	char *tool;
	char *scratch_name; /* PREFIX.record: the streams' directory, staged */
	lp_staged *scratch;
	char *lib;     /* in it: VALGRIND_LIB, and the streams */
	char *streams;
	char *lifeline; /* and a FIFO whose one writer is this process */
	int lifeline_fd;
	GPtrArray *args; /* the command line run, and its environment */
	char **envp;
	rec_capture cap;
	cpu_set_t processors; /* this process's, while they are split */
	int choice_lock;
	rec_run run;
	gint64 start;
	sigset_t waited, old; /* the signals waited for, and the mask before */
	bool blocked;         /* waited is blocked */
	bool started;         /* the command runs */
} rec_job;

/* The outputs' names, and whether they may be written. */
static int check_outputs(rec_job *job, lp_error *err)
{
	const lp_record_request *rq = job->rq;
	lp_record_result *res = job->res;
	res->ref_path = g_strconcat(rq->prefix, rq->compress == LP_COMPRESS_ZSTD ? ".ref.zst" : ".ref",
				    NULL);
	res->kern_path = g_strconcat(rq->prefix, ".kern", NULL);
	const char *outputs[] = {res->ref_path, res->kern_path};
	if (!rq->force && refuse_existing(outputs, 2, err))
		return err->status;
	return lp_check_outputs(NULL, 0, outputs, 2, err);
}

/* The command, and what runs it: Valgrind and the recorder, unless the
   command cannot be traced. */
static int find_programs(rec_job *job, lp_error *err)
{
	if (!(job->program = g_find_program_in_path(job->rq->argv[0])))
		return lp_fail(err, LP_EUSAGE, "%s: command not found", job->rq->argv[0]);
	job->untraced = untraceable(job->program);
	if (job->untraced)
		return 0;
	if (!(job->launcher = g_find_program_in_path("valgrind")))
		return lp_fail(err, LP_EIO, "valgrind is not installed (it runs the recorder)");
	job->launcher = valgrind_binary(job->launcher);
	if (!(job->valgrind_lib = find_valgrind_lib(job->launcher, err)) ||
	    !(job->tool = find_tool(err)))
		return err->status;
	return 0;
}

/* One recording at a time for a prefix: a second one would replace the
   first's capture with its own. A recording's temporary directory,
   PREFIX.record.partial-XXXXXX, locked for as long as the recording lives
   (staging invariant (10)), says that the prefix is taken, and its file
   "pid" by which process. One left by a recording that was killed is not
   locked: staging removes it, saying so, and it holds nothing up. */
#define HOLDER_FILE "pid"

/* The directory of the outputs, locked while a recording makes its
   temporary directory and looks for another's, so that two recordings
   starting together cannot each see the other's. -1 where it cannot be
   locked: then only one that started earlier is seen. */
static int lock_outputs_dir(const char *prefix)
{
	char *dir = g_path_get_dirname(prefix);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	g_free(dir);
	if (fd >= 0 && flock(fd, LOCK_EX) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Another live recording of prefix (its temporary directory ours is not):
   a usage error naming it and its process. */
static int refuse_held(const char *prefix, const char *ours, lp_error *err)
{
	char *dir = g_path_get_dirname(prefix);
	char *base = g_path_get_basename(prefix);
	char *name = g_strconcat(base, ".record", NULL);
	char *ours_base = g_path_get_basename(ours);
	int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dir_fd < 0 ? NULL : fdopendir(dir_fd);
	const struct dirent *e;
	int rc = 0;
	while (!rc && d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !lp_is_tmp_of(e->d_name, name) || !strcmp(e->d_name, ours_base))
			continue;
		int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* Stale (its lock can be taken), or on a file system without
		   locks (not known to be live): not a holder. */
		if (flock(fd, LOCK_SH | LOCK_NB) == 0 || errno != EWOULDBLOCK) {
			close(fd);
			continue;
		}
		char pid[32] = "";
		int pid_fd = openat(fd, HOLDER_FILE, O_RDONLY | O_CLOEXEC);
		ssize_t n = pid_fd < 0 ? 0 : read(pid_fd, pid, sizeof pid - 1);
		pid[n > 0 ? n : 0] = '\0';
		g_strchomp(pid);
		if (pid_fd >= 0)
			close(pid_fd);
		close(fd);
		char *held = strchr(prefix, '/') ? g_build_filename(dir, e->d_name, NULL) : g_strdup(e->d_name);
		rc = lp_fail(err, LP_EUSAGE,
			     "%s: another recording (laplace record, pid %s) is writing a capture of "
			     "that prefix, in %s; wait for it to end, or choose another -o PREFIX",
			     prefix, *pid ? pid : "unknown", held);
		g_free(held);
	}
	if (d)
		closedir(d);
	else if (dir_fd >= 0)
		close(dir_fd);
	g_free(dir);
	g_free(base);
	g_free(name);
	g_free(ours_base);
	return rc;
}

/* The streams' directory beside the capture, on its file system: they
   are large, and the clock page in them is shared by every traced
   process. Its paths are absolute: the command may change its directory
   before it starts others. It holds the prefix (refuse_held). */
static int make_scratch(rec_job *job, lp_error *err)
{
	job->scratch_name = g_strconcat(job->rq->prefix, ".record", NULL);
	int dir_lock = lock_outputs_dir(job->rq->prefix);
	job->scratch = lp_stage_dir(AT_FDCWD, job->scratch_name, false);
	int rc = 0;
	if (!job->scratch) {
		rc = lp_fail(err, LP_EIO, "cannot create a directory beside %s: %s", job->rq->prefix,
			     g_strerror(errno));
	} else {
		char *holder = g_build_filename(lp_staged_path(job->scratch), HOLDER_FILE, NULL);
		char *pid = g_strdup_printf("%d\n", (int)getpid());
		GError *gerr = NULL;
		if (!g_file_set_contents(holder, pid, -1, &gerr))
			rc = lp_fail(err, LP_EIO, "%s", gerr->message);
		g_clear_error(&gerr);
		g_free(pid);
		g_free(holder);
		if (!rc)
			rc = refuse_held(job->rq->prefix, lp_staged_path(job->scratch), err);
	}
	if (dir_lock >= 0)
		close(dir_lock);
	if (rc)
		return rc;
	char *scratch_path = g_canonicalize_filename(lp_staged_path(job->scratch), NULL);
	job->lib = g_build_filename(scratch_path, "lib", NULL);
	job->streams = g_build_filename(scratch_path, "streams", NULL);
	job->lifeline = g_build_filename(scratch_path, "lifeline", NULL);
	g_free(scratch_path);
	if (g_mkdir(job->streams, 0777) != 0)
		return lp_fail(err, LP_EIO, "cannot create %s: %s", job->streams, g_strerror(errno));
	if (job->untraced)
		return 0;
	/* The lifeline's only writer (the tool's "the lifeline"): never
	   written to, kept open until the command and all it started have
	   ended, and closed on exec, so that no traced process holds it. */
	if (mkfifo(job->lifeline, 0600) != 0 ||
	    (job->lifeline_fd = open(job->lifeline, O_RDWR | O_CLOEXEC)) < 0)
		return lp_fail(err, LP_EIO, "cannot create %s: %s", job->lifeline, g_strerror(errno));
	return make_tool_dir(job->lib, job->valgrind_lib, job->tool, err);
}

/* The command as it was given: Valgrind finds it through PATH as the
   shell would, and it keeps its argv[0]; its environment is its own but
   for VALGRIND_LIB. */
static void make_command_line(rec_job *job)
{
	GPtrArray *args = job->args = g_ptr_array_new_with_free_func(g_free);
	if (!job->untraced) {
		g_ptr_array_add(args, g_strdup(job->launcher));
		g_ptr_array_add(args, g_strdup("-q"));
		g_ptr_array_add(args, g_strdup("--tool=laplace-record"));
		g_ptr_array_add(args, g_strdup("--trace-children=yes"));
		g_ptr_array_add(args, g_strdup_printf("--max-threads=%d", RECORD_MAX_THREADS));
		g_ptr_array_add(args, g_strconcat("--lp-dir=", job->streams, NULL));
		g_ptr_array_add(args, g_strconcat("--lp-lifeline=", job->lifeline, NULL));
		/* No gdb server: its FIFOs, in TMPDIR, would outlive a
		   process killed with the recording. */
		g_ptr_array_add(args, g_strdup("--vgdb=no"));
	}
	for (char **a = job->rq->argv; *a; a++)
		g_ptr_array_add(args, g_strdup(*a));
	g_ptr_array_add(args, NULL);
	job->envp = g_get_environ();
	if (!job->untraced)
		job->envp = g_environ_setenv(job->envp, "VALGRIND_LIB", job->lib, TRUE);
}

/* The signals record.h says are handled, blocked before any thread is
   started (the capture's compressing threads too): a thread that did not
   block them could take one, and SIGINT would end the process there. */
static void block_signals(rec_job *job)
{
	sigemptyset(&job->waited);
	sigaddset(&job->waited, SIGINT);
	sigaddset(&job->waited, SIGTERM);
	/* An ignored SIGHUP (nohup) stays ignored: blocked, it would wait
	   here to be taken. */
	if (!lp_signal_ignored(SIGHUP))
		sigaddset(&job->waited, SIGHUP);
	sigaddset(&job->waited, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &job->waited, &job->old);
	job->blocked = true;
}

/* Runs the command and waits for it and everything it starts, the
   streams followed meanwhile. */
static int run_command(rec_job *job, lp_error *err)
{
	become_subreaper();
	job->start = g_get_monotonic_time();
	/* Started with the signals blocked (block_signals), as the thread
	   that waits for them wants, and before this one is pinned. */
	if (!job->untraced) {
		job->cap.thread = g_thread_new("laplace-follow", follow_streams, &job->cap);
		pin_main_thread(job->res, &job->choice_lock);
	}
	int rc = start_command(&job->run, job->untraced ? job->program : job->launcher,
			       (char **)job->args->pdata, job->envp, &job->old, err);
	if (rc)
		return rc;
	job->started = true;
	wait_for_command(&job->run, &job->waited);
	allow_processors(&job->processors);
	/* From now on a signal ends the run and removes what it made. */
	lp_stage_handle_signals();
	int status = job->run.status;
	job->res->command_status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
	/* A terminal sends SIGINT to its whole foreground process group, the
	   command's too; a process may have sent it to laplace record alone,
	   and then only a command that SIGINT ended is known to have had it. */
	if (job->run.interrupted) {
		const siginfo_t *info = &job->run.interrupt;
		job->res->interrupted =
			info->si_code == SI_KERNEL || (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
		job->res->sigint_elsewhere = !job->res->interrupted;
		job->res->sigint_sender = info->si_code == SI_KERNEL ? 0 : info->si_pid;
	}
	return 0;
}

/* Once the command has ended: the rest of the streams merged, and the
   capture published. */
static int finish(rec_job *job, lp_error *err)
{
	int rc = tool_failed(job->streams, err);
	if (rc)
		return rc;
	if (job->untraced &&
	    (rc = lp_record_write_untraced(job->streams, (uint64_t)job->run.pid, job->program, err)))
		return rc;
	/* Streams merged whole while the command ran are gone already. */
	capture_stop_following(&job->cap);
	if (!has_streams(job->streams) && job->res->sum.streams == 0)
		return lp_fail(err, LP_EIO, "the recorder wrote nothing (Valgrind says why above)");
	if ((rc = capture_finish(&job->cap, err)))
		return rc;
	lp_record_result *res = job->res;
	res->bytes = file_size(res->ref_path) + file_size(res->kern_path);
	res->wall_seconds = (double)(g_get_monotonic_time() - job->start) / 1e6;
	return 0;
}

static void job_clear(rec_job *job)
{
	if (job->cap.dec)
		capture_abort(&job->cap);
	/* A run that failed before its command: the signals as they were. */
	if (job->blocked && !job->started)
		pthread_sigmask(SIG_SETMASK, &job->old, NULL);
	allow_processors(&job->processors);
	if (job->choice_lock >= 0)
		close(job->choice_lock);
	if (job->lifeline_fd >= 0)
		close(job->lifeline_fd);
	lp_staged_discard(job->scratch);
	g_strfreev(job->envp);
	if (job->args)
		g_ptr_array_free(job->args, TRUE);
	g_free(job->program);
	g_free(job->launcher);
	g_free(job->valgrind_lib);
	g_free(job->tool);
	g_free(job->scratch_name);
	g_free(job->lib);
	g_free(job->streams);
	g_free(job->lifeline);
}

int lp_record_run(const lp_record_request *rq, lp_record_result *res, lp_error *err)
{
	memset(res, 0, sizeof *res);
	rec_job job = {.rq = rq, .res = res, .choice_lock = -1, .lifeline_fd = -1};
	CPU_ZERO(&job.processors);
	int rc = check_outputs(&job, err);
	if (!rc)
		rc = find_programs(&job, err);
	if (!rc)
		rc = make_scratch(&job, err);
	if (!rc) {
		make_command_line(&job);
		if (!job.untraced)
			rc = choose_processor(job.streams, &job.processors, res, &job.choice_lock, err);
	}
	if (!rc) {
		block_signals(&job);
		rc = capture_open(&job.cap, rq, job.streams, res, err);
	}
	if (!rc)
		rc = run_command(&job, err);
	if (!rc)
		rc = finish(&job, err);
	job_clear(&job);
	return rc;
}

void lp_record_result_clear(lp_record_result *res)
{
	if (!res)
		return;
	g_free(res->ref_path);
	g_free(res->kern_path);
	lp_record_summary_clear(&res->sum);
	res->ref_path = res->kern_path = NULL;
}
