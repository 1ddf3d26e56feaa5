/* Merging the streams that the recorder (src/record/tool/, format in its
   README) wrote to a directory into a capture: the 64-bit binary raw
   reference trace (formats §10.1) and the kernel event trace, in the order
   of the shared clock, with timestamps renumbered from 1, an S at each
   switch, files and page-cache frames numbered, and the page cache's C and
   V events and kernel copy references made from the recorder's file-copy
   records (record.md §5). */
#ifndef LAPLACE_RECORD_DECODE_H
#define LAPLACE_RECORD_DECODE_H

#include <stdint.h>

#include <glib.h>

#include "core/error.h"
#include "io/io.h"

#define LP_RECORD_TOOL_VERSION "0.1.0"

typedef struct lp_record_summary {
	uint64_t streams;      /* stream files read */
	uint64_t stream_bytes; /* their total size */
	uint64_t processes;    /* processes of the capture (thread groups) */
	uint64_t tasks;        /* tasks of the capture */
	uint64_t refs[256];    /* references written, by type byte */
	uint64_t events[256];  /* kernel events written, by tag */
	GPtrArray *untraced;   /* char *: the programs run untraced, in order */
} lp_record_summary;

/* Frees what *sum holds (not sum); NULL-safe. */
void lp_record_summary_clear(lp_record_summary *sum);

/* Merges every DIR/ *.lps into ref (written from its header on) and kern;
   fills *sum (lp_record_summary_clear frees it, whatever the result). Returns 0, or an lp_status with err set naming the stream,
   the record's first byte and the field (LP_EINPUT), or what could not be
   read or written (LP_EIO). The outputs are the caller's to stage or
   abort. */
int lp_record_decode(const char *dir, lp_output *ref, lp_output *kern, lp_record_summary *sum,
		     lp_error *err);

/* Writes DIR/0.lps, the stream of a program run untraced (the command
   itself, set-user-id or 32-bit) as task TASK: the capture then says so. */
int lp_record_write_untraced(const char *dir, uint64_t task, const char *path, lp_error *err);

#endif
