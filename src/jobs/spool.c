/* The daemon's spool: incoming/, running/, done/ and failed/ in one
 * directory, and the protocol by which the daemon (src/jobs/daemon.c) moves
 * jobs through it.
 *
 * The spool protocol, written down once: each invariant names the
 * functions that uphold it; other comments cite them as "spool invariant
 * (N)". A job file is DIR/SUB/ID.yaml; its report, status and attempts
 * files are ID.report.yaml, ID.status and ID.attempts.
 *
 * (1) A job file is in exactly one of incoming/, running/, done/ and
 *     failed/. It moves only by one rename between two of them,
 *     subdirectories of one directory (move), as submitters are told to
 *     drop it into incoming/ (laplace-daemon(1)): no one sees it half
 *     written or in two places. The rename never replaces a file
 *     (RENAME_NOREPLACE): a job file can never take the place of another
 *     job's, whoever dropped it (a second job of a running job's name
 *     once replaced its file in running/, and the daemon freed the first
 *     job's record while its process lived, then crashed on it).
 *
 * (2) One daemon at a time: only the holder of the spool's lock (flock on
 *     DIR/lock, its pid inside) moves job files or writes in running/,
 *     done/ and failed/; a second one refuses to start (take_lock). Readers
 *     such as `laplace jobs` only read (lp_queue_list).
 *
 * (3) No file of the spool is reached by path after start-up: the spool
 *     and each of its directories are checked (real directories of the
 *     daemon's user, writable by others only incoming/, with the sticky
 *     bit) and opened once, and every file is reached through those
 *     descriptors (check_dir, sub_fd). A directory replaced by a link later
 *     changes nothing.
 *
 * (4) A job runs only from running/, claimed there by one rename, which
 *     succeeds for one claimant only; a job file gone meanwhile is simply
 *     not claimed, and one whose name a job in running/ holds waits in
 *     incoming/ until that one has left (lp_spool_claim). So running/
 *     holds one job of each name, and the daemon's table of running jobs,
 *     by name, one entry for each. What runs is the text read from the
 *     descriptor whose file was checked (regular, one link, written only
 *     by its owner, lp_spool_read_job).
 *
 * (5) Every file the daemon writes in the spool appears whole or not at
 *     all: written under a temporary name beside it, flushed, renamed
 *     (write_in through lp_write_file_atomic; staging invariants,
 *     src/io/staging.c).
 *
 * (6) A name that starts with "." is never a job: the temporaries of (5)
 *     and the cancel requests incoming/.cancel-ID are skipped by the scan
 *     (is_job_name); cancel requests are taken, and removed, by
 *     lp_spool_take_cancel_requests alone.
 *
 * (7) A job's outputs are neither the spool's own files nor another running
 *     job's outputs (lp_spool_holds and job_writing, checked by start_job
 *     before the job starts).
 *
 * (8) A job file reaches done/ only after its outputs are in place: the
 *     job's child publishes them (lp_merge_job_run) before it sends its
 *     result, and only a result of success writes the report in done/
 *     (on_done, finish_job).
 *
 * (9) A job file reaches done/ or failed/ only after its report is in place
 *     beside it (lp_spool_finish), so a report there means the job ended,
 *     even while its job file is still in running/; lp_queue_list counts
 *     finished jobs by their reports. A job's records there are never
 *     replaced: a job whose ID done/ (or failed/) holds already is kept
 *     as ID~2, ID~3... (the first free; free_record_id).
 *
 * (10) No temporary of a job's outputs outlives the job: the job removes
 *     its own when it fails or is signalled (staging invariant (7)), and
 *     since it may have died first, after any failure the daemon removes
 *     what is left before it writes the report or requeues the job
 *     (lp_job_remove_partials, from on_done and recover).
 *
 * (11) running/ID.status exists only while the job file is in running/,
 *     running/ID.attempts only while it is in running/ or incoming/: both
 *     go before the job file leaves running/ for done/ or failed/
 *     (lp_spool_finish), the status file before a requeue
 *     (lp_spool_requeue). What a submitter leaves by taking a queued job
 *     back, and whatever else running/ holds at start-up, is removed then
 *     (lp_spool_leftovers).
 *
 * (12) ID.attempts counts the interrupted runs of one job file and no
 *     other: it is written before the job file goes back to incoming/ and
 *     names that file's device, inode and modification time, which renames
 *     keep (lp_spool_requeue); a file that does not name the job file now
 *     in running/ counts as none (lp_spool_attempts).
 *
 * (13) A job file in running/ at start-up was left by a daemon that died,
 *     and a job still running when a stop's grace period ends is killed:
 *     either is requeued into incoming/, or after its --max-attempts-th
 *     such run fails (recover, on_done and requeue_or_give_up). A timeout
 *     or a cancel fails a job at once. A job file requeued while another
 *     of its name waits in incoming/ cannot go back there (1): the one
 *     waiting fails instead, and the requeue is tried again (the daemon's
 *     requeue_or_give_up).
 *
 * (14) Nothing but a job file that may run (4) leaves incoming/: the
 *     entry is checked before it is claimed, and in running/ again after
 *     the rename, since its owner may have put another in its place
 *     between the two (lp_spool_claim, check_job_file). What is not a
 *     regular file (a directory, a FIFO, a socket, a link, a device) is
 *     removed, a directory only when empty; a regular file that fails
 *     the checks, or a directory that cannot be removed, is left in
 *     incoming/ (one found in running/ goes back there, under a name that
 *     starts with "." if its own is taken), and said once (refuse). So no
 *     entry of running/, done/ or failed/ is a directory, FIFO or socket
 *     a user made, nor a file others than its owner may write to. */
#include "jobs/spool.h"
#include "jobs/jobfile.h"
#include "jobs/confine.h"
#include "jobs/jobreport.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "io/inbuf.h"
#include "core/numbers.h"

static const char *const spool_dirs[] = {"incoming", "running", "done", "failed"};
#define SPOOL_DIRS G_N_ELEMENTS(spool_dirs)

struct lp_spool {
	char *dir;
	char *real_dir; /* symbolic links resolved, for lp_spool_holds */
	int dir_fd;
	int sub_fd[SPOOL_DIRS]; /* in the order of spool_dirs */
	int lock_fd;
	GHashTable *refused; /* name -> identity: entries of incoming/ left and said so */
};

/* The descriptor of subdirectory sub, one of spool_dirs. */
static int sub_fd(const lp_spool *spool, const char *sub)
{
	for (size_t i = 0; i < SPOOL_DIRS; i++)
		if (!strcmp(sub, spool_dirs[i]))
			return spool->sub_fd[i];
	g_assert_not_reached();
}

#define LOCK_NAME "lock"
#define JOB_SUFFIX ".yaml"
#define REPORT_SUFFIX ".report.yaml"
#define STATUS_SUFFIX ".status"
#define ATTEMPTS_SUFFIX ".attempts"

char *lp_spool_path(const lp_spool *spool, const char *sub, const char *name)
{
	return g_build_filename(spool->dir, sub, name, NULL);
}

char *lp_spool_job_id(const char *name)
{
	if (g_str_has_suffix(name, JOB_SUFFIX))
		return g_strndup(name, strlen(name) - strlen(JOB_SUFFIX));
	return g_strdup(name);
}

/* Lock the spool and record our pid in the lock file for the message a
 * second daemon prints. */
static int take_lock(lp_spool *spool, lp_error *err)
{
	char *path = g_build_filename(spool->dir, LOCK_NAME, NULL);
	int fd = openat(spool->dir_fd, LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	int r = 0;
	if (fd < 0) {
		r = lp_fail(err, LP_EIO, "cannot open %s: %s", path, g_strerror(errno));
	} else if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK) {
			char pid[32] = "";
			ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
			pid[n > 0 ? n : 0] = '\0';
			g_strchomp(pid);
			r = lp_fail(err, LP_EIO, "spool %s is in use by another daemon (pid %s)",
				    spool->dir, pid[0] ? pid : "unknown");
		} else {
			r = lp_fail(err, LP_EIO, "cannot lock %s: %s", path, g_strerror(errno));
		}
	} else {
		char pid[32];
		int len = g_snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
		if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)len, 0) != len)
			r = lp_fail(err, LP_EIO, "cannot write %s: %s", path, g_strerror(errno));
	}
	g_free(path);
	if (r && fd >= 0)
		close(fd);
	spool->lock_fd = r ? -1 : fd;
	return r;
}

/* The spool decides what runs with the daemon's rights: each of its
 * directories must be a real directory (a symbolic link could send job
 * files and reports anywhere) of the daemon's user that nobody else can
 * write to; incoming/ may be writable by all only with the sticky bit, so
 * that each submitter can rename away only their own job files. A spool
 * that fails the checks is one that cannot be set up (LP_EIO, as
 * laplace-daemon(1) says), not a usage error. */
static int check_dir(int parent_fd, const char *name, const char *path, bool incoming,
		     int *fd, lp_error *err)
{
	struct stat st;
	if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return lp_fail(err, LP_EIO, "cannot check %s: %s", path, g_strerror(errno));
	if (S_ISLNK(st.st_mode))
		return lp_fail(err, LP_EIO, "%s is a symbolic link; the spool's directories "
			       "must be real directories", path);
	if (!S_ISDIR(st.st_mode))
		return lp_fail(err, LP_EIO, "%s is not a directory", path);
	/* What is checked from here on is what is kept open. */
	*fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0 || fstat(*fd, &st) < 0)
		return lp_fail(err, LP_EIO, "cannot open %s: %s", path, g_strerror(errno));
	if (st.st_uid != geteuid())
		return lp_fail(err, LP_EIO, "%s belongs to uid %u, not to the daemon's uid %u; "
			       "chown it", path, (unsigned)st.st_uid, (unsigned)geteuid());
	bool shared = st.st_mode & (S_IWGRP | S_IWOTH);
	if (shared && !incoming)
		return lp_fail(err, LP_EIO, "%s is writable by others; chmod go-w it", path);
	if (shared && !(st.st_mode & S_ISVTX))
		return lp_fail(err, LP_EIO, "%s is writable by others without the sticky bit; "
			       "chmod +t it (or chmod go-w)", path);
	return 0;
}

lp_spool *lp_spool_open(const char *dir, lp_error *err)
{
	lp_spool *spool = g_new0(lp_spool, 1);
	spool->dir = g_strdup(dir);
	spool->dir_fd = spool->lock_fd = -1;
	spool->refused = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	for (size_t i = 0; i < SPOOL_DIRS; i++)
		spool->sub_fd[i] = -1;
	int r = 0;
	if (g_mkdir_with_parents(dir, 0755) < 0)
		r = lp_fail(err, LP_EIO, "cannot create %s: %s", dir, g_strerror(errno));
	if (!r)
		r = check_dir(AT_FDCWD, dir, dir, false, &spool->dir_fd, err);
	if (!r && !(spool->real_dir = realpath(dir, NULL)))
		r = lp_fail(err, LP_EIO, "cannot resolve %s: %s", dir, g_strerror(errno));
	for (size_t i = 0; !r && i < SPOOL_DIRS; i++) {
		char *sub = g_build_filename(dir, spool_dirs[i], NULL);
		if (mkdirat(spool->dir_fd, spool_dirs[i], 0755) < 0 && errno != EEXIST)
			r = lp_fail(err, LP_EIO, "cannot create %s: %s", sub, g_strerror(errno));
		else
			r = check_dir(spool->dir_fd, spool_dirs[i], sub,
				      !strcmp(spool_dirs[i], "incoming"), &spool->sub_fd[i], err);
		g_free(sub);
	}
	if (r || take_lock(spool, err)) {
		lp_spool_close(spool);
		return NULL;
	}
	return spool;
}

void lp_spool_close(lp_spool *spool)
{
	if (spool->lock_fd >= 0)
		close(spool->lock_fd);
	for (size_t i = 0; i < SPOOL_DIRS; i++)
		if (spool->sub_fd[i] >= 0)
			close(spool->sub_fd[i]);
	if (spool->dir_fd >= 0)
		close(spool->dir_fd);
	g_free(spool->dir);
	free(spool->real_dir);
	g_hash_table_destroy(spool->refused);
	g_free(spool);
}

static gint compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_job_name(const char *name)
{
	return name[0] != '.' && g_str_has_suffix(name, JOB_SUFFIX) &&
	       strlen(name) > strlen(JOB_SUFFIX);
}

/* The entries of subdirectory sub, read through its descriptor. */
static GPtrArray *list_dir(const lp_spool *spool, const char *sub)
{
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	int fd = openat(sub_fd(spool, sub), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	const struct dirent *e;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			g_ptr_array_add(names, g_strdup(e->d_name));
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	return names;
}

static GPtrArray *list_jobs(const lp_spool *spool, const char *sub)
{
	GPtrArray *names = list_dir(spool, sub);
	for (guint i = names->len; i-- > 0;)
		if (!is_job_name(names->pdata[i]))
			g_ptr_array_remove_index_fast(names, i);
	g_ptr_array_sort(names, compare_names);
	return names;
}

GPtrArray *lp_spool_incoming(const lp_spool *spool)
{
	GPtrArray *names = list_jobs(spool, "incoming");
	/* Entries left and said so that are gone are forgotten. */
	GHashTableIter it;
	gpointer name;
	g_hash_table_iter_init(&it, spool->refused);
	while (g_hash_table_iter_next(&it, &name, NULL))
		if (!g_ptr_array_find_with_equal_func(names, name, g_str_equal, NULL))
			g_hash_table_iter_remove(&it);
	return names;
}

/* What move returns, besides 0 and an lp_status with err set, for what
 * the spool's users may cause at any time. */
enum { MOVE_GONE = -1, MOVE_TAKEN = -2 };

/* Move FROM/NAME to TO/NEW_NAME without ever replacing a file there (spool
 * invariant (1)): 0, MOVE_GONE if FROM/NAME is not there, MOVE_TAKEN if
 * TO/NEW_NAME is, or an lp_status with err set. */
static int move(const lp_spool *spool, const char *from, const char *name, const char *to,
		const char *new_name, lp_error *err)
{
	if (renameat2(sub_fd(spool, from), name, sub_fd(spool, to), new_name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == ENOENT)
		return MOVE_GONE;
	if (errno == EEXIST)
		return MOVE_TAKEN;
	char *src = lp_spool_path(spool, from, name);
	lp_fail(err, LP_EIO, "cannot move %s to %s/: %s%s", src, to, g_strerror(errno),
		errno == EINVAL ? " (the spool's file system cannot rename without replacing)" : "");
	g_free(src);
	return err->status;
}

/* What tells the job file SUB/NAME from another of the same name: renames
 * keep its device, inode and modification time; NULL if it is gone. */
static char *job_identity(const lp_spool *spool, const char *sub, const char *name)
{
	struct stat st;
	if (fstatat(sub_fd(spool, sub), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return NULL;
	return g_strdup_printf("%ju:%ju:%jd.%09ld", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino,
			       (intmax_t)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
}

/* Why the spool's entry NAME, st as found (not followed), may not run
 * (spool invariants (4) and (14)): 0, or LP_EINPUT with err saying why. */
static int check_job_file(const struct stat *st, const char *name, lp_error *err)
{
	if (!S_ISREG(st->st_mode))
		return lp_fail(err, LP_EINPUT, "%s: not a regular file", name);
	/* Another link could be rewritten by whoever holds it. */
	if (st->st_nlink != 1)
		return lp_fail(err, LP_EINPUT, "%s: has %ju links; a job file must have one", name,
			       (uintmax_t)st->st_nlink);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return lp_fail(err, LP_EINPUT, "%s: writable by others than its owner", name);
	/* Unprivileged, the daemon cannot run a job as its owner: it runs only
	 * its own user's jobs. */
	if (geteuid() != 0 && st->st_uid != geteuid())
		return lp_fail(err, LP_EINPUT, "%s: owned by uid %u; this daemon runs only the jobs "
			       "of uid %u", name, (unsigned)st->st_uid, (unsigned)geteuid());
	return 0;
}

/* Put the refused entry running/NAME back into incoming/: under its name,
 * or the first of .refused-NAME, .refused-NAME~2... that is free (a name
 * no scan takes, spool invariant (6)). The name, or NULL with err set. */
static char *put_back(const lp_spool *spool, const char *name, lp_error *err)
{
	char *to = g_strdup(name);
	for (unsigned n = 1;; n++) {
		int r = move(spool, "running", name, "incoming", to, err);
		if (r != MOVE_TAKEN) {
			if (!r)
				return to;
			if (r == MOVE_GONE)
				lp_fail(err, LP_EIO, "cannot move %s back to incoming/: it is gone", name);
			g_free(to);
			return NULL;
		}
		g_free(to);
		to = n == 1 ? g_strdup_printf(".refused-%s", name)
			    : g_strdup_printf(".refused-%s~%u", name, n);
	}
}

/* SUB/NAME (st as found) may not run, err saying why (spool invariant
 * (14)): remove it if it is no regular file and can be, else leave it in
 * incoming/ (or put it back there). LP_SPOOL_REFUSED with err saying what
 * became of it, or 0 when it was left already and said so; -1 with err
 * set when it cannot be put back. */
static int refuse(lp_spool *spool, const char *sub, const char *name, const struct stat *st,
		  lp_error *err)
{
	char *why = g_strdup(err->msg);
	int r = LP_SPOOL_REFUSED;
	bool removed = !S_ISREG(st->st_mode) &&
		       unlinkat(sub_fd(spool, sub), name, S_ISDIR(st->st_mode) ? AT_REMOVEDIR : 0) == 0;
	char *kept = S_ISREG(st->st_mode) || removed
			     ? g_strdup("")
			     : g_strdup_printf(" (it cannot be removed: %s)", g_strerror(errno));
	if (removed) {
		lp_fail(err, LP_EINPUT, "%s; removed from %s/", why, sub);
	} else if (!strcmp(sub, "running")) {
		char *to = put_back(spool, name, err);
		if (to)
			lp_fail(err, LP_EINPUT, "%s; put back in incoming/%s%s%s", why,
				strcmp(to, name) ? " as " : "", strcmp(to, name) ? to : "", kept);
		else
			r = -1;
		g_free(to);
	} else {
		/* Left for its owner to mend or take back: said once. */
		char *identity = job_identity(spool, sub, name);
		const char *said = g_hash_table_lookup(spool->refused, name);
		if (identity && said && !strcmp(said, identity)) {
			g_free(identity);
			r = 0;
		} else {
			g_hash_table_insert(spool->refused, g_strdup(name), identity);
			lp_fail(err, LP_EINPUT, "%s; left in incoming/%s", why, kept);
		}
	}
	g_free(kept);
	g_free(why);
	return r;
}

int lp_spool_claim(lp_spool *spool, const char *name, lp_error *err)
{
	struct stat st;
	if (fstatat(sub_fd(spool, "incoming"), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0; /* gone */
	if (check_job_file(&st, name, err))
		return refuse(spool, "incoming", name, &st, err);
	int r = move(spool, "incoming", name, "running", name, err);
	if (r == MOVE_GONE || r == MOVE_TAKEN)
		return 0;
	if (r)
		return -1;
	/* What was renamed may not be what was checked. */
	if (fstatat(sub_fd(spool, "running"), name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		char *path = lp_spool_path(spool, "running", name);
		lp_fail(err, LP_EIO, "cannot check %s: %s", path, g_strerror(errno));
		g_free(path);
		return -1;
	}
	if (check_job_file(&st, name, err))
		return refuse(spool, "running", name, &st, err);
	return 1;
}

int lp_spool_read_job(const lp_spool *spool, const char *name, uid_t *owner, char **text,
		      size_t *len, lp_error *err)
{
	char *path = lp_spool_path(spool, "running", name);
	/* O_NONBLOCK: a FIFO in the file's place must not hang the daemon. */
	int fd = openat(sub_fd(spool, "running"), name,
			O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int r = 0;
	if (fd < 0 && errno == ELOOP)
		r = lp_fail(err, LP_EINPUT, "%s: not a regular file", name);
	else if (fd < 0 || fstat(fd, &st) < 0)
		r = lp_fail(err, LP_EIO, "cannot check %s: %s", path, g_strerror(errno));
	else if (!(r = check_job_file(&st, name, err)) && !(r = lp_read_small_fd(fd, path, LP_JOBFILE_MAX_BYTES, "job file", text, len, err)) &&
		 !(r = lp_jobfile_check_lines(path, text, *len, err)))
		*owner = st.st_uid;
	if (fd >= 0)
		close(fd);
	g_free(path);
	return r;
}

bool lp_spool_holds(const lp_spool *spool, const char *path)
{
	char *dir = g_path_get_dirname(path);
	char *base = g_path_get_basename(path);
	char *done = g_build_filename(spool->real_dir, "done", NULL);
	bool bookkeeping;
	if (!strcmp(dir, done))
		/* Outputs may go to done/, but not under a job's or a report's name. */
		bookkeeping = g_str_has_suffix(base, JOB_SUFFIX) || g_str_has_suffix(base, STATUS_SUFFIX);
	else if (g_str_has_prefix(dir, done) && dir[strlen(done)] == '/')
		bookkeeping = false; /* the daemon keeps nothing below done/ */
	else
		bookkeeping = !strcmp(dir, spool->real_dir) ||
			      (g_str_has_prefix(dir, spool->real_dir) &&
			       dir[strlen(spool->real_dir)] == '/');
	g_free(done);
	g_free(base);
	g_free(dir);
	return bookkeeping;
}

/* The name of job NAME's sidecar file in running/: ID followed by suffix. */
static char *sidecar_name(const char *name, const char *suffix)
{
	char *id = lp_spool_job_id(name);
	char *file = g_strconcat(id, suffix, NULL);
	g_free(id);
	return file;
}

/* Write SUB/FILE through the spool's descriptor of SUB (spool invariant
 * (5)). */
static int write_in(const lp_spool *spool, const char *sub, const char *file, const char *text,
		    lp_error *err)
{
	char *path = lp_spool_path(spool, sub, file);
	int r = lp_write_file_atomic(sub_fd(spool, sub), path, text, strlen(text), err);
	g_free(path);
	return r;
}

static void remove_sidecar(const lp_spool *spool, const char *name, const char *suffix)
{
	char *file = sidecar_name(name, suffix);
	unlinkat(sub_fd(spool, "running"), file, 0);
	g_free(file);
}

/* The attempts that running/ID.attempts counts for job file SUB/NAME: 0
 * unless it names that very file. */
static unsigned attempts_of(const lp_spool *spool, const char *sub, const char *name)
{
	char *file = sidecar_name(name, ATTEMPTS_SUFFIX);
	char *identity = job_identity(spool, sub, name);
	char *text = NULL;
	size_t len;
	unsigned attempts = 0;
	int fd = identity ? openat(sub_fd(spool, "running"), file,
				   O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC) : -1;
	/* Spool invariant (12). */
	if (fd >= 0 && !lp_read_small_fd(fd, file, 256, "attempts file", &text, &len, NULL)) {
		char *expected = g_strdup_printf("job: %s\n", identity);
		const char *count = g_str_has_prefix(text, expected) ? text + strlen(expected) : NULL;
		uint64_t n;
		if (count && g_str_has_prefix(count, "attempts: ") && g_str_has_suffix(count, "\n")) {
			char *digits = g_strndup(count + strlen("attempts: "),
						 strlen(count) - strlen("attempts: ") - 1);
			if (lp_parse_decimal(digits, 1, UINT_MAX, &n))
				attempts = (unsigned)n;
			g_free(digits);
		}
		g_free(expected);
	}
	if (fd >= 0)
		close(fd);
	g_free(text);
	g_free(identity);
	g_free(file);
	return attempts;
}

unsigned lp_spool_attempts(const lp_spool *spool, const char *name)
{
	return attempts_of(spool, "running", name);
}

int lp_spool_requeue(lp_spool *spool, const char *name, unsigned attempts, lp_error *err)
{
	char *identity = job_identity(spool, "running", name);
	if (!identity)
		return lp_fail(err, LP_EIO, "cannot requeue %s: it is gone from running/", name);
	char *text = g_strdup_printf("job: %s\nattempts: %u\n", identity, attempts);
	char *file = sidecar_name(name, ATTEMPTS_SUFFIX);
	int r = write_in(spool, "running", file, text, err);
	g_free(file);
	g_free(text);
	g_free(identity);
	if (r)
		return r;
	remove_sidecar(spool, name, STATUS_SUFFIX);
	r = move(spool, "running", name, "incoming", name, err);
	if (r == MOVE_GONE)
		return lp_fail(err, LP_EIO, "cannot requeue %s: it is gone from running/", name);
	return r == MOVE_TAKEN ? LP_SPOOL_NAME_TAKEN : r;
}

/* The first of ID, ID~2, ID~3... that names neither a job file nor a
 * report in SUB (spool invariant (9)). Only the daemon writes there
 * (invariant (2)): what is free now stays free until it writes it. */
static char *free_record_id(const lp_spool *spool, const char *sub, const char *id)
{
	char *candidate = g_strdup(id);
	for (unsigned n = 2;; n++) {
		char *job = g_strconcat(candidate, JOB_SUFFIX, NULL);
		char *report = g_strconcat(candidate, REPORT_SUFFIX, NULL);
		struct stat st;
		bool job_free = fstatat(sub_fd(spool, sub), job, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
				errno == ENOENT;
		bool report_free = fstatat(sub_fd(spool, sub), report, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
				   errno == ENOENT;
		g_free(report);
		g_free(job);
		if (job_free && report_free)
			return candidate;
		g_free(candidate);
		candidate = g_strdup_printf("%s~%u", id, n);
	}
}

int lp_spool_finish(lp_spool *spool, const char *from, const char *name, bool ok,
		    const char *report, char **record, lp_error *err)
{
	const char *sub = ok ? "done" : "failed";
	char *id = lp_spool_job_id(name);
	char *kept = free_record_id(spool, sub, id);
	char *report_file = g_strconcat(kept, REPORT_SUFFIX, NULL);
	char *job_file = g_strconcat(kept, JOB_SUFFIX, NULL);
	bool running = !strcmp(from, "running");
	int r = write_in(spool, sub, report_file, report, err);
	if (!r) {
		/* Spool invariant (11); a queued job's count is running/ID.attempts
		 * only if that names it, and not a running job of its name. */
		if (running)
			remove_sidecar(spool, name, STATUS_SUFFIX);
		if (running || attempts_of(spool, from, name))
			remove_sidecar(spool, name, ATTEMPTS_SUFFIX);
		r = move(spool, from, name, sub, job_file, err);
	}
	if (r == MOVE_GONE || r == MOVE_TAKEN) {
		/* Taken back by its owner while queued: no record of what was not
		 * run. */
		unlinkat(sub_fd(spool, sub), report_file, 0);
		r = lp_fail(err, LP_EIO, "cannot move %s to %s/: it is gone from %s/", name, sub, from);
	}
	if (!r && record)
		*record = g_strdup(job_file);
	g_free(job_file);
	g_free(report_file);
	g_free(kept);
	g_free(id);
	return r;
}

int lp_spool_status(lp_spool *spool, const char *name, const char *text, lp_error *err)
{
	char *file = sidecar_name(name, STATUS_SUFFIX);
	int r = write_in(spool, "running", file, text, err);
	g_free(file);
	return r;
}

/* Whether running/ENTRY is the attempts file of a job still in the spool's
 * queue (in running/ or incoming/). */
static bool counts_queued_job(const lp_spool *spool, const char *entry)
{
	if (entry[0] == '.' || !g_str_has_suffix(entry, ATTEMPTS_SUFFIX))
		return false;
	char *id = g_strndup(entry, strlen(entry) - strlen(ATTEMPTS_SUFFIX));
	char *name = g_strconcat(id, JOB_SUFFIX, NULL);
	struct stat st;
	bool queued = fstatat(sub_fd(spool, "running"), name, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
		      fstatat(sub_fd(spool, "incoming"), name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	g_free(name);
	g_free(id);
	return queued;
}

GPtrArray *lp_spool_leftovers(lp_spool *spool, GPtrArray *refused)
{
	/* Spool invariant (11): only job files and the attempts files of
	 * queued jobs mean anything here any more. */
	GPtrArray *entries = list_dir(spool, "running");
	for (guint i = 0; i < entries->len; i++) {
		const char *entry = entries->pdata[i];
		if (!is_job_name(entry) && !counts_queued_job(spool, entry))
			unlinkat(sub_fd(spool, "running"), entry, 0);
	}
	g_ptr_array_unref(entries);
	/* Spool invariant (14): what may not run goes back, or away. */
	GPtrArray *names = list_jobs(spool, "running");
	for (guint i = names->len; i-- > 0;) {
		struct stat st;
		lp_error err = {0};
		if (fstatat(sub_fd(spool, "running"), names->pdata[i], &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !check_job_file(&st, names->pdata[i], &err))
			continue;
		refuse(spool, "running", names->pdata[i], &st, &err);
		g_ptr_array_add(refused, g_strdup(err.msg));
		g_ptr_array_remove_index(names, i);
	}
	return names;
}

static void cancel_request_free(gpointer p)
{
	lp_cancel_request *rq = p;
	g_free(rq->id);
	g_free(rq);
}

static gint compare_requests(gconstpointer a, gconstpointer b)
{
	const lp_cancel_request *x = *(lp_cancel_request *const *)a, *y = *(lp_cancel_request *const *)b;
	return strcmp(x->id, y->id);
}

GPtrArray *lp_spool_take_cancel_requests(lp_spool *spool)
{
	GPtrArray *requests = g_ptr_array_new_with_free_func(cancel_request_free);
	GPtrArray *entries = list_dir(spool, "incoming");
	int fd = sub_fd(spool, "incoming");
	for (guint i = 0; i < entries->len; i++) {
		const char *entry = entries->pdata[i];
		struct stat st;
		if (!g_str_has_prefix(entry, LP_CANCEL_PREFIX) ||
		    fstatat(fd, entry, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		/* Like a job file: a link could stand for someone else. */
		if (S_ISREG(st.st_mode) && st.st_nlink == 1 && entry[strlen(LP_CANCEL_PREFIX)]) {
			lp_cancel_request *rq = g_new(lp_cancel_request, 1);
			rq->id = g_strdup(entry + strlen(LP_CANCEL_PREFIX));
			rq->requester = st.st_uid;
			g_ptr_array_add(requests, rq);
		}
		unlinkat(fd, entry, 0);
	}
	g_ptr_array_unref(entries);
	g_ptr_array_sort(requests, compare_requests);
	return requests;
}

bool lp_spool_job_owner(const lp_spool *spool, const char *sub, const char *name, uid_t *owner)
{
	struct stat st;
	if (fstatat(sub_fd(spool, sub), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	*owner = st.st_uid;
	return true;
}
