/* laplace: one program, many subcommands, dispatched from one table. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "jobs/child.h"
#include "io/staging.h"

static const lp_command commands[] = {
	{"merge", cmd_merge, "merge a raw reference trace with its kernel event trace", false},
	{"stat", cmd_stat, "counts of a directory, capture or stream; a stream's miss-ratio curve", false},
	{"convert", cmd_convert, "convert between trace formats", false},
	{"dump", cmd_dump, "print a trace of any format as text", false},
	{"validate", cmd_validate, "check the rules of a page-image trace", false},
	{"index", cmd_index, "write the index.yaml of a per-process directory that has none", false},
	{"schedule", cmd_schedule,
	 "replay a per-process directory's tasks under another schedule, with a memory if asked", false},
	{"report", cmd_report,
	 "an HTML page of figures and tables for a capture, directory, stream or memory sweep", false},
	{"sim", cmd_sim, "page-replacement policies over a stream or capture: miss-ratio curves", false},
	{"lru", cmd_lru, "LRU behaviour sequences and page-image re-reduction", false},
	{"reduce", cmd_reduce, "a shorter stream with the same LRU behaviour above K frames", false},
	{"batch", cmd_batch, "run a list of merge jobs, several at a time", true},
	{"study", cmd_study, "run a study: sim runs and schedule sweeps of many captures, one table", true},
	{"daemon", cmd_daemon, "run merge jobs dropped into a spool directory", true},
	{"jobs", cmd_jobs, "list or cancel the merge daemon's jobs", false},
	{"gen", cmd_gen, "generate a synthetic capture (reference and kernel traces)", false},
	{"record", cmd_record, "record a capture of a real program's run (a Valgrind tool)", true},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *to)
{
	fprintf(to, "Usage: laplace COMMAND [OPTIONS] [ARGS]\n"
		    "       laplace help [COMMAND] | --help | --version\n\nCommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(to, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(to, "\nRun 'laplace help COMMAND' for a command's options; "
		    "see laplace(1) and laplace-formats(5).\n");
}

static const lp_command *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* laplace help COMMAND: the command's own --help. */
static int help(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "laplace help: expected one COMMAND, got %d arguments\n"
				"Try 'laplace --help' for the commands.\n", argc - 2);
		return LP_EUSAGE;
	}
	const lp_command *c = find(argv[2]);
	if (!c) {
		fprintf(stderr, "laplace help: '%s' is not a laplace command; see 'laplace --help'\n",
			argv[2]);
		return LP_EUSAGE;
	}
	char *args[] = {argv[2], "--help", NULL};
	return c->run(2, args);
}

int main(int argc, char **argv)
{
	/* Threads share malloc's arenas. Each thread's first allocation (GLib
	 * makes one in every thread it starts) would otherwise reserve an
	 * arena of 64 MiB of address space; the ten or so threads of a merge
	 * reading zstd frames then exceeded a 300 MB ulimit -v with 46 MiB
	 * resident (reader-merge-ref-unbounded). Nothing per reference
	 * allocates, so sharing cost nothing measurable (bench/RESULTS.md). */
	mallopt(M_ARENA_MAX, 2);
	if (argc < 2) {
		usage(stderr);
		return LP_EUSAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    (!strcmp(argv[1], "help") && argc == 2)) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "help"))
		return help(argc, argv);
	if (!strcmp(argv[1], "--version")) {
		printf("laplace %s\n", LP_VERSION);
		return 0;
	}
	/* The child processes of batch and daemon, which set up their signals
	 * themselves. */
	if (!strcmp(argv[1], LP_JOB_COMMAND) || !strcmp(argv[1], LP_CELL_COMMAND) ||
	    !strcmp(argv[1], LP_REMOVE_PARTIALS_COMMAND))
		return cmd_child(argc, argv);
	const lp_command *c = find(argv[1]);
	if (c) {
		if (!c->own_signals)
			lp_stage_handle_signals();
		return c->run(argc - 1, argv + 1);
	}
	fprintf(stderr, "laplace: '%s' is not a laplace command; see 'laplace --help'\n", argv[1]);
	return LP_EUSAGE;
}
