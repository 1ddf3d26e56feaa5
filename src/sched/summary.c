/* A schedule's report, as YAML and as a picture. */
#include "sched/summary.h"

#include <inttypes.h>

#include "io/yamlout.h"

static int emit_report(yaml_emitter_t *em, const lp_sched_report *rep)
{
	if (lp_yaml_pair(em, "policy", lp_sched_policy_names[rep->policy]) ||
	    lp_yaml_pair_u64(em, "quantum", rep->quantum) || lp_yaml_pair_u64(em, "cpus", rep->cpus) ||
	    lp_yaml_pair_u64(em, "ticks", rep->ticks) || lp_yaml_key(em, "cpu_stats") ||
	    lp_yaml_begin(em, true))
		return -1;
	for (unsigned i = 0; i < rep->cpus; i++)
		if (lp_yaml_begin_flow(em, false) || lp_yaml_pair_u64(em, "cpu", i) ||
		    lp_yaml_pair_u64(em, "references", rep->cpu[i].references) ||
		    lp_yaml_pair_u64(em, "idle_ticks", rep->cpu[i].idle_ticks) ||
		    lp_yaml_pair_u64(em, "slices", rep->cpu[i].slices) || lp_yaml_end(em, false))
			return -1;
	if (lp_yaml_end(em, true) || lp_yaml_key(em, "units") ||
	    (rep->nunits ? lp_yaml_begin(em, true) : lp_yaml_begin_flow(em, true)))
		return -1;
	for (size_t k = 0; k < rep->nunits; k++) {
		size_t u = rep->unit_order[k];
		const lp_sched_unit *unit = &rep->units[u];
		const lp_sched_unit_stats *us = &rep->unit[u];
		if (lp_yaml_begin_flow(em, false) || lp_yaml_pair_u64(em, "pid", unit->pid) ||
		    lp_yaml_pair_u64(em, "tid", unit->tid) ||
		    lp_yaml_pair_u64(em, "incarnation", unit->incarnation) ||
		    lp_yaml_pair_u64(em, "references", us->references) ||
		    lp_yaml_pair_u64(em, "slices", us->slices))
			return -1;
		if (us->references && (lp_yaml_pair_u64(em, "first_tick", us->first_tick) ||
				       lp_yaml_pair_u64(em, "last_tick", us->last_tick)))
			return -1;
		if (lp_yaml_end(em, false))
			return -1;
	}
	return lp_yaml_end(em, true);
}

/* The report (laplace-formats(5), "RE-SCHEDULING"), through the one YAML emitter. */
GString *lp_sched_report_yaml(const lp_sched_report *rep, lp_error *err)
{
	GString *y = g_string_new(NULL);
	yaml_emitter_t em;
	bool failed = lp_yaml_start(&em, y) || emit_report(&em, rep);
	if (lp_yaml_finish(&em) || failed) { /* finish frees the emitter in any case */
		g_string_free(y, TRUE);
		lp_fail(err, LP_EIO, "cannot write the report: YAML emitter failed");
		return NULL;
	}
	return y;
}

/* Letters for tasks in the picture, in report order; '*' past them. */
static const char task_letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* One line per processor, as drmemtrace's schedule_stats draws it: a
 * letter per slice (its task's), '_' for a stretch of idle ticks; then
 * the legend. */
GString *lp_sched_report_picture(const lp_sched_report *rep)
{
	GString *p = g_string_new(NULL);
	char *letter = g_new(char, rep->nunits ? rep->nunits : 1);
	GString *legend = g_string_new(NULL);
	size_t ntasks = 0;
	for (size_t k = 0; k < rep->nunits; k++) {
		size_t u = rep->unit_order[k];
		const lp_sched_unit *unit = &rep->units[u];
		letter[u] = 0;
		for (size_t j = 0; j < k && !letter[u]; j++) {
			const lp_sched_unit *other = &rep->units[rep->unit_order[j]];
			if (other->pid == unit->pid && other->tid == unit->tid)
				letter[u] = letter[rep->unit_order[j]];
		}
		if (letter[u])
			continue;
		letter[u] = ntasks < sizeof task_letters - 1 ? task_letters[ntasks] : '*';
		if (ntasks < sizeof task_letters - 1)
			g_string_append_printf(legend, " %c=%" PRIx64 "/%" PRIx64, letter[u], unit->pid,
					       unit->tid);
		ntasks++;
	}
	g_string_append_printf(p, "%s schedule, %u CPU%s, %" PRIu64 " tick%s\n",
			       lp_sched_policy_names[rep->policy], rep->cpus, rep->cpus == 1 ? "" : "s",
			       rep->ticks, rep->ticks == 1 ? "" : "s");
	for (unsigned i = 0; i < rep->cpus; i++) {
		g_string_append_printf(p, "Core #%u schedule: ", i);
		uint64_t next_tick = 0;
		for (size_t s = 0; s < rep->nslices[i]; s++) {
			const lp_sched_slice *sl = &rep->slices[i][s];
			if (sl->first_tick > next_tick)
				g_string_append_c(p, '_');
			g_string_append_c(p, letter[sl->unit]);
			next_tick = sl->last_tick + 1;
		}
		if (rep->cpu[i].slices > rep->nslices[i])
			g_string_append_printf(p, "... (%" PRIu64 " slice%s)", rep->cpu[i].slices,
					       rep->cpu[i].slices == 1 ? "" : "s");
		else if (next_tick < rep->ticks)
			g_string_append_c(p, '_');
		g_string_append_c(p, '\n');
	}
	g_string_append_printf(p, "Tasks (pid/tid):%s%s\n", legend->str,
			       ntasks > sizeof task_letters - 1 ? " *=others" : "");
	g_string_append(p, rep->policy == LP_SCHED_AS_TRACED
			? "_: references of the kernel or of no task\n" : "_: idle\n");
	g_string_free(legend, TRUE);
	g_free(letter);
	return p;
}
