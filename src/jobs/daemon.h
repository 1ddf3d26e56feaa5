/* The daemon's engine (laplace-daemon(1)): the merge jobs of a spool run
 * in child processes, a few at a time, until a stop signal. `laplace
 * daemon` parses its options, sets up its log and calls lp_daemon_run;
 * the engine knows neither the command line nor the terminal. */
#ifndef LAPLACE_DAEMON_H
#define LAPLACE_DAEMON_H

#include "jobs/jobfile.h"

/* The longest message the engine logs, in bytes before the NUL; longer
 * ones are cut. */
#define LP_DAEMON_MESSAGE_MAX 2047

/* Where the engine's messages go. */
typedef struct lp_daemon_log_sink {
	/* One message, already filtered by the log level in effect. msg is
	 * raw text: job file names and values in it are anyone's, so the
	 * sink escapes what it must. */
	void (*write)(void *ctx, enum lp_log_level level, const char *msg);
	/* On SIGHUP, before the settings are reread: reopen the log after a
	 * rotation. */
	void (*reopen)(void *ctx);
	void *ctx;
} lp_daemon_log_sink;

typedef struct lp_daemon_options {
	const char *spool;           /* the spool directory */
	const char *output_root;     /* jobs write only under it; NULL: the spool's done/ */
	const char *config;          /* settings file, reread on SIGHUP, or NULL */
	const char *pid_file;        /* NULL: SPOOL/daemon.pid */
	lp_daemon_settings settings; /* these, where set, win over config's */
	lp_daemon_log_sink log;
} lp_daemon_options;

/* Run the daemon in the default GLib main context: recover the jobs a
 * previous daemon left running, then claim and run jobs as they arrive
 * until SIGTERM or SIGINT, and requeue those still running when the grace
 * period ends. SIGHUP reopens the log and rereads the settings. Returns 0
 * after a stop, or an lp_status with err set when it cannot start. */
int lp_daemon_run(const lp_daemon_options *opt, lp_error *err);

#endif
