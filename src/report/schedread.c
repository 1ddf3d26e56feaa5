/* The report of laplace schedule --report read back (laplace-formats(5),
 * "Output and report"), for the per-CPU rows of the task timeline. */
#include "laplace/report.h"

#include <inttypes.h>
#include <string.h>
#include <yaml.h>

#include "laplace/inbuf.h"
#include "laplace/numbers.h"
#include "laplace/yamlload.h"

/* A schedule report has a line per unit; a directory of 100000 tasks
 * writes about 10 MB. */
#define SCHEDULE_MAX_BYTES (32u << 20)
#define MAX_CPUS 1024

/* The entries of the list key, each a mapping. */
static yaml_node_t *get_list(lp_yaml_doc *r, yaml_node_t *map, const char *key, size_t *n)
{
	yaml_node_t *list = lp_yaml_get(r, map, key, YAML_SEQUENCE_NODE);
	if (list)
		*n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
	return list;
}

static yaml_node_t *item(lp_yaml_doc *r, yaml_node_t *list, size_t i, const char *key)
{
	yaml_node_t *v = yaml_document_get_node(&r->doc, list->data.sequence.items.start[i]);
	if (v->type != YAML_MAPPING_NODE) {
		lp_yaml_bad(r, v, key, "an entry is not a mapping");
		return NULL;
	}
	return v;
}

static int get_schedule(lp_yaml_doc *r, lp_report_schedule *sc)
{
	yaml_node_t *root = yaml_document_get_root_node(&r->doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		return lp_fail(r->err, LP_EINPUT, "%s: not a schedule report (no mapping at the top)",
			       r->name);
	yaml_node_t *policy = lp_yaml_get(r, root, "policy", YAML_SCALAR_NODE);
	if (!policy)
		return -1;
	sc->policy = g_strdup((const char *)policy->data.scalar.value);
	uint64_t cpus;
	if (lp_yaml_get_count(r, root, "quantum", &sc->quantum) ||
	    lp_yaml_get_count(r, root, "cpus", &cpus) || lp_yaml_get_count(r, root, "ticks", &sc->ticks))
		return -1;
	size_t n = 0;
	yaml_node_t *list = get_list(r, root, "cpu_stats", &n);
	if (!list)
		return -1;
	if (n != cpus || n == 0 || n > MAX_CPUS)
		return lp_yaml_bad(r, list, "cpu_stats", "not one entry per CPU of cpus");
	sc->cpu = g_new0(lp_report_cpu, n);
	sc->ncpus = n;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *m = item(r, list, i, "cpu_stats");
		uint64_t cpu;
		if (!m || lp_yaml_get_count(r, m, "cpu", &cpu) ||
		    lp_yaml_get_count(r, m, "references", &sc->cpu[i].references) ||
		    lp_yaml_get_count(r, m, "idle_ticks", &sc->cpu[i].idle_ticks) ||
		    lp_yaml_get_count(r, m, "slices", &sc->cpu[i].slices))
			return -1;
		if (cpu != i)
			return lp_yaml_bad(r, m, "cpu", "not the entry's place in the list");
		if (sc->cpu[i].references > sc->ticks)
			return lp_yaml_bad(r, m, "references", "more than ticks");
	}
	if (!(list = get_list(r, root, "units", &n)))
		return -1;
	sc->unit = g_new0(lp_report_unit, n);
	sc->nunits = n;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *m = item(r, list, i, "units");
		lp_report_unit *u = &sc->unit[i];
		if (!m || lp_yaml_get_count(r, m, "pid", &u->pid) || lp_yaml_get_count(r, m, "tid", &u->tid) ||
		    lp_yaml_get_count(r, m, "incarnation", &u->incarnation) ||
		    lp_yaml_get_count(r, m, "references", &u->references) ||
		    lp_yaml_get_count(r, m, "slices", &u->slices) ||
		    /* Both omitted for a unit with no references (9.3). */
		    (u->references && (lp_yaml_get_count(r, m, "first_tick", &u->first_tick) ||
				       lp_yaml_get_count(r, m, "last_tick", &u->last_tick))))
			return -1;
		if (u->references && (u->first_tick > u->last_tick || u->last_tick >= sc->ticks))
			return lp_yaml_bad(r, m, "last_tick", "not between first_tick and ticks");
	}
	return 0;
}

int lp_report_read_schedule(lp_report *rep, const char *path, lp_error *err)
{
	char *text = NULL;
	size_t len = 0;
	if (lp_read_small_file(path, true, SCHEDULE_MAX_BYTES, "schedule report", &text, &len, err))
		return err->status;
	lp_yaml_doc r = {.name = path, .err = err};
	lp_report_schedule *sc = g_new0(lp_report_schedule, 1);
	int rc = lp_yaml_load(path, text, len, &r.doc, err) || get_schedule(&r, sc) ? err->status : 0;
	yaml_document_delete(&r.doc);
	g_free(text);
	if (rc) {
		g_free(sc->policy);
		g_free(sc->cpu);
		g_free(sc->unit);
		g_free(sc);
		return rc;
	}
	rep->schedule = sc;
	return 0;
}
