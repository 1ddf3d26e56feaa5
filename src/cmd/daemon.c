/* laplace daemon: the command line of the daemon's engine (src/jobs/daemon.c,
 * jobs/daemon.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/daemon-log.h"
#include "jobs/daemon.h"

static void write_log(void *ctx, enum lp_log_level level, const char *msg)
{
	(void)ctx;
	daemon_log_write(level, msg);
}

static void reopen_log(void *ctx)
{
	(void)ctx;
	if (!daemon_log_reopen())
		fprintf(stderr, "%s: cannot reopen the log: %s\n", cli_command(), g_strerror(errno));
}

/* The options as given: NULL or FALSE when not. */
typedef struct daemon_args {
	gchar *spool_dir, *output_root, *pid_file, *log_file, *log_level, *config;
	gchar *jobs, *grace, *rescan, *job_timeout, *max_attempts;
	gboolean use_syslog;
} daemon_args;

static GOptionContext *daemon_options(daemon_args *a)
{
	const GOptionEntry entries[] = {
		{"spool", 0, 0, G_OPTION_ARG_FILENAME, &a->spool_dir,
		 "The spool directory (required)", "DIR"},
		{"jobs", 'j', 0, G_OPTION_ARG_STRING, &a->jobs,
		 "Run N jobs at a time (default: the number of processors)", "N"},
		{"output-root", 0, 0, G_OPTION_ARG_FILENAME, &a->output_root,
		 "Jobs write their outputs only under DIR (default: the spool's done/)", "DIR"},
		{"grace", 0, 0, G_OPTION_ARG_STRING, &a->grace,
		 "On SIGTERM, give running jobs SECONDS to finish before requeueing them "
		 "(default 30)", "SECONDS"},
		{"job-timeout", 0, 0, G_OPTION_ARG_STRING, &a->job_timeout,
		 "Kill and fail a job still running after SECONDS (default: none; a job's own "
		 "timeout key may only lower it)", "SECONDS"},
		{"max-attempts", 0, 0, G_OPTION_ARG_STRING, &a->max_attempts,
		 "Fail a job instead of requeueing it when its Nth run is cut short by a stop "
		 "or a crash (default 3)", "N"},
		{"rescan", 0, 0, G_OPTION_ARG_STRING, &a->rescan,
		 "Also look into incoming/ every SECONDS (default 10)", "SECONDS"},
		{"config", 0, 0, G_OPTION_ARG_FILENAME, &a->config,
		 "Read settings from FILE, and again on SIGHUP", "FILE"},
		{"pid-file", 0, 0, G_OPTION_ARG_FILENAME, &a->pid_file,
		 "Write the daemon's pid to FILE (default: DIR/daemon.pid)", "FILE"},
		{"log-file", 0, 0, G_OPTION_ARG_FILENAME, &a->log_file,
		 "Log to FILE instead of standard error (reopened on SIGHUP)", "FILE"},
		{"syslog", 0, 0, G_OPTION_ARG_NONE, &a->use_syslog, "Log to syslog", NULL},
		{"log-level", 0, 0, G_OPTION_ARG_STRING, &a->log_level,
		 "Log messages up to LEVEL: error, warning, info (default) or debug", "LEVEL"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("");
	g_option_context_set_summary(ctx,
		"Run merge jobs dropped into the spool directory DIR. A job file (see\n"
		"laplace-jobs(5)) renamed into DIR/incoming/ is claimed into running/, run,\n"
		"and moved to done/ with its report, or to failed/ with a report saying why.");
	g_option_context_set_description(ctx,
		"SIGTERM or SIGINT: take no more jobs, let running ones finish within the\n"
		"grace period, then requeue the rest. SIGHUP: reopen the log and reread\n"
		"--config. Command-line options override the --config file. See\n"
		"laplace-daemon(1).");
	g_option_context_add_main_entries(ctx, entries, NULL);
	return ctx;
}

/* The parsed command line a (argc arguments left in argv) as settings:
 * those not given are "not set" in lp_daemon_settings' terms. On a usage
 * error print it and return false. */
static bool daemon_settings_apply(const daemon_args *a, int argc, char **argv,
				  lp_daemon_settings *given)
{
	*given = LP_DAEMON_SETTINGS_UNSET;
	if (argc != 1) {
		cli_usage_error("unexpected argument '%s'", argv[1]);
		return false;
	}
	if (!a->spool_dir) {
		cli_usage_error("--spool DIR is required");
		return false;
	}
	/* The ranges of the same settings in a --config file (laplace-daemon(1)). */
	if (!cli_count_apply("-j", a->jobs, 1, 1024, &given->jobs) ||
	    !cli_count_apply("--job-timeout", a->job_timeout, 0, 31536000, &given->job_timeout) ||
	    !cli_count_apply("--max-attempts", a->max_attempts, 1, 1000, &given->max_attempts) ||
	    !cli_count_apply("--grace", a->grace, 0, 86400, &given->grace) ||
	    !cli_count_apply("--rescan", a->rescan, 1, 86400, &given->rescan))
		return false;
	if (a->log_level && (given->log_level = lp_log_level_parse(a->log_level)) < 0) {
		cli_usage_error("--log-level must be error, warning, info or debug, not '%s'",
				a->log_level);
		return false;
	}
	if (a->use_syslog && a->log_file) {
		cli_usage_error("--syslog and --log-file exclude each other");
		return false;
	}
	return true;
}

static void daemon_args_free(daemon_args *a)
{
	g_free(a->spool_dir);
	g_free(a->output_root);
	g_free(a->pid_file);
	g_free(a->log_file);
	g_free(a->log_level);
	g_free(a->config);
	g_free(a->jobs);
	g_free(a->grace);
	g_free(a->rescan);
	g_free(a->job_timeout);
	g_free(a->max_attempts);
}

int cmd_daemon(int argc, char **argv)
{
	cli_set_command("laplace daemon");
	daemon_args a = {0};
	GOptionContext *ctx = daemon_options(&a);
	lp_daemon_settings given;
	int rc = LP_EUSAGE;
	if (!cli_parse(ctx, &argc, &argv) || !daemon_settings_apply(&a, argc, argv, &given))
		goto out;
	rc = LP_EIO;
	if (!daemon_log_open(a.log_file, a.use_syslog)) {
		fprintf(stderr, "%s: cannot open %s: %s\n", cli_command(), a.log_file,
			g_strerror(errno));
		goto out;
	}
	lp_daemon_options opt = {
		.spool = a.spool_dir,
		.output_root = a.output_root,
		.config = a.config,
		.pid_file = a.pid_file,
		.settings = given,
		.log = {write_log, reopen_log, NULL},
	};
	lp_error err = {0};
	if ((rc = lp_daemon_run(&opt, &err)))
		cli_fail(&err);
	daemon_log_close();
out:
	g_option_context_free(ctx);
	daemon_args_free(&a);
	return rc;
}
