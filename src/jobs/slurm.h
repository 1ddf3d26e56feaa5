/* What every Slurm submission shares (slurm.c): laplace batch's
 * (batch.h, lp_slurm_submit) and laplace study's (study.h). */
#ifndef LAPLACE_JOBS_SLURM_H
#define LAPLACE_JOBS_SLURM_H

#include <stdbool.h>
#include <stddef.h>

#include <glib.h>

#include "core/error.h"

/* Under Slurm, the job this process runs in: ARRAYID_INDEX for an array
 * element, else the job's id; NULL elsewhere. */
char *lp_slurm_job_id(void);
/* Slurm's --array list of the ascending indices: "0-3,7,9-11", with
 * "%N" for max_running (0: no throttle). */
char *lp_slurm_array_list(const size_t *indices, size_t n, size_t max_running);
/* Write the script path (atomically): a comment saying that submitter
 * (e.g. "laplace batch") wrote it and what it does, then exec command. */
int lp_slurm_write_script(const char *path, const char *submitter, const char *what,
			  const char *command, lp_error *err);
/* Add the --sbatch-option values (NULL-terminated, or NULL) to args. */
void lp_sbatch_add_options(GPtrArray *args, char **options);
/* Run sbatch with args (args[0] "sbatch"; a NULL is appended); its job id
 * (what --parsable prints before any ";CLUSTER") in *id. With wait,
 * sbatch's own status is the job's and says nothing about sbatch: only a
 * missing id is an error then. what names the job in messages. */
int lp_sbatch(GPtrArray *args, const char *what, bool wait, char **id, lp_error *err);

#endif
