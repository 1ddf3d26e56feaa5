/* laplace: one program, many subcommands, dispatched from one table. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "laplace/staging.h"

static const lp_command commands[] = {
	{"merge", cmd_merge, "merge a raw reference trace with its kernel event trace", false},
	{"stat", cmd_stat, "counts of a per-process directory, a capture or a merge stream", false},
	{"convert", cmd_convert, "convert between trace formats", false},
	{"dump", cmd_dump, "print a trace of any format as text", false},
	{"validate", cmd_validate, "check the rules of a page-image trace", false},
	{"schedule", cmd_schedule, "replay a per-process directory's tasks under another schedule", false},
	{"lru", cmd_lru, "LRU behaviour sequences and page-image re-reduction", false},
	{"batch", cmd_batch, "run a list of merge jobs, several at a time", true},
	{"daemon", cmd_daemon, "run merge jobs dropped into a spool directory", true},
	{"jobs", cmd_jobs, "list or cancel the merge daemon's jobs", false},
	{"gen", cmd_gen, "generate a synthetic capture (reference and kernel traces)", false},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *to)
{
	fprintf(to, "Usage: laplace COMMAND [OPTIONS] [ARGS]\n"
		    "       laplace --help | --version\n\nCommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(to, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(to, "\nRun 'laplace COMMAND --help' for a command's options; "
		    "see laplace(1) and laplace-formats(5).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return LP_EUSAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("laplace %s\n", LP_VERSION);
		return 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		if (!commands[i].own_signals)
			lp_stage_handle_signals();
		return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "laplace: '%s' is not a laplace command; see 'laplace --help'\n", argv[1]);
	return LP_EUSAGE;
}
