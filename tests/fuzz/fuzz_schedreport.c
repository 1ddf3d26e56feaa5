/* libFuzzer target: the YAML report of laplace schedule --report read back
 * by laplace report --schedule (lp_report_read_schedule; the file is
 * capped at its maximum size). Checks on a report that reads: a policy,
 * one entry per CPU, none with more references than ticks, and every unit
 * with references between ticks 0 and ticks - 1; a report that does not
 * read is LP_EINPUT or LP_EIO. */
#include "fuzz_input.h"

#include <glib.h>

#include "laplace/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	lp_report rep = {0};
	lp_error err;
	if (lp_report_read_schedule(&rep, path, &err)) {
		FUZZ_CHECK(err.status == LP_EINPUT || err.status == LP_EIO);
		FUZZ_CHECK(!rep.schedule);
		return 0;
	}
	lp_report_schedule *sc = rep.schedule;
	FUZZ_CHECK(sc && sc->policy && sc->ncpus >= 1 && !sc->columns);
	for (size_t c = 0; c < sc->ncpus; c++)
		FUZZ_CHECK(sc->cpu[c].references <= sc->ticks);
	for (size_t u = 0; u < sc->nunits; u++)
		FUZZ_CHECK(!sc->unit[u].references ||
			   (sc->unit[u].first_tick <= sc->unit[u].last_tick &&
			    sc->unit[u].last_tick < sc->ticks));
	g_free(sc->policy);
	g_free(sc->cpu);
	g_free(sc->unit);
	g_free(sc);
	return 0;
}
