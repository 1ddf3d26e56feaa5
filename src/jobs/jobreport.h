/* Job reports, the inputs they record, and whole-or-nothing files
 * (jobreport.c). */
#ifndef LAPLACE_JOBS_JOBREPORT_H
#define LAPLACE_JOBS_JOBREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include <yaml.h>

#include "core/error.h"
#include "jobs/jobfile.h"
#include "jobs/runner.h"

/* ---- reports ---- */

/* Emit the entries of a job's report inside the current mapping: inputs,
 * mode, output, status, exit_status, error (when failed), duration and
 * statistics (when it succeeded). Returns 0 or -1 on an emitter error. */
int lp_job_report_emit(yaml_emitter_t *em, const lp_job_spec *spec,
		       const lp_job_outcome *outcome);

/* An input as it was when a job or cell started (or is now): what reports
 * and manifests record of it, to tell a later run whether it changed. */
typedef struct lp_input_state {
	bool known;       /* stat() succeeded */
	uint64_t size;
	char mtime[40];   /* seconds.nanoseconds, "" when not known */
} lp_input_state;

/* The state of the file at path now (not known for a NULL path). */
void lp_input_state_read(const char *path, lp_input_state *st);

/* Create the directory an output goes into, with its parents, if missing;
 * LP_EIO with err set when it cannot be. */
int lp_make_output_dir(const char *output, lp_error *err);

/* Write text to path whole or not at all (the staging invariants,
 * src/io/staging.c); dir_fd as lp_stage_file takes it. */
int lp_write_file_atomic(int dir_fd, const char *path, const char *text, size_t len,
			 lp_error *err);

#endif
