/* laplace record's front end (record.md): runs a command under the
   recorder, the Valgrind tool of src/record/tool/, following every process
   and thread it starts, and merges the tool's streams (decode.h) into a
   capture, PREFIX.ref.zst (or PREFIX.ref) and PREFIX.kern, published
   together under the output rules of laplace-formats(5) section 7. */
#ifndef LAPLACE_RECORD_FRONT_H
#define LAPLACE_RECORD_FRONT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"
#include "io/io.h"
#include "record/decode.h"

/* The tool's file name, as Valgrind looks for it (TOOL-PLATFORM). */
#define LP_RECORD_TOOL_FILE "laplace-record-amd64-linux"
/* Where the tool is looked for first (a directory), for tests and for a
   tool installed elsewhere. */
#define LP_RECORDER_DIR_ENV "LAPLACE_RECORDER_DIR"

typedef struct lp_record_request {
	const char *prefix;        /* the outputs' names without their suffixes */
	bool force;                /* replace outputs that exist */
	enum lp_compress compress; /* LP_COMPRESS_ZSTD (PREFIX.ref.zst) or NONE */
	char **argv;               /* the command and its arguments, NULL-terminated */
} lp_record_request;

typedef struct lp_record_result {
	int command_status;  /* the command's exit status, or 128 + the signal that killed it */
	bool interrupted;    /* the command was interrupted: a SIGINT came from the
				terminal (which sends it to the command too), or
				one came and the command ended by SIGINT */
	bool sigint_elsewhere; /* a SIGINT came from a process, not the terminal, and
				  the command did not end by it */
	pid_t sigint_sender;   /* that process (0: not known) */
	char *ref_path;      /* the outputs, as published */
	char *kern_path;
	uint64_t bytes;      /* their size together */
	double wall_seconds; /* from the command's start to the capture's publication */
	unsigned cpu;          /* the processor of the traced processes */
	unsigned cpus_allowed; /* how many processors laplace record was given */
	lp_record_summary sum;
} lp_record_result;

/* Runs the command and writes its capture; fills *res. Returns 0 (the
   command's own status is in res), or an lp_status with err set: a usage
   error (an output exists without force, no such command), the recorder
   that failed, its streams that could not be read (LP_EINPUT) or the
   capture that could not be written; nothing is left then.
   Signals: call it with no other thread running. While the command runs,
   a first SIGINT is noted (the command gets its own from the terminal;
   res says whether it was interrupted); a second one, or SIGTERM or SIGHUP (unless ignored,
   as nohup does), abandons the capture: the command and every process
   descended from it get SIGKILL and are reaped, nothing is left, and the
   process exits with 128 + the signal. Once the
   command has ended, they end the run as every command's
   (lp_stage_handle_signals). */
int lp_record_run(const lp_record_request *rq, lp_record_result *res, lp_error *err);
void lp_record_result_clear(lp_record_result *res);

#endif
