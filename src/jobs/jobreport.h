/* Job reports and whole-or-nothing files (jobreport.c). */
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
#include "jobs/runner.h"

/* ---- reports ---- */

/* Emit the entries of a job's report inside the current mapping: inputs,
 * mode, output, status, exit_status, error (when failed), duration and
 * statistics (when it succeeded). Returns 0 or -1 on an emitter error. */
int lp_job_report_emit(yaml_emitter_t *em, const lp_job_spec *spec,
		       const lp_job_outcome *outcome);

/* Write text to path whole or not at all (the staging invariants,
 * src/io/staging.c); dir_fd as lp_stage_file takes it. */
int lp_write_file_atomic(int dir_fd, const char *path, const char *text, size_t len,
			 lp_error *err);

#endif
