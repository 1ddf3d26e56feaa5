/* Job files (laplace-jobs(5)): what they may hold, and the exact message
 * (file, line, key) for each way they can be wrong; the daemon's
 * confinement of outputs; the cleanup of partial outputs. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobs/jobfile.h"
#include "jobs/confine.h"
#include "jobs/spool.h"
#include "io/yamlload.h"

static lp_job_spec spec;
static lp_error err;

static void clear(void) { lp_job_spec_clear(&spec); }

TestSuite(jobfile, .fini = clear);

static int parse(const char *text)
{
	err = (lp_error){0};
	return lp_jobfile_parse_job("job.yaml", text, strlen(text), &spec, &err);
}

static void expect_error(const char *text, const char *msg)
{
	cr_assert_eq(parse(text), LP_EINPUT, "accepted:\n%s", text);
	cr_assert_str_eq(err.msg, msg);
	cr_assert_null(spec.reference);
}

Test(jobfile, full_job)
{
	cr_assert_eq(parse("reference: /t/ref.bin\n"
			   "kernel: /t/kern.txt\n"
			   "mode: per-process\n"
			   "output: out\n"
			   "options:\n"
			   "  user_only: true\n"
			   "  strict: True\n"
			   "  page_offset: 0x80000000\n"
			   "  endian: big\n"
			   "  compress: zstd\n"), 0, "%s", err.msg);
	cr_assert_str_eq(spec.reference, "/t/ref.bin");
	cr_assert_str_eq(spec.kernel, "/t/kern.txt");
	cr_assert_str_eq(spec.output, "out");
	cr_assert(spec.per_process);
	cr_assert(spec.user_only);
	cr_assert(spec.strict);
	cr_assert_eq(spec.page_offset, 0x80000000u);
	cr_assert(spec.page_offset_set);
	cr_assert_eq(spec.endian, LP_BIG);
	cr_assert_eq(spec.compress, LP_COMPRESS_ZSTD);
	cr_assert_eq(spec.line, 1);
	cr_assert_eq(spec.key_line[LP_JOB_KEY_OUTPUT], 4);
}

Test(jobfile, defaults)
{
	cr_assert_eq(parse("{reference: r, kernel: k, mode: basic, output: o}"), 0, "%s", err.msg);
	cr_assert_not(spec.per_process);
	cr_assert_not(spec.user_only);
	cr_assert_not(spec.strict);
	/* The capture's width picks it (laplace-formats(5), section 10.2). */
	cr_assert_not(spec.page_offset_set);
	lp_merge_job job;
	lp_job_spec_to_merge(&spec, &job);
	cr_assert_not(job.page_offset_set);
	cr_assert_eq(spec.endian, LP_LITTLE);
	cr_assert_eq(spec.compress, LP_COMPRESS_AUTO);
	cr_assert_eq(spec.key_line[LP_JOB_KEY_OPTIONS], 0);
	cr_assert_eq(spec.timeout, 0);
}

Test(jobfile, timeout)
{
	cr_assert_eq(parse("{reference: r, kernel: k, mode: basic, output: o, timeout: 90}"), 0,
		     "%s", err.msg);
	cr_assert_eq(spec.timeout, 90);
	cr_assert_eq(spec.key_line[LP_JOB_KEY_TIMEOUT], 1);
	clear();
	expect_error("timeout: 0\n",
		     "job.yaml:1: key 'timeout': expected a positive number of seconds, found '0'");
	expect_error("timeout: -5\n",
		     "job.yaml:1: key 'timeout': expected a positive number of seconds, found '-5'");
	expect_error("timeout: 1.5\n",
		     "job.yaml:1: key 'timeout': expected a positive number of seconds, found '1.5'");
	expect_error("timeout: \"60\"\n",
		     "job.yaml:1: key 'timeout': expected a positive number of seconds, found '60'");
	expect_error("timeout: 4294967296\n",
		     "job.yaml:1: key 'timeout': expected a positive number of seconds, "
		     "found '4294967296'");
}

Test(jobfile, time_limit_is_a_cap)
{
	lp_job_spec own = {.timeout = 0};
	cr_assert_eq(lp_job_spec_time_limit(&own, 0), 0);
	cr_assert_eq(lp_job_spec_time_limit(&own, 60), 60);
	own.timeout = 30;
	cr_assert_eq(lp_job_spec_time_limit(&own, 0), 30);
	cr_assert_eq(lp_job_spec_time_limit(&own, 60), 30);
	own.timeout = 31536000;
	cr_assert_eq(lp_job_spec_time_limit(&own, 60), 60);
}

/* libyaml gives a byte YAML does not allow an offset, not a line. */
Test(jobfile, nul_byte_line)
{
	static const char text[] = "reference: r\nkernel: k\0\nmode: basic\n";
	err = (lp_error){0};
	cr_assert_eq(lp_jobfile_parse_job("job.yaml", text, sizeof text - 1, &spec, &err), LP_EINPUT);
	cr_assert_str_eq(err.msg, "job.yaml:2: control characters are not allowed");
	yaml_document_t doc;
	err = (lp_error){0};
	cr_assert_eq(lp_yaml_load("r.yaml", text, sizeof text - 1, &doc, &err), LP_EINPUT);
	yaml_document_delete(&doc);
	cr_assert_str_eq(err.msg, "r.yaml:2: not YAML: control characters are not allowed");
}

Test(jobfile, hex_page_offset_without_prefix)
{
	cr_assert_eq(parse("{reference: r, kernel: k, mode: basic, output: o,"
			   " options: {page_offset: C0001000}}"), 0, "%s", err.msg);
	cr_assert_eq(spec.page_offset, 0xc0001000u);
}

/* A 64-bit capture's page offset (laplace-formats(5), section 10.2)
 * reaches the merge whole. */
Test(jobfile, page_offset_of_64_bits)
{
	cr_assert_eq(parse("{reference: r, kernel: k, mode: basic, output: o,"
			   " options: {page_offset: 0xffff888000000000}}"), 0, "%s", err.msg);
	lp_merge_job job;
	lp_job_spec_to_merge(&spec, &job);
	cr_assert(job.page_offset_set);
	cr_assert_eq(job.page_offset, UINT64_C(0xffff888000000000));
}

Test(jobfile, unknown_key)
{
	expect_error("reference: r\nkernel: k\ncolour: blue\n", "job.yaml:3: unknown key 'colour'");
}

Test(jobfile, unknown_option)
{
	expect_error("reference: r\noptions:\n  user_only: true\n  fast: yes\n",
		     "job.yaml:4: unknown key 'fast'");
}

Test(jobfile, missing_keys_name_the_job_line)
{
	expect_error("# a job\nreference: r\nkernel: k\nmode: basic\n",
		     "job.yaml:2: missing key 'output'");
	expect_error("output: o\nmode: basic\n", "job.yaml:1: missing key 'reference'");
}

Test(jobfile, duplicate_key)
{
	expect_error("reference: r\nkernel: k\nreference: s\n",
		     "job.yaml:3: key 'reference' given twice (first on line 1)");
}

Test(jobfile, wrong_types)
{
	expect_error("reference: [a, b]\n", "job.yaml:1: key 'reference': expected a path, found a list");
	expect_error("reference: r\nkernel:\n  x: 1\n",
		     "job.yaml:3: key 'kernel': expected a path, found a mapping");
	expect_error("reference: r\nkernel:\n", "job.yaml:2: key 'kernel': expected a path, found nothing");
	expect_error("mode: fast\n", "job.yaml:1: key 'mode': expected basic or per-process, found 'fast'");
	expect_error("options: strict\n", "job.yaml:1: key 'options': expected a mapping, found 'strict'");
	expect_error("options:\n  user_only: maybe\n",
		     "job.yaml:2: key 'user_only': expected true or false, found 'maybe'");
	expect_error("options: {strict: \"true\"}\n",
		     "job.yaml:1: key 'strict': expected true or false, found 'true'");
	expect_error("options:\n  page_offset: 10000000000000000\n",
		     "job.yaml:2: key 'page_offset': expected a hexadecimal address of at most 64 bits, "
		     "found '10000000000000000'");
	expect_error("options:\n  page_offset: 0xg\n",
		     "job.yaml:2: key 'page_offset': expected a hexadecimal address of at most 64 bits, "
		     "found '0xg'");
	expect_error("options:\n  endian: middle\n",
		     "job.yaml:2: key 'endian': expected little or big, found 'middle'");
	expect_error("options:\n  compress: rar\n",
		     "job.yaml:2: key 'compress': expected auto, gzip, zstd or none, found 'rar'");
}

Test(jobfile, nul_byte_in_path)
{
	expect_error("reference: \"a\\0b\"\n",
		     "job.yaml:1: key 'reference': expected a path, found 'a'");
}

Test(jobfile, keys_must_be_strings)
{
	expect_error("? [a]\n: b\n", "job.yaml:1: job: expected a key, found a list");
}

Test(jobfile, top_level_must_be_a_job)
{
	expect_error("- reference: r\n", "job.yaml:1: expected a job (a mapping), found a list");
	expect_error("just words\n", "job.yaml:1: expected a job (a mapping), found 'just words'");
	expect_error("", "job.yaml: empty job file");
	expect_error("# nothing\n", "job.yaml: empty job file");
}

Test(jobfile, one_document_only)
{
	expect_error("{reference: r, kernel: k, mode: basic, output: o}\n---\n{}\n",
		     "job.yaml:2: only one YAML document is allowed");
}

Test(jobfile, aliases_refused)
{
	expect_error("reference: &a r\nkernel: *a\n", "job.yaml:2: aliases are not allowed in job files");
}

Test(jobfile, yaml_syntax_error)
{
	expect_error("reference: r\n  kernel: k\n",
		     "job.yaml:2: mapping values are not allowed in this context");
	expect_error("reference: \"r\n", "job.yaml:2: found unexpected end of stream while scanning a quoted scalar");
}

/* ---- batch files ---- */

static lp_job_spec *jobs;
static size_t njobs;

static int parse_batch(const char *text)
{
	err = (lp_error){0};
	jobs = NULL;
	njobs = 0;
	return lp_jobfile_parse_batch("b/jobs.yaml", text, strlen(text), "b", &jobs, &njobs, &err);
}

Test(jobfile, batch_paths_relative_to_the_file)
{
	cr_assert_eq(parse_batch("jobs:\n"
				 "  - {reference: r1, kernel: /abs/k1, mode: basic, output: o1}\n"
				 "  - reference: sub/r2\n"
				 "    kernel: k2\n"
				 "    mode: per-process\n"
				 "    output: /abs/o2\n"), 0, "%s", err.msg);
	cr_assert_eq(njobs, 2);
	cr_assert_str_eq(jobs[0].reference, "b/r1");
	cr_assert_str_eq(jobs[0].kernel, "/abs/k1");
	cr_assert_str_eq(jobs[0].output, "b/o1");
	cr_assert_eq(jobs[0].line, 2);
	cr_assert_str_eq(jobs[1].reference, "b/sub/r2");
	cr_assert_str_eq(jobs[1].output, "/abs/o2");
	cr_assert(jobs[1].per_process);
	cr_assert_eq(jobs[1].line, 3);
	lp_job_specs_free(jobs, njobs);
}

Test(jobfile, batch_empty_list)
{
	cr_assert_eq(parse_batch("jobs: []\n"), 0, "%s", err.msg);
	cr_assert_eq(njobs, 0);
	lp_job_specs_free(jobs, njobs);
}

static void expect_batch_error(const char *text, const char *msg)
{
	cr_assert_eq(parse_batch(text), LP_EINPUT, "accepted:\n%s", text);
	cr_assert_str_eq(err.msg, msg);
	cr_assert_null(jobs);
}

Test(jobfile, batch_errors)
{
	expect_batch_error("jobs:\n  - {reference: r, kernel: k, mode: basic, output: o}\n"
			   "  - {reference: r, kernel: k, mode: basic}\n",
			   "b/jobs.yaml:3: missing key 'output'");
	expect_batch_error("job:\n  - {}\n", "b/jobs.yaml:1: unknown key 'job'");
	expect_batch_error("{}\n", "b/jobs.yaml:1: missing key 'jobs'");
	expect_batch_error("jobs: everything\n",
			   "b/jobs.yaml:1: key 'jobs': expected a list of jobs, found 'everything'");
	expect_batch_error("jobs:\n  - r\n", "b/jobs.yaml:2: expected a job (a mapping), found 'r'");
	expect_batch_error("- {}\n", "b/jobs.yaml:1: expected a mapping with the key 'jobs', found a list");
	expect_batch_error("jobs: []\njobs: []\n",
			   "b/jobs.yaml:2: key 'jobs' given twice (first on line 1)");
}

/* ---- daemon settings ---- */

static lp_daemon_settings settings;

static int parse_settings(const char *text)
{
	err = (lp_error){0};
	return lp_daemon_settings_parse("daemon.yaml", text, strlen(text), &settings, &err);
}

Test(jobfile, log_level_names)
{
	for (int level = 0; level < LP_LOG_LEVEL_COUNT; level++)
		cr_assert_eq(lp_log_level_parse(lp_log_level_names[level]), level);
	cr_assert_eq(lp_log_level_parse("Info"), -1);
	cr_assert_eq(lp_log_level_parse(""), -1);
}

Test(jobfile, settings)
{
	cr_assert_eq(parse_settings("jobs: 4\ngrace: 0\nrescan: 5\nlog_level: debug\n"
				    "job_timeout: 0\nmax_attempts: 7\n"), 0, "%s", err.msg);
	cr_assert_eq(settings.jobs, 4);
	cr_assert_eq(settings.grace, 0);
	cr_assert_eq(settings.rescan, 5);
	cr_assert_eq(settings.log_level, LP_LOG_DEBUG);
	cr_assert_eq(settings.job_timeout, 0);
	cr_assert_eq(settings.max_attempts, 7);
	cr_assert_eq(parse_settings("job_timeout: 3600\n"), 0, "%s", err.msg);
	cr_assert_eq(settings.job_timeout, 3600);
	/* Absent keys stay "not set". */
	cr_assert_eq(parse_settings("{}\n"), 0, "%s", err.msg);
	cr_assert_eq(settings.jobs, 0);
	cr_assert_eq(settings.grace, -1);
	cr_assert_eq(settings.rescan, 0);
	cr_assert_eq(settings.log_level, -1);
	cr_assert_eq(settings.job_timeout, -1);
	cr_assert_eq(settings.max_attempts, 0);
}

Test(jobfile, settings_errors)
{
	const struct {
		const char *text, *msg;
	} cases[] = {
		{"max_attempts: 0\n",
		 "daemon.yaml:1: key 'max_attempts': expected a whole number from 1 to 1000, found '0'"},
		{"max_attempts: 1001\n",
		 "daemon.yaml:1: key 'max_attempts': expected a whole number from 1 to 1000, found '1001'"},
		{"job_timeout: -1\n",
		 "daemon.yaml:1: key 'job_timeout': expected a whole number from 0 to 31536000, found '-1'"},
		{"job_timeout: 31536001\n",
		 "daemon.yaml:1: key 'job_timeout': expected a whole number from 0 to 31536000, "
		 "found '31536001'"},
		{"job_timeout: 5\njob_timeout: 6\n",
		 "daemon.yaml:2: key 'job_timeout' given twice (first on line 1)"},
		{"timeout: 5\n", "daemon.yaml:1: unknown key 'timeout'"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		cr_assert_eq(parse_settings(cases[i].text), LP_EINPUT, "accepted:\n%s", cases[i].text);
		cr_assert_str_eq(err.msg, cases[i].msg);
	}
}

/* ---- reading files ---- */

static char dir[64];

static void make_dir(void)
{
	g_strlcpy(dir, "/tmp/lp-jobfile-XXXXXX", sizeof dir);
	cr_assert_not_null(g_mkdtemp(dir));
}

static void remove_dir(void)
{
	char *cmd = g_strdup_printf("rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	g_free(cmd);
}

TestSuite(jobfs, .init = make_dir, .fini = remove_dir);

static char *in_dir(const char *name) { return g_build_filename(dir, name, NULL); }

Test(jobfs, read_limits)
{
	char *big = in_dir("big.yaml");
	char *text = g_malloc(LP_JOBFILE_MAX_BYTES + 1);
	memset(text, '#', LP_JOBFILE_MAX_BYTES + 1);
	for (size_t i = 63; i <= LP_JOBFILE_MAX_BYTES; i += 64)
		text[i] = '\n';
	cr_assert(g_file_set_contents(big, text, LP_JOBFILE_MAX_BYTES, NULL));
	char *got;
	size_t len;
	cr_assert_eq(lp_jobfile_read(big, LP_JOBFILE_MAX_BYTES, &got, &len, &err), 0);
	cr_assert_eq(len, LP_JOBFILE_MAX_BYTES);
	g_free(got);
	cr_assert(g_file_set_contents(big, text, LP_JOBFILE_MAX_BYTES + 1, NULL));
	cr_assert_eq(lp_jobfile_read(big, LP_JOBFILE_MAX_BYTES, &got, &len, &err), LP_EINPUT);
	char *want = g_strdup_printf("%s: job file too large (65537 bytes, at most 65536)", big);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	g_free(text);

	char *fifo = in_dir("fifo.yaml");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(lp_jobfile_read(fifo, LP_JOBFILE_MAX_BYTES, &got, &len, &err), LP_EINPUT);
	want = g_strdup_printf("%s: not a regular file", fifo);
	cr_assert_str_eq(err.msg, want);
	g_free(want);

	char *link = in_dir("link.yaml");
	cr_assert_eq(symlink(big, link), 0);
	cr_assert_eq(lp_jobfile_read(link, LP_JOBFILE_MAX_BYTES, &got, &len, &err), LP_EIO);
	want = g_strdup_printf("cannot open %s: Too many levels of symbolic links", link);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	g_free(big);
	g_free(fifo);
	g_free(link);
}

/* ---- confinement ---- */

static int confine(const char *output, bool per_process)
{
	char *text = g_strdup_printf("reference: /r\nkernel: /k\nmode: %s\noutput: '%s'\n",
				     per_process ? "per-process" : "basic", output);
	cr_assert_eq(parse(text), 0, "%s", err.msg);
	g_free(text);
	char *root = in_dir("root");
	g_mkdir(root, 0755);
	int r = lp_job_confine(&spec, "job.yaml", root, &err);
	g_free(root);
	return r;
}

Test(jobfs, confine_inside)
{
	cr_assert_eq(confine("sub/out.txt", false), 0, "%s", err.msg);
	char *want = in_dir("root/sub/out.txt");
	cr_assert_str_eq(spec.output, want);
	clear();
	/* By the text alone: "." and repeated slashes go. */
	cr_assert_eq(confine("./sub//./out.txt", false), 0, "%s", err.msg);
	cr_assert_str_eq(spec.output, want);
	g_free(want);
	clear();
	want = in_dir("root/abs.txt");
	cr_assert_eq(confine(want, false), 0, "%s", err.msg);
	cr_assert_str_eq(spec.output, want);
	g_free(want);
}

static void expect_confine_error(const char *output, bool per_process, const char *what)
{
	cr_assert_eq(confine(output, per_process), LP_EINPUT, "accepted %s", output);
	char *want = g_strdup_printf("job.yaml:4: key 'output': %s", what);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	clear();
}

Test(jobfs, confine_escapes)
{
	char *root = in_dir("root");
	expect_confine_error("../out.txt", false, "'../out.txt': '..' is not allowed");
	expect_confine_error("a/../../out.txt", false, "'a/../../out.txt': '..' is not allowed");
	char *msg = g_strdup_printf("'/tmp/out.txt' is outside the output root %s", root);
	expect_confine_error("/tmp/out.txt", false, msg);
	g_free(msg);
	msg = g_strdup_printf("'%s' is outside the output root %s", root, root);
	expect_confine_error(root, true, msg);
	g_free(msg);
	char *prefixed = g_strconcat(root, "x/out.txt", NULL);
	msg = g_strdup_printf("'%s' is outside the output root %s", prefixed, root);
	expect_confine_error(prefixed, false, msg);
	g_free(msg);
	g_free(prefixed);
	expect_confine_error("sub/", false, "'sub/' does not name a file");
	expect_confine_error(".", false, "'.' does not name a file");
	g_free(root);
}

/* lp_job_open_output_dir on output (relative to the root, confined): the
 * descriptor, or -1 with err set. */
static int open_output_dir(const char *output, bool per_process)
{
	char *root = in_dir("root");
	g_mkdir(root, 0755);
	int root_fd = open(root, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(root_fd, 0);
	char *full = g_build_filename(root, output, NULL);
	lp_job_confinement c = {root_fd, root, "job.yaml:4: key 'output'"};
	int fd = lp_job_open_output_dir(&c, full, per_process, &err);
	close(root_fd);
	g_free(full);
	g_free(root);
	return fd;
}

static void expect_output_dir_error(const char *output, bool per_process, int status,
				    const char *what)
{
	cr_assert_eq(open_output_dir(output, per_process), -1, "accepted %s", output);
	cr_assert_eq(err.status, status);
	char *full = in_dir("root");
	char *want = g_strdup_printf("job.yaml:4: key 'output': '%s/%s%s", full, output, what);
	cr_assert_str_eq(err.msg, want);
	g_free(want);
	g_free(full);
	clear();
}

Test(jobfs, output_dir_beneath_root)
{
	char *sub = in_dir("root/sub");
	cr_assert_eq(g_mkdir_with_parents(sub, 0755), 0);
	int fd = open_output_dir("sub/out.txt", false);
	cr_assert_geq(fd, 0, "%s", err.msg);
	struct stat got, want;
	cr_assert_eq(fstat(fd, &got), 0);
	cr_assert_eq(stat(sub, &want), 0);
	cr_assert(got.st_ino == want.st_ino && got.st_dev == want.st_dev);
	close(fd);
	fd = open_output_dir("top.txt", false);
	cr_assert_geq(fd, 0, "%s", err.msg);
	close(fd);
	g_free(sub);
}

Test(jobfs, output_dir_refuses_links)
{
	char *outside = in_dir("outside");
	cr_assert_eq(g_mkdir(outside, 0755), 0);
	char *link = in_dir("root/escape");
	cr_assert_eq(g_mkdir_with_parents(link, 0755), 0);
	cr_assert_eq(rmdir(link), 0);
	cr_assert_eq(symlink(outside, link), 0);
	expect_output_dir_error("escape/out.txt", false, LP_EINPUT,
				"': a symbolic link is on its way; outputs are written only "
				"through real directories");
	/* Even a link that stays inside the root. */
	char *inner = in_dir("root/inner");
	cr_assert_eq(symlink(".", inner), 0);
	expect_output_dir_error("inner/out.txt", false, LP_EINPUT,
				"': a symbolic link is on its way; outputs are written only "
				"through real directories");
	expect_output_dir_error("escape", true, LP_EINPUT, "' is a symbolic link");
	char *file_link = in_dir("root/null.txt");
	cr_assert_eq(symlink("/dev/null", file_link), 0);
	expect_output_dir_error("null.txt", false, LP_EINPUT, "' is a symbolic link");
	g_free(outside);
	g_free(link);
	g_free(inner);
	g_free(file_link);
}

Test(jobfs, output_dir_kinds)
{
	char *root = in_dir("root");
	cr_assert_eq(g_mkdir(root, 0755), 0);
	cr_assert_eq(open_output_dir("missing/out.txt", false), -1);
	char *want = g_strdup_printf("job.yaml:4: key 'output': directory of '%s/missing/out.txt': "
				     "No such file or directory", root);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(err.status, LP_EINPUT);
	g_free(want);
	clear();
	char *dirout = in_dir("root/d");
	cr_assert_eq(g_mkdir(dirout, 0755), 0);
	expect_output_dir_error("d", false, LP_EINPUT, "' is not a regular file");
	char *fileout = in_dir("root/f");
	cr_assert(g_file_set_contents(fileout, "", 0, NULL));
	expect_output_dir_error("f", true, LP_EINPUT, "' is not a directory");
	g_free(root);
	g_free(dirout);
	g_free(fileout);
}

Test(jobfs, confine_inputs_absolute)
{
	const char *text = "reference: r\nkernel: /k\nmode: basic\noutput: o\n";
	cr_assert_eq(parse(text), 0);
	cr_assert_eq(lp_job_confine(&spec, "job.yaml", dir, &err), LP_EINPUT);
	cr_assert_str_eq(err.msg, "job.yaml:1: key 'reference': 'r' is not an absolute path");
	clear();
	cr_assert_eq(parse("reference: /r\nkernel: k\nmode: basic\noutput: o\n"), 0);
	cr_assert_eq(lp_job_confine(&spec, "job.yaml", dir, &err), LP_EINPUT);
	cr_assert_str_eq(err.msg, "job.yaml:2: key 'kernel': 'k' is not an absolute path");
}

Test(jobfs, remove_partials)
{
	const char *names[] = {"out", ".out.tmp-abc123", "out.partial-x1y2z3/1/1",
			       ".other.tmp-abc123", "outer.partial-q", "keep"};
	for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
		char *path = in_dir(names[i]);
		char *parent = g_path_get_dirname(path);
		cr_assert_eq(g_mkdir_with_parents(parent, 0755), 0);
		cr_assert(g_file_set_contents(path, "x", 1, NULL));
		g_free(parent);
		g_free(path);
	}
	int dir_fd = open(dir, O_RDONLY | O_DIRECTORY);
	lp_job_confinement c = {dir_fd, dir, "job.yaml"};
	char *out = in_dir("out");
	cr_assert_eq(lp_job_remove_partials(&c, out, LP_NO_OWNER), 2);
	close(dir_fd);
	g_free(out);
	const char *kept[] = {"out", ".other.tmp-abc123", "outer.partial-q", "keep"};
	for (size_t i = 0; i < G_N_ELEMENTS(kept); i++) {
		char *path = in_dir(kept[i]);
		cr_assert(g_file_test(path, G_FILE_TEST_EXISTS), "%s removed", kept[i]);
		g_free(path);
	}
	char *gone = in_dir("out.partial-x1y2z3");
	cr_assert_not(g_file_test(gone, G_FILE_TEST_EXISTS));
	g_free(gone);
	gone = in_dir(".out.tmp-abc123");
	cr_assert_not(g_file_test(gone, G_FILE_TEST_EXISTS));
	g_free(gone);
}

/* ---- the spool's count of attempts ---- */

static lp_spool *spool;

static void submit(const char *name, const char *text)
{
	char *tmp = in_dir("job.tmp");
	char *path = g_build_filename(dir, "sp", "incoming", name, NULL);
	cr_assert(g_file_set_contents(tmp, text, -1, NULL));
	cr_assert_eq(rename(tmp, path), 0);
	g_free(path);
	g_free(tmp);
}

static bool in_running(const char *name)
{
	char *path = g_build_filename(dir, "sp", "running", name, NULL);
	bool there = g_file_test(path, G_FILE_TEST_EXISTS);
	g_free(path);
	return there;
}

static void open_spool(void)
{
	char *sp = in_dir("sp");
	spool = lp_spool_open(sp, &err);
	cr_assert_not_null(spool, "%s", err.msg);
	g_free(sp);
}

Test(jobfs, spool_attempts)
{
	open_spool();
	submit("a.yaml", "first\n");
	cr_assert_eq(lp_spool_claim(spool, "a.yaml", &err), 1);
	cr_assert_eq(lp_spool_attempts(spool, "a.yaml"), 0);
	cr_assert_eq(lp_spool_requeue(spool, "a.yaml", 1, &err), 0, "%s", err.msg);
	cr_assert(in_running("a.attempts"));
	cr_assert_eq(lp_spool_claim(spool, "a.yaml", &err), 1);
	cr_assert_eq(lp_spool_attempts(spool, "a.yaml"), 1);
	cr_assert_eq(lp_spool_requeue(spool, "a.yaml", 2, &err), 0, "%s", err.msg);

	/* A restart keeps the count of a job still queued, and drops that of
	 * a job gone from the queue. */
	submit("b.yaml", "other\n");
	cr_assert_eq(lp_spool_claim(spool, "b.yaml", &err), 1);
	cr_assert_eq(lp_spool_requeue(spool, "b.yaml", 1, &err), 0, "%s", err.msg);
	char *b = g_build_filename(dir, "sp", "incoming", "b.yaml", NULL);
	cr_assert_eq(unlink(b), 0);
	g_free(b);
	lp_spool_close(spool);
	open_spool();
	GPtrArray *refused = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *left = lp_spool_leftovers(spool, refused);
	cr_assert_eq(left->len, 0);
	cr_assert_eq(refused->len, 0);
	g_ptr_array_unref(left);
	g_ptr_array_unref(refused);
	cr_assert(in_running("a.attempts"));
	cr_assert_not(in_running("b.attempts"));
	cr_assert_eq(lp_spool_claim(spool, "a.yaml", &err), 1);
	cr_assert_eq(lp_spool_attempts(spool, "a.yaml"), 2);

	/* Finishing forgets the count. */
	cr_assert_eq(lp_spool_finish(spool, "running", "a.yaml", false, "x: y\n", NULL, &err), 0,
		     "%s", err.msg);
	cr_assert_not(in_running("a.attempts"));

	/* Another job file of the same name starts afresh. */
	submit("a.yaml", "first\n");
	cr_assert_eq(lp_spool_claim(spool, "a.yaml", &err), 1);
	cr_assert_eq(lp_spool_requeue(spool, "a.yaml", 1, &err), 0, "%s", err.msg);
	submit("a.yaml", "second\n");
	cr_assert_eq(lp_spool_claim(spool, "a.yaml", &err), 1);
	cr_assert_eq(lp_spool_attempts(spool, "a.yaml"), 0);
	lp_spool_close(spool);
}

static bool in_spool(const char *sub, const char *name)
{
	char *path = g_build_filename(dir, "sp", sub, name, NULL);
	bool there = g_file_test(path, G_FILE_TEST_EXISTS);
	g_free(path);
	return there;
}

static char *text_of(const char *sub, const char *name)
{
	char *path = g_build_filename(dir, "sp", sub, name, NULL);
	char *text = NULL;
	cr_assert(g_file_get_contents(path, &text, NULL, NULL), "%s/%s missing", sub, name);
	g_free(path);
	return text;
}

/* A job file never replaces another of the same name: a claim waits, a
 * requeue says so, and finished records are kept as ID~2, ID~3... */
Test(jobfs, spool_same_name)
{
	open_spool();
	submit("a.yaml", "first\n");
	cr_assert_eq(lp_spool_claim(spool, "a.yaml", &err), 1);
	submit("a.yaml", "second\n");
	cr_assert_eq(lp_spool_claim(spool, "a.yaml", &err), 0);
	char *text = text_of("running", "a.yaml");
	cr_assert_str_eq(text, "first\n");
	g_free(text);

	/* The running one's count survives the queued one's end. */
	cr_assert_eq(lp_spool_requeue(spool, "a.yaml", 1, &err), LP_SPOOL_NAME_TAKEN);
	cr_assert_eq(lp_spool_attempts(spool, "a.yaml"), 1);
	char *record = NULL;
	cr_assert_eq(lp_spool_finish(spool, "incoming", "a.yaml", false, "second: 1\n", &record,
				     &err), 0, "%s", err.msg);
	cr_assert_str_eq(record, "a.yaml");
	g_free(record);
	cr_assert_eq(lp_spool_attempts(spool, "a.yaml"), 1);
	cr_assert_eq(lp_spool_requeue(spool, "a.yaml", 1, &err), 0, "%s", err.msg);
	cr_assert_eq(lp_spool_claim(spool, "a.yaml", &err), 1);
	cr_assert_eq(lp_spool_finish(spool, "running", "a.yaml", false, "first: 1\n", &record,
				     &err), 0, "%s", err.msg);
	cr_assert_str_eq(record, "a~2.yaml");
	g_free(record);
	text = text_of("failed", "a.yaml");
	cr_assert_str_eq(text, "second\n");
	g_free(text);
	text = text_of("failed", "a~2.report.yaml");
	cr_assert_str_eq(text, "first: 1\n");
	g_free(text);

	/* A queued job taken back by its owner leaves no record. */
	submit("b.yaml", "third\n");
	char *b = g_build_filename(dir, "sp", "incoming", "b.yaml", NULL);
	cr_assert_eq(unlink(b), 0);
	g_free(b);
	cr_assert_eq(lp_spool_finish(spool, "incoming", "b.yaml", true, "b: 1\n", NULL, &err),
		     LP_EIO);
	cr_assert_str_eq(err.msg, "cannot move b.yaml to done/: it is gone from incoming/");
	cr_assert_not(in_spool("done", "b.report.yaml"));
	lp_spool_close(spool);
}

/* Spool invariant (14): what may not run never leaves incoming/. An entry
 * that is not a regular file is removed (a directory only when empty,
 * else left); a regular file that fails the checks is left; each is said
 * once, what was left is not said again. */
Test(jobfs, spool_refuses_what_may_not_run)
{
	open_spool();
	char *in = g_build_filename(dir, "sp", "incoming", NULL);
	char *path;
#define IN(name) (g_free(path), path = g_build_filename(in, name, NULL))
	path = NULL;
	cr_assert_eq(mkdir(IN("dir.yaml"), 0777), 0);
	cr_assert_eq(mkdir(IN("full.yaml"), 0777), 0);
	char *inner = g_build_filename(path, "x", NULL);
	cr_assert(g_file_set_contents(inner, "x", -1, NULL));
	cr_assert_eq(mkfifo(IN("fifo.yaml"), 0666), 0);
	cr_assert_eq(symlink("/etc/passwd", IN("link.yaml")), 0);
	submit("shared.yaml", "x\n");
	cr_assert_eq(chmod(IN("shared.yaml"), 0664), 0);
	submit("linked.yaml", "x\n");
	char *other = in_dir("other-link");
	cr_assert_eq(link(IN("linked.yaml"), other), 0);
	const struct {
		const char *name, *said;
		bool left;
	} cases[] = {
		{"dir.yaml", "dir.yaml: not a regular file; removed from incoming/", false},
		{"fifo.yaml", "fifo.yaml: not a regular file; removed from incoming/", false},
		{"full.yaml", "full.yaml: not a regular file; left in incoming/ (it cannot be removed: "
			      "Directory not empty)", true},
		{"link.yaml", "link.yaml: not a regular file; removed from incoming/", false},
		{"linked.yaml", "linked.yaml: has 2 links; a job file must have one; left in incoming/",
		 true},
		{"shared.yaml", "shared.yaml: writable by others than its owner; left in incoming/", true},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		cr_assert_eq(lp_spool_claim(spool, cases[i].name, &err), LP_SPOOL_REFUSED, "%s",
			     cases[i].name);
		cr_assert_str_eq(err.msg, cases[i].said);
		cr_assert_eq(in_spool("incoming", cases[i].name), cases[i].left, "%s", cases[i].name);
		cr_assert_not(in_spool("running", cases[i].name));
		if (cases[i].left) /* said once */
			cr_assert_eq(lp_spool_claim(spool, cases[i].name, &err), 0);
	}
	/* Mended, it is taken. */
	cr_assert_eq(chmod(IN("shared.yaml"), 0644), 0);
	cr_assert_eq(lp_spool_claim(spool, "shared.yaml", &err), 1, "%s", err.msg);
	cr_assert_eq(unlink(other), 0);
	cr_assert_eq(lp_spool_claim(spool, "linked.yaml", &err), 1, "%s", err.msg);
	/* Found in running/ (left by a daemon before this rule, or swapped in
	 * by its owner between the check and the claim's rename): put back,
	 * under a hidden name when its own is taken in incoming/. */
	char *run = g_build_filename(dir, "sp", "running", "d1.yaml", NULL);
	char *run2 = g_build_filename(dir, "sp", "running", "d2.yaml", NULL);
	cr_assert_eq(mkdir(run, 0777), 0);
	cr_assert_eq(mkdir(run2, 0777), 0);
	char *inner2 = g_build_filename(run2, "x", NULL);
	cr_assert(g_file_set_contents(inner2, "x", -1, NULL));
	cr_assert_eq(mkdir(IN("d2.yaml"), 0777), 0);
	GPtrArray *refused = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *left = lp_spool_leftovers(spool, refused);
	cr_assert_eq(left->len, 2);
	cr_assert_str_eq(left->pdata[0], "linked.yaml");
	cr_assert_str_eq(left->pdata[1], "shared.yaml");
	cr_assert_eq(refused->len, 2);
	cr_assert_str_eq(refused->pdata[1], "d1.yaml: not a regular file; removed from running/");
	cr_assert_str_eq(refused->pdata[0], "d2.yaml: not a regular file; put back in incoming/ as "
					    ".refused-d2.yaml (it cannot be removed: Directory not empty)");
	cr_assert(in_spool("incoming", ".refused-d2.yaml"));
	cr_assert_not(in_spool("running", "d2.yaml"));
#undef IN
	g_ptr_array_unref(left);
	g_ptr_array_unref(refused);
	g_free(inner);
	g_free(inner2);
	g_free(run);
	g_free(run2);
	g_free(other);
	g_free(path);
	g_free(in);
	lp_spool_close(spool);
}
