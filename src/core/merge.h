/* The merge core (laplace-formats(5), "MERGE SEMANTICS"): replays kernel
 * events to rebuild every address space and gives each reference its
 * canonical page.
 * It does no I/O: callers feed it events and batches of references in
 * merged order, and it hands back canonical numbers and routing facts. */
#ifndef LAPLACE_MERGE_H
#define LAPLACE_MERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/record.h"

/* LP_DEFAULT_PAGE_OFFSET and the statistics of laplace-formats(5) section
 * 6 (lp_stats, enum lp_page_kind) are in the library's interface,
 * laplace/laplace.h. */
extern const char *const lp_page_kind_names[LP_PAGE_KIND_COUNT];
/* The kinds as readers are shown them ("shared-memory segment"). */
extern const char *const lp_page_kind_words[LP_PAGE_KIND_COUNT];

uint64_t lp_stats_total_pages(const lp_stats *st);
uint64_t lp_stats_total_refs(const lp_stats *st);

/* A task as the outputs see it: per-process files are named PID/TID. */
typedef struct lp_task_id {
	uint64_t pid;
	uint64_t tid;
	uint64_t process; /* which process with this pid: a serial number, so
			   * that a pid reused while the old process lives on
			   * names a new one */
} lp_task_id;

/* Where an event belongs in per-process output: up to two tasks (F and T
 * name both parent and child); none means the kernel file. */
typedef struct lp_event_route {
	int ntasks;
	lp_task_id task[2];
} lp_event_route;

typedef struct lp_merge_config {
	uint64_t page_offset;  /* kernel references at or above it use frames */
} lp_merge_config;

typedef struct lp_merge lp_merge;

lp_merge *lp_merge_new(const lp_merge_config *cfg);
void lp_merge_free(lp_merge *m);
/* Where warnings found while applying events go (D with nothing attached);
 * they are counted whether or not a callback is set. */
void lp_merge_set_warn(lp_merge *m, lp_warn_fn warn, void *ctx);

/* Apply one event. Fills *route (may be NULL). Returns 0, or LP_EINPUT with
 * a message naming the offending field but not the file or line, or LP_EIO
 * with "out of memory: WHAT" when an allocation failed; after LP_EIO the
 * merge can only be freed. */
int lp_merge_event(lp_merge *m, const lp_event *ev, lp_event_route *route, lp_error *err);

/* Translate n references (already in merged order) and store their
 * canonical page numbers in canon[]. Returns 0, or LP_EINPUT when the
 * canonical numbers are exhausted, or LP_EIO with "out of memory: WHAT"
 * (canon[] is then meaningless, and the merge can only be freed). */
int lp_merge_refs(lp_merge *m, const lp_ref *refs, size_t n, uint64_t *canon, lp_error *err);

/* The current task (set by S, cleared by its X): true and *who filled, or
 * false when no task is current. Constant between two events. */
bool lp_merge_current_task(const lp_merge *m, lp_task_id *who);

const lp_stats *lp_merge_stats(const lp_merge *m);
/* Count a warning found outside the core (torn records). */
void lp_merge_add_warning(lp_merge *m);

#endif
