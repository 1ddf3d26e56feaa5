/* The batch engine's choices (jobs/batch.h): how many jobs run at once
 * under Slurm, and which jobs a shard takes. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/batch.h"
#include "scratch.h"

static void unset_slurm(void)
{
	g_unsetenv("SLURM_CPUS_PER_TASK");
	g_unsetenv("SLURM_CPUS_ON_NODE");
}

TestSuite(batch, .init = unset_slurm, .fini = unset_slurm);

Test(batch, jobs_at_once_from_slurm)
{
	cr_assert_eq(lp_job_pool_default_max_running(), (size_t)g_get_num_processors());
	g_setenv("SLURM_CPUS_ON_NODE", "6", TRUE);
	cr_assert_eq(lp_job_pool_default_max_running(), 6);
	g_setenv("SLURM_CPUS_PER_TASK", "3", TRUE);
	cr_assert_eq(lp_job_pool_default_max_running(), 3);
	/* Empty or nonsense values are passed over, as if not set. */
	g_setenv("SLURM_CPUS_PER_TASK", "", TRUE);
	cr_assert_eq(lp_job_pool_default_max_running(), 6);
	g_setenv("SLURM_CPUS_ON_NODE", "0", TRUE);
	g_setenv("SLURM_CPUS_PER_TASK", "2x", TRUE);
	cr_assert_eq(lp_job_pool_default_max_running(), (size_t)g_get_num_processors());
}

/* Jobs whose inputs have these sizes (reference; an empty kernel), shared
 * out: which shard takes each. */
static void shards_of(const size_t *sizes, size_t n, size_t nshards, bool by_size, size_t *shard_of)
{
	char *dir = scratch_dir_new();
	lp_job_spec *specs = g_new0(lp_job_spec, n);
	char *empty = scratch_file(dir, "kern", "", 0);
	for (size_t i = 0; i < n; i++) {
		char name[16];
		g_snprintf(name, sizeof name, "ref%zu", i);
		char *data = g_malloc0(sizes[i] + 1);
		specs[i].reference = scratch_file(dir, name, data, sizes[i]);
		g_free(data);
		specs[i].kernel = g_strdup(empty);
		specs[i].output = g_strdup_printf("%s/out%zu", dir, i);
	}
	for (size_t k = 0; k < nshards; k++) {
		lp_batch b;
		lp_error err = {0};
		lp_batch_init(&b, "test");
		cr_assert_eq(lp_batch_set_jobs(&b, "jobs.yaml", specs, n, &err), 0);
		lp_batch_select_shard(&b, k, nshards, by_size);
		for (size_t j = 0; j < b.njobs; j++)
			shard_of[b.jobs[j].index] = k;
		lp_batch_clear(&b);
	}
	g_free(empty);
	lp_job_specs_free(specs, n);
	scratch_dir_free(dir);
}

Test(batch, shard_by_size_largest_first)
{
	/* 900 to shard 0; 500 and 400 to shard 1 (900 both); 300 to 0 (a
	 * tie goes to the lower shard); the 100s, in file order, to 1. */
	const size_t sizes[] = {100, 900, 300, 500, 400, 100};
	const size_t want[] = {1, 0, 0, 1, 1, 1};
	size_t got[6];
	shards_of(sizes, 6, 2, true, got);
	for (size_t i = 0; i < 6; i++)
		cr_assert_eq(got[i], want[i], "job %zu in shard %zu, not %zu", i, got[i], want[i]);
}

Test(batch, shard_by_index_round_robin)
{
	const size_t sizes[] = {100, 900, 300, 500, 400, 100, 7};
	size_t got[7];
	shards_of(sizes, 7, 3, false, got);
	for (size_t i = 0; i < 7; i++)
		cr_assert_eq(got[i], i % 3);
}

Test(batch, same_output_refused)
{
	lp_job_spec specs[2] = {{0}};
	specs[0].output = "a/x.txt";
	specs[0].line = 2;
	specs[1].output = "a/./x.txt";
	specs[1].line = 3;
	specs[1].key_line[LP_JOB_KEY_OUTPUT] = 5;
	lp_batch b;
	lp_error err = {0};
	lp_batch_init(&b, "test");
	cr_assert_eq(lp_batch_set_jobs(&b, "jobs.yaml", specs, 2, &err), LP_EINPUT);
	cr_assert_str_eq(err.msg, "jobs.yaml:5: job 1 writes 'a/./x.txt' like job 0 (line 2)");
	lp_batch_clear(&b);
}
