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

int cmd_daemon(int argc, char **argv)
{
	cli_set_command("laplace daemon");
	gchar *spool_dir = NULL, *output_root = NULL, *pid_file = NULL, *log_file = NULL;
	gchar *log_level = NULL, *config = NULL;
	gchar *jobs = NULL, *grace = NULL, *rescan = NULL, *job_timeout = NULL, *max_attempts = NULL;
	gboolean use_syslog = FALSE;
	GOptionEntry entries[] = {
		{"spool", 0, 0, G_OPTION_ARG_FILENAME, &spool_dir,
		 "The spool directory (required)", "DIR"},
		{"jobs", 'j', 0, G_OPTION_ARG_STRING, &jobs,
		 "Run N jobs at a time (default: the number of processors)", "N"},
		{"output-root", 0, 0, G_OPTION_ARG_FILENAME, &output_root,
		 "Jobs write their outputs only under DIR (default: the spool's done/)", "DIR"},
		{"grace", 0, 0, G_OPTION_ARG_STRING, &grace,
		 "On SIGTERM, give running jobs SECONDS to finish before requeueing them "
		 "(default 30)", "SECONDS"},
		{"job-timeout", 0, 0, G_OPTION_ARG_STRING, &job_timeout,
		 "Kill and fail a job still running after SECONDS (default: none; a job's own "
		 "timeout key may only lower it)", "SECONDS"},
		{"max-attempts", 0, 0, G_OPTION_ARG_STRING, &max_attempts,
		 "Fail a job instead of requeueing it when its Nth run is cut short by a stop "
		 "or a crash (default 3)", "N"},
		{"rescan", 0, 0, G_OPTION_ARG_STRING, &rescan,
		 "Also look into incoming/ every SECONDS (default 10)", "SECONDS"},
		{"config", 0, 0, G_OPTION_ARG_FILENAME, &config,
		 "Read settings from FILE, and again on SIGHUP", "FILE"},
		{"pid-file", 0, 0, G_OPTION_ARG_FILENAME, &pid_file,
		 "Write the daemon's pid to FILE (default: DIR/daemon.pid)", "FILE"},
		{"log-file", 0, 0, G_OPTION_ARG_FILENAME, &log_file,
		 "Log to FILE instead of standard error (reopened on SIGHUP)", "FILE"},
		{"syslog", 0, 0, G_OPTION_ARG_NONE, &use_syslog, "Log to syslog", NULL},
		{"log-level", 0, 0, G_OPTION_ARG_STRING, &log_level,
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

	int rc = LP_EUSAGE;
	/* Options not given are "not set" in lp_daemon_settings' terms. */
	lp_daemon_settings given = LP_DAEMON_SETTINGS_UNSET;
	bool log_opened = false;
	if (!cli_parse(ctx, &argc, &argv))
		goto out;
	if (argc != 1) {
		cli_usage_error("unexpected argument '%s'", argv[1]);
		goto out;
	}
	if (!spool_dir) {
		cli_usage_error("--spool DIR is required");
		goto out;
	}
	/* The ranges of the same settings in a --config file (laplace-daemon(1)). */
	if (!cli_count_apply("-j", jobs, 1, 1024, &given.jobs) ||
	    !cli_count_apply("--job-timeout", job_timeout, 0, 31536000, &given.job_timeout) ||
	    !cli_count_apply("--max-attempts", max_attempts, 1, 1000, &given.max_attempts) ||
	    !cli_count_apply("--grace", grace, 0, 86400, &given.grace) ||
	    !cli_count_apply("--rescan", rescan, 1, 86400, &given.rescan))
		goto out;
	if (log_level) {
		for (int i = 0; i < LP_LOG_LEVEL_COUNT; i++)
			if (!strcmp(log_level, lp_log_level_names[i]))
				given.log_level = i;
		if (given.log_level < 0) {
			cli_usage_error("--log-level must be error, warning, info or debug, not '%s'",
					log_level);
			goto out;
		}
	}
	if (use_syslog && log_file) {
		cli_usage_error("--syslog and --log-file exclude each other");
		goto out;
	}
	rc = LP_EIO;
	if (!daemon_log_open(log_file, use_syslog)) {
		fprintf(stderr, "%s: cannot open %s: %s\n", cli_command(), log_file, g_strerror(errno));
		goto out;
	}
	log_opened = true;
	lp_daemon_options opt = {
		.spool = spool_dir,
		.output_root = output_root,
		.config = config,
		.pid_file = pid_file,
		.settings = given,
		.log = {write_log, reopen_log, NULL},
	};
	lp_error err = {0};
	if ((rc = lp_daemon_run(&opt, &err)))
		cli_fail(&err);
out:
	if (log_opened)
		daemon_log_close();
	g_option_context_free(ctx);
	g_free(spool_dir);
	g_free(output_root);
	g_free(pid_file);
	g_free(log_file);
	g_free(log_level);
	g_free(config);
	g_free(jobs);
	g_free(grace);
	g_free(rescan);
	g_free(job_timeout);
	g_free(max_attempts);
	return rc;
}
