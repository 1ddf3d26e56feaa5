/* Outputs are staged: written under a temporary name beside their final
 * name, flushed to stable storage, and published (renamed into place) only
 * when the whole run succeeded, all of a run's outputs or none (laplace(1),
 * "OUTPUTS"). The protocol is written down once, as numbered invariants, at
 * the top of src/io/staging.c. */
#ifndef LAPLACE_STAGING_H
#define LAPLACE_STAGING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Temporary names (staging invariant (1)): ".NAME.tmp-XXXXXX" for a file,
 * "NAME.partial-XXXXXX" for a directory, made only by these two functions.
 * lp_tmp_pattern: the mkstemp/mkdtemp pattern for final name (its last
 * component); lp_is_tmp_of: whether entry is a temporary of name, as the
 * daemon asks when it cleans up after a killed job. */
char *lp_tmp_pattern(const char *name, bool dir);
bool lp_is_tmp_of(const char *entry, const char *name);

typedef struct lp_staged lp_staged;

/* Where an output goes: dir_fd is AT_FDCWD and final a path, whose
 * directory is opened here; or dir_fd is final's directory, already
 * resolved (the daemon's confinement), and only final's last component
 * names the output in it (the rest shows in messages). Either way the item
 * holds that directory open and does everything through it, never
 * following a symbolic link at the temporary or the final name. */

/* Create a temporary file beside final and start tracking it, locked
 * until the item is freed; temporaries of final that no live run holds are
 * removed first, with a line on stderr for each (staging invariant (10)).
 * Returns the open descriptor (O_WRONLY, mode 0666 less the umask) or -1
 * with errno set. */
int lp_stage_file(int dir_fd, const char *final, lp_staged **staged);
/* Create a temporary directory (mode 0777 less the umask) beside final,
 * locked and after stale temporaries as lp_stage_file;
 * with replace, publishing swaps it with an existing final directory and
 * removes the old one. Returns NULL with errno set on failure. */
lp_staged *lp_stage_dir(int dir_fd, const char *final, bool replace);
/* The temporary directory, opened (O_RDONLY | O_DIRECTORY); -1 with errno
 * set on failure. */
int lp_staged_open_dir(const lp_staged *s);
/* The temporary path, for writing and messages. */
const char *lp_staged_path(const lp_staged *s);
/* Remove the temporary file or tree (or an early-published file) and stop
 * tracking it. NULL is fine. */
void lp_staged_discard(lp_staged *s);

/* Flush a finished file to stable storage: fsync(fd), reporting failure
 * as an I/O error naming what. */
int lp_sync_fd(int fd, const char *what, lp_error *err);
/* fsync(fd), or nothing once syncing is off; 0 or -1 with errno set. */
int lp_fsync(int fd);
/* n more bytes were written to the staged file fd, *unstarted of them
 * before since its writeback was last started: every few MiB it is started
 * again (when syncing), so that the disk writes while the run goes on and
 * the final fsync has little left to wait for (the kernel itself would
 * wait for a tenth of memory to be dirty). Only a start: the fsync says
 * what failed. */
void lp_stage_wrote(int fd, size_t *unstarted, size_t n);
/* Bytes [at, at + n) of a staged file written at their offsets are final:
 * start writing them to disk (when syncing), as lp_stage_wrote does for
 * bytes written in order. */
void lp_stage_settled(int fd, uint64_t at, size_t n);
/* Syncing is on by default; --no-sync turns it off for a process whose
 * outputs are scratch data (an output is still published only when
 * complete, but a power cut may lose it). */
void lp_stage_set_sync(bool on);
bool lp_stage_syncs(void);

/* Rename every staged item into place, then flush their directories to
 * stable storage. On any failure, what was already published by this call
 * is removed again (a replaced directory is swapped back) and every item
 * is discarded. Signals are held off meanwhile. Frees the items; NULL
 * items are skipped. */
int lp_stage_publish(lp_staged **items, size_t n, lp_error *err);

/* For a file that readers must see before the run ends (gen's kernel
 * trace, which a merge at the other end of a pipe opens): publish it now,
 * yet still remove it if the run fails (lp_staged_discard) or a signal
 * ends it, until lp_staged_keep() frees it for good. Files only. */
int lp_stage_publish_early(lp_staged *s, lp_error *err);
void lp_staged_keep(lp_staged *s);

/* From now on SIGINT, SIGTERM and SIGHUP (unless ignored, as nohup(1)
 * does) end the process with status 128 + signal after removing every
 * staged file and directory. Call it
 * before any other thread starts: it blocks them in the calling thread,
 * which every later thread inherits, and waits for them on a thread of
 * its own. */
void lp_stage_handle_signals(void);

/* Removes every staged file and directory and ends the process with
 * status, whatever other threads are doing: a run that is abandoned. */
_Noreturn void lp_stage_abandon(int status);

/* Whether sig is ignored (SIG_IGN), as SIGHUP is under nohup(1): commands
 * that handle signals their own way leave such a SIGHUP alone too. */
bool lp_signal_ignored(int sig);

/* Remove dir_fd's entry name (dir_fd may be AT_FDCWD) and, for a
 * directory, everything in it, through descriptors opened without
 * following symbolic links; 0 (also when it is already gone), or -1 with
 * errno set. */
int lp_remove_tree(int dir_fd, const char *name);

#endif
