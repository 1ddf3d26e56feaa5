/* The units of a per-process merge (laplace-formats(5), "RE-SCHEDULING")
 * and their records, as a reader of the directory (formats/taskdir.h)
 * hands them to the re-scheduling engine (sched/schedule.h): the one
 * interface between the two, below both. */
#ifndef LAPLACE_UNITS_H
#define LAPLACE_UNITS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"

/* A unit (9.1): one incarnation of a task, a run of its file's records. */
typedef struct lp_sched_unit {
	uint64_t pid, tid;
	uint64_t incarnation; /* from 0, in its file */
	uint64_t first_ts;    /* timestamp of its first record */
	size_t file;          /* its file, an index into lp_sched_input.files */
	char creator;         /* 'F' or 'T' when its first record creates it, else 0 */
	uint64_t creator_parent;
} lp_sched_unit;

/* A file of the directory. as-traced reads every file as one stream, in
 * this order, which is also the order of equal timestamps: kernel, orphan,
 * then task files by pid and tid. */
typedef struct lp_sched_file {
	const char *name;  /* for messages */
	size_t first_unit; /* its units are first_unit, first_unit + 1, ...; SIZE_MAX: none (kernel, orphan) */
	uint64_t tid;      /* a task file's task */
} lp_sched_file;

typedef struct lp_sched_ref {
	uint64_t canonical;
	uint64_t timestamp;
	char type;
} lp_sched_ref;

/* What a read returned instead of references. */
enum {
	LP_SCHED_END = 0,    /* the stream has no more records */
	LP_SCHED_MORE = '+', /* a reference is next (and was not taken) */
};

/* An event record a stream consumed, or one of the codes above. */
typedef struct lp_sched_event {
	char tag;            /* 'F' 'T' 'X' ... or LP_SCHED_END, LP_SCHED_MORE */
	uint64_t timestamp;
	uint64_t parent, child; /* F, T */
	uint64_t task;          /* X */
} lp_sched_event;

/* The records of a stream: with unit_streams, stream u is unit u, which
 * ends after its X; otherwise stream f is file f, whole.
 * read() takes up to cap references (whose timestamp is at most last_ts)
 * and returns their count; it stops before an event record. When it takes
 * none (0), *ev says why: the next record was an event, now consumed
 * (its tag); LP_SCHED_MORE, a reference is next but cap is 0 or its
 * timestamp is past last_ts; LP_SCHED_END. -1 with err set on error. */
typedef struct lp_sched_source {
	void *ctx;
	ssize_t (*read)(void *ctx, size_t stream, lp_sched_ref *refs, size_t cap, uint64_t last_ts,
			lp_sched_event *ev, lp_error *err);
	/* May be NULL. read with no last_ts, without the copy: *refs points
	 * to the references taken, where the source holds them, until the
	 * stream is read again. It may take fewer than read would (never
	 * none when read would take some), and fails where read would. */
	ssize_t (*view)(void *ctx, size_t stream, const lp_sched_ref **refs, size_t cap,
			lp_sched_event *ev, lp_error *err);
	/* May be NULL. A hint for reading ahead: stream will be read after
	 * those named before it (rr and random name each unit as it joins
	 * the ready queue). */
	void (*soon)(void *ctx, size_t stream);
} lp_sched_source;

typedef struct lp_sched_input {
	const lp_sched_unit *units; /* in file order, each file's in incarnation order */
	size_t nunits;
	const lp_sched_file *files;
	size_t nfiles;
	lp_sched_source source;
} lp_sched_input;

#endif
