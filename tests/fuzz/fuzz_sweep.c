/* libFuzzer target: the table of laplace schedule --memory M1,M2,... read
 * back by laplace report --sweep (lp_sweep_read) and drawn. Checks on a
 * table that reads: rows within the bound, each with a memory of at least
 * 1, busy ticks equal to references, no more evictions than faults; its
 * knee one of its rows; its page written. A table that does not read is
 * LP_EINPUT or LP_EIO. */
#include "fuzz_input.h"

#include <glib.h>

#include "report/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	lp_error err;
	lp_sweep *s = lp_sweep_read(path, &err);
	if (!s) {
		FUZZ_CHECK(err.status == LP_EINPUT || err.status == LP_EIO);
		return 0;
	}
	FUZZ_CHECK(s->nrows <= LP_SWEEP_MAX_ROWS);
	for (size_t i = 0; i < s->nrows; i++)
		FUZZ_CHECK(s->rows[i].memory >= 1 && s->rows[i].busy_ticks == s->rows[i].references &&
			   s->rows[i].evictions <= s->rows[i].faults &&
			   s->rows[i].utilization >= 0 && s->rows[i].utilization <= 1);
	size_t knee = lp_sweep_knee(s);
	FUZZ_CHECK(knee == SIZE_MAX || knee < s->nrows);
	lp_output *out = fuzz_sink();
	FUZZ_CHECK(lp_sweep_write_html(s, out, &err) == 0);
	lp_sweep_free(s);
	return 0;
}
