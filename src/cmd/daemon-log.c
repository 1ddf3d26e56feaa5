#include "cmd/daemon-log.h"

#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "jobs/daemon.h"

static struct {
	char *file;
	FILE *to; /* NULL with syslog */
	bool use_syslog;
} log_state = {NULL, NULL, false};

static const int syslog_priority[LP_LOG_LEVEL_COUNT] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};

static bool open_target(void)
{
	if (log_state.use_syslog) {
		openlog("laplace-daemon", LOG_PID, LOG_DAEMON);
		return true;
	}
	if (!log_state.file) {
		log_state.to = stderr;
		return true;
	}
	FILE *f = fopen(log_state.file, "ae");
	if (!f)
		return false;
	setvbuf(f, NULL, _IOLBF, 0);
	log_state.to = f;
	return true;
}

static void close_target(void)
{
	if (log_state.use_syslog)
		closelog();
	else if (log_state.to && log_state.to != stderr)
		fclose(log_state.to);
	log_state.to = NULL;
}

bool daemon_log_open(const char *file, bool use_syslog)
{
	log_state.file = g_strdup(file);
	log_state.use_syslog = use_syslog;
	return open_target();
}

bool daemon_log_reopen(void)
{
	close_target();
	return open_target();
}

void daemon_log_write(enum lp_log_level level, const char *msg)
{
	/* Escaped here, whatever the engine passed: job file names and values
	 * are anyone's text, and a newline in one would forge a log line. One
	 * place covers every call site, present and future, and syslog too;
	 * quoting at each call site would leave the next one to forget it.
	 * Messages from lp_fail, escaped already, pass unchanged: escaped text
	 * is printable ASCII. */
	char escaped[4 * (LP_DAEMON_MESSAGE_MAX + 1)];
	lp_escape(escaped, sizeof escaped, msg, strnlen(msg, LP_DAEMON_MESSAGE_MAX));
	if (log_state.use_syslog) {
		syslog(syslog_priority[level], "%s", escaped);
		return;
	}
	FILE *to = log_state.to ? log_state.to : stderr;
	if (to == stderr) {
		fprintf(to, "%s: %s: %s\n", cli_command(), lp_log_level_names[level], escaped);
		return;
	}
	/* A log file has no journal to stamp it. */
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S%z", localtime_r(&now, &tm));
	fprintf(to, "%s %s[%ld]: %s: %s\n", stamp, cli_command(), (long)getpid(),
		lp_log_level_names[level], escaped);
}

void daemon_log_close(void)
{
	close_target();
	g_clear_pointer(&log_state.file, g_free);
}
