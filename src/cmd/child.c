/* laplace __job, __cell and __remove-partials: the child processes that
 * laplace batch and laplace daemon start (jobs/child.h). Hidden: not in
 * --help, nor in the completion. */
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "cmd/commands.h"
#include "jobs/confine.h"
#include "jobs/child.h"
#include "jobs/runner.h"

int cmd_child(int argc, char **argv)
{
	/* The parent passes its name as argv[0]: started from /proc/self/exe,
	 * the child would show as "exe" in ps, top and pgrep. */
	const char *slash = strrchr(argv[0], '/');
	prctl(PR_SET_NAME, slash ? slash + 1 : argv[0]);
	lp_error err = {0};
	int status;
	if (argc != 2)
		status = lp_fail(&err, LP_EUSAGE, "expected no arguments, got %d", argc - 2);
	else if (!strcmp(argv[1], LP_JOB_COMMAND))
		status = lp_job_child_main(&err);
	else if (!strcmp(argv[1], LP_CELL_COMMAND))
		status = lp_cell_child_main(&err);
	else
		status = lp_remove_partials_child_main(&err);
	if (err.status)
		fprintf(stderr, "laplace %s: %s\n", argv[1], err.msg);
	return status;
}
