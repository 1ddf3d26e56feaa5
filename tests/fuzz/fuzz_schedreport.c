/* libFuzzer target: the YAML report of laplace schedule --report read back
 * by laplace report --schedule (lp_report_read_schedule), for a report
 * of the demo directory (fixtures/demo merged per process: units 64/64,
 * 65/65 and 65/66, one each). Checks on a report that reads: a known
 * policy, one entry per CPU, none with more references than ticks, and
 * the directory's units, each with references between ticks 0 and
 * ticks - 1; a report that does not read is LP_EINPUT or LP_EIO. */
#include "fuzz_input.h"

#include <glib.h>

#include "report/collect.h"
#include "sched/schedule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	static lp_sched_unit demo_units[] = {{.pid = 0x64, .tid = 0x64},
					      {.pid = 0x65, .tid = 0x65},
					      {.pid = 0x65, .tid = 0x66}};
	lp_report rep = {.units = demo_units, .nunits = G_N_ELEMENTS(demo_units)};
	lp_error err;
	if (lp_report_read_schedule(&rep, path, &err)) {
		FUZZ_CHECK(err.status == LP_EINPUT || err.status == LP_EIO);
		FUZZ_CHECK(!rep.schedule);
		return 0;
	}
	lp_report_schedule *sc = rep.schedule;
	FUZZ_CHECK(sc && lp_sched_policy_parse(sc->policy) >= 0 && sc->ncpus >= 1 && !sc->columns);
	FUZZ_CHECK(sc->nunits == rep.nunits);
	for (size_t u = 0; u < sc->nunits; u++)
		FUZZ_CHECK(sc->unit[u].pid == demo_units[u].pid && sc->unit[u].tid == demo_units[u].tid);
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
