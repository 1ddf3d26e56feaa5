/* A schedule's report (laplace-formats(5), "RE-SCHEDULING", "Output and
 * report"), both directions: written as YAML by laplace schedule --report,
 * read back by laplace report --schedule; and drawn as a picture.
 *
 * Read strictly, as laplace schedule writes it: the keys it writes and no
 * others, each once, values as its command line takes them, no anchors or
 * aliases, and exactly the directory's units in their order. The YAML is
 * read event by event, not loaded as a document, and the file may be no
 * larger than such a report of the directory can be: memory follows the
 * directory, whatever the file holds. */
#include "sched/schedreport.h"

#include <inttypes.h>
#include <string.h>
#include <yaml.h>

#include "core/numbers.h"
#include "io/inbuf.h"
#include "io/yamlout.h"

/* The keys of a memory (9.4.5), after ticks. */
static int emit_memory(yaml_emitter_t *em, const lp_sched_report *rep)
{
	uint64_t busy = lp_sched_report_busy(rep);
	char utilization[32], idle[LP_U128_DIGITS];
	lp_sched_report_utilization(rep, utilization);
	return lp_yaml_pair_u64(em, "memory", rep->memory) ||
	       lp_yaml_pair(em, "replacement", rep->replacement->name) ||
	       lp_yaml_pair_u64(em, "fault_ticks", rep->fault_ticks) ||
	       lp_yaml_pair_u64(em, "faults", rep->mem.faults) ||
	       lp_yaml_pair_u64(em, "waits", rep->mem.waits) ||
	       lp_yaml_pair_u64(em, "frame_waits", rep->mem.frame_waits) ||
	       lp_yaml_pair_u64(em, "evictions", rep->mem.evictions) ||
	       lp_yaml_pair_u64(em, "busy_ticks", busy) ||
	       lp_yaml_key(em, "idle_ticks") ||
	       lp_yaml_scalar(em, lp_fmt_u128(idle, lp_sched_report_idle(rep)), YAML_PLAIN_SCALAR_STYLE) ||
	       lp_yaml_pair(em, "utilization", utilization);
}

static int emit_report(yaml_emitter_t *em, const lp_sched_report *rep)
{
	if (lp_yaml_pair(em, "policy", lp_sched_policy_names[rep->policy]) ||
	    lp_yaml_pair_u64(em, "quantum", rep->quantum) || lp_yaml_pair_u64(em, "cpus", rep->cpus) ||
	    lp_yaml_pair_u64(em, "ticks", rep->ticks) || (rep->memory && emit_memory(em, rep)) ||
	    lp_yaml_key(em, "cpu_stats") || lp_yaml_begin(em, true))
		return -1;
	for (unsigned i = 0; i < rep->cpus; i++)
		if (lp_yaml_begin_flow(em, false) || lp_yaml_pair_u64(em, "cpu", i) ||
		    lp_yaml_pair_u64(em, "references", rep->cpu[i].references) ||
		    lp_yaml_pair_u64(em, "idle_ticks", rep->cpu[i].idle_ticks) ||
		    lp_yaml_pair_u64(em, "slices", rep->cpu[i].slices) ||
		    (rep->memory && (lp_yaml_pair_u64(em, "faults", rep->cpu[i].faults) ||
				     lp_yaml_pair_u64(em, "waits", rep->cpu[i].waits))) ||
		    lp_yaml_end(em, false))
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
		if (rep->memory && (lp_yaml_pair_u64(em, "faults", us->faults) ||
				    lp_yaml_pair_u64(em, "waits", us->waits) ||
				    lp_yaml_pair_u64(em, "blocked_ticks", us->blocked_ticks)))
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

/* ---- reading it back ---- */

/* The longest lines laplace schedule writes, every count 20 digits long,
 * and room for the four header lines. */
#define UNIT_LINE_MAX 320
#define CPU_LINE_MAX 160
#define HEADER_MAX 4096

typedef struct sched_reader {
	yaml_parser_t parser;
	yaml_event_t ev; /* the event last read */
	const char *name;
	lp_error *err;
	const lp_sched_unit *units; /* the directory's, in report order */
	size_t nunits;
	lp_sched_report *rep;
	size_t ncpus; /* cpu_stats entries read */
} sched_reader;

/* "NAME:LINE: field FIELD: WHAT", line counted from 0; returns -1. */
static int bad_at(sched_reader *sr, size_t line, const char *field, const char *what)
{
	lp_fail(sr->err, LP_EINPUT, "%s:%zu: field %s: %s", sr->name, line + 1, field, what);
	return -1;
}

/* The same at the event last read. */
static int bad(sched_reader *sr, const char *field, const char *what)
{
	return bad_at(sr, sr->ev.start_mark.line, field, what);
}

/* The next event; field names the value it is part of, for messages. */
static int next(sched_reader *sr, const char *field)
{
	yaml_event_delete(&sr->ev);
	if (!yaml_parser_parse(&sr->parser, &sr->ev)) {
		memset(&sr->ev, 0, sizeof sr->ev);
		lp_fail(sr->err, LP_EINPUT, "%s:%zu: not YAML: %s", sr->name,
			sr->parser.problem_mark.line + 1,
			sr->parser.problem ? sr->parser.problem : "parse error");
		return -1;
	}
	const yaml_event_t *e = &sr->ev;
	if (e->type == YAML_ALIAS_EVENT || (e->type == YAML_SCALAR_EVENT && e->data.scalar.anchor) ||
	    (e->type == YAML_SEQUENCE_START_EVENT && e->data.sequence_start.anchor) ||
	    (e->type == YAML_MAPPING_START_EVENT && e->data.mapping_start.anchor))
		return bad(sr, field, "an anchor or alias (laplace schedule writes none)");
	return 0;
}

static int expect(sched_reader *sr, const char *field, yaml_event_type_t type, const char *what)
{
	if (next(sr, field))
		return -1;
	return sr->ev.type == type ? 0 : bad(sr, field, what);
}

/* The scalar just read as a decimal count. */
static int count(sched_reader *sr, const char *field, uint64_t *out)
{
	if (sr->ev.type != YAML_SCALAR_EVENT)
		return bad(sr, field, "not a single value");
	if (!lp_parse_decimal((const char *)sr->ev.data.scalar.value, 0, UINT64_MAX, out))
		return bad(sr, field, "not a decimal count");
	return 0;
}

/* The scalar just read as a decimal count that may pass 2^64 - 1. */
static int wide_count(sched_reader *sr, const char *field, lp_u128 *out)
{
	if (sr->ev.type != YAML_SCALAR_EVENT)
		return bad(sr, field, "not a single value");
	if (!lp_parse_decimal128((const char *)sr->ev.data.scalar.value, ~(lp_u128)0, out))
		return bad(sr, field, "not a decimal count");
	return 0;
}

/* The key of a mapping being read, one of keys[0, n) not seen before:
 * its index, n at the mapping's end, or -1. */
static int next_key(sched_reader *sr, const char *map, const char *const *keys, int n,
		    bool *seen)
{
	if (next(sr, map))
		return -1;
	if (sr->ev.type == YAML_MAPPING_END_EVENT)
		return n;
	if (sr->ev.type != YAML_SCALAR_EVENT)
		return bad(sr, map, "a key that is not a name");
	const char *key = (const char *)sr->ev.data.scalar.value;
	for (int k = 0; k < n; k++)
		if (!strcmp(key, keys[k])) {
			if (seen[k])
				return bad(sr, keys[k], "given twice");
			seen[k] = true;
			return k;
		}
	char what[96], shown[LP_QUOTE_SIZE];
	g_snprintf(what, sizeof what, "not a key of %s%s (laplace schedule writes no such key)",
		   strcmp(map, "report") ? "an entry of " : "a schedule ", map);
	return bad(sr, lp_quote(shown, key, sr->ev.data.scalar.length), what);
}

/* A mapping of counts with exactly the keys keys[0, n) (optional ones
 * may be absent; have says which are there), from its start event. */
static int read_counts(sched_reader *sr, const char *list, const char *const *keys, int n,
		       uint64_t *values, bool *have)
{
	if (sr->ev.type != YAML_MAPPING_START_EVENT)
		return bad(sr, list, "an entry is not a mapping");
	memset(have, 0, sizeof *have * (size_t)n);
	for (;;) {
		int k = next_key(sr, list, keys, n, have);
		if (k < 0)
			return -1;
		if (k == n)
			return 0;
		if (next(sr, keys[k]) || count(sr, keys[k], &values[k]))
			return -1;
	}
}


/* Keys from CPU_FAULTS on are a memory's (9.4.5): all there with one,
 * none without. */
enum { CPU_CPU, CPU_REFERENCES, CPU_IDLE, CPU_SLICES, CPU_FAULTS, CPU_WAITS, CPU_KEYS };
static const char *const cpu_keys[CPU_KEYS] = {"cpu",    "references", "idle_ticks",
					       "slices", "faults",     "waits"};

/* An entry's keys of a memory [from, n): all there or none; *with says
 * which. */
static int memory_keys(sched_reader *sr, const char *const *keys, int from, int n, const bool *have,
		       bool *with)
{
	*with = have[from];
	for (int k = from; k < n; k++)
		if (have[k] != *with)
			return bad(sr, keys[have[k] ? from : k], "missing (a schedule with a memory has "
				   "all of faults, waits and blocked_ticks, one without none)");
	return 0;
}

/* cpu_stats, from its sequence start; the checks that need ticks come
 * after the whole report is read. */
static int read_cpus(sched_reader *sr, size_t *lines)
{
	lp_sched_report *rep = sr->rep;
	rep->cpu = g_new0(lp_sched_cpu_stats, LP_SCHED_MAX_CPUS);
	for (;;) {
		if (next(sr, "cpu_stats"))
			return -1;
		if (sr->ev.type == YAML_SEQUENCE_END_EVENT)
			return 0;
		if (sr->ncpus == LP_SCHED_MAX_CPUS)
			return bad(sr, "cpu_stats", "more than 1024 entries (laplace schedule --cpus)");
		uint64_t v[CPU_KEYS];
		bool have[CPU_KEYS];
		lines[sr->ncpus] = sr->ev.start_mark.line;
		if (read_counts(sr, "cpu_stats", cpu_keys, CPU_KEYS, v, have))
			return -1;
		for (int k = 0; k < CPU_FAULTS; k++)
			if (!have[k])
				return bad(sr, cpu_keys[k], "missing");
		bool with;
		if (memory_keys(sr, cpu_keys, CPU_FAULTS, CPU_KEYS, have, &with))
			return -1;
		if (with != (rep->memory != 0))
			return bad(sr, with ? "faults" : "cpu", with ? "given without memory"
				   : "no faults and waits (a schedule with a memory gives them)");
		if (v[CPU_CPU] != sr->ncpus)
			return bad(sr, "cpu", "not the entry's place in the list");
		if (v[CPU_SLICES] > v[CPU_REFERENCES])
			return bad(sr, "slices", "more than references");
		rep->cpu[sr->ncpus++] = (lp_sched_cpu_stats){v[CPU_REFERENCES], v[CPU_IDLE], v[CPU_SLICES],
							     with ? v[CPU_FAULTS] : 0,
							     with ? v[CPU_WAITS] : 0};
	}
}

enum { U_PID, U_TID, U_INCARNATION, U_REFERENCES, U_SLICES, U_FIRST, U_LAST, U_FAULTS, U_WAITS,
       U_BLOCKED, UNIT_KEYS };
static const char *const unit_keys[UNIT_KEYS] = {
	"pid",       "tid",    "incarnation", "references", "slices", "first_tick",
	"last_tick", "faults", "waits",       "blocked_ticks"};

/* Entry i of units is not the directory's unit i: say why. */
static int wrong_unit(sched_reader *sr, size_t i, const lp_sched_unit *u)
{
	const lp_sched_unit *units = sr->units;
	size_t j = 0;
	while (j < sr->nunits && (units[j].pid != u->pid || units[j].tid != u->tid ||
				  units[j].incarnation != u->incarnation))
		j++;
	char what[200];
	if (j == sr->nunits)
		g_snprintf(what, sizeof what,
			   "pid %" PRIu64 " tid %" PRIu64 " incarnation %" PRIu64
			   ": the directory has no such unit",
			   u->pid, u->tid, u->incarnation);
	else if (j < i)
		g_snprintf(what, sizeof what,
			   "pid %" PRIu64 " tid %" PRIu64 " incarnation %" PRIu64 ": listed twice",
			   u->pid, u->tid, u->incarnation);
	else
		g_snprintf(what, sizeof what,
			   "pid %" PRIu64 " tid %" PRIu64 " incarnation %" PRIu64
			   ": out of order (laplace schedule lists pid %" PRIu64 " tid %" PRIu64
			   " incarnation %" PRIu64 " here)",
			   u->pid, u->tid, u->incarnation, units[i].pid, units[i].tid,
			   units[i].incarnation);
	return bad(sr, "units", what);
}

/* units, from its sequence start: the directory's, each once, in order. */
static int read_units(sched_reader *sr, size_t *lines)
{
	lp_sched_report *rep = sr->rep;
	rep->unit = g_new0(lp_sched_unit_stats, sr->nunits ? sr->nunits : 1);
	rep->units = g_new0(lp_sched_unit, sr->nunits ? sr->nunits : 1);
	for (;;) {
		if (next(sr, "units"))
			return -1;
		if (sr->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		uint64_t v[UNIT_KEYS] = {0};
		bool have[UNIT_KEYS];
		size_t line = sr->ev.start_mark.line;
		if (read_counts(sr, "units", unit_keys, UNIT_KEYS, v, have))
			return -1;
		for (int k = 0; k < U_FIRST; k++)
			if (!have[k])
				return bad(sr, unit_keys[k], "missing");
		bool with;
		if (memory_keys(sr, unit_keys, U_FAULTS, UNIT_KEYS, have, &with))
			return -1;
		if (with != (rep->memory != 0))
			return bad(sr, with ? "faults" : "units", with ? "given without memory"
				   : "no faults, waits and blocked_ticks (a schedule with a memory "
				     "gives them)");
		lp_sched_unit id = {.pid = v[U_PID], .tid = v[U_TID], .incarnation = v[U_INCARNATION]};
		lp_sched_unit_stats u = {v[U_REFERENCES], v[U_SLICES], v[U_FIRST], v[U_LAST],
					 v[U_FAULTS], v[U_WAITS], v[U_BLOCKED]};
		size_t i = rep->nunits;
		if (i == sr->nunits || sr->units[i].pid != id.pid || sr->units[i].tid != id.tid ||
		    sr->units[i].incarnation != id.incarnation)
			return wrong_unit(sr, i, &id);
		/* first_tick and last_tick: both there for a unit with
		 * references, both omitted for one with none (9.3). */
		if (u.references && !have[U_FIRST])
			return bad(sr, "first_tick", "missing");
		if (u.references && !have[U_LAST])
			return bad(sr, "last_tick", "missing");
		if (!u.references && (have[U_FIRST] || have[U_LAST]))
			return bad(sr, have[U_FIRST] ? "first_tick" : "last_tick",
				   "given for a unit with no references");
		if (u.slices > u.references)
			return bad(sr, "slices", "more than references");
		if (u.references && !u.slices)
			return bad(sr, "slices", "none for a unit with references");
		if (u.references && (u.first_tick > u.last_tick ||
				     u.last_tick - u.first_tick < u.references - 1))
			return bad(sr, "last_tick", "fewer ticks from first_tick than references");
		lines[i] = line;
		rep->units[i] = id;
		rep->unit[rep->nunits++] = u;
	}
	if (rep->nunits < sr->nunits) {
		char what[160];
		g_snprintf(what, sizeof what, "%zu units listed; the directory has %zu", rep->nunits,
			   sr->nunits);
		return bad(sr, "units", what);
	}
	return 0;
}

/* Keys from K_MEMORY on are a memory's (9.4.5), all there or none. They
 * come before cpu_stats and units, which need to know. */
enum { K_POLICY, K_QUANTUM, K_CPUS, K_TICKS, K_CPU_STATS, K_UNITS, K_MEMORY, K_REPLACEMENT,
       K_FAULT_TICKS, K_FAULTS, K_WAITS, K_FRAME_WAITS, K_EVICTIONS, K_BUSY, K_IDLE, K_UTILIZATION,
       TOP_KEYS };
static const char *const top_keys[TOP_KEYS] = {
	"policy",      "quantum",     "cpus",       "ticks",      "cpu_stats", "units",
	"memory",      "replacement", "fault_ticks", "faults",    "waits",     "frame_waits",
	"evictions",   "busy_ticks",  "idle_ticks", "utilization"};

/* A memory's keys against the entries, once all are read (9.4.5). */
static int check_memory(sched_reader *sr, size_t top, const uint64_t *mem, lp_u128 idle,
			const char *utilization)
{
	const lp_sched_report *rep = sr->rep;
	uint64_t cpu_faults = 0, cpu_waits = 0, unit_faults = 0, unit_waits = 0;
	for (size_t c = 0; c < sr->ncpus; c++) {
		cpu_faults += rep->cpu[c].faults;
		cpu_waits += rep->cpu[c].waits;
	}
	for (size_t u = 0; u < rep->nunits; u++) {
		unit_faults += rep->unit[u].faults;
		unit_waits += rep->unit[u].waits;
	}
	char want[32];
	uint64_t busy = lp_sched_report_busy(rep);
	lp_sched_report_utilization(rep, want);
	if (rep->policy == LP_SCHED_AS_TRACED)
		return bad_at(sr, top, "memory", "given with as-traced (only rr and random have one)");
	if (rep->mem.faults != cpu_faults || rep->mem.faults != unit_faults)
		return bad_at(sr, top, "faults", "not the CPUs' and the units' together");
	if (rep->mem.waits != cpu_waits || rep->mem.waits != unit_waits)
		return bad_at(sr, top, "waits", "not the CPUs' and the units' together");
	if (rep->mem.frame_waits > rep->mem.faults)
		return bad_at(sr, top, "frame_waits", "more than faults");
	if (rep->mem.evictions > rep->mem.faults)
		return bad_at(sr, top, "evictions", "more than faults");
	if (mem[K_BUSY - K_FAULTS] != busy)
		return bad_at(sr, top, "busy_ticks", "not the CPUs' references together");
	if (idle != lp_sched_report_idle(rep))
		return bad_at(sr, top, "idle_ticks", "not ticks x cpus less busy_ticks");
	if (strcmp(utilization, want))
		return bad_at(sr, top, "utilization", "not busy_ticks / (ticks x cpus) with six decimals");
	return 0;
}

/* The checks between fields, once all are read; the line of the entry at
 * fault is named. */
static int check_whole(sched_reader *sr, int policy, uint64_t cpus, size_t cpu_stats_line,
		       const size_t *cpu_lines, const size_t *unit_lines)
{
	const lp_sched_report *rep = sr->rep;
	if (cpus != sr->ncpus)
		return bad_at(sr, cpu_stats_line, "cpu_stats", "not one entry per CPU of cpus");
	uint64_t cpu_refs = 0, unit_refs = 0;
	for (size_t c = 0; c < sr->ncpus; c++) {
		if (rep->cpu[c].references > rep->ticks)
			return bad_at(sr, cpu_lines[c], "references", "more than ticks");
		if (rep->cpu[c].idle_ticks != rep->ticks - rep->cpu[c].references)
			return bad_at(sr, cpu_lines[c], "idle_ticks", "not ticks less references");
		cpu_refs += rep->cpu[c].references;
	}
	for (size_t i = 0; i < rep->nunits; i++) {
		if (rep->unit[i].references && rep->unit[i].last_tick >= rep->ticks)
			return bad_at(sr, unit_lines[i], "last_tick", "not between first_tick and ticks");
		unit_refs += rep->unit[i].references;
	}
	/* as-traced also emits the kernel's and orphan's references, which
	 * no unit counts. */
	if (policy == LP_SCHED_AS_TRACED ? unit_refs > cpu_refs : unit_refs != cpu_refs)
		return bad_at(sr, cpu_lines[0], "references",
			      policy == LP_SCHED_AS_TRACED ? "the CPU's, fewer than the units'"
							   : "the CPUs', not the units' together");
	return 0;
}

static int read_report(sched_reader *sr)
{
	lp_sched_report *rep = sr->rep;
	if (expect(sr, "report", YAML_STREAM_START_EVENT, "not YAML") ||
	    expect(sr, "report", YAML_DOCUMENT_START_EVENT, "not a schedule report (empty)") ||
	    expect(sr, "report", YAML_MAPPING_START_EVENT,
		   "not a schedule report (no mapping at the top)"))
		return -1;
	size_t top = sr->ev.start_mark.line, cpu_stats_line = 0;
	bool seen[TOP_KEYS] = {0};
	uint64_t cpus = 0, mem[K_UTILIZATION - K_FAULTS] = {0};
	lp_u128 idle = 0; /* ticks x cpus can pass 2^64 - 1 */
	char utilization[32] = "";
	int policy = -1;
	const lp_policy_info *replacement;
	size_t *cpu_lines = g_new0(size_t, LP_SCHED_MAX_CPUS);
	size_t *unit_lines = g_new0(size_t, sr->nunits ? sr->nunits : 1);
	int rc = 0;
	for (int k; !rc && (k = next_key(sr, "report", top_keys, TOP_KEYS, seen)) != TOP_KEYS;) {
		if (k < 0 || next(sr, top_keys[k])) {
			rc = -1;
			break;
		}
		if (k >= K_MEMORY && (seen[K_CPU_STATS] || seen[K_UNITS])) {
			rc = bad(sr, top_keys[k], "after cpu_stats or units (laplace schedule writes "
				 "a memory's keys before them)");
			break;
		}
		switch (k) {
		case K_POLICY:
			if (sr->ev.type != YAML_SCALAR_EVENT)
				rc = bad(sr, "policy", "not a single value");
			else if ((policy = lp_sched_policy_parse((const char *)sr->ev.data.scalar.value)) < 0)
				rc = bad(sr, "policy", "not as-traced, rr or random");
			else
				rep->policy = (enum lp_sched_policy)policy;
			break;
		case K_QUANTUM:
			rc = count(sr, "quantum", &rep->quantum);
			break;
		case K_CPUS:
			if (!(rc = count(sr, "cpus", &cpus)) && (cpus < 1 || cpus > LP_SCHED_MAX_CPUS))
				rc = bad(sr, "cpus", "not from 1 to 1024 (laplace schedule --cpus)");
			break;
		case K_TICKS:
			rc = count(sr, "ticks", &rep->ticks);
			break;
		case K_MEMORY:
		case K_FAULT_TICKS:
			if (!(rc = count(sr, top_keys[k], k == K_MEMORY ? &rep->memory : &rep->fault_ticks)) &&
			    (k == K_MEMORY ? rep->memory : rep->fault_ticks) - 1 >= LP_SCHED_MAX_MEMORY)
				rc = bad(sr, top_keys[k], "not from 1 to 4294967295");
			break;
		case K_REPLACEMENT:
			if (sr->ev.type != YAML_SCALAR_EVENT)
				rc = bad(sr, "replacement", "not a single value");
			else if (!(replacement = lp_sched_replacement_find(
					   (const char *)sr->ev.data.scalar.value))) {
				char *names = lp_sched_replacement_names(), *why = g_strdup_printf(
					"not %s", names);
				rc = bad(sr, "replacement", why);
				g_free(why);
				g_free(names);
			} else {
				rep->replacement = replacement;
			}
			break;
		case K_UTILIZATION:
			if (sr->ev.type != YAML_SCALAR_EVENT || sr->ev.data.scalar.length >= sizeof utilization)
				rc = bad(sr, "utilization", "not a ratio with six decimals");
			else
				memcpy(utilization, sr->ev.data.scalar.value, sr->ev.data.scalar.length + 1);
			break;
		case K_FAULTS:
		case K_WAITS:
		case K_FRAME_WAITS:
		case K_EVICTIONS:
		case K_BUSY:
			rc = count(sr, top_keys[k], &mem[k - K_FAULTS]);
			break;
		case K_IDLE:
			rc = wide_count(sr, top_keys[k], &idle);
			break;
		case K_CPU_STATS:
		case K_UNITS:
			/* The memory's keys, all or none, before the lists. */
			for (int m = K_MEMORY; !rc && m < TOP_KEYS; m++)
				if (seen[m] != seen[K_MEMORY])
					rc = bad(sr, top_keys[seen[m] ? K_MEMORY : m],
						 "missing (a schedule with a memory has all its keys "
						 "before cpu_stats, one without none)");
			if (rc)
				break;
			cpu_stats_line = k == K_CPU_STATS ? sr->ev.start_mark.line : cpu_stats_line;
			if (sr->ev.type != YAML_SEQUENCE_START_EVENT)
				rc = bad(sr, top_keys[k], "not a list");
			else
				rc = k == K_UNITS ? read_units(sr, unit_lines) : read_cpus(sr, cpu_lines);
			break;
		}
	}
	for (int k = 0; !rc && k < K_MEMORY; k++)
		if (!seen[k])
			rc = bad_at(sr, top, top_keys[k], "missing");
	rep->mem = (lp_sched_memory_stats){mem[K_FAULTS - K_FAULTS], mem[K_WAITS - K_FAULTS],
					   mem[K_FRAME_WAITS - K_FAULTS], mem[K_EVICTIONS - K_FAULTS]};
	if (!rc && policy == LP_SCHED_AS_TRACED && (rep->quantum != 0 || cpus != 1))
		rc = bad_at(sr, top, rep->quantum ? "quantum" : "cpus",
			    rep->quantum ? "not 0, as as-traced has it" : "not 1, as as-traced has it");
	if (!rc && policy != LP_SCHED_AS_TRACED && rep->quantum == 0)
		rc = bad_at(sr, top, "quantum", "0 (laplace schedule --quantum is at least 1)");
	if (!rc)
		rc = check_whole(sr, policy, cpus, cpu_stats_line, cpu_lines, unit_lines);
	rep->cpus = (unsigned)cpus;
	if (!rc && rep->memory)
		rc = check_memory(sr, top, mem, idle, utilization);
	if (!rc && (expect(sr, "report", YAML_DOCUMENT_END_EVENT, "more after the report") ||
		    expect(sr, "report", YAML_STREAM_END_EVENT, "a second document")))
		rc = -1;
	rep->cpus = (unsigned)cpus;
	g_free(cpu_lines);
	g_free(unit_lines);
	return rc;
}

int lp_sched_report_read(const char *path, const lp_sched_unit *units, size_t nunits,
			 lp_sched_report *rep, lp_error *err)
{
	memset(rep, 0, sizeof *rep);
	size_t max_bytes = HEADER_MAX + CPU_LINE_MAX * LP_SCHED_MAX_CPUS + UNIT_LINE_MAX * nunits;
	char *text = NULL;
	size_t len = 0;
	if (lp_read_small_file(path, true, max_bytes, "schedule report of this directory", &text, &len,
			       err))
		return err->status;
	sched_reader sr = {.name = path, .err = err, .units = units, .nunits = nunits, .rep = rep};
	yaml_parser_initialize(&sr.parser);
	yaml_parser_set_input_string(&sr.parser, (const unsigned char *)text, len);
	int rc = read_report(&sr) ? err->status : 0;
	yaml_event_delete(&sr.ev);
	yaml_parser_delete(&sr.parser);
	g_free(text);
	if (rc) {
		lp_sched_report_free(rep);
		return rc;
	}
	/* As listed: the report's order is the units'. */
	rep->unit_order = g_new(size_t, rep->nunits ? rep->nunits : 1);
	for (size_t u = 0; u < rep->nunits; u++)
		rep->unit_order[u] = u;
	return 0;
}

/* ---- the picture ---- */

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
