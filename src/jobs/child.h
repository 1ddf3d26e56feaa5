/* Child processes started as fresh images of the program (child.c). */
#ifndef LAPLACE_JOBS_CHILD_H
#define LAPLACE_JOBS_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "core/error.h"

/* ---- child processes ----
 *
 * The batch engine and the daemon run threads (GLib's at least), and the
 * child of a fork in a threaded process may make only async-signal-safe
 * calls until it execs: a lock another thread held at the fork is never
 * released (AddressSanitizer's allocator hung a job that way). So their
 * children are fresh images of the running program (/proc/self/exe),
 * started with posix_spawn as `laplace COMMAND`, one of the hidden
 * commands below, with what they are to do written down by the parent
 * before (a description) and handed over on a descriptor. None of this is
 * exported by liblaplace: only the laplace program starts such children,
 * so /proc/self/exe is laplace, whose main() runs the hidden commands. The
 * child's descriptors: */
#define LP_CHILD_PIPE_FD 3 /* a job's messages to its parent */
#define LP_CHILD_DESC_FD 4 /* the description, closed once read */
#define LP_CHILD_ROOT_FD 5 /* the daemon's output root (confinement) */

#define LP_JOB_COMMAND "__job"
#define LP_CELL_COMMAND "__cell"
#define LP_REMOVE_PARTIALS_COMMAND "__remove-partials"

/* A description: written with the put functions into the array that
 * lp_job_desc_new returns (command first), read back in the same order in
 * the child. */
GByteArray *lp_job_desc_new(const char *command);
void lp_job_desc_put_u64(GByteArray *desc, uint64_t value);
void lp_job_desc_put_str(GByteArray *desc, const char *s); /* s may be NULL */

/* Start `laplace command` (its argv[0] this process's name) with desc at
 * LP_CHILD_DESC_FD, pipe_fd at LP_CHILD_PIPE_FD and root_fd at
 * LP_CHILD_ROOT_FD (-1: none) and no other descriptor but 0, 1 and 2;
 * SIGINT, SIGTERM and SIGHUP blocked, so that one sent before the child
 * handles them waits for it. 0 with *pid set, or LP_EIO with err set. */
int lp_job_spawn(const char *command, const GByteArray *desc, int pipe_fd, int root_fd,
		 pid_t *pid, lp_error *err);

/* Start `laplace ARGS...` (argv: ARGS, NULL-terminated; its argv[0]
 * "laplace") with standard input and output /dev/null, standard error
 * err_fd, no other descriptor, the ending signals blocked as for
 * lp_job_spawn (laplace's commands wait for them on a thread of their
 * own). 0 with *pid set, or LP_EIO with err set. */
int lp_command_spawn(char *const *argv, int err_fd, pid_t *pid, lp_error *err);

/* A description read back: the get functions take its values in order;
 * strings point into it. A value missing or malformed makes every later
 * one 0 or NULL and lp_job_desc_end fail. */
typedef struct lp_job_desc {
	char *bytes;
	const char *next, *end;
	bool bad;
} lp_job_desc;
/* In the child: LP_EUSAGE with err set when descriptor fd is not open (the
 * command was run by hand), else 0. */
int lp_job_child_check_fd(int fd, lp_error *err);
/* In the child: read the description at LP_CHILD_DESC_FD, check that it is
 * command's, and close the descriptor. LP_EUSAGE as lp_job_child_check_fd,
 * LP_EIO when it cannot be read or is not command's; err says why. */
int lp_job_desc_receive(const char *command, lp_job_desc *desc, lp_error *err);
uint64_t lp_job_desc_get_u64(lp_job_desc *desc);
const char *lp_job_desc_get_str(lp_job_desc *desc);
/* Whether every value was there and nothing follows; LP_EIO if not. */
int lp_job_desc_end(const lp_job_desc *desc, lp_error *err);
void lp_job_desc_clear(lp_job_desc *desc);

#endif
