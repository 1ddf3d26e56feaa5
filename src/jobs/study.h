/* Studies (laplace-study(1), laplace-study(5)): a study file's captures,
 * sim and schedule sections read (study.c), cut into cells, each one
 * laplace process run by the job runner (runner.h, lp_cell_proc_start),
 * their manifest kept and read back, and one table made of what they
 * wrote (study-run.c). */
#ifndef LAPLACE_JOBS_STUDY_H
#define LAPLACE_JOBS_STUDY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "core/error.h"
#include "jobs/jobreport.h"
#include "jobs/pool.h"
#include "jobs/runner.h"

/* Study files are small; this bounds what is read. */
#define LP_STUDY_MAX_BYTES (1u << 20)
/* Capture names: 1 to this many characters of [A-Za-z0-9._-]. */
#define LP_STUDY_NAME_MAX 64

/* The table's header (study.md §3). */
#define LP_STUDY_TABLE_HEADER                                                                  \
	"capture,experiment,policy,quantum,cpus,replacement,fault_ticks,seed,size,references,"  \
	"faults,miss_ratio,space_time,ticks,waits,evictions,busy_ticks,idle_ticks,utilization\n"

enum lp_study_capture_kind { LP_STUDY_CAPTURE, LP_STUDY_STREAM, LP_STUDY_DIRECTORY };

typedef struct lp_study_capture {
	char *name;
	enum lp_study_capture_kind kind;
	char *reference, *kernel; /* LP_STUDY_CAPTURE */
	char *path;               /* the stream, or the directory */
	size_t line;
} lp_study_capture;

/* The keys of a schedule section, in the order its combinations vary
 * (the last fastest). */
enum lp_study_sched_key {
	LP_SCHED_POLICY, LP_SCHED_QUANTUM, LP_SCHED_CPUS, LP_SCHED_REPLACEMENT,
	LP_SCHED_FAULT_TICKS, LP_SCHED_SEED, LP_SCHED_KEY_COUNT
};
extern const char *const lp_study_sched_keys[LP_SCHED_KEY_COUNT];

typedef struct lp_study {
	char *file;                /* as named */
	char *sha256;              /* of its bytes, hex */
	lp_study_capture *captures;
	size_t ncaptures;
	bool merge_user_only, merge_strict;
	bool sim;                  /* a sim section */
	char *sim_policies;        /* comma-separated */
	char *sim_frames, *sim_windows; /* NULL: sim's defaults */
	GPtrArray *sim_options;    /* "--name" or "--name=value" */
	bool schedule;             /* a schedule section */
	GPtrArray *sched[LP_SCHED_KEY_COUNT]; /* each key's values, as text */
	char *memory;              /* the sweep's sizes, ascending, comma-separated */
} lp_study;

/* Parse a study file's text. Paths relative to base_dir (the study file's
 * directory) are joined to it, and every input must exist. Errors (exit 2,
 * LP_EINPUT) name the file, the line and the key. */
int lp_study_parse(const char *name, const char *text, size_t len, const char *base_dir,
		   lp_study *study, lp_error *err);
/* Read and parse the study file at path (at most LP_STUDY_MAX_BYTES, lines
 * bounded): LP_EIO when it cannot be read. */
int lp_study_load(const char *path, lp_study *study, lp_error *err);
void lp_study_clear(lp_study *study);
/* The work directory beside the study file: STUDY.d for STUDY.yaml. */
char *lp_study_default_dir(const char *path);

enum lp_cell_kind { LP_CELL_MERGE, LP_CELL_SIM, LP_CELL_SCHEDULE };
enum lp_cell_status { LP_CELL_PENDING, LP_CELL_OK, LP_CELL_FAILED, LP_CELL_INTERRUPTED };
extern const char *const lp_cell_status_names[4];

typedef struct lp_cell_input {
	char *path;
	lp_input_state state;
} lp_cell_input;

typedef struct lp_study_run lp_study_run;

typedef struct lp_study_cell {
	lp_study_run *run;
	size_t index;
	enum lp_cell_kind kind;
	size_t capture;
	size_t combination;  /* schedule: K */
	const char *values[LP_SCHED_KEY_COUNT]; /* schedule: its values ("" for none) */
	char *name;          /* in cells/: NAME.merge, NAME.sim.csv, NAME.schedule.K.csv */
	char *output;        /* its path */
	char **stages[2];    /* each laplace's arguments, NULL-terminated */
	size_t nstages;
	char **command;      /* the command line: laplace ARGS [| laplace ARGS] */
	lp_cell_input *inputs;
	size_t ninputs;
	ptrdiff_t depends;   /* the merge cell it needs, or -1 */
	/* How it ended: run now, or an earlier run's manifest (done). */
	enum lp_cell_status status;
	int exit_status;
	double wall_seconds, cpu_seconds;
	uint64_t peak_rss_kib;
	char *job_id;        /* under Slurm */
	char *error;
	bool selected;       /* this run's to run (or to skip when done) */
	bool done;           /* done before: not run */
	bool started;        /* by this run */
	lp_job_proc *proc;   /* while it runs */
} lp_study_cell;

/* The cells of a study and how they run. */
struct lp_study_run {
	const char *command;      /* how messages start: "laplace study" */
	const lp_study *study;
	char *dir;                /* the work directory */
	char *manifest_path;      /* DIR/manifest.yaml */
	char *parts_dir;          /* DIR/parts: the manifests of shards and array elements */
	char *part;               /* the part this run writes instead, or NULL */
	lp_study_cell *cells;
	size_t ncells;
	lp_job_pool pool;         /* runs them: max_running, stopped_by, the signals */
};

/* The cells of study, with work directory dir, in order: for each capture
 * its merge (if it needs one), its sim run, its schedule combinations.
 * run must stay where it is (its pool points back at it);
 * lp_job_pool_catch_signals(&run->pool) makes SIGINT, SIGTERM and SIGHUP
 * stop it as they stop a batch. */
void lp_study_run_init(lp_study_run *run, const char *command, const lp_study *study,
		       const char *dir);
void lp_study_run_clear(lp_study_run *run);
/* Read the manifest of an earlier run, if there is one, then the parts
 * (in name order, a later entry replacing an earlier one): a cell is done
 * when its entry shows it ok with the same command, inputs of the same
 * size and time, and its output there, and the merge it needs is done;
 * else it has its entry's status. With redo, none is read. LP_EINPUT or
 * LP_EIO when one cannot be read. */
int lp_study_select(lp_study_run *run, bool redo, lp_error *err);
/* --collect: write the manifest of every cell as read (lp_study_select),
 * then remove the parts. */
int lp_study_collect(lp_study_run *run, lp_error *err);
/* Keep selected only the cells of shard k of n (index modulo n) and the
 * merges they need that are not done, or only cell index. */
void lp_study_select_shard(lp_study_run *run, size_t k, size_t n);
void lp_study_select_index(lp_study_run *run, size_t index);
/* Run the selected cells that are not done, pool.max_running at a time, a
 * merge before the cells that need it, the manifest rewritten as each
 * ends. 0, or LP_EIO when the manifest cannot be written. */
int lp_study_run_cells(lp_study_run *run, lp_error *err);
/* Write the manifest (atomically). */
int lp_study_write_manifest(const lp_study_run *run, lp_error *err);
/* The table (study.md §3) from the ok cells' files, to path. 0, or the
 * status of the failure. */
int lp_study_write_table(const lp_study_run *run, const char *path, lp_error *err);
/* Print on stderr each selected cell that is not ok; how many. */
size_t lp_study_list_failures(const lp_study_run *run);


/* ---- Slurm (laplace-study(1), --submit slurm) ---- */

typedef struct lp_study_submission {
	const char *program;    /* the laplace program the jobs run, absolute */
	const char *study_file; /* absolute, as the run's study was read */
	const char *table;      /* -o, absolute, or NULL */
	size_t max_running;     /* array elements at once, 0: any */
	char **sbatch_options;  /* NULL-terminated, or NULL */
	bool wait;              /* sbatch --wait on the collector */
	char *merges_job_id;    /* set by lp_study_submit (NULL: no merge to run) */
	char *cells_job_id;
	char *collector_job_id;
} lp_study_submission;

/* Submit the cells of run to run (selected, not done): an array job of
 * the merges (element I runs cell I, `--cell I`), an array job of the
 * other cells that runs once every merge is ok (afterok; cancelled if one
 * fails), and a collector job once both have ended however they did
 * (afterany) that makes the manifest and the table (`--collect`). Scripts
 * and logs go in DIR/slurm/. The manifest is written first with what the
 * parts said (lp_study_collect). With wait, returns when the collector
 * has ended. */
int lp_study_submit(lp_study_run *run, lp_study_submission *s, lp_error *err);
void lp_study_submission_clear(lp_study_submission *s);

#endif
