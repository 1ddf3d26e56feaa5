/* The daemon's log: standard error, a file (reopened on SIGHUP, for log
 * rotation) or syslog. The engine filters messages by level; this is
 * where they are written. */
#ifndef LAPLACE_DAEMON_LOG_H
#define LAPLACE_DAEMON_LOG_H

#include <glib.h>
#include <stdbool.h>

#include "jobs/jobfile.h"

/* Where to log: file NULL means standard error unless use_syslog. Returns
 * false with errno set when the file cannot be opened. */
bool daemon_log_open(const char *file, bool use_syslog);
/* Reopen the file (or syslog connection) after a rotation. */
bool daemon_log_reopen(void);
/* Write one message of the engine (at most LP_DAEMON_MESSAGE_MAX bytes). */
void daemon_log_write(enum lp_log_level level, const char *msg);
void daemon_log_close(void);

#endif
