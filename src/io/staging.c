/* Staged outputs: temporary names, durable publication, and removal when a
 * signal ends the run.
 *
 * The commit protocol of an output, written down once (laplace(1),
 * "OUTPUTS", says it for users): each invariant names the functions that
 * uphold it; other comments cite them as "staging invariant (N)".
 *
 * (1) An output that is a regular file or a directory is created only
 *     under a temporary name beside its final one, ".NAME.tmp-XXXXXX" for a
 *     file and "NAME.partial-XXXXXX" for a directory, a name that did not
 *     exist (O_EXCL, mkdir), made here alone (stage, create_tmp): a final
 *     name never shows an output being written.
 *
 * (2) Everything is done through the descriptor of the output's directory,
 *     held from the temporary's creation to the end, never following a
 *     symbolic link at either name (open_parent, and every *at() call
 *     here): a directory renamed or replaced by a link meanwhile cannot
 *     send the output elsewhere.
 *
 * (3) Data reach stable storage before their name does: a finished file is
 *     fsynced before it is renamed (output_finish in src/io/output.c,
 *     through lp_sync_fd), a per-process tree file by file, then each
 *     directory, then the top (sync_tree in src/formats/procdir.c).
 *
 * (4) The rename into place is one renameat() in that directory
 *     (publish_one): a file replaces an old one atomically; a directory is
 *     swapped with the old one (RENAME_EXCHANGE) only when replacing was
 *     asked for, and otherwise never replaces one that appeared since
 *     (RENAME_NOREPLACE).
 *
 * (5) A run succeeds only once each directory that received a new entry
 *     is fsynced too, once per directory (sync_parent from
 *     lp_stage_publish and lp_stage_publish_early); a failing fsync, like
 *     any failure, is an I/O error and leaves nothing published.
 *
 * (6) A run's outputs are published together or not at all: they are
 *     renamed under staged_lock, and a failure puts back what this call
 *     published, swapping a replaced directory back (unpublish,
 *     discard_all, from lp_stage_publish).
 *
 * (7) Every temporary is tracked from its creation, under staged_lock,
 *     until it is published or removed (track, untrack); when a signal
 *     ends the run, the signal thread takes staged_lock and removes what is
 *     tracked (wait_for_signal), so it sees the run's outputs all in place
 *     or none of them.
 *
 * (8) A file published early (lp_stage_publish_early) stays tracked, and is
 *     removed by a failure or a signal as a temporary is, until
 *     lp_staged_keep.
 *
 * (9) An output that is not a regular file (standard output, a pipe, a
 *     device) is written directly and never staged (lp_output_open in
 *     src/io/output.c): there the exit status alone tells of a failure.
 *
 * (10) Every temporary is locked (flock, exclusive) by the run that made
 *     it for as long as that run lives, through a descriptor of its own
 *     (lock_fd), taken before anything is written in it and checked to be
 *     still in place once held (create_tmp): a temporary whose lock can be
 *     taken belongs to no live process, on this machine or, through the
 *     file system's locks, another. A run removes such temporaries of its
 *     own outputs before making its own, under their lock, and says so
 *     (remove_stale): a run killed by SIGKILL, or the machine stopping,
 *     leaves none behind for good, and a live run's is never touched.
 *
 * --no-sync (lp_stage_set_sync) drops the fsyncs of (3) and (5), and
 * nothing else. */
#include "io/staging.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

/* An item: one output on its way, through its directory's descriptor
 * (staging invariant (2)). */
struct lp_staged {
	int dir_fd;       /* the directory holding both names */
	char *tmp_name;   /* names in that directory */
	char *final_name;
	char *tmp;        /* the same as paths, for messages */
	char *final;
	int lock_fd;      /* the temporary, locked while this run lives (10) */
	bool dir;
	bool replace;   /* dir: swap with an existing final directory */
	bool published; /* during lp_stage_publish: renamed into place */
	bool exchanged; /* published by swapping: tmp now holds the old tree */
};

static GMutex staged_lock;
static bool syncing = true; /* lp_stage_set_sync */
static GPtrArray *staged_set; /* lp_staged *, not owned */

static void track(lp_staged *s)
{
	if (!staged_set)
		staged_set = g_ptr_array_new();
	g_ptr_array_add(staged_set, s);
}

static void untrack(lp_staged *s)
{
	if (staged_set)
		g_ptr_array_remove_fast(staged_set, s);
}

int lp_remove_tree(int dir_fd, const char *name)
{
	if (unlinkat(dir_fd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	/* A run still writing into the tree may add an entry while it is
	 * being removed (the signal thread removes it under a running merge):
	 * empty it again until it can go. */
	for (int attempt = 0; attempt < 100; attempt++) {
		int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return errno == ENOENT ? 0 : -1;
		DIR *d = fdopendir(fd);
		if (!d) {
			close(fd);
			return -1;
		}
		const struct dirent *e;
		int rc = 0;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
			    lp_remove_tree(dirfd(d), e->d_name) < 0)
				rc = -1;
		closedir(d);
		if (rc < 0)
			return -1;
		if (unlinkat(dir_fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			return 0;
		if (errno != ENOTEMPTY && errno != EEXIST)
			return -1;
	}
	return -1;
}

/* Remove what a tracked item has on disk: its temporary, or once published
 * early, its final name. */
static void remove_staged(const lp_staged *s)
{
	lp_remove_tree(s->dir_fd, s->published ? s->final_name : s->tmp_name);
}

/* The directory of final as a descriptor, and final's name in it: with
 * AT_FDCWD, final's directory is opened here; otherwise dir_fd is that
 * directory already (duplicated, so that the item holds its own). */
static int open_parent(int dir_fd, const char *final, char **name)
{
	*name = g_path_get_basename(final);
	if (dir_fd != AT_FDCWD)
		return fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
	char *dir = g_path_get_dirname(final);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	g_free(dir);
	return fd;
}

static lp_staged *staged_new(int dir_fd, char *final_name, const char *final, bool dir,
			     bool replace)
{
	lp_staged *s = g_new0(lp_staged, 1);
	s->dir_fd = dir_fd;
	s->lock_fd = -1;
	s->final_name = final_name;
	s->final = g_strdup(final);
	s->dir = dir;
	s->replace = replace;
	return s;
}

static void staged_free(lp_staged *s)
{
	close(s->dir_fd);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	g_free(s->tmp_name);
	g_free(s->final_name);
	g_free(s->tmp);
	g_free(s->final);
	g_free(s);
}

/* Create the temporary: a name from pattern (ending in XXXXXX) that did not
 * exist, made in the item's directory; a file is returned open. */
#define TMP_FILE_INFIX ".tmp-"
#define TMP_DIR_INFIX ".partial-"

char *lp_tmp_pattern(const char *name, bool dir)
{
	return dir ? g_strconcat(name, TMP_DIR_INFIX "XXXXXX", NULL)
		   : g_strconcat(".", name, TMP_FILE_INFIX "XXXXXX", NULL);
}

bool lp_is_tmp_of(const char *entry, const char *name)
{
	size_t n = strlen(name);
	if (entry[0] == '.' && !strncmp(entry + 1, name, n))
		return g_str_has_prefix(entry + 1 + n, TMP_FILE_INFIX);
	return !strncmp(entry, name, n) && g_str_has_prefix(entry + n, TMP_DIR_INFIX);
}

/* Whether name in dir_fd is (still) the file or directory open as fd. */
static bool still_named(int dir_fd, const char *name, int fd)
{
	struct stat at_name, held;
	return fstatat(dir_fd, name, &at_name, AT_SYMLINK_NOFOLLOW) == 0 && fstat(fd, &held) == 0 &&
	       at_name.st_dev == held.st_dev && at_name.st_ino == held.st_ino;
}

/* Lock a new temporary (staging invariant (10)) through a descriptor of
 * its own, so that the lock outlives the output's (closed before the
 * rename): 1 when done; 0 when a run removing it as stale got there first
 * (it holds the lock, or the name is gone), and the caller makes another;
 * -1 with errno set when it cannot be opened. A file system without locks
 * leaves it unlocked, and then no run can take it for stale either. */
static int lock_tmp(lp_staged *s, const char *name, int fd)
{
	int lock_fd = s->dir ? openat(s->dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			     : fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (lock_fd < 0)
		return -1;
	if (flock(lock_fd, LOCK_EX | LOCK_NB) < 0 ? errno == EWOULDBLOCK
						   : !still_named(s->dir_fd, name, lock_fd)) {
		close(lock_fd);
		return 0;
	}
	s->lock_fd = lock_fd;
	return 1;
}

static int create_tmp(lp_staged *s, const char *pattern)
{
	for (int attempt = 0; attempt < 100; attempt++) {
		char *name = g_strdup(pattern);
		char *x = name + strlen(name) - 6;
		static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
		for (int i = 0; i < 6; i++)
			x[i] = letters[g_random_int_range(0, (gint32)sizeof letters - 1)];
		/* Modes are 0666 (file) and 0777 (directory) less the umask, as for
		 * anything new. A file is open for reading too: a writer may read
		 * back what it wrote (lp_output_pread). */
		int fd = s->dir ? mkdirat(s->dir_fd, name, 0777)
				: openat(s->dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
							  O_CLOEXEC, 0666);
		if (fd < 0) {
			g_free(name);
			if (errno != EEXIST)
				return -1;
			continue;
		}
		int locked = lock_tmp(s, name, fd);
		if (locked <= 0) {
			int saved = errno;
			if (!s->dir)
				close(fd);
			if (locked < 0)
				unlinkat(s->dir_fd, name, s->dir ? AT_REMOVEDIR : 0);
			g_free(name);
			if (locked < 0) {
				errno = saved;
				return -1;
			}
			continue; /* lost to a run removing it as stale: another name */
		}
		s->tmp_name = name;
		char *dir = g_path_get_dirname(s->final);
		s->tmp = strchr(s->final, '/') ? g_build_filename(dir, name, NULL) : g_strdup(name);
		g_free(dir);
		return fd;
	}
	return -1;
}

/* Remove the temporaries of name (files and directories alike) in dir_fd
 * that no live run holds (staging invariant (10)), each under its lock,
 * and say so; final is the output's path, for the message. */
static void remove_stale(int dir_fd, const char *name, const char *final)
{
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	char *dir = g_path_get_dirname(final);
	const struct dirent *e;
	while ((e = readdir(d))) {
		if (!lp_is_tmp_of(e->d_name, name))
			continue;
		/* O_NONBLOCK: a FIFO of that name does not hold us up. */
		int held = openat(dir_fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (held < 0)
			continue;
		struct stat st;
		bool want_dir = e->d_name[0] != '.';
		if (fstat(held, &st) == 0 && (want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)) &&
		    flock(held, LOCK_EX | LOCK_NB) == 0 && still_named(dir_fd, e->d_name, held) &&
		    lp_remove_tree(dir_fd, e->d_name) == 0) {
			char *shown = strchr(final, '/') ? g_build_filename(dir, e->d_name, NULL)
							 : g_strdup(e->d_name);
			size_t size = 4 * strlen(shown) + 1;
			char *escaped = g_malloc(size);
			lp_escape(escaped, size, shown, strlen(shown));
			fprintf(stderr, "%s: removed %s, left by a run that did not finish\n",
				g_get_prgname() ? g_get_prgname() : "laplace", escaped);
			g_free(escaped);
			g_free(shown);
		}
		close(held);
	}
	closedir(d);
	g_free(dir);
}

static lp_staged *stage(int dir_fd, const char *final, bool dir, bool replace, int *fd)
{
	char *name;
	int parent = open_parent(dir_fd, final, &name);
	if (parent < 0) {
		int saved = errno;
		g_free(name);
		errno = saved;
		return NULL;
	}
	remove_stale(parent, name, final);
	lp_staged *s = staged_new(parent, name, final, dir, replace);
	char *pattern = lp_tmp_pattern(name, dir);
	g_mutex_lock(&staged_lock);
	*fd = create_tmp(s, pattern);
	int saved = errno;
	if (*fd >= 0)
		track(s);
	g_mutex_unlock(&staged_lock);
	g_free(pattern);
	if (*fd < 0) {
		staged_free(s);
		errno = saved;
		return NULL;
	}
	return s;
}

int lp_stage_file(int dir_fd, const char *final, lp_staged **staged)
{
	int fd;
	*staged = stage(dir_fd, final, false, false, &fd);
	return *staged ? fd : -1;
}

lp_staged *lp_stage_dir(int dir_fd, const char *final, bool replace)
{
	int made;
	return stage(dir_fd, final, true, replace, &made);
}

int lp_staged_open_dir(const lp_staged *s)
{
	return openat(s->dir_fd, s->tmp_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

const char *lp_staged_path(const lp_staged *s) { return s->tmp; }

void lp_staged_discard(lp_staged *s)
{
	if (!s)
		return;
	g_mutex_lock(&staged_lock);
	remove_staged(s);
	untrack(s);
	g_mutex_unlock(&staged_lock);
	staged_free(s);
}

void lp_stage_set_sync(bool on) { syncing = on; }
bool lp_stage_syncs(void) { return syncing; }

int lp_fsync(int fd) { return syncing ? fsync(fd) : 0; }

#define WRITEBACK_STEP (4u << 20)

void lp_stage_wrote(int fd, size_t *unstarted, size_t n)
{
	*unstarted += n;
	if (*unstarted < WRITEBACK_STEP)
		return;
	*unstarted = 0;
#ifdef SYNC_FILE_RANGE_WRITE
	if (lp_stage_syncs())
		sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
	(void)fd;
#endif
}

void lp_stage_settled(int fd, uint64_t at, size_t n)
{
#ifdef SYNC_FILE_RANGE_WRITE
	if (lp_stage_syncs())
		sync_file_range(fd, (off_t)at, (off_t)n, SYNC_FILE_RANGE_WRITE);
#else
	(void)fd, (void)at, (void)n;
#endif
}

int lp_sync_fd(int fd, const char *what, lp_error *err)
{
	if (lp_fsync(fd) < 0)
		return lp_fail(err, LP_EIO, "cannot sync %s to disk: %s", what, g_strerror(errno));
	return 0;
}

/* Whether two items share a directory, which then needs one fsync. */
static bool same_parent(const lp_staged *a, const lp_staged *b)
{
	struct stat sa, sb;
	return fstat(a->dir_fd, &sa) == 0 && fstat(b->dir_fd, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* fsync an item's directory, so that its new entry survives a power cut
 * (staging invariant (5)). */
static int sync_parent(const lp_staged *s, lp_error *err)
{
	if (lp_fsync(s->dir_fd) == 0)
		return 0;
	char *dir = g_path_get_dirname(s->final);
	lp_fail(err, LP_EIO, "cannot sync %s to disk: %s", dir, g_strerror(errno));
	g_free(dir);
	return err->status;
}

static int publish_one(lp_staged *s, lp_error *err)
{
	if (!s->dir) {
		if (renameat(s->dir_fd, s->tmp_name, s->dir_fd, s->final_name) < 0)
			return lp_fail(err, LP_EIO, "cannot rename %s to %s: %s", s->tmp, s->final,
				       g_strerror(errno));
		s->published = true;
		return 0;
	}
	if (s->replace) {
		if (renameat2(s->dir_fd, s->tmp_name, s->dir_fd, s->final_name, RENAME_EXCHANGE) == 0) {
			s->published = s->exchanged = true;
			return 0;
		}
		if (errno != ENOENT)
			return lp_fail(err, LP_EIO, "cannot replace %s: %s", s->final, g_strerror(errno));
	}
	/* Never replace a directory that appeared since the run started. */
	if (renameat2(s->dir_fd, s->tmp_name, s->dir_fd, s->final_name, RENAME_NOREPLACE) < 0)
		return lp_fail(err, LP_EIO, "cannot rename %s to %s: %s", s->tmp, s->final,
			       g_strerror(errno));
	s->published = true;
	return 0;
}

/* Undo a publication (with the lock held): the new output leaves its final
 * name; a swapped-out directory comes back. */
static void unpublish(lp_staged *s)
{
	if (!s->published)
		return;
	if (s->exchanged)
		renameat2(s->dir_fd, s->tmp_name, s->dir_fd, s->final_name, RENAME_EXCHANGE);
	else
		lp_remove_tree(s->dir_fd, s->final_name);
	s->published = s->exchanged = false;
}

static void discard_all(lp_staged **items, size_t n)
{
	g_mutex_lock(&staged_lock);
	for (size_t i = 0; i < n; i++) {
		if (!items[i])
			continue;
		unpublish(items[i]);
		remove_staged(items[i]);
		untrack(items[i]);
		staged_free(items[i]);
	}
	g_mutex_unlock(&staged_lock);
}

int lp_stage_publish(lp_staged **items, size_t n, lp_error *err)
{
	int rc = 0;
	g_mutex_lock(&staged_lock);
	for (size_t i = 0; i < n && !rc; i++)
		if (items[i])
			rc = publish_one(items[i], err);
	/* Published: from now on a signal leaves them alone. */
	for (size_t i = 0; i < n && !rc; i++)
		if (items[i])
			untrack(items[i]);
	g_mutex_unlock(&staged_lock);
	const lp_staged *synced = NULL; /* outputs side by side share one fsync */
	for (size_t i = 0; i < n && !rc; i++) {
		if (!items[i] || (synced && same_parent(synced, items[i])))
			continue;
		rc = sync_parent(items[i], err);
		synced = items[i];
	}
	if (rc) {
		discard_all(items, n);
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		lp_staged *s = items[i];
		if (!s)
			continue;
		/* What tmp holds now is the directory that was replaced. */
		if (s->exchanged && lp_remove_tree(s->dir_fd, s->tmp_name) && !rc)
			rc = lp_fail(err, LP_EIO, "%s is in place, but the directory it replaced, "
				     "now %s, could not be removed: %s", s->final, s->tmp,
				     g_strerror(errno));
		staged_free(s);
	}
	return rc;
}

int lp_stage_publish_early(lp_staged *s, lp_error *err)
{
	g_mutex_lock(&staged_lock);
	int rc = publish_one(s, err);
	g_mutex_unlock(&staged_lock);
	return rc ? rc : sync_parent(s, err);
}

void lp_staged_keep(lp_staged *s)
{
	g_mutex_lock(&staged_lock);
	untrack(s);
	g_mutex_unlock(&staged_lock);
	staged_free(s);
}

/* ---- signals ---- */

static sigset_t ending_signals;

_Noreturn void lp_stage_abandon(int status)
{
	/* Held until the end: nothing is created or published any more
	 * (staging invariant (7)). */
	g_mutex_lock(&staged_lock);
	for (guint i = 0; staged_set && i < staged_set->len; i++)
		remove_staged(g_ptr_array_index(staged_set, i));
	_exit(status);
}

static gpointer wait_for_signal(gpointer data)
{
	(void)data;
	int sig = 0;
	while (sigwait(&ending_signals, &sig) != 0)
		;
	lp_stage_abandon(128 + sig);
}

bool lp_signal_ignored(int sig)
{
	struct sigaction old;
	return sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN;
}

void lp_stage_handle_signals(void)
{
	sigemptyset(&ending_signals);
	sigaddset(&ending_signals, SIGINT);
	sigaddset(&ending_signals, SIGTERM);
	/* SIGHUP ignored from the start stays ignored: nohup(1) asked for it.
	 * SIGINT and SIGTERM always end the run, even when the shell started
	 * it in the background with SIGINT ignored; an ignored signal would
	 * never reach sigwait. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (!lp_signal_ignored(SIGHUP))
		sigaddset(&ending_signals, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &ending_signals, NULL);
	g_thread_unref(g_thread_new("signals", wait_for_signal, NULL));
}
