/* libFuzzer target: job files (laplace-jobs(5)) as the daemon and batch
 * read them, daemon settings, and job reports. The input is one file, read
 * with lp_jobfile_read and handed to each parser. Checks: the read keeps
 * every byte or refuses a file that is too large or has a line over 4096
 * bytes; a parsed job has its three paths, NUL-free, keys on lines of
 * the file, and its page offset (of 64 bits) handed to the merge; batch paths are made relative to the base directory; settings
 * are in range; the report of a parsed job is YAML that gives back its
 * paths and error message exactly. */
#include "fuzz_input.h"

#include <stdbool.h>

#include "io/inbuf.h"
#include "jobs/jobfile.h"
#include "jobs/runner.h"
#include "jobs/jobreport.h"

/* The lines of the file as libyaml numbers them (an upper bound): a line
 * break is '\n', '\r\n', a lone '\r', or NEL, LS or PS in UTF-8. *longest
 * is the longest run without a '\n', the lines lp_jobfile_read bounds. */
static size_t count_lines(const uint8_t *data, size_t size, size_t *longest)
{
	size_t lines = 1, run = 0;
	*longest = 0;
	for (size_t i = 0; i < size; i++) {
		uint8_t c = data[i];
		if (c == '\n') {
			*longest = MAX(*longest, run);
			run = 0;
		} else {
			run++;
		}
		if (c == '\n' || (c == '\r' && (i + 1 == size || data[i + 1] != '\n')) ||
		    (c == 0xc2 && i + 1 < size && data[i + 1] == 0x85) ||
		    (c == 0xe2 && i + 2 < size && data[i + 1] == 0x80 &&
		     (data[i + 2] == 0xa8 || data[i + 2] == 0xa9)))
			lines++;
	}
	*longest = MAX(*longest, run);
	return lines;
}

static void check_spec(const lp_job_spec *spec, size_t lines)
{
	FUZZ_CHECK(spec->reference && spec->kernel && spec->output);
	FUZZ_CHECK(*spec->reference && *spec->kernel && *spec->output);
	FUZZ_CHECK(spec->line >= 1 && spec->line <= lines);
	for (int k = 0; k < LP_JOB_KEY_COUNT; k++)
		FUZZ_CHECK(spec->key_line[k] <= lines);
	for (int k = 0; k < LP_JOB_KEY_OPTIONS; k++)
		FUZZ_CHECK(spec->key_line[k] >= 1);
	/* A page offset is any 64-bit value (laplace-jobs(5)); one not given
	 * is the default's, left for the capture's width to pick, and given
	 * it is under options. */
	FUZZ_CHECK(spec->page_offset_set || spec->page_offset == LP_DEFAULT_PAGE_OFFSET);
	FUZZ_CHECK(!spec->page_offset_set || spec->key_line[LP_JOB_KEY_OPTIONS] >= 1);
	FUZZ_CHECK(spec->endian == LP_LITTLE || spec->endian == LP_BIG);
	lp_merge_job job;
	lp_job_spec_to_merge(spec, &job);
	FUZZ_CHECK(job.reference == spec->reference && job.output == spec->output);
	FUZZ_CHECK(job.page_offset == spec->page_offset && job.page_offset_set == spec->page_offset_set);
}

/* The scalar value of key in mapping node map of doc, or NULL. */
static const char *value_of(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		if (k->type == YAML_SCALAR_NODE && !strcmp((char *)k->data.scalar.value, key))
			return v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : NULL;
	}
	return NULL;
}

static void check_report(const lp_job_spec *spec, const char *message)
{
	lp_job_outcome outcome = {.status = message ? LP_EINPUT : LP_OK, .seconds = 1.5};
	if (message)
		g_strlcpy(outcome.msg, message, sizeof outcome.msg);
	GString *text = g_string_new(NULL);
	yaml_emitter_t em;
	FUZZ_CHECK(lp_yaml_start(&em, text) == 0);
	FUZZ_CHECK(lp_job_report_emit(&em, spec, &outcome) == 0);
	FUZZ_CHECK(lp_yaml_finish(&em) == 0);

	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text->str, text->len);
	FUZZ_CHECK(yaml_parser_load(&parser, &doc));
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	const char *v;
	FUZZ_CHECK((v = value_of(&doc, root, "reference")) && !strcmp(v, spec->reference));
	FUZZ_CHECK((v = value_of(&doc, root, "kernel")) && !strcmp(v, spec->kernel));
	FUZZ_CHECK((v = value_of(&doc, root, "output")) && !strcmp(v, spec->output));
	if (message)
		FUZZ_CHECK((v = value_of(&doc, root, "error")) && !strcmp(v, outcome.msg));
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	g_string_free(text, TRUE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path = fuzz_dir_file("job.yaml", data, size);
	size_t longest, lines = count_lines(data, size, &longest);
	char *text = NULL;
	size_t len = 0;
	lp_error err;
	int rc = lp_jobfile_read(path, LP_JOBFILE_MAX_BYTES, &text, &len, &err);
	if (rc == 0) {
		FUZZ_CHECK(len == size && (!size || !memcmp(text, data, size)) && text[len] == '\0');
		FUZZ_CHECK(size <= LP_JOBFILE_MAX_BYTES && longest <= LP_LINE_MAX);
	} else {
		FUZZ_CHECK(rc == LP_EINPUT && !text);
		FUZZ_CHECK(size > LP_JOBFILE_MAX_BYTES || longest > LP_LINE_MAX);
	}
	g_free(text);
	free(path);

	/* The parsers also see what the read refuses: the batch command hands
	 * them any file it could read. */
	/* An error message quoting the input, as a failed job's would. */
	lp_error msg;
	lp_fail(&msg, LP_EINPUT, "job.yaml:%zu: \"%.*s\"", lines, (int)MIN(size, 300), (const char *)data);

	lp_job_spec spec;
	lp_error perr;
	if (lp_jobfile_parse_job("job.yaml", (const char *)data, size, &spec, &perr) == 0) {
		check_spec(&spec, lines);
		check_report(&spec, NULL);
		check_report(&spec, msg.msg);
		lp_job_spec_clear(&spec);
	} else {
		FUZZ_CHECK(perr.status == LP_EINPUT && !spec.reference && !spec.kernel && !spec.output);
	}

	const char *base = size & 2 ? "." : "base dir";
	lp_job_spec *jobs = NULL;
	size_t njobs = 0;
	if (lp_jobfile_parse_batch("batch.yaml", (const char *)data, size, base, &jobs, &njobs,
				   &perr) == 0) {
		for (size_t i = 0; i < njobs; i++) {
			check_spec(&jobs[i], lines);
			const char *paths[] = {jobs[i].reference, jobs[i].kernel, jobs[i].output};
			for (int p = 0; p < 3; p++)
				FUZZ_CHECK(paths[p][0] == '/' || *base == '.' ||
					   !strncmp(paths[p], "base dir/", 9));
		}
		if (njobs)
			check_report(&jobs[0], msg.msg);
		lp_job_specs_free(jobs, njobs);
	} else {
		FUZZ_CHECK(perr.status == LP_EINPUT);
	}

	lp_daemon_settings s;
	if (lp_daemon_settings_parse("daemon.yaml", (const char *)data, size, &s, &perr) == 0) {
		FUZZ_CHECK(s.jobs == 0 || (s.jobs >= 1 && s.jobs <= 1024));
		FUZZ_CHECK(s.grace >= -1 && s.grace <= 86400);
		FUZZ_CHECK(s.rescan == 0 || (s.rescan >= 1 && s.rescan <= 86400));
		FUZZ_CHECK(s.log_level >= -1 && s.log_level < LP_LOG_LEVEL_COUNT);
	} else {
		FUZZ_CHECK(perr.status == LP_EINPUT);
	}
	return 0;
}
