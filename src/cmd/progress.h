/* A one-line progress display on standard error for long runs: records
 * done, records per second, and, when the size of the work is known, the
 * percentage done and the time left. Shown only on a terminal. */
#ifndef LAPLACE_PROGRESS_H
#define LAPLACE_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/pipeline.h"

typedef struct cli_progress cli_progress;

/* A display, or NULL when there is nothing to show: quiet was asked for or
 * standard error is not a terminal. Every function below accepts NULL. */
cli_progress *cli_progress_new(bool quiet);
/* What the display counts: noun, made plural with an s as the count
 * needs, then done when not NULL ("reference", "read": "2 references
 * read"; "record" unless set). */
void cli_progress_set_work(cli_progress *pr, const char *noun, const char *done);
/* The display as an lp_progress (none when pr is NULL). */
lp_progress cli_progress_hook(cli_progress *pr);
/* An lp_progress_fn (ctx is the display): redraws at most four times a
 * second. */
void cli_progress_update(void *ctx, const lp_progress_info *info);
/* Erase the line and free the display. */
void cli_progress_free(cli_progress *pr);

#endif
