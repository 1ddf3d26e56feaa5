/* liblaplace: merged memory reference traces read from C and C++.
 *
 * The installed interface of the library: basic merge streams (text or
 * binary) read back, captures (a raw reference trace and its kernel
 * event trace) merged on the fly, page-replacement policies simulated
 * over a stream (since 1.1.0), streams reduced and a per-process
 * directory scheduled with a memory of each size (since 1.3.0). See
 * laplace(3), lp_basic_open(3), lp_capture_open(3), lp_reduce(3) and
 * lp_sweep_memory(3); the formats are laplace-formats(5).
 *
 * Every function that can fail takes an lp_error, zero-initialised by the
 * caller, and fills it in: a status and a message naming the file, the
 * record or line, and the field. The library never prints.
 *
 * NULL is never a crash: a NULL path, reader, capture or array (with n > 0)
 * is refused with LP_EUSAGE (NULL from an open, -1 from a read,
 * lp_simulate or lp_reduce, whose path may be NULL when an array is
 * given, and from lp_sweep_memory); lp_capture_stats(NULL) is NULL; the
 * _init functions, the closes and the frees do nothing with NULL. err may be NULL: failures are then told by the
 * return value alone.
 *
 * Threads: readers and captures share nothing, so different ones may be
 * used at the same time from different threads; one reader or capture is
 * used by one thread at a time (or under the caller's lock).
 *
 * What is promised (the ABI): the functions and types below, for as long
 * as the library's soname (liblaplace.so.1) stays; LP_VERSION_MAJOR
 * changes with it. A minor version adds, never changes. lp_basic_ref and
 * lp_merged_ref, which the caller allocates in arrays, change only with
 * the soname (as in 1.0.0, liblaplace.so.1, whose lp_merged_ref took the
 * reference's vas and a 64-bit address, for captures of 64-bit
 * machines). The structures that may grow, lp_capture_options,
 * lp_sim_request, lp_sweep_request and lp_stats, begin with their size
 * and grow at their end only, so a program built against an older
 * laplace.h goes on working: their _init records the caller's sizeof
 * (fields past it take their defaults; lp_sim_request grew in 1.3.0), and
 * lp_capture_stats' size says which fields the library filled in. Their arrays have room for tags and page kinds to
 * come (unused entries are 0). Anything not declared here (the library's
 * own symbols are hidden) is not promised. */
#ifndef LAPLACE_LAPLACE_H
#define LAPLACE_LAPLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the shared library exports: these functions and nothing else. */
#define LP_API __attribute__((visibility("default")))

/* ---- version ---- */

/* The version of this header (the Makefile's too). */
#define LP_VERSION_MAJOR 1
#define LP_VERSION_MINOR 3
#define LP_VERSION_PATCH 0
#define LP_VERSION_NUMBER (LP_VERSION_MAJOR * 10000 + LP_VERSION_MINOR * 100 + LP_VERSION_PATCH)

/* The version of the library loaded, as LP_VERSION_NUMBER: it may be newer
 * than the header the program was built with (and its major the same). */
LP_API unsigned lp_version(void);

/* ---- errors ---- */

/* Statuses of lp_error, and the exit statuses of the laplace program
 * (laplace(1), "EXIT STATUS"). */
enum lp_status {
	LP_OK = 0,
	LP_EUSAGE = 1, /* a bad argument, option or command line */
	LP_EINPUT = 2, /* malformed or inconsistent input */
	LP_EIO = 3,    /* cannot open, read or write; disk full; out of memory */
};

typedef struct lp_error {
	int status;     /* an lp_status; LP_OK while nothing failed */
	char msg[1024]; /* "FILE:LINE: field NAME: what is wrong" style text */
} lp_error;

/* Where warnings go (a torn last reference record, D with nothing
 * attached): msg is valid during the call only. */
typedef void (*lp_warn_fn)(void *ctx, const char *msg);

/* ---- basic merge streams (laplace-formats(5), "BASIC MERGE OUTPUT" and
 * "FORMS FOR SIMULATORS") ---- */

/* One reference: its type (r w i R W I) and its canonical page. */
typedef struct lp_basic_ref {
	char type;
	uint64_t canonical;
} lp_basic_ref;

typedef struct lp_basic_reader lp_basic_reader;

/* Open a basic merge stream: "type canonical" lines, or the binary form
 * (the header "LPBASIC\x01", then one 8-byte word per reference), told
 * apart by the header; either may be gzip or zstd compressed. path "-" is
 * standard input. NULL on failure, with err set. */
LP_API lp_basic_reader *lp_basic_open(const char *path, lp_error *err);
/* Read up to n references into refs: the count (less than n only at the
 * end or just before an error), 0 at the end, -1 with err set. An error
 * found after some references were read is returned by the next call;
 * after an error, every read fails again. */
LP_API ssize_t lp_basic_read(lp_basic_reader *r, lp_basic_ref *refs, size_t n, lp_error *err);
/* Close r (NULL is allowed). */
LP_API void lp_basic_close(lp_basic_reader *r);

/* ---- captures merged on the fly (laplace-formats(5), "RAW REFERENCE
 * TRACE", "KERNEL EVENT TRACE" and "MERGE SEMANTICS") ---- */

/* The pid and tid of a reference made while no task is current. */
#define LP_NO_TASK UINT64_MAX

/* One reference of the merged stream: the raw record's fields, its
 * canonical page, and the task current when it was made (kernel references
 * included), or LP_NO_TASK. vas and address have 32 bits in a capture of
 * a 32-bit machine, up to 64 in one of a 64-bit machine
 * (laplace-formats(5), section 10). */
typedef struct lp_merged_ref {
	char type;          /* r w i (user) or R W I (kernel) */
	uint8_t length;     /* bytes touched */
	uint64_t vas;       /* address-space id */
	uint64_t address;   /* virtual address */
	uint64_t timestamp;
	uint64_t canonical;
	uint64_t pid, tid;
} lp_merged_ref;

enum lp_ref_format { LP_REF_AUTO, LP_REF_BIN, LP_REF_TEXT };
enum lp_endian { LP_LITTLE, LP_BIG };

/* The name laplace's options give the reference format `format` ("auto",
 * "bin", "text", ...), or NULL when it is no enum lp_ref_format: counting
 * from 0 until NULL lists them all. The strings are the library's own. */
LP_API const char *lp_ref_format_name(int format);

/* The start of kernel memory a capture has unless told otherwise: an
 * i386 Linux kernel's in a 32-bit capture, the x86-64 Linux direct map's
 * in a 64-bit one (laplace-formats(5), section 10.2). */
#define LP_DEFAULT_PAGE_OFFSET 0xc0000000u
#define LP_PAGE_OFFSET_64 UINT64_C(0xffff888000000000)
/* lp_capture_options.page_offset: the one of the capture's width, as
 * above. (A page offset of ffffffffffffffff itself cannot be asked for:
 * it would make kernel memory the last byte alone.) */
#define LP_PAGE_OFFSET_BY_WIDTH UINT64_MAX

/* What laplace merge's options say. Set up with lp_capture_options_init
 * (which records size), then change the fields wanted. */
typedef struct lp_capture_options {
	size_t size;                   /* sizeof the caller's lp_capture_options */
	enum lp_ref_format ref_format; /* LP_REF_AUTO: text if the first line is a record */
	enum lp_endian endian;         /* of binary references; LP_LITTLE */
	uint64_t page_offset;          /* start of kernel memory;
					* LP_PAGE_OFFSET_BY_WIDTH */
	bool user_only;                /* leave kernel references (R W I) out; still
					* translated, so numbering is unchanged */
	bool strict;                   /* a torn last reference record is an error */
	lp_warn_fn warn;               /* warnings (also counted in the statistics);
					* NULL: counted only */
	void *warn_ctx;
} lp_capture_options;

/* Fill in the defaults, which a NULL lp_capture_options also means
 * (opt NULL: nothing is done). A macro, so that the size recorded is the
 * caller's: lp_capture_options_init_sized is what the library exports
 * (for bindings that call it, size is the structure's size as they lay it
 * out; lp_capture_open refuses a size it does not know). */
LP_API void lp_capture_options_init_sized(lp_capture_options *opt, size_t size);
#define lp_capture_options_init(opt) lp_capture_options_init_sized((opt), sizeof(lp_capture_options))

typedef struct lp_capture lp_capture;

/* Open a capture: ref, the raw reference trace, and kern, its kernel event
 * trace (one of them may be "-", standard input; either may be gzip or
 * zstd compressed). NULL on failure, with err set. */
LP_API lp_capture *lp_capture_open(const char *ref, const char *kern,
				   const lp_capture_options *opt, lp_error *err);
/* Merge up to n more references into refs: the count (less than n only
 * at the end or just before an error), 0 at the end, -1 with err set. An
 * error found after some references were merged is returned by the next
 * call; after an error, every read fails again. */
LP_API ssize_t lp_capture_read(lp_capture *c, lp_merged_ref *refs, size_t n, lp_error *err);

/* Statistics (laplace-formats(5), "STATISTICS"). */
enum lp_page_kind {
	LP_PAGE_FILE, LP_PAGE_SEGMENT, LP_PAGE_SHARED_ANON, LP_PAGE_PRIVATE_ANON,
	LP_PAGE_KERNEL, LP_PAGE_KIND_COUNT
};
/* Kernel event tags, in the order of the table of laplace-formats(5),
 * "KERNEL EVENT TRACE". */
enum lp_tag {
	LP_TAG_F, LP_TAG_T, LP_TAG_E, LP_TAG_S, LP_TAG_X, LP_TAG_M, LP_TAG_U,
	LP_TAG_B, LP_TAG_K, LP_TAG_G, LP_TAG_H, LP_TAG_D, LP_TAG_Q, LP_TAG_C,
	LP_TAG_V, LP_TAG_COUNT
};
/* Room in lp_stats for tags and page kinds to come (see the ABI above). */
#define LP_STATS_TAGS 32
#define LP_STATS_PAGE_KINDS 16
typedef struct lp_stats {
	size_t size;                         /* sizeof the library's lp_stats: a
					      * field at or past it is not there */
	uint64_t refs[6];                    /* by type, in "rwiRWI" order */
	uint64_t events[LP_STATS_TAGS];      /* by tag (the first LP_TAG_COUNT) */
	uint64_t pages[LP_STATS_PAGE_KINDS]; /* canonical pages by kind (the first
					      * LP_PAGE_KIND_COUNT) */
	uint64_t cow_copies;
	uint64_t unmapped_pages;
	uint64_t orphan_spaces;
	uint64_t mismatches;
	uint64_t warnings;
} lp_stats;

/* The statistics of what has been merged so far: final once
 * lp_capture_read has returned 0. Valid until lp_capture_close. NULL
 * if c is NULL. */
LP_API const lp_stats *lp_capture_stats(const lp_capture *c);
/* Close c (NULL is allowed). */
LP_API void lp_capture_close(lp_capture *c);

/* ---- page replacement (laplace-sim(1)), since 1.1.0 ---- */

/* One row of laplace sim's output: a policy at one size. */
typedef struct lp_sim_row {
	char policy[16];     /* its name (lru, opt, fifo, clock, segq, arc,
			      * eelru, ws, vmin), NUL-terminated */
	uint64_t size;       /* frames, or a window in references (ws, vmin) */
	uint64_t references; /* the references simulated */
	uint64_t faults;     /* first references included */
	uint64_t space_time; /* the sum over references of the pages resident
			      * after each */
} lp_sim_row;

/* Simulate page-replacement policies as laplace sim does (laplace-sim(1),
 * with the policy options at their defaults): policies, frames and windows
 * are the strings its --policy, --frames and --window take (NULL: "lru",
 * "pow2", "pow2"). The references are the basic merge stream at path (as
 * lp_basic_open reads it), or, when path is NULL, the n canonical page
 * numbers of canonical. On success, the number of rows, and *rows an array
 * of them in laplace sim's order (policies as given, sizes ascending) to be
 * freed with lp_sim_free (NULL when there are none). On failure -1, *rows
 * NULL and err set: LP_EUSAGE for what laplace sim refuses with exit
 * status 1 (its message), else the reader's status and message. */
LP_API ssize_t lp_simulate(const char *path, const uint64_t *canonical, size_t n,
			   const char *policies, const char *frames, const char *windows,
			   lp_sim_row **rows, lp_error *err);
/* Free the rows of lp_simulate (NULL is allowed). */
LP_API void lp_sim_free(lp_sim_row *rows);

/* ---- since 1.2.0 ---- */

/* lp_simulate with more to say: what laplace sim's --sample-rate and
 * --sample-pages ask (miniature simulations of fifo, clock, segq and arc,
 * laplace-sim(1)), a way to stop, and the rows handed over as they are
 * made rather than held. Set it up with lp_sim_request_init (which
 * records the caller's sizeof: the structure may grow at its end), then
 * set what differs. */
typedef struct lp_sim_request {
	size_t size;           /* sizeof (lp_sim_request), by lp_sim_request_init */
	const char *policies;  /* as lp_simulate's (NULL: "lru", "pow2", "pow2") */
	const char *frames;
	const char *windows;
	double sample_rate;    /* 0 < R <= 1, or 0: not sampled */
	uint64_t sample_pages; /* S >= 1, or 0: not sampled (not with sample_rate) */
	/* When not NULL, the run stops soon after *stop turns non-zero,
	 * whatever thread sets it. */
	const volatile int *stop;
	/* Told the rows in laplace sim's order, a block at a time, every row
	 * of a block of one policy, whose rows number policy_rows in all; a
	 * non-zero return stops the run. NULL: the rows are dropped. */
	int (*rows)(void *ctx, const lp_sim_row *rows, size_t n, uint64_t policy_rows);
	void *ctx;
	/* Since 1.3.0: the policies' options, what laplace sim's --NAME VALUE
	 * set (laplace sim --list-policies names them and their defaults),
	 * as "NAME=VALUE" items, comma-separated: "segq-lru-frames=8",
	 * "eelru-early=2,eelru-late=16". Parsed and checked as laplace sim
	 * does (an option of a policy not asked for is refused). NULL: every
	 * default. A request of 1.2.0's size has none. */
	const char *options;
} lp_sim_request;
/* Zeroes *rq and records size (sizeof: the macro), as
 * lp_capture_options_init does; NULL does nothing. The sizes known are
 * this header's and 1.2.0's (up to ctx). */
LP_API void lp_sim_request_init_sized(lp_sim_request *rq, size_t size);
#define lp_sim_request_init(rq) lp_sim_request_init_sized((rq), sizeof(lp_sim_request))
/* Simulate as rq asks over the stream at path, or the n canonical page
 * numbers of canonical (as lp_simulate): 0 when every row was told, 1
 * when the run was stopped (by *rq->stop or by rq->rows), -1 on failure
 * with err set (LP_EUSAGE for what laplace sim refuses with exit status
 * 1, its message; else the reader's status and message). Memory follows
 * the stream and the sizes up to its footprint, not the rows. */
LP_API int lp_simulate_request(const char *path, const uint64_t *canonical, size_t n,
			       const lp_sim_request *rq, lp_error *err);

/* ---- trace reduction (laplace-reduce(1)), since 1.3.0 ---- */

/* Reduce a stream as laplace reduce --method METHOD --frames FRAMES does:
 * method "sad" (Safely Allowed Drop, a subsequence of the input) or
 * "olr" (Optimal LRU Reduction, the shortest stream), either with the
 * input's LRU behaviour for every memory of at least frames pages. The
 * references are the basic merge stream at path (as lp_basic_open reads
 * it), or, when path is NULL, the n references of refs (types r w i R W
 * I). On success, the number of references kept, and *reduced an array
 * of them (the command's output, reference for reference) to be freed
 * with lp_reduce_free (NULL when there are none). On failure -1,
 * *reduced NULL and err set: LP_EUSAGE with laplace reduce's message for
 * what it refuses with exit status 1 (a method, frames 0) or for a type
 * of refs that is none; LP_EINPUT for more references than it takes;
 * else the reader's status and message. */
LP_API ssize_t lp_reduce(const char *path, const lp_basic_ref *refs, size_t n, const char *method,
			 uint64_t frames, lp_basic_ref **reduced, lp_error *err);
/* Free the references of lp_reduce (NULL is allowed). */
LP_API void lp_reduce_free(lp_basic_ref *reduced);

/* ---- scheduling with a memory (laplace-schedule(1)), since 1.3.0 ---- */

/* One row of laplace schedule --memory's sweep table (laplace-formats(5),
 * 9.4.6): the schedule of a per-process directory with a memory of
 * memory frames. */
typedef struct lp_memory_row {
	uint64_t memory;      /* frames */
	uint64_t ticks;       /* the schedule's length */
	uint64_t references;  /* emitted (= busy_ticks) */
	uint64_t faults;
	uint64_t waits;
	uint64_t evictions;
	uint64_t busy_ticks;
	uint64_t idle_ticks;  /* ticks x cpus less busy_ticks; UINT64_MAX when
			       * past it (the table prints it whole) */
	double utilization;   /* busy / (ticks x cpus), as the table prints it
			       * (6 decimals) */
} lp_memory_row;

/* What laplace schedule --policy P --memory M1,M2,... asks (its options,
 * laplace-schedule(1)). Set it up with lp_sweep_request_init (which
 * records the caller's sizeof: the structure may grow at its end), then
 * set what differs; 0 and NULL are the command's defaults. */
typedef struct lp_sweep_request {
	size_t size;             /* sizeof (lp_sweep_request), by lp_sweep_request_init */
	const char *memory;      /* --memory: "M1,M2,...", frames (required) */
	const char *policy;      /* --policy: "rr" or "random"; NULL: rr */
	uint64_t quantum;        /* --quantum; 0: 10000 */
	unsigned cpus;           /* --cpus, 1 to 1024; 0: 1 */
	uint64_t seed;           /* --seed (random) */
	const char *replacement; /* --replacement: lru, fifo or clock; NULL: lru */
	uint64_t fault_ticks;    /* --fault-ticks; 0: 1000 */
	bool user_only;          /* --user-only */
	unsigned threads;        /* -j: schedules at once; 0: the processors */
	/* When not NULL, no more sizes start once *stop turns non-zero
	 * (those running end first), whatever thread sets it. */
	const volatile int *stop;
	/* Told the rows in the order of the sizes, one at a time (n 1); a
	 * non-zero return stops the run. NULL: the rows are dropped. */
	int (*rows)(void *ctx, const lp_memory_row *rows, size_t n);
	void *ctx;
} lp_sweep_request;
/* Zeroes *rq and records size (sizeof: the macro); NULL does nothing. */
LP_API void lp_sweep_request_init_sized(lp_sweep_request *rq, size_t size);
#define lp_sweep_request_init(rq) lp_sweep_request_init_sized((rq), sizeof(lp_sweep_request))
/* Schedule the per-process directory dir (laplace merge --per-process)
 * with a memory of each size of rq->memory, each from scratch, as laplace
 * schedule --memory does (one size too: its row is the report's): 0 when
 * every row was told, 1 when the run was stopped (by *rq->stop or by
 * rq->rows), -1 on failure with err set (LP_EUSAGE with laplace
 * schedule's message for what it refuses with exit status 1; LP_EINPUT
 * for a directory that is not a per-process one, LP_EIO for one that
 * cannot be read: the first failing size's, in the order of the sizes,
 * the rows before it told). Memory follows the directory and the sizes
 * running, not the rows. */
LP_API int lp_sweep_memory(const char *dir, const lp_sweep_request *rq, lp_error *err);

#ifdef __cplusplus
}
#endif

#endif
