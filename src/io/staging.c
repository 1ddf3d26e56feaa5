/* Staged outputs: temporary names, durable publication, and removal when a
 * signal ends the run.
 *
 * Every temporary file or directory a run creates is tracked here until it
 * is published or discarded. One mutex guards the set, and it is held
 * while a temporary is created, while one is removed, and while a run's
 * outputs are renamed into place. The signal thread takes the same mutex
 * before it removes what is tracked, so a signal sees a run either before
 * its publication (everything is removed) or after it (everything is in
 * place): never half of a run's outputs. */
#include "laplace/staging.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

struct lp_staged {
	char *tmp;
	char *final;
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

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(path) && errno != ENOENT ? -1 : 0;
}

int lp_remove_tree(const char *path)
{
	/* A run still writing into the tree may add an entry while it is
	 * being removed (the signal thread removes it under a running merge):
	 * walk again until the top is gone. */
	for (int attempt = 0; attempt < 100; attempt++) {
		if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 || errno == ENOENT)
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
	const char *path = s->published ? s->final : s->tmp;
	if (s->dir)
		lp_remove_tree(path);
	else
		g_unlink(path);
}

static lp_staged *staged_new(char *tmp, const char *final, bool dir, bool replace)
{
	lp_staged *s = g_new0(lp_staged, 1);
	s->tmp = tmp;
	s->final = g_strdup(final);
	s->dir = dir;
	s->replace = replace;
	return s;
}

static void staged_free(lp_staged *s)
{
	g_free(s->tmp);
	g_free(s->final);
	g_free(s);
}

int lp_stage_file(const char *final, lp_staged **staged)
{
	char *dir = g_path_get_dirname(final);
	char *base = g_path_get_basename(final);
	char *tmp = g_strdup_printf("%s/.%s" LP_TMP_FILE_INFIX "XXXXXX", dir, base);
	g_free(dir);
	g_free(base);
	g_mutex_lock(&staged_lock);
	/* The mode is 0666 less the umask, as for any new file. */
	int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0666);
	int saved = errno;
	if (fd >= 0) {
		*staged = staged_new(tmp, final, false, false);
		track(*staged);
	}
	g_mutex_unlock(&staged_lock);
	if (fd < 0) {
		g_free(tmp);
		errno = saved;
	}
	return fd;
}

lp_staged *lp_stage_dir(const char *final, bool replace)
{
	char *tmp = g_strconcat(final, LP_TMP_DIR_INFIX "XXXXXX", NULL);
	lp_staged *s = NULL;
	g_mutex_lock(&staged_lock);
	if (mkdtemp(tmp)) {
		s = staged_new(tmp, final, true, replace);
		track(s);
	}
	int saved = errno;
	g_mutex_unlock(&staged_lock);
	if (!s)
		g_free(tmp);
	errno = saved;
	return s;
}

const char *lp_staged_path(const lp_staged *s) { return s->tmp; }
const char *lp_staged_final(const lp_staged *s) { return s->final; }

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

int lp_sync_fd(int fd, const char *what, lp_error *err)
{
	if (lp_fsync(fd) < 0)
		return lp_fail(err, LP_EIO, "cannot sync %s to disk: %s", what, g_strerror(errno));
	return 0;
}

/* fsync the directory that holds path, so that its new entry survives a
 * power cut. */
static int sync_parent(const char *path, lp_error *err)
{
	if (!syncing)
		return 0;
	char *dir = g_path_get_dirname(path);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = fd < 0 ? lp_fail(err, LP_EIO, "cannot open %s: %s", dir, g_strerror(errno))
			: lp_sync_fd(fd, dir, err);
	if (fd >= 0)
		close(fd);
	g_free(dir);
	return rc;
}

static bool same_parent(const char *a, const char *b)
{
	char *da = g_path_get_dirname(a), *db = g_path_get_dirname(b);
	bool same = !strcmp(da, db);
	g_free(da);
	g_free(db);
	return same;
}

static int publish_one(lp_staged *s, lp_error *err)
{
	if (!s->dir) {
		if (g_rename(s->tmp, s->final) < 0)
			return lp_fail(err, LP_EIO, "cannot rename %s to %s: %s", s->tmp, s->final,
				       g_strerror(errno));
		s->published = true;
		return 0;
	}
	if (s->replace) {
		if (renameat2(AT_FDCWD, s->tmp, AT_FDCWD, s->final, RENAME_EXCHANGE) == 0) {
			s->published = s->exchanged = true;
			return 0;
		}
		if (errno != ENOENT)
			return lp_fail(err, LP_EIO, "cannot replace %s: %s", s->final, g_strerror(errno));
	}
	/* Never replace a directory that appeared since the run started. */
	if (renameat2(AT_FDCWD, s->tmp, AT_FDCWD, s->final, RENAME_NOREPLACE) < 0)
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
		renameat2(AT_FDCWD, s->tmp, AT_FDCWD, s->final, RENAME_EXCHANGE);
	else if (s->dir)
		lp_remove_tree(s->final);
	else
		g_unlink(s->final);
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
	const char *synced = NULL; /* outputs side by side share one fsync */
	for (size_t i = 0; i < n && !rc; i++) {
		if (!items[i] || (synced && same_parent(synced, items[i]->final)))
			continue;
		rc = sync_parent(items[i]->final, err);
		synced = items[i]->final;
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
		if (s->exchanged && lp_remove_tree(s->tmp) && !rc)
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
	return rc ? rc : sync_parent(s->final, err);
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

static gpointer wait_for_signal(gpointer data)
{
	(void)data;
	int sig = 0;
	while (sigwait(&ending_signals, &sig) != 0)
		;
	/* Held until the end: nothing is created or published any more. */
	g_mutex_lock(&staged_lock);
	for (guint i = 0; staged_set && i < staged_set->len; i++)
		remove_staged(g_ptr_array_index(staged_set, i));
	_exit(128 + sig);
}

void lp_stage_forget_inherited(void)
{
	/* The items themselves belong to the parent's structures: only the
	 * references go. */
	if (staged_set)
		g_ptr_array_set_size(staged_set, 0);
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
