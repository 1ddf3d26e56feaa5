/* libFuzzer target: a per-process directory read for re-scheduling
 * (lp_taskdir) and scheduled (lp_schedule_run). The directory is made
 * once with a fixed index.yaml (process 65, tasks 65 and 66, the kernel
 * file); each input's first byte picks the policy, quantum, processors
 * and stream mode, the rest, split at NUL bytes, is the task files 65/65,
 * 65/66 and kernel. One file open at a time, so streams are reopened where
 * they stopped. Checks: a refused directory is an input error naming a
 * file of it; a schedule emits as many references as its report counts;
 * with three threads parsing ahead (and mapped pages let go as they are
 * read), the same references or the same error. */
#include "fuzz_input.h"

#include <errno.h>
#include <sys/stat.h>

#include "formats/taskdir.h"
#include "sched/schedule.h"

static const char index_yaml[] =
	"format: laplace-per-process\nversion: 1\nlayout: task\n"
	"inputs:\n  reference: r\n  kernel: k\n"
	"processes:\n- pid: \"65\"\n  programs: [/bin/ls]\n  tasks:\n"
	"  - tid: \"65\"\n    path: 65/65\n    records: 0\n    references: 0\n"
	"  - tid: \"66\"\n    path: 65/66\n    records: 0\n    references: 0\n"
	"kernel:\n  path: kernel\n  records: 0\n  references: 0\n"
	"orphan:\n  records: 0\n  references: 0\n";

/* What a run emitted: a count and a hash of the references in order. */
typedef struct emitted {
	uint64_t count, hash;
} emitted;

static int hash_refs(void *ctx, const lp_sched_out *refs, size_t n, lp_error *err)
{
	(void)err;
	emitted *e = ctx;
	for (size_t i = 0; i < n; i++) {
		uint64_t v[3] = {refs[i].canonical, refs[i].cpu, (uint64_t)refs[i].type};
		for (int k = 0; k < 3; k++)
			e->hash = (e->hash ^ v[k]) * UINT64_C(0x100000001b3);
	}
	e->count += n;
	return 0;
}

/* One run with threads: 0 or the error's status, *out and *err set. */
static int run(const char *dir, const lp_sched_options *opt, lp_taskdir_options topt, unsigned threads,
	       emitted *out, lp_error *err)
{
	topt.threads = threads;
	*out = (emitted){0, UINT64_C(0xcbf29ce484222325)};
	lp_taskdir *t = lp_taskdir_open(dir, &topt, err);
	if (!t) {
		FUZZ_CHECK(err->status == LP_EINPUT);
		FUZZ_CHECK(strstr(err->msg, "td/"));
		return err->status;
	}
	lp_sched_sink sink = {.ctx = out, .refs = hash_refs};
	lp_sched_report rep = {0};
	int rc = lp_schedule_run(lp_taskdir_input(t), opt, &sink, &rep, err);
	if (rc) {
		FUZZ_CHECK(rc == LP_EINPUT && err->status == LP_EINPUT);
	} else {
		uint64_t counted = 0;
		for (unsigned c = 0; c < rep.cpus; c++)
			counted += rep.cpu[c].references;
		FUZZ_CHECK(counted == out->count);
		lp_sched_report_free(&rep);
	}
	lp_taskdir_close(t);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *dir;
	if (!dir) {
		dir = fuzz_dir_path_of("td");
		char *sub = fuzz_dir_path_of("td/65");
		if ((mkdir(dir, 0700) && errno != EEXIST) || (mkdir(sub, 0700) && errno != EEXIST))
			abort();
		free(sub);
		free(fuzz_dir_file("td/index.yaml", (const uint8_t *)index_yaml, sizeof index_yaml - 1));
	}
	uint8_t knobs = size ? data[0] : 0;
	const uint8_t *p = size ? data + 1 : data, *end = data + size;
	static const char *const names[] = {"td/65/65", "td/65/66", "td/kernel"};
	for (int f = 0; f < 3; f++) {
		const uint8_t *nul = memchr(p, '\0', (size_t)(end - p));
		const uint8_t *stop = f < 2 && nul ? nul : end;
		free(fuzz_dir_file(names[f], p, (size_t)(stop - p)));
		p = stop < end ? stop + 1 : end;
	}

	lp_sched_options opt = {
		.policy = (enum lp_sched_policy)(knobs % LP_SCHED_POLICY_COUNT),
		.quantum = 1 + (knobs >> 2 & 7),
		.cpus = 1 + (knobs >> 5 & 3),
		.seed = knobs,
		.renumber = knobs & 0x80,
	};
	lp_taskdir_options topt = {
		.unit_streams = opt.policy != LP_SCHED_AS_TRACED,
		.user_only = knobs & 0x10,
		.max_open = 1,
		.slice = opt.quantum,
	};
	/* Parsed ahead by three threads (blocks of a few references in
	 * fuzz builds), and the pages of mapped files let go as they are
	 * read, the run is the same, and so is its error. */
	lp_error err1 = {0}, err3 = {0};
	emitted one, three;
	int rc1 = run(dir, &opt, topt, 1, &one, &err1);
	topt.map_hold = 1;
	int rc3 = run(dir, &opt, topt, 3, &three, &err3);
	FUZZ_CHECK(rc1 == rc3);
	FUZZ_CHECK(rc1 ? strcmp(err1.msg, err3.msg) == 0
		       : one.count == three.count && one.hash == three.hash);
	return 0;
}
