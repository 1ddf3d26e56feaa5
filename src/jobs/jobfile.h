/* Merge jobs described in YAML (laplace-jobs(5)), and what `laplace batch`
 * and `laplace daemon` need to run them: job files, output confinement,
 * child processes, reports and the daemon's spool. */
#ifndef LAPLACE_JOBFILE_H
#define LAPLACE_JOBFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>
#include <yaml.h>

#include "core/error.h"
#include "pipeline/job.h"
#include "io/yamlout.h"

/* The daemon refuses job files larger than this. */
#define LP_JOBFILE_MAX_BYTES (64 * 1024)

/* ---- job files ---- */

/* The keys of a job, for the line numbers kept per key. */
enum lp_job_key {
	LP_JOB_KEY_REFERENCE, LP_JOB_KEY_KERNEL, LP_JOB_KEY_MODE, LP_JOB_KEY_OUTPUT,
	LP_JOB_KEY_OPTIONS, LP_JOB_KEY_TIMEOUT, LP_JOB_KEY_COUNT
};
extern const char *const lp_job_key_names[LP_JOB_KEY_COUNT];

/* One job as its file describes it. Strings are owned (lp_job_spec_clear). */
typedef struct lp_job_spec {
	char *reference;
	char *kernel;
	char *output;
	bool per_process;
	bool user_only;
	bool strict;
	uint64_t page_offset;
	enum lp_endian endian;
	enum lp_compress compress;
	unsigned timeout;                /* seconds, or 0: the runner's limit */
	size_t line;                     /* 1-based line where the job starts */
	size_t key_line[LP_JOB_KEY_COUNT]; /* line of each key given */
} lp_job_spec;

void lp_job_spec_clear(lp_job_spec *spec);
/* Fill a merge job that borrows spec's strings. Existing outputs are
 * replaced (force), as a basic output always is. */
void lp_job_spec_to_merge(const lp_job_spec *spec, lp_merge_job *job);
/* The time limit spec runs under, in seconds (0: none), given the runner's
 * limit (--job-timeout, 0: none): its own timeout key may lower the
 * runner's limit, never raise it. */
unsigned lp_job_spec_time_limit(const lp_job_spec *spec, unsigned runner_limit);

/* Read a whole job file of at most max_bytes: a regular file, opened
 * read-only without following a final symbolic link and without blocking
 * on a FIFO, whose lines are at most LP_LINE_MAX bytes long. *text is
 * NUL-terminated; free it with g_free. */
int lp_jobfile_read(const char *path, size_t max_bytes, char **text, size_t *len, lp_error *err);
/* Refuse (and free) a read job file's text with a line over LP_LINE_MAX. */
int lp_jobfile_check_lines(const char *path, char **text, size_t len, lp_error *err);

/* Parse one job (a daemon job file). name is used in messages; paths are
 * kept as written. Errors name the file, the line and the key. */
int lp_jobfile_parse_job(const char *name, const char *text, size_t len,
			 lp_job_spec *spec, lp_error *err);

/* Parse a batch file (`jobs:` and a list of jobs) into *jobs (an array of
 * *njobs, free with lp_job_specs_free). Relative paths are made relative
 * to base_dir. */
int lp_jobfile_parse_batch(const char *name, const char *text, size_t len,
			   const char *base_dir, lp_job_spec **jobs, size_t *njobs,
			   lp_error *err);
void lp_job_specs_free(lp_job_spec *jobs, size_t njobs);

/* ---- daemon settings (laplace-daemon(1), --config) ---- */

enum lp_log_level { LP_LOG_ERROR, LP_LOG_WARNING, LP_LOG_INFO, LP_LOG_DEBUG, LP_LOG_LEVEL_COUNT };
extern const char *const lp_log_level_names[LP_LOG_LEVEL_COUNT];

/* Settings a daemon rereads on SIGHUP. Absent keys stay "not set": 0 for
 * jobs, rescan and max_attempts, -1 for grace, log_level and job_timeout. */
typedef struct lp_daemon_settings {
	int jobs;         /* jobs run at a time */
	int grace;        /* seconds running jobs get to finish when stopping */
	int rescan;       /* seconds between rescans of incoming/ */
	int log_level;    /* an lp_log_level */
	int job_timeout;  /* seconds a job may run (unless its own key says), 0: no limit */
	int max_attempts; /* runs a job gets when each is interrupted (a stop, a crash) */
} lp_daemon_settings;
#define LP_DAEMON_SETTINGS_UNSET \
	((lp_daemon_settings){.jobs = 0, .grace = -1, .rescan = 0, .log_level = -1, \
			      .job_timeout = -1, .max_attempts = 0})

int lp_daemon_settings_parse(const char *name, const char *text, size_t len,
			     lp_daemon_settings *settings, lp_error *err);

/* ---- the daemon's rules ---- */

/* A job run with the runner's own rights. */
#define LP_NO_OWNER ((uid_t)-1)

/* Apply the daemon's rules to a parsed job from file name, by its text
 * alone: inputs must be absolute paths; the output, relative to root (an
 * absolute, resolved directory) or absolute, must name a file inside root,
 * without "..". On success spec->output is replaced by the absolute path,
 * its "." and empty components left out. */
int lp_job_confine(lp_job_spec *spec, const char *name, const char *root, lp_error *err);

/* Where a daemon's jobs may write: the output root, held open. */
typedef struct lp_job_confinement {
	int root_fd;      /* the output root, opened by the daemon at start */
	const char *root; /* its resolved path */
	const char *what; /* "FILE:LINE: key 'output'": how messages start */
} lp_job_confinement;

/* Open the directory of output (as lp_job_confine left it) beneath the
 * root with openat2(), refusing symbolic links on the way, and check what
 * is at the output's name (no symbolic link; a directory per process, else
 * a regular file). Returns the directory's descriptor, or -1 with err set. */
int lp_job_open_output_dir(const lp_job_confinement *c, const char *output, bool per_process,
			   lp_error *err);

/* Remove what a killed job may have left beside output: temporary files
 * `.NAME.tmp-*` (basic) and directories `NAME.partial-*` (per-process),
 * found as lp_job_open_output_dir finds the directory, in a child process
 * (`laplace __remove-partials`) running as owner, or with LP_NO_OWNER in
 * this process. The output itself is never touched. Returns how many were
 * removed. */
int lp_job_remove_partials(const lp_job_confinement *c, const char *output, uid_t owner);

/* Take owner's supplementary groups, gid and uid, checked, for good. */
int lp_job_become(uid_t owner, lp_error *err);

/* ---- child processes ----
 *
 * The batch engine and the daemon run threads (GLib's at least), and the
 * child of a fork in a threaded process may make only async-signal-safe
 * calls until it execs: a lock another thread held at the fork is never
 * released (AddressSanitizer's allocator hung a job that way). So their
 * children are fresh images of the running program (/proc/self/exe),
 * started with posix_spawn as `laplace COMMAND`, one of the hidden
 * commands below, with what they are to do written down by the parent
 * before (a description) and handed over on a descriptor. None of this is
 * exported by liblaplace: only the laplace program starts such children,
 * so /proc/self/exe is laplace, whose main() runs the hidden commands. The
 * child's descriptors: */
#define LP_CHILD_PIPE_FD 3 /* a job's messages to its parent */
#define LP_CHILD_DESC_FD 4 /* the description, closed once read */
#define LP_CHILD_ROOT_FD 5 /* the daemon's output root (confinement) */

#define LP_JOB_COMMAND "__job"
#define LP_REMOVE_PARTIALS_COMMAND "__remove-partials"

/* A description: written with the put functions into the array that
 * lp_job_desc_new returns (command first), read back in the same order in
 * the child. */
GByteArray *lp_job_desc_new(const char *command);
void lp_job_desc_put_u64(GByteArray *desc, uint64_t value);
void lp_job_desc_put_str(GByteArray *desc, const char *s); /* s may be NULL */

/* Start `laplace command` (its argv[0] this process's name) with desc at
 * LP_CHILD_DESC_FD, pipe_fd at LP_CHILD_PIPE_FD and root_fd at
 * LP_CHILD_ROOT_FD (-1: none) and no other descriptor but 0, 1 and 2;
 * SIGINT, SIGTERM and SIGHUP blocked, so that one sent before the child
 * handles them waits for it. 0 with *pid set, or LP_EIO with err set. */
int lp_job_spawn(const char *command, const GByteArray *desc, int pipe_fd, int root_fd,
		 pid_t *pid, lp_error *err);

/* A description read back: the get functions take its values in order;
 * strings point into it. A value missing or malformed makes every later
 * one 0 or NULL and lp_job_desc_end fail. */
typedef struct lp_job_desc {
	char *bytes;
	const char *next, *end;
	bool bad;
} lp_job_desc;
/* In the child: LP_EUSAGE with err set when descriptor fd is not open (the
 * command was run by hand), else 0. */
int lp_job_child_check_fd(int fd, lp_error *err);
/* In the child: read the description at LP_CHILD_DESC_FD, check that it is
 * command's, and close the descriptor. LP_EUSAGE as lp_job_child_check_fd,
 * LP_EIO when it cannot be read or is not command's; err says why. */
int lp_job_desc_receive(const char *command, lp_job_desc *desc, lp_error *err);
uint64_t lp_job_desc_get_u64(lp_job_desc *desc);
const char *lp_job_desc_get_str(lp_job_desc *desc);
/* Whether every value was there and nothing follows; LP_EIO if not. */
int lp_job_desc_end(const lp_job_desc *desc, lp_error *err);
void lp_job_desc_clear(lp_job_desc *desc);

/* The hidden commands, with what their process exits with: `laplace
 * __job` runs the job of lp_job_proc_start and reports through
 * LP_CHILD_PIPE_FD (0 once its result is sent); `laplace
 * __remove-partials` removes what lp_job_remove_partials asked for (how
 * many, at most 250, or 255). Both return LP_EUSAGE with err set when run
 * by hand, without their descriptors. */
int lp_job_child_main(lp_error *err);
int lp_remove_partials_child_main(lp_error *err);

/* ---- running a job in a child process ---- */

/* How a job ended. status is an lp_status; a child that died without
 * reporting (a crash, a kill) gives LP_EIO with the signal in msg. */
typedef struct lp_job_outcome {
	int status;
	char msg[1024];
	lp_stats stats;  /* valid when status is LP_OK */
	double seconds;  /* wall-clock duration */
	bool killed;     /* ended by lp_job_proc_kill, without a result, within its time */
} lp_job_outcome;

typedef struct lp_job_proc_ops {
	/* A few times a second at most, while the job runs. */
	void (*progress)(void *ctx, uint64_t refs_done, uint64_t events_done);
	/* A warning of the job (the first ones only; all are counted). */
	void (*warning)(void *ctx, const char *msg);
	/* Once, after the child has exited; the process handle is freed after
	 * this returns. */
	void (*done)(void *ctx, const lp_job_outcome *outcome);
} lp_job_proc_ops;

typedef struct lp_job_proc lp_job_proc;

/* Start a child (`laplace __job`) that runs job with lp_merge_job_run and
 * reports back through a pipe, watched from the thread-default GLib main
 * context; job's callbacks are the child's own and its output_dir_fd must
 * be AT_FDCWD. --no-sync (lp_stage_set_sync) holds in the child as here.
 * The child dies with its parent. With owner other than LP_NO_OWNER (a
 * parent running as root), the child takes that user's groups, gid and uid
 * before it opens anything, and the job fails if it cannot. With confine
 * (the daemon), the output is written only through lp_job_open_output_dir's
 * directory. With a timeout (seconds, 0 for none), a job still running
 * then gets SIGTERM (it removes its temporary outputs), SIGKILL a few
 * seconds later, and fails "timed out after N s". Returns NULL with err
 * set if it cannot start the child. */
lp_job_proc *lp_job_proc_start(const lp_merge_job *job, uid_t owner,
			       const lp_job_confinement *confine, unsigned timeout,
			       const lp_job_proc_ops *ops, void *ctx, lp_error *err);
pid_t lp_job_proc_pid(const lp_job_proc *proc);
/* End the job on request: SIGTERM (it removes its temporary outputs),
 * SIGKILL a few seconds later; it fails "cancelled" unless it had already
 * sent its result. */
void lp_job_proc_cancel(lp_job_proc *proc);
/* Kill the child (SIGKILL); done() follows once it has exited. */
void lp_job_proc_kill(lp_job_proc *proc);

/* ---- reports ---- */

/* Emit the entries of a job's report inside the current mapping: inputs,
 * mode, output, status, exit_status, error (when failed), duration and
 * statistics (when it succeeded). Returns 0 or -1 on an emitter error. */
int lp_job_report_emit(yaml_emitter_t *em, const lp_job_spec *spec,
		       const lp_job_outcome *outcome);

/* Write text to path whole or not at all (the staging invariants,
 * src/io/staging.c); dir_fd as lp_stage_file takes it. */
int lp_write_file_atomic(int dir_fd, const char *path, const char *text, size_t len,
			 lp_error *err);

/* ---- the daemon's spool (laplace-daemon(1)) ----
 *
 * The spool invariants, numbered, are at the top of src/jobs/spool.c. */

typedef struct lp_spool lp_spool;

/* Open the spool: create incoming/, running/, done/ and failed/ if needed,
 * check and open them (spool invariant (3)) and lock the spool (2). A held
 * lock fails with LP_EIO and a message naming the holder's pid. */
lp_spool *lp_spool_open(const char *dir, lp_error *err);
void lp_spool_close(lp_spool *spool);
/* DIR/SUB/NAME, newly allocated. */
char *lp_spool_path(const lp_spool *spool, const char *sub, const char *name);

/* Job files waiting in incoming/ (names ending in ".yaml", not starting
 * with "."), sorted by name. */
GPtrArray *lp_spool_incoming(const lp_spool *spool);
/* Claim a job: rename incoming/NAME into running/ (spool invariant (4)).
 * Returns 1 when claimed, 0 when it was gone or running/ holds a job of
 * its name (it waits), -1 with err set on another failure. */
int lp_spool_claim(lp_spool *spool, const char *name, lp_error *err);
/* Read a claimed job file (running/NAME) if it may be run: a regular file
 * with one link, writable by nobody but its owner, and, for a daemon not
 * running as root, owned by the daemon's own user; checked on the file
 * opened (spool invariant (4)). 0 with *owner and the text set (as
 * lp_jobfile_read), or an lp_status with err saying why. */
int lp_spool_read_job(const lp_spool *spool, const char *name, uid_t *owner, char **text,
		      size_t *len, lp_error *err);
/* How many runs of the job file running/NAME were interrupted (by a stop
 * past the grace period, or a crash of the daemon) and requeued, as kept
 * in running/ID.attempts: 0 unless that file was written for this very job
 * file (spool invariant (12)), so a new job of the same name, or the same
 * file rewritten, starts afresh. */
unsigned lp_spool_attempts(const lp_spool *spool, const char *name);
/* Put a running job back into incoming/ after its attempts-th interrupted
 * run, recorded in running/ID.attempts, which outlives the daemon (spool
 * invariants (11) and (12)). LP_SPOOL_NAME_TAKEN, with err not set, when
 * incoming/ holds another job file of its name (spool invariant (13)). */
int lp_spool_requeue(lp_spool *spool, const char *name, unsigned attempts, lp_error *err);
#define LP_SPOOL_NAME_TAKEN (-1)
/* Finish job file FROM/NAME (from "running", or "incoming" for a queued
 * job that fails without running): write done/ID.report.yaml (or
 * failed/...), remove the job's status and attempts files, then move the
 * job file beside its report (spool invariants (9) and (11)). ID is NAME
 * without ".yaml", or ID~N when done/ (failed/) holds ID already: *record
 * (unless record is NULL) is then the name the job file is kept under,
 * newly allocated. */
int lp_spool_finish(lp_spool *spool, const char *from, const char *name, bool ok,
		    const char *report, char **record, lp_error *err);
/* Write running/ID.status. */
int lp_spool_status(lp_spool *spool, const char *name, const char *text, lp_error *err);
/* Job names left in running/ by a daemon that died (sorted), once the
 * rest of running/ is cleaned up (spool invariant (11)). */
GPtrArray *lp_spool_leftovers(lp_spool *spool);

/* ---- the queue seen from outside (laplace jobs) ---- */

enum lp_job_state { LP_JOB_QUEUED, LP_JOB_RUNNING, LP_JOB_DONE, LP_JOB_FAILED, LP_JOB_STATE_COUNT };
extern const char *const lp_job_state_names[LP_JOB_STATE_COUNT];

typedef struct lp_queued_job {
	char *name;                  /* the job file's name */
	enum lp_job_state state;
	char *started;               /* running, done, failed: when it started, or NULL */
	uint64_t references, events; /* running: its progress */
	double duration;             /* done, failed: seconds, or -1 */
	char *error;                 /* failed: why, or NULL */
	char *submitted_as;          /* done, failed: the name it came under (its
				      * report's job), which name differs from
				      * when kept as ID~N; or NULL */
	uid_t owner;                 /* its job file's owner, or (uid_t)-1 */
} lp_queued_job;
void lp_queued_job_free(gpointer job);

/* Every job of the spool in spool_dir, by state then name, read without
 * taking the spool (any user who can read it may). *jobs holds
 * lp_queued_job pointers. LP_EUSAGE when spool_dir is not a spool. */
int lp_queue_list(const char *spool_dir, GPtrArray **jobs, lp_error *err);
/* Whether a daemon holds the spool's lock. */
bool lp_queue_daemon_running(const char *spool_dir);

/* Cancel requests: incoming/.cancel-ID, owned by whoever asks. */
#define LP_CANCEL_PREFIX ".cancel-"
char *lp_cancel_request_name(const char *id);
int lp_queue_request_cancel(const char *spool_dir, const char *id, lp_error *err);

/* A cancel request taken from incoming/ by the daemon. */
typedef struct lp_cancel_request {
	char *id;
	uid_t requester;
} lp_cancel_request;
/* Take (remove) every cancel request waiting in incoming/; requests that
 * are not regular files with one link are dropped. Holds lp_cancel_request
 * pointers. */
GPtrArray *lp_spool_take_cancel_requests(lp_spool *spool);
/* The owner of job file NAME in incoming/ (sub "incoming") or running/;
 * false if it is not there. */
bool lp_spool_job_owner(const lp_spool *spool, const char *sub, const char *name, uid_t *owner);

/* The job's identifier: NAME without ".yaml" (newly allocated). */
char *lp_spool_job_id(const char *name);
/* Whether an output path (as lp_job_confine leaves it; it is then written
 * without following any link) would name the spool's own files: anything
 * in the spool but in done/ and below, and in done/ itself a job file, a
 * report or a status file. */
bool lp_spool_holds(const lp_spool *spool, const char *path);

#endif
