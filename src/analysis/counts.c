/* A directory's counts from its index. */
#include "analysis/counts.h"

#include <string.h>

int lp_dir_counts_read(const char *dir, lp_dir_counts *c, lp_error *err)
{
	memset(c, 0, sizeof *c);
	lp_index *ix = lp_index_read(dir, err);
	if (!ix)
		return err->status;
	if (lp_index_count(dir, ix, err)) {
		lp_index_free(ix);
		return err->status;
	}
	c->ix = ix;
	/* References are no more than records in every file: only the
	 * records' sums can pass 2^64 - 1, which no files' counts do. */
	bool wrapped = __builtin_add_overflow(ix->kernel.records, ix->orphan.records, &c->records);
	c->references = ix->kernel.references + ix->orphan.references;
	c->records_of = g_new0(uint64_t, ix->nprocesses);
	c->references_of = g_new0(uint64_t, ix->nprocesses);
	for (size_t i = 0; i < ix->nprocesses; i++) {
		const lp_index_process *p = &ix->processes[i];
		for (size_t k = 0; k < p->ntasks; k++) {
			wrapped |= __builtin_add_overflow(c->records_of[i], p->tasks[k].file.records,
							  &c->records_of[i]);
			c->references_of[i] += p->tasks[k].file.references;
		}
		c->tasks += p->ntasks;
		wrapped |= __builtin_add_overflow(c->records, c->records_of[i], &c->records);
		c->references += c->references_of[i];
	}
	if (wrapped) {
		lp_dir_counts_clear(c);
		return lp_fail(err, LP_EINPUT, "%s/index.yaml: the records of its files together pass "
			       "2^64 - 1, which no files hold", dir);
	}
	return 0;
}

void lp_dir_counts_clear(lp_dir_counts *c)
{
	lp_index_free(c->ix);
	g_free(c->records_of);
	g_free(c->references_of);
	memset(c, 0, sizeof *c);
}
