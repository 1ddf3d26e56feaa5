/* libFuzzer target: study files (laplace-study(5)) as laplace study reads
 * them, beside a reference r, a kernel trace k, a stream s and a
 * directory d. Checks: a file read and parsed has one capture or more,
 * each named as the rules say with its paths there, a sim or a schedule
 * section (never a schedule with a stream), the sweep's sizes ascending
 * and each once (but one size, swept twice), and its SHA-256; its cells have distinct names, each
 * written under the work directory's cells/, started by laplace, after
 * the merge it needs. A file refused is refused as bad input (exit 2) with
 * a message that names it. The same bytes as a study's table
 * (laplace report --study) are drawn, or refused as bad input naming the
 * table. */
#include "fuzz_input.h"

#include <stdbool.h>

#include "core/numbers.h"
#include "jobs/study.h"
#include "report/study.h"

static void check_study(const lp_study *s, const char *dir)
{
	FUZZ_CHECK(s->ncaptures >= 1 && (s->sim || s->schedule));
	FUZZ_CHECK(s->sha256 && strlen(s->sha256) == 64);
	for (size_t i = 0; i < s->ncaptures; i++) {
		const lp_study_capture *c = &s->captures[i];
		size_t n = strlen(c->name);
		FUZZ_CHECK(n >= 1 && n <= LP_STUDY_NAME_MAX && c->name[0] != '.');
		if (c->kind == LP_STUDY_CAPTURE)
			FUZZ_CHECK(c->reference && c->kernel && !c->path);
		else
			FUZZ_CHECK(c->path && !c->reference && !c->kernel);
		FUZZ_CHECK(!(s->schedule && c->kind == LP_STUDY_STREAM));
		for (size_t j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(c->name, s->captures[j].name));
	}
	if (s->sim)
		FUZZ_CHECK(s->sim_policies && *s->sim_policies);
	if (s->schedule) {
		FUZZ_CHECK(s->memory);
		uint64_t last = 0;
		char **sizes = g_strsplit(s->memory, ",", -1);
		/* One size is swept twice (laplace schedule sweeps two or more). */
		bool once = g_strv_length(sizes) == 2 && !strcmp(sizes[0], sizes[1]);
		for (char **m = sizes; *m; m++) {
			uint64_t v;
			FUZZ_CHECK(lp_parse_decimal(*m, 1, UINT32_MAX, &v) && (v > last || once));
			last = v;
		}
		g_strfreev(sizes);
	}
	lp_study_run run;
	lp_study_run_init(&run, "fuzz", s, dir);
	GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
	char *cells = g_build_filename(dir, "cells", "", NULL);
	for (size_t i = 0; i < run.ncells; i++) {
		const lp_study_cell *c = &run.cells[i];
		FUZZ_CHECK(g_hash_table_add(names, c->name));
		FUZZ_CHECK(g_str_has_prefix(c->output, cells));
		FUZZ_CHECK(c->command && !strcmp(c->command[0], "laplace"));
		FUZZ_CHECK(c->nstages >= 1 && c->nstages <= 2 && c->ninputs >= 1);
		FUZZ_CHECK(c->depends < (ptrdiff_t)i);
		FUZZ_CHECK(c->depends < 0 || run.cells[c->depends].kind == LP_CELL_MERGE);
	}
	g_free(cells);
	g_hash_table_destroy(names);
	lp_study_run_clear(&run);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	if (!ready) {
		free(fuzz_dir_file("r", (const uint8_t *)"", 0));
		free(fuzz_dir_file("k", (const uint8_t *)"", 0));
		free(fuzz_dir_file("s", (const uint8_t *)"", 0));
		char *d = fuzz_dir_path_of("d");
		mkdir(d, 0700);
		free(d);
		ready = true;
	}
	char *path = fuzz_dir_file("study.yaml", data, size);
	lp_study s;
	lp_error err;
	int rc = lp_study_load(path, &s, &err);
	if (rc == 0) {
		char *work = lp_study_default_dir(path);
		check_study(&s, work);
		g_free(work);
	} else {
		FUZZ_CHECK(rc == LP_EINPUT && err.status == LP_EINPUT);
		FUZZ_CHECK(strstr(err.msg, "study.yaml"));
	}
	lp_study_clear(&s);
	free(path);

	char *table = fuzz_dir_file("table.csv", data, size);
	lp_error perr;
	rc = lp_study_page_write(fuzz_dir(), table, fuzz_sink(), &perr);
	FUZZ_CHECK(rc == 0 || (rc == LP_EINPUT && strstr(perr.msg, "table.csv")));
	free(table);
	return 0;
}
