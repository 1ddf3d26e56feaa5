/* The daemon's log: standard error, a file (reopened on SIGHUP, for log
 * rotation) or syslog, with levels. */
#ifndef LAPLACE_DAEMON_LOG_H
#define LAPLACE_DAEMON_LOG_H

#include <glib.h>
#include <stdbool.h>

#include "laplace/jobfile.h"

/* Where to log: file NULL means standard error unless use_syslog. Returns
 * false with errno set when the file cannot be opened. */
bool daemon_log_open(const char *file, bool use_syslog, enum lp_log_level level);
/* Reopen the file (or syslog connection) after a rotation. */
bool daemon_log_reopen(void);
void daemon_log_set_level(enum lp_log_level level);
void daemon_log(enum lp_log_level level, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
void daemon_log_close(void);

#endif
