/* The daemon's confinement of job outputs (confine.c). */
#ifndef LAPLACE_JOBS_CONFINE_H
#define LAPLACE_JOBS_CONFINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "core/error.h"
#include "jobs/jobfile.h"

/* ---- the daemon's rules ---- */

/* A job run with the runner's own rights. */
#define LP_NO_OWNER ((uid_t)-1)

/* Apply the daemon's rules to a parsed job from file name, by its text
 * alone: inputs must be absolute paths; the output, relative to root (an
 * absolute, resolved directory) or absolute, must name a file inside root,
 * without "..". On success spec->output is replaced by the absolute path,
 * its "." and empty components left out. */
int lp_job_confine(lp_job_spec *spec, const char *name, const char *root, lp_error *err);

/* Where a daemon's jobs may write: the output root, held open. */
typedef struct lp_job_confinement {
	int root_fd;      /* the output root, opened by the daemon at start */
	const char *root; /* its resolved path */
	const char *what; /* "FILE:LINE: key 'output'": how messages start */
} lp_job_confinement;

/* Open the directory of output (as lp_job_confine left it) beneath the
 * root with openat2(), refusing symbolic links on the way, and check what
 * is at the output's name (no symbolic link; a directory per process, else
 * a regular file). Returns the directory's descriptor, or -1 with err set. */
int lp_job_open_output_dir(const lp_job_confinement *c, const char *output, bool per_process,
			   lp_error *err);

/* Remove what a killed job may have left beside output: temporary files
 * `.NAME.tmp-*` (basic) and directories `NAME.partial-*` (per-process),
 * found as lp_job_open_output_dir finds the directory, in a child process
 * (`laplace __remove-partials`) running as owner, or with LP_NO_OWNER in
 * this process. The output itself is never touched. Returns how many were
 * removed. */
int lp_job_remove_partials(const lp_job_confinement *c, const char *output, uid_t owner);

/* Take owner's supplementary groups, gid and uid, checked, for good. */
int lp_job_become(uid_t owner, lp_error *err);

/* The hidden command `laplace __remove-partials` (child.h): removes what
 * lp_job_remove_partials asked for; exits with how many (at most 250), or
 * 255. LP_EUSAGE with err set when run by hand, without its descriptors. */
int lp_remove_partials_child_main(lp_error *err);

#endif
