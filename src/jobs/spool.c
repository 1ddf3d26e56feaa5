/* The daemon's spool: incoming/, running/, done/ and failed/ in one
 * directory, so that every move of a job file is an atomic rename. */
#include "laplace/jobfile.h"

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

#include "laplace/inbuf.h"

static const char *const spool_dirs[] = {"incoming", "running", "done", "failed"};

struct lp_spool {
	char *dir;
	char *real_dir; /* symbolic links resolved, for lp_spool_holds */
	int lock_fd;
};

#define LOCK_NAME "lock"
#define JOB_SUFFIX ".yaml"
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
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
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
 * that each submitter can rename away only their own job files. */
static int check_dir(const char *path, bool incoming, lp_error *err)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return lp_fail(err, LP_EIO, "cannot check %s: %s", path, g_strerror(errno));
	if (S_ISLNK(st.st_mode))
		return lp_fail(err, LP_EUSAGE, "%s is a symbolic link; the spool's directories "
			       "must be real directories", path);
	if (!S_ISDIR(st.st_mode))
		return lp_fail(err, LP_EUSAGE, "%s is not a directory", path);
	if (st.st_uid != geteuid())
		return lp_fail(err, LP_EUSAGE, "%s belongs to uid %u, not to the daemon's uid %u; "
			       "chown it", path, (unsigned)st.st_uid, (unsigned)geteuid());
	bool shared = st.st_mode & (S_IWGRP | S_IWOTH);
	if (shared && !incoming)
		return lp_fail(err, LP_EUSAGE, "%s is writable by others; chmod go-w it", path);
	if (shared && !(st.st_mode & S_ISVTX))
		return lp_fail(err, LP_EUSAGE, "%s is writable by others without the sticky bit; "
			       "chmod +t it (or chmod go-w)", path);
	return 0;
}

lp_spool *lp_spool_open(const char *dir, lp_error *err)
{
	lp_spool *spool = g_new0(lp_spool, 1);
	spool->dir = g_strdup(dir);
	spool->lock_fd = -1;
	for (size_t i = 0; i < G_N_ELEMENTS(spool_dirs); i++) {
		char *sub = g_build_filename(dir, spool_dirs[i], NULL);
		int r = g_mkdir_with_parents(sub, 0755);
		int saved = errno;
		if (r < 0)
			lp_fail(err, LP_EIO, "cannot create %s: %s", sub, g_strerror(saved));
		g_free(sub);
		if (r < 0) {
			lp_spool_close(spool);
			return NULL;
		}
	}
	int r = check_dir(dir, false, err);
	if (!r && !(spool->real_dir = realpath(dir, NULL)))
		r = lp_fail(err, LP_EIO, "cannot resolve %s: %s", dir, g_strerror(errno));
	for (size_t i = 0; !r && i < G_N_ELEMENTS(spool_dirs); i++) {
		char *sub = g_build_filename(dir, spool_dirs[i], NULL);
		r = check_dir(sub, !strcmp(spool_dirs[i], "incoming"), err);
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
	g_free(spool->dir);
	free(spool->real_dir);
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

static GPtrArray *list_jobs(const lp_spool *spool, const char *sub)
{
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	char *path = g_build_filename(spool->dir, sub, NULL);
	GDir *d = g_dir_open(path, 0, NULL);
	g_free(path);
	const char *entry;
	while (d && (entry = g_dir_read_name(d)))
		if (is_job_name(entry))
			g_ptr_array_add(names, g_strdup(entry));
	if (d)
		g_dir_close(d);
	g_ptr_array_sort(names, compare_names);
	return names;
}

GPtrArray *lp_spool_incoming(const lp_spool *spool) { return list_jobs(spool, "incoming"); }

static int move(const lp_spool *spool, const char *from, const char *to, const char *name,
		lp_error *err)
{
	char *src = lp_spool_path(spool, from, name);
	char *dst = lp_spool_path(spool, to, name);
	int r = 0;
	if (rename(src, dst) < 0)
		r = errno == ENOENT ? -1
				    : lp_fail(err, LP_EIO, "cannot move %s to %s/: %s", src, to,
					      g_strerror(errno));
	g_free(src);
	g_free(dst);
	return r;
}

int lp_spool_claim(lp_spool *spool, const char *name, lp_error *err)
{
	int r = move(spool, "incoming", "running", name, err);
	if (r < 0)
		return 0;
	return r ? -1 : 1;
}

int lp_spool_check_job(const lp_spool *spool, const char *name, uid_t *owner, lp_error *err)
{
	char *path = lp_spool_path(spool, "running", name);
	struct stat st;
	int r = 0;
	if (lstat(path, &st) < 0)
		r = lp_fail(err, LP_EIO, "cannot check %s: %s", path, g_strerror(errno));
	else if (!S_ISREG(st.st_mode))
		r = lp_fail(err, LP_EINPUT, "%s: not a regular file", name);
	/* Another link could be rewritten by whoever holds it. */
	else if (st.st_nlink != 1)
		r = lp_fail(err, LP_EINPUT, "%s: has %ju links; a job file must have one", name,
			    (uintmax_t)st.st_nlink);
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		r = lp_fail(err, LP_EINPUT, "%s: writable by others than its owner", name);
	/* Unprivileged, the daemon cannot run a job as its owner: it runs only
	 * its own user's jobs. */
	else if (geteuid() != 0 && st.st_uid != geteuid())
		r = lp_fail(err, LP_EINPUT, "%s: owned by uid %u; this daemon runs only the jobs "
			    "of uid %u", name, (unsigned)st.st_uid, (unsigned)geteuid());
	else
		*owner = st.st_uid;
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
	else
		bookkeeping = !strcmp(dir, spool->real_dir) ||
			      (g_str_has_prefix(dir, spool->real_dir) &&
			       dir[strlen(spool->real_dir)] == '/');
	g_free(done);
	g_free(base);
	g_free(dir);
	return bookkeeping;
}

/* running/ID followed by suffix, newly allocated. */
static char *running_sidecar(const lp_spool *spool, const char *name, const char *suffix)
{
	char *id = lp_spool_job_id(name);
	char *file = g_strconcat(id, suffix, NULL);
	char *path = lp_spool_path(spool, "running", file);
	g_free(file);
	g_free(id);
	return path;
}

static void remove_sidecar(const lp_spool *spool, const char *name, const char *suffix)
{
	char *path = running_sidecar(spool, name, suffix);
	g_unlink(path);
	g_free(path);
}

/* What tells the job file running/NAME from another of the same name:
 * renames keep its device, inode and modification time; NULL if it is gone. */
static char *job_identity(const lp_spool *spool, const char *name)
{
	char *path = lp_spool_path(spool, "running", name);
	struct stat st;
	char *identity = lstat(path, &st) < 0 ? NULL
		: g_strdup_printf("%ju:%ju:%jd.%09ld", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino,
				  (intmax_t)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	g_free(path);
	return identity;
}

unsigned lp_spool_attempts(const lp_spool *spool, const char *name)
{
	char *path = running_sidecar(spool, name, ATTEMPTS_SUFFIX);
	char *identity = job_identity(spool, name);
	char *text = NULL;
	size_t len;
	unsigned attempts = 0;
	/* Written by lp_spool_requeue alone: anything else counts as none. */
	if (identity && !lp_read_small_file(path, false, 256, "attempts file", &text, &len, NULL)) {
		char *expected = g_strdup_printf("job: %s\n", identity);
		const char *count = g_str_has_prefix(text, expected) ? text + strlen(expected) : NULL;
		char *end = NULL;
		unsigned long n = count && g_str_has_prefix(count, "attempts: ")
			? strtoul(count + strlen("attempts: "), &end, 10) : 0;
		if (n && n <= UINT_MAX && !strcmp(end, "\n"))
			attempts = (unsigned)n;
		g_free(expected);
	}
	g_free(text);
	g_free(identity);
	g_free(path);
	return attempts;
}

int lp_spool_requeue(lp_spool *spool, const char *name, unsigned attempts, lp_error *err)
{
	char *identity = job_identity(spool, name);
	if (!identity)
		return lp_fail(err, LP_EIO, "cannot requeue %s: it is gone from running/", name);
	char *text = g_strdup_printf("job: %s\nattempts: %u\n", identity, attempts);
	char *path = running_sidecar(spool, name, ATTEMPTS_SUFFIX);
	int r = lp_write_file_atomic(path, text, strlen(text), err);
	g_free(path);
	g_free(text);
	g_free(identity);
	if (r)
		return r;
	remove_sidecar(spool, name, STATUS_SUFFIX);
	r = move(spool, "running", "incoming", name, err);
	if (r < 0)
		return lp_fail(err, LP_EIO, "cannot requeue %s: it is gone from running/", name);
	return r;
}

int lp_spool_finish(lp_spool *spool, const char *name, bool ok, const char *report, lp_error *err)
{
	const char *sub = ok ? "done" : "failed";
	char *id = lp_spool_job_id(name);
	char *file = g_strconcat(id, ".report.yaml", NULL);
	char *path = lp_spool_path(spool, sub, file);
	int r = lp_write_file_atomic(path, report, strlen(report), err);
	g_free(path);
	g_free(file);
	g_free(id);
	if (r)
		return r;
	remove_sidecar(spool, name, STATUS_SUFFIX);
	remove_sidecar(spool, name, ATTEMPTS_SUFFIX);
	r = move(spool, "running", sub, name, err);
	if (r < 0)
		return lp_fail(err, LP_EIO, "cannot move %s to %s/: it is gone from running/", name, sub);
	return r;
}

int lp_spool_status(lp_spool *spool, const char *name, const char *text, lp_error *err)
{
	char *path = running_sidecar(spool, name, STATUS_SUFFIX);
	int r = lp_write_file_atomic(path, text, strlen(text), err);
	g_free(path);
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
	char *running = lp_spool_path(spool, "running", name);
	char *incoming = lp_spool_path(spool, "incoming", name);
	bool queued = g_file_test(running, G_FILE_TEST_EXISTS) ||
		      g_file_test(incoming, G_FILE_TEST_EXISTS);
	g_free(incoming);
	g_free(running);
	g_free(name);
	g_free(id);
	return queued;
}

GPtrArray *lp_spool_leftovers(lp_spool *spool)
{
	/* Everything else in running/ but job files is a status file, the
	 * attempts file of a job gone from the queue, or a temporary file of
	 * either: none of it means anything any more. */
	char *path = g_build_filename(spool->dir, "running", NULL);
	GDir *d = g_dir_open(path, 0, NULL);
	const char *entry;
	while (d && (entry = g_dir_read_name(d))) {
		if (is_job_name(entry) || counts_queued_job(spool, entry))
			continue;
		char *file = g_build_filename(path, entry, NULL);
		g_unlink(file);
		g_free(file);
	}
	if (d)
		g_dir_close(d);
	g_free(path);
	return list_jobs(spool, "running");
}
