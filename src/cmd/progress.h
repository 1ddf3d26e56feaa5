/* A one-line progress display on standard error for long runs: records
 * done, records per second, and, when the size of the work is known, the
 * percentage done and the time left. Shown only on a terminal. */
#ifndef LAPLACE_PROGRESS_H
#define LAPLACE_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "laplace/io.h"

typedef struct cli_progress cli_progress;

/* A display, or NULL when there is nothing to show: quiet was asked for or
 * standard error is not a terminal. Every function below accepts NULL. */
cli_progress *cli_progress_new(bool quiet);
/* The work is total records (for the percentage and the time left). */
void cli_progress_set_total(cli_progress *pr, uint64_t total);
/* The work is reading in, a regular file: the percentage follows its
 * offset (lp_input_file_offset / lp_input_file_size). */
void cli_progress_set_input(cli_progress *pr, const lp_input *in);
/* An lp_progress_fn (ctx is the display): redraws at most four times a
 * second. */
void cli_progress_update(void *ctx, uint64_t records, uint64_t events);
/* Erase the line and free the display. */
void cli_progress_free(cli_progress *pr);

#endif
