/* Merging the streams that the recorder (src/record/tool/, format in its
   README) wrote to a directory into a capture: the 64-bit binary raw
   reference trace (formats §10.1) and the kernel event trace, in the order
   of the shared clock, with timestamps renumbered from 1, an S at each
   switch, files and page-cache frames numbered, and the page cache's C and
   V events and kernel copy references made from the recorder's file-copy
   records (record.md §5). */
#ifndef LAPLACE_RECORD_DECODE_H
#define LAPLACE_RECORD_DECODE_H

#include <stdbool.h>
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
	/* Streams cut inside a record by their process's death (SIGKILL while
	   it wrote): records dropped, their bytes, and a line for each. */
	uint64_t torn_records, torn_bytes;
	GPtrArray *torn;
	GPtrArray *limits; /* char *: the processes that failed on a limit of Valgrind */
} lp_record_summary;

/* Frees what *sum holds (not sum); NULL-safe. */
void lp_record_summary_clear(lp_record_summary *sum);

/* A merge of DIR's streams into ref (written from its header on) and kern
   that can follow them while the recording runs (the tool's README,
   "Following the streams"); it fills *sum (lp_record_summary_clear frees
   it, whatever the result). The outputs are the caller's to stage or
   abort. */
typedef struct lp_record_decoder lp_record_decoder;

lp_record_decoder *lp_record_decoder_new(const char *dir, lp_output *ref, lp_output *kern,
					 lp_record_summary *sum);

/* Merges what can be merged now: while the recording runs (last false),
   the records that no record still unwritten can precede; once every
   traced process has ended (last true), all the rest. *progress (when not
   NULL): whether anything was merged. Returns 0, or an lp_status with err
   set naming the stream, the record's first byte and the field
   (LP_EINPUT), or what could not be read or written (LP_EIO); after a
   failure or a last step, only lp_record_decoder_free is left to call. */
int lp_record_decoder_step(lp_record_decoder *dec, bool last, bool *progress, lp_error *err);

/* Takes charge of the streams while the recording runs (laplace record,
   not a mere follower): the traced processes are paced by how far the
   merge has gone (the tool's README, "Pacing"), and what is merged of a
   stream is removed from its file (a hole punched; a whole stream, once
   merged, unlinked), so that the streams on disk stay bounded. Before
   the first step. */
void lp_record_decoder_pace(lp_record_decoder *dec);

/* NULL-safe. */
void lp_record_decoder_free(lp_record_decoder *dec);

/* Makes DIR/clock, the page the tool's instances share (README), before
   the first starts, saying that the traced processes run on processor
   cpu and that this process merges their streams (lp_record_decoder_pace). */
int lp_record_clock_create(const char *dir, unsigned cpu, lp_error *err);

/* The whole merge at once, of a recording that has ended. */
int lp_record_decode(const char *dir, lp_output *ref, lp_output *kern, lp_record_summary *sum,
		     lp_error *err);

/* Writes DIR/0.lps, the stream of a program run untraced (the command
   itself, set-user-id or 32-bit) as task TASK: the capture then says so. */
int lp_record_write_untraced(const char *dir, uint64_t task, const char *path, lp_error *err);

#endif
