/* Job files (laplace-jobs(5)). libyaml's event parser is used rather than
 * its document loader: a job is small and flat, every unexpected node is an
 * error the moment it is seen, and aliases (which a hostile file could use
 * to blow up a loaded document) are refused outright. */
#include "jobs/jobfile.h"

#include <errno.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include "formats/refio.h"
#include "io/inbuf.h"
#include "core/merge.h"
#include "core/numbers.h"
#include "io/yamlload.h"

const char *const lp_job_key_names[LP_JOB_KEY_COUNT] = {
	"reference", "kernel", "mode", "output", "options", "timeout",
};

enum option_key {
	OPT_USER_ONLY, OPT_STRICT, OPT_PAGE_OFFSET, OPT_ENDIAN, OPT_COMPRESS, OPT_COUNT
};
static const char *const option_names[OPT_COUNT] = {
	"user_only", "strict", "page_offset", "endian", "compress",
};

typedef struct parser {
	yaml_parser_t yp;
	yaml_event_t ev;  /* the current event */
	bool have_event;
	const char *name; /* file name for messages */
	const char *text; /* what is parsed, for lp_yaml_problem_line */
	size_t len;
	lp_error *err;
} parser;

static size_t event_line(const parser *p) { return p->ev.start_mark.line + 1; }

static int next_event(parser *p)
{
	if (p->have_event)
		yaml_event_delete(&p->ev);
	p->have_event = false;
	if (!yaml_parser_parse(&p->yp, &p->ev)) {
		const char *problem = p->yp.problem ? p->yp.problem : "invalid YAML";
		size_t line = lp_yaml_problem_line(&p->yp, p->text, p->len);
		if (p->yp.context)
			return lp_fail(p->err, LP_EINPUT, "%s:%zu: %s %s", p->name, line, problem,
				       p->yp.context);
		return lp_fail(p->err, LP_EINPUT, "%s:%zu: %s", p->name, line, problem);
	}
	p->have_event = true;
	if (p->ev.type == YAML_ALIAS_EVENT)
		return lp_fail(p->err, LP_EINPUT, "%s:%zu: aliases are not allowed in job files",
			       p->name, event_line(p));
	return 0;
}

static const char *scalar(const parser *p) { return (const char *)p->ev.data.scalar.value; }

/* What the current node is, for "expected X, found Y" messages. */
static void describe(const parser *p, char *buf, size_t size)
{
	switch (p->ev.type) {
	case YAML_MAPPING_START_EVENT: g_strlcpy(buf, "a mapping", size); break;
	case YAML_SEQUENCE_START_EVENT: g_strlcpy(buf, "a list", size); break;
	case YAML_SCALAR_EVENT:
		if (p->ev.data.scalar.length == 0)
			g_strlcpy(buf, "nothing", size);
		else
			g_snprintf(buf, size, "'%.60s'", scalar(p));
		break;
	default: g_strlcpy(buf, "the end of the document", size); break;
	}
}

static int wrong_type(parser *p, const char *key, const char *expected)
{
	char found[80];
	describe(p, found, sizeof found);
	return lp_fail(p->err, LP_EINPUT, "%s:%zu: key '%s': expected %s, found %s", p->name,
		       event_line(p), key, expected, found);
}

/* A non-empty scalar without NUL bytes (a double-quoted "\0" could hide
 * one) that was not written as a quoted boolean or number. */
static bool is_text(const parser *p)
{
	return p->ev.type == YAML_SCALAR_EVENT && p->ev.data.scalar.length > 0 &&
	       strlen(scalar(p)) == p->ev.data.scalar.length;
}

static bool is_plain(const parser *p)
{
	return p->ev.type == YAML_SCALAR_EVENT && p->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static int parse_string(parser *p, const char *key, char **out)
{
	int r = next_event(p);
	if (r)
		return r;
	if (!is_text(p))
		return wrong_type(p, key, "a path");
	*out = g_strndup(scalar(p), p->ev.data.scalar.length);
	return 0;
}

/* A time limit: a positive decimal number of seconds. */
static int parse_seconds(parser *p, const char *key, unsigned *out)
{
	int r = next_event(p);
	if (r)
		return r;
	uint64_t v;
	if (!is_plain(p) || !lp_parse_decimal(scalar(p), 1, UINT_MAX, &v))
		return wrong_type(p, key, "a positive number of seconds");
	*out = (unsigned)v;
	return 0;
}

/* Booleans as in the YAML 1.2 core schema. */
static int parse_bool(parser *p, const char *key, bool *out)
{
	int r = next_event(p);
	if (r)
		return r;
	if (is_plain(p)) {
		const char *s = scalar(p);
		if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
			*out = true;
			return 0;
		}
		if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
			*out = false;
			return 0;
		}
	}
	return wrong_type(p, key, "true or false");
}

/* A hexadecimal address, as for `laplace merge --page-offset`; a 0x prefix
 * is allowed since YAML authors tend to write one. */
static int parse_hex(parser *p, const char *key, uint64_t *out)
{
	int r = next_event(p);
	if (r)
		return r;
	if (is_text(p)) {
		const char *s = scalar(p);
		size_t len = p->ev.data.scalar.length;
		if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
			s += 2;
			len -= 2;
		}
		if (lp_parse_hex(s, len, out) == 0)
			return 0;
	}
	return wrong_type(p, key, "a hexadecimal address of at most 64 bits");
}

/* One of a fixed set of words; returns its index in *out. */
static int parse_word(parser *p, const char *key, const char *expected,
		      int (*lookup)(const char *), int *out)
{
	int r = next_event(p);
	if (r)
		return r;
	if (is_text(p)) {
		int v = lookup(scalar(p));
		if (v >= 0) {
			*out = v;
			return 0;
		}
	}
	return wrong_type(p, key, expected);
}

static int mode_lookup(const char *s)
{
	if (!strcmp(s, "basic"))
		return 0;
	if (!strcmp(s, "per-process"))
		return 1;
	return -1;
}

static int compress_lookup(const char *s)
{
	if (!strcmp(s, "auto"))
		return LP_COMPRESS_AUTO;
	return lp_compress_parse(s);
}

/* After a MAPPING_START: read the next key. Returns 1 with the key as the
 * current event, 0 at the end of the mapping, or an error. */
static int next_key(parser *p, const char *where)
{
	int r = next_event(p);
	if (r)
		return -r;
	if (p->ev.type == YAML_MAPPING_END_EVENT)
		return 0;
	if (!is_text(p)) {
		char found[80];
		describe(p, found, sizeof found);
		return -lp_fail(p->err, LP_EINPUT, "%s:%zu: %s: expected a key, found %s", p->name,
				event_line(p), where, found);
	}
	return 1;
}

static int lookup_key(parser *p, const char *const *names, int n, const size_t *seen_line)
{
	for (int k = 0; k < n; k++) {
		if (strcmp(scalar(p), names[k]))
			continue;
		if (seen_line[k])
			return -lp_fail(p->err, LP_EINPUT, "%s:%zu: key '%s' given twice (first on line %zu)",
					p->name, event_line(p), names[k], seen_line[k]);
		return k;
	}
	return -lp_fail(p->err, LP_EINPUT, "%s:%zu: unknown key '%.60s'", p->name, event_line(p),
			scalar(p));
}

static int parse_options(parser *p, lp_job_spec *spec)
{
	int r = next_event(p);
	if (r)
		return r;
	if (p->ev.type != YAML_MAPPING_START_EVENT)
		return wrong_type(p, "options", "a mapping");
	size_t seen[OPT_COUNT] = {0};
	while ((r = next_key(p, "options")) == 1) {
		int k = lookup_key(p, option_names, OPT_COUNT, seen);
		if (k < 0)
			return -k;
		seen[k] = event_line(p);
		int v = 0;
		switch ((enum option_key)k) {
		case OPT_USER_ONLY: r = parse_bool(p, option_names[k], &spec->user_only); break;
		case OPT_STRICT: r = parse_bool(p, option_names[k], &spec->strict); break;
		case OPT_PAGE_OFFSET:
			r = parse_hex(p, option_names[k], &spec->page_offset);
			spec->page_offset_set = true;
			break;
		case OPT_ENDIAN:
			r = parse_word(p, option_names[k], "little or big", lp_endian_parse, &v);
			if (!r)
				spec->endian = (enum lp_endian)v;
			break;
		case OPT_COMPRESS:
			r = parse_word(p, option_names[k], "auto, gzip, zstd or none", compress_lookup, &v);
			if (!r)
				spec->compress = (enum lp_compress)v;
			break;
		case OPT_COUNT: break;
		}
		if (r)
			return r;
	}
	return r < 0 ? -r : 0;
}

/* A job mapping; the current event is its MAPPING_START. */
static int parse_job(parser *p, lp_job_spec *spec)
{
	memset(spec, 0, sizeof *spec);
	spec->page_offset = LP_DEFAULT_PAGE_OFFSET;
	spec->endian = LP_LITTLE;
	spec->compress = LP_COMPRESS_AUTO;
	spec->line = event_line(p);
	int r;
	while ((r = next_key(p, "job")) == 1) {
		int k = lookup_key(p, lp_job_key_names, LP_JOB_KEY_COUNT, spec->key_line);
		if (k < 0)
			return -k;
		spec->key_line[k] = event_line(p);
		const char *key = lp_job_key_names[k];
		int mode = 0;
		switch ((enum lp_job_key)k) {
		case LP_JOB_KEY_REFERENCE: r = parse_string(p, key, &spec->reference); break;
		case LP_JOB_KEY_KERNEL: r = parse_string(p, key, &spec->kernel); break;
		case LP_JOB_KEY_OUTPUT: r = parse_string(p, key, &spec->output); break;
		case LP_JOB_KEY_MODE:
			r = parse_word(p, key, "basic or per-process", mode_lookup, &mode);
			if (!r)
				spec->per_process = mode == 1;
			break;
		case LP_JOB_KEY_OPTIONS: r = parse_options(p, spec); break;
		case LP_JOB_KEY_TIMEOUT: r = parse_seconds(p, key, &spec->timeout); break;
		case LP_JOB_KEY_COUNT: break;
		}
		if (r)
			return r;
	}
	if (r < 0)
		return -r;
	for (int k = 0; k < LP_JOB_KEY_OPTIONS; k++)
		if (!spec->key_line[k])
			return lp_fail(p->err, LP_EINPUT, "%s:%zu: missing key '%s'", p->name,
				       spec->line, lp_job_key_names[k]);
	return 0;
}

static void parser_init(parser *p, const char *name, const char *text, size_t len, lp_error *err)
{
	memset(p, 0, sizeof *p);
	yaml_parser_initialize(&p->yp);
	yaml_parser_set_input_string(&p->yp, (const unsigned char *)text, len);
	p->name = name;
	p->text = text;
	p->len = len;
	p->err = err;
}

static void parser_done(parser *p)
{
	if (p->have_event)
		yaml_event_delete(&p->ev);
	yaml_parser_delete(&p->yp);
}

/* Read up to the start of the document's top node; fails on an empty file. */
static int start_document(parser *p)
{
	int r;
	if ((r = next_event(p)) || (r = next_event(p)))
		return r;
	if (p->ev.type == YAML_STREAM_END_EVENT)
		return lp_fail(p->err, LP_EINPUT, "%s: empty job file", p->name);
	return next_event(p);
}

/* After the top node: the document must end, and no other may follow. */
static int end_document(parser *p)
{
	int r;
	if ((r = next_event(p)) || (r = next_event(p)))
		return r;
	if (p->ev.type != YAML_STREAM_END_EVENT)
		return lp_fail(p->err, LP_EINPUT, "%s:%zu: only one YAML document is allowed",
			       p->name, event_line(p));
	return 0;
}

static int top_must_be_mapping(parser *p, const char *what)
{
	if (p->ev.type == YAML_MAPPING_START_EVENT)
		return 0;
	char found[80];
	describe(p, found, sizeof found);
	return lp_fail(p->err, LP_EINPUT, "%s:%zu: expected %s, found %s", p->name, event_line(p),
		       what, found);
}

int lp_jobfile_parse_job(const char *name, const char *text, size_t len, lp_job_spec *spec,
			 lp_error *err)
{
	parser p;
	parser_init(&p, name, text, len, err);
	memset(spec, 0, sizeof *spec);
	int r = start_document(&p);
	if (!r)
		r = top_must_be_mapping(&p, "a job (a mapping)");
	if (!r)
		r = parse_job(&p, spec);
	if (!r)
		r = end_document(&p);
	parser_done(&p);
	if (r)
		lp_job_spec_clear(spec);
	return r;
}

static void make_relative_to(char **path, const char *base_dir)
{
	if (g_path_is_absolute(*path) || !strcmp(base_dir, "."))
		return;
	char *joined = g_build_filename(base_dir, *path, NULL);
	g_free(*path);
	*path = joined;
}

static int parse_job_list(parser *p, GArray *jobs)
{
	int r = next_event(p);
	if (r)
		return r;
	if (p->ev.type != YAML_SEQUENCE_START_EVENT)
		return wrong_type(p, "jobs", "a list of jobs");
	for (;;) {
		if ((r = next_event(p)))
			return r;
		if (p->ev.type == YAML_SEQUENCE_END_EVENT)
			return 0;
		if ((r = top_must_be_mapping(p, "a job (a mapping)")))
			return r;
		lp_job_spec spec;
		r = parse_job(p, &spec);
		g_array_append_val(jobs, spec); /* appended even when incomplete, to be freed */
		if (r)
			return r;
	}
}

int lp_jobfile_parse_batch(const char *name, const char *text, size_t len, const char *base_dir,
			   lp_job_spec **jobs, size_t *njobs, lp_error *err)
{
	parser p;
	parser_init(&p, name, text, len, err);
	GArray *list = g_array_new(FALSE, TRUE, sizeof(lp_job_spec));
	int r = start_document(&p);
	if (!r)
		r = top_must_be_mapping(&p, "a mapping with the key 'jobs'");
	size_t top_line = event_line(&p);
	size_t seen[1] = {0};
	static const char *const top_keys[] = {"jobs"};
	while (!r && (r = next_key(&p, "batch")) == 1) {
		int k = lookup_key(&p, top_keys, 1, seen);
		if (k < 0) {
			r = -k;
			break;
		}
		seen[0] = event_line(&p);
		r = parse_job_list(&p, list);
	}
	if (r < 0)
		r = -r;
	if (!r && !seen[0])
		r = lp_fail(err, LP_EINPUT, "%s:%zu: missing key 'jobs'", name, top_line);
	if (!r)
		r = end_document(&p);
	parser_done(&p);
	size_t n = list->len;
	lp_job_spec *specs = (lp_job_spec *)(void *)g_array_free(list, FALSE);
	if (r) {
		lp_job_specs_free(specs, n);
		return r;
	}
	for (size_t i = 0; i < n; i++) {
		make_relative_to(&specs[i].reference, base_dir);
		make_relative_to(&specs[i].kernel, base_dir);
		make_relative_to(&specs[i].output, base_dir);
	}
	*jobs = specs;
	*njobs = n;
	return 0;
}

static int parse_count(parser *p, const char *key, int min, int max, int *out)
{
	int r = next_event(p);
	if (r)
		return r;
	uint64_t v;
	if (is_plain(p) && is_text(p) && lp_parse_decimal(scalar(p), (uint64_t)min, (uint64_t)max, &v)) {
		*out = (int)v;
		return 0;
	}
	char expected[64];
	g_snprintf(expected, sizeof expected, "a whole number from %d to %d", min, max);
	return wrong_type(p, key, expected);
}

const char *const lp_log_level_names[LP_LOG_LEVEL_COUNT] = {"error", "warning", "info", "debug"};

int lp_log_level_parse(const char *s)
{
	for (int i = 0; i < LP_LOG_LEVEL_COUNT; i++)
		if (!strcmp(s, lp_log_level_names[i]))
			return i;
	return -1;
}

int lp_daemon_settings_parse(const char *name, const char *text, size_t len,
			     lp_daemon_settings *settings, lp_error *err)
{
	static const char *const keys[] = {"jobs", "grace", "rescan", "log_level", "job_timeout",
					   "max_attempts"};
	parser p;
	parser_init(&p, name, text, len, err);
	*settings = LP_DAEMON_SETTINGS_UNSET;
	int r = start_document(&p);
	if (!r)
		r = top_must_be_mapping(&p, "a mapping of settings");
	size_t seen[G_N_ELEMENTS(keys)] = {0};
	while (!r && (r = next_key(&p, "settings")) == 1) {
		int k = lookup_key(&p, keys, G_N_ELEMENTS(keys), seen);
		if (k < 0) {
			r = -k;
			break;
		}
		seen[k] = event_line(&p);
		switch (k) {
		case 0: r = parse_count(&p, keys[k], 1, 1024, &settings->jobs); break;
		case 1: r = parse_count(&p, keys[k], 0, 86400, &settings->grace); break;
		case 2: r = parse_count(&p, keys[k], 1, 86400, &settings->rescan); break;
		case 3:
			r = parse_word(&p, keys[k], "error, warning, info or debug", lp_log_level_parse,
				       &settings->log_level);
			break;
		/* A year at most: a larger number is a typo, not a limit. */
		case 4: r = parse_count(&p, keys[k], 0, 31536000, &settings->job_timeout); break;
		default: r = parse_count(&p, keys[k], 1, 1000, &settings->max_attempts); break;
		}
	}
	if (r < 0)
		r = -r;
	if (!r)
		r = end_document(&p);
	parser_done(&p);
	return r;
}

void lp_job_spec_clear(lp_job_spec *spec)
{
	g_clear_pointer(&spec->reference, g_free);
	g_clear_pointer(&spec->kernel, g_free);
	g_clear_pointer(&spec->output, g_free);
}

void lp_job_specs_free(lp_job_spec *jobs, size_t njobs)
{
	for (size_t i = 0; i < njobs; i++)
		lp_job_spec_clear(&jobs[i]);
	g_free(jobs);
}

void lp_job_spec_to_merge(const lp_job_spec *spec, lp_merge_job *job)
{
	lp_merge_job_init(job);
	job->reference = spec->reference;
	job->kernel = spec->kernel;
	job->endian = spec->endian;
	job->user_only = spec->user_only;
	job->strict = spec->strict;
	job->page_offset = spec->page_offset;
	job->page_offset_set = spec->page_offset_set;
	job->per_process = spec->per_process;
	job->output = spec->output;
	job->force = true;
	job->compress = spec->compress;
}

unsigned lp_job_spec_time_limit(const lp_job_spec *spec, unsigned runner_limit)
{
	/* A limit is a cap the runner sets for everyone: a job asking for more
	 * time would hold its slot past it. */
	if (!spec->timeout)
		return runner_limit;
	return runner_limit ? MIN(spec->timeout, runner_limit) : spec->timeout;
}

int lp_jobfile_read(const char *path, size_t max_bytes, char **text, size_t *len, lp_error *err)
{
	int r = lp_read_small_file(path, false, max_bytes, "job file", text, len, err);
	return r ? r : lp_jobfile_check_lines(path, text, *len, err);
}

int lp_jobfile_check_lines(const char *path, char **text, size_t len, lp_error *err)
{
	/* Lines are bounded as in every other text input the project reads. */
	uint64_t line = 1;
	for (const char *p = *text, *end = *text + len; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		if (eol - p > LP_LINE_MAX) {
			g_clear_pointer(text, g_free);
			return lp_inbuf_long_line(err, path, line), LP_EINPUT;
		}
		p = eol + 1;
	}
	return 0;
}
