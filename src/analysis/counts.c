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
	c->records = ix->kernel.records + ix->orphan.records;
	c->references = ix->kernel.references + ix->orphan.references;
	c->records_of = g_new0(uint64_t, ix->nprocesses);
	c->references_of = g_new0(uint64_t, ix->nprocesses);
	for (size_t i = 0; i < ix->nprocesses; i++) {
		const lp_index_process *p = &ix->processes[i];
		for (size_t k = 0; k < p->ntasks; k++) {
			c->records_of[i] += p->tasks[k].file.records;
			c->references_of[i] += p->tasks[k].file.references;
		}
		c->tasks += p->ntasks;
		c->records += c->records_of[i];
		c->references += c->references_of[i];
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
