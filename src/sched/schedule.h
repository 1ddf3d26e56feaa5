/* Re-scheduling the tasks of a per-process merge (laplace-formats(5),
 * "RE-SCHEDULING"): the engine. It does no I/O: a source hands it the records
 * of its streams (a unit's, or for as-traced a whole file's), a sink takes
 * the references in emission order, and the run's figures end up in a
 * report. */
#ifndef LAPLACE_SCHEDULE_H
#define LAPLACE_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include "analysis/policy.h"
#include "core/error.h"
#include "core/numbers.h"
#include "core/units.h"

enum lp_sched_policy { LP_SCHED_AS_TRACED, LP_SCHED_RR, LP_SCHED_RANDOM, LP_SCHED_POLICY_COUNT };
extern const char *const lp_sched_policy_names[LP_SCHED_POLICY_COUNT];
/* The policy named name; -1 if there is none. */
int lp_sched_policy_parse(const char *name);

/* The replacement policies of a memory (9.4.4): the rows of laplace
 * sim's table (analysis/policy.h) with a victim rule. The one named
 * name, or NULL; the names, "lru, fifo or clock" (g_free it). */
const lp_policy_info *lp_sched_replacement_find(const char *name);
char *lp_sched_replacement_names(void);

#define LP_SCHED_DEFAULT_QUANTUM 10000
#define LP_SCHED_DEFAULT_FAULT_TICKS 1000
/* The most frames and fault ticks (9.4.1). */
#define LP_SCHED_MAX_MEMORY UINT64_C(4294967295)
/* The most processors a schedule has (--cpus). */
#define LP_SCHED_MAX_CPUS 1024
/* A schedule whose page would arrive at or past this tick stops
 * (LP_EINPUT): references emitted after the last arrival, fewer than
 * 2^63, then keep ticks below 2^64. Ticks x processors can pass 2^64 - 1:
 * lp_u128. */
#define LP_SCHED_MAX_TICKS (UINT64_C(1) << 63)

/* A reference as emitted: in emission order, tick by tick, processor 0
 * first; cpu says which processor emitted it. */
typedef struct lp_sched_out {
	uint64_t canonical;
	uint32_t cpu;
	char type;
} lp_sched_out;

typedef struct lp_sched_sink {
	void *ctx;
	/* NULL: the references are not wanted (a sweep's runs; with a
	 * memory only). */
	int (*refs)(void *ctx, const lp_sched_out *refs, size_t n, lp_error *err);
	/* May be NULL. Where the engine is to put the references of its next
	 * refs() call, at most *cap (at least 1) of them: memory of the
	 * sink's, then given to refs(). NULL: the engine's own. */
	lp_sched_out *(*buffer)(void *ctx, size_t *cap);
	/* May be NULL. Unit `unit` ran on processor cpu in ticks [tick, tick +
	 * n); a slice may come in several calls. In tick order for each cpu. */
	void (*ran)(void *ctx, unsigned cpu, size_t unit, uint64_t tick, uint64_t n);
} lp_sched_sink;

typedef struct lp_sched_options {
	enum lp_sched_policy policy;
	uint64_t quantum;  /* >= 1; rr and random */
	unsigned cpus;     /* >= 1; rr and random */
	uint64_t seed;     /* random */
	bool renumber;     /* new canonical numbers in emission order */
	/* rr and random: 0, or a memory of this many frames (9.4), with
	 * its replacement and the ticks a page takes to come in (>= 1). */
	uint64_t memory;
	const lp_policy_info *replacement; /* NULL: lru */
	uint64_t fault_ticks;
} lp_sched_options;

/* The report (9.3). */
typedef struct lp_sched_cpu_stats {
	uint64_t references, idle_ticks, slices;
	uint64_t faults, waits; /* with a memory (9.4.5) */
} lp_sched_cpu_stats;

typedef struct lp_sched_unit_stats {
	uint64_t references, slices;
	uint64_t first_tick, last_tick; /* meaningful when references > 0 */
	uint64_t faults, waits, blocked_ticks; /* with a memory (9.4.5) */
} lp_sched_unit_stats;

/* A memory's figures (9.4.5). */
typedef struct lp_sched_memory_stats {
	uint64_t faults, waits, frame_waits, evictions;
} lp_sched_memory_stats;

/* The first slices of each processor, for a picture of the schedule. */
#define LP_SCHED_PICTURE_SLICES 64
typedef struct lp_sched_slice {
	size_t unit;
	uint64_t first_tick, last_tick;
} lp_sched_slice;

typedef struct lp_sched_report {
	enum lp_sched_policy policy;
	uint64_t quantum;  /* 0 for as-traced */
	unsigned cpus;     /* 1 for as-traced */
	uint64_t ticks;
	uint64_t memory;           /* 0: none; then the three below mean nothing */
	const lp_policy_info *replacement;
	uint64_t fault_ticks;
	lp_sched_memory_stats mem;
	lp_sched_cpu_stats *cpu;   /* cpus entries */
	lp_sched_unit_stats *unit; /* parallel to the input's units */
	lp_sched_unit *units;      /* a copy of the input's units: the report
				      outlives the input */
	size_t *unit_order;        /* unit indexes in report order (9.3) */
	lp_sched_slice (*slices)[LP_SCHED_PICTURE_SLICES]; /* per cpu */
	size_t *nslices;           /* per cpu, at most LP_SCHED_PICTURE_SLICES kept */
	size_t nunits;
} lp_sched_report;

/* The splitmix64 generator of the random policy (9.2). */
static inline uint64_t lp_splitmix64_next(uint64_t *state)
{
	return lp_mix64(*state += UINT64_C(0x9e3779b97f4a7c15));
}

/* The indexes of in's units in the order of the report (9.3): first
 * record's timestamp, pid, tid, incarnation; order has in->nunits entries. */
void lp_sched_unit_order(const lp_sched_input *in, size_t *order);

/* Run the schedule to its end. Returns 0 with *report filled (free it with
 * lp_sched_report_free), or an lp_status with err set: the source's or
 * sink's error, or a unit whose creating record its parent's file does not
 * hold (LP_EINPUT, both files named). */
int lp_schedule_run(const lp_sched_input *in, const lp_sched_options *opt, const lp_sched_sink *sink,
		    lp_sched_report *report, lp_error *err);
void lp_sched_report_free(lp_sched_report *report);

/* A report's references emitted (busy ticks), its idle ticks (ticks x
 * cpus less busy ticks: up to 2^74, exact), and its utilization as
 * 9.4.5 prints it (printf %.6f, "0.000000" with no ticks) into buf. */
uint64_t lp_sched_report_busy(const lp_sched_report *report);
lp_u128 lp_sched_report_idle(const lp_sched_report *report);
void lp_sched_report_utilization(const lp_sched_report *report, char buf[32]);

#endif
