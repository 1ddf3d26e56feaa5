/* The subcommands of laplace, each a thin layer over the library: parse
 * options, open inputs and outputs, run, report. */
#ifndef LAPLACE_COMMANDS_H
#define LAPLACE_COMMANDS_H

#include <stdbool.h>

typedef int (*lp_command_fn)(int argc, char **argv);

typedef struct lp_command {
	const char *name;
	lp_command_fn run;
	const char *summary;
	/* Handles SIGINT, SIGTERM and SIGHUP itself (with a GLib main loop);
	 * every other command gets lp_stage_handle_signals(). */
	bool own_signals;
} lp_command;

int cmd_merge(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_index(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_lru(int argc, char **argv);
int cmd_reduce(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_batch(int argc, char **argv);
int cmd_study(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
/* The hidden commands LP_JOB_COMMAND, LP_CELL_COMMAND and LP_REMOVE_PARTIALS_COMMAND
 * (argv[1]), with main()'s arguments. */
int cmd_child(int argc, char **argv);

#endif
