/* A deterministic generator of whole-system captures: a raw reference trace
 * and its kernel event trace, as a multiprogrammed machine would record them
 * (laplace-gen(1)). The two traces merge with no unmapped references, no
 * orphan address spaces, no mismatches and no warnings. */
#ifndef LAPLACE_GEN_H
#define LAPLACE_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "io/io.h"
#include "core/progress.h"

#define LP_GEN_MAX_PROCESSES 64
#define LP_GEN_MAX_THREADS 16
#define LP_GEN_MAX_FILES 4096
/* The most pages of one program's footprint (256 MiB: the room its 32-bit
 * address space has for it). */
#define LP_GEN_MAX_FOOTPRINT_PAGES 65536

typedef struct lp_gen_config {
	uint64_t seed;
	uint64_t refs;       /* references written, user and kernel together */
	unsigned processes;  /* programs the shell keeps running at once */
	unsigned threads;    /* most tasks in one threaded program */
	unsigned files;      /* data files read, written and mapped */
	/* Pages of anonymous memory that the programs running at once touch in
	 * random order, over their footprint regions (footprint / processes
	 * pages each); 0: none, every program keeps to a few hot pages. */
	uint64_t footprint;
	/* A capture of an x86-64 machine (laplace-formats(5) 10) in the 64-bit
	 * binary form, its footprints spread over the 47-bit user space; else
	 * one of an i386 machine in the 32-bit form. */
	bool wide;
	/* Not part of the capture (the same bytes for any value): more than
	 * 1, the references are written (and compressed) by a thread of
	 * their own while the next are generated. */
	unsigned jobs;
} lp_gen_config;

/* The defaults: seed 1, 1000000 references, 4 processes, 4 threads,
 * 64 files; one job. */
void lp_gen_config_init(lp_gen_config *cfg);
/* 0, or LP_EUSAGE with err naming the setting that is out of range. */
int lp_gen_config_check(const lp_gen_config *cfg, lp_error *err);

/* Generate the capture. refs receives binary little-endian records (after
 * the 64-bit form's header, when wide) and
 * kern the event lines; either may be NULL to skip writing it (the other
 * stays byte for byte the same, and skipping the references makes a run
 * fast). progress, when not NULL, is called between time slices. Outputs
 * are written but not committed. Returns 0 or an lp_status with err set. */
int lp_gen_run(const lp_gen_config *cfg, lp_output *refs, lp_output *kern,
	       lp_progress_fn progress, void *progress_ctx, lp_error *err);

#endif
