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

typedef struct reader {
	yaml_document_t doc;
	const char *name;
	lp_error *err;
} reader;

static int bad(reader *r, const yaml_node_t *node, const char *field, const char *what)
{
	return lp_fail(r->err, LP_EINPUT, "%s:%zu: field %s: %s", r->name,
		       node->start_mark.line + 1, field, what);
}

/* The value of key in map, or NULL: err set when required. */
static yaml_node_t *get(reader *r, yaml_node_t *map, const char *key, yaml_node_type_t type,
			bool required)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
		if (k->type != YAML_SCALAR_NODE || strcmp((char *)k->data.scalar.value, key))
			continue;
		yaml_node_t *v = yaml_document_get_node(&r->doc, p->value);
		if (v->type != type) {
			bad(r, v, key, type == YAML_SCALAR_NODE ? "not a single value" : "not a list");
			return NULL;
		}
		return v;
	}
	if (required)
		bad(r, map, key, "missing");
	return NULL;
}

static int get_count(reader *r, yaml_node_t *map, const char *key, bool required, uint64_t *out)
{
	yaml_node_t *v = get(r, map, key, YAML_SCALAR_NODE, required);
	if (!v)
		return required || r->err->status ? -1 : 0;
	if (!lp_parse_decimal((const char *)v->data.scalar.value, 0, UINT64_MAX, out))
		return bad(r, v, key, "not a decimal count");
	return 0;
}

/* The entries of the list key, each a mapping. */
static yaml_node_t *get_list(reader *r, yaml_node_t *map, const char *key, size_t *n)
{
	yaml_node_t *list = get(r, map, key, YAML_SEQUENCE_NODE, true);
	if (list)
		*n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
	return list;
}

static yaml_node_t *item(reader *r, yaml_node_t *list, size_t i, const char *key)
{
	yaml_node_t *v = yaml_document_get_node(&r->doc, list->data.sequence.items.start[i]);
	if (v->type != YAML_MAPPING_NODE) {
		bad(r, v, key, "an entry is not a mapping");
		return NULL;
	}
	return v;
}

static int get_schedule(reader *r, lp_report_schedule *sc)
{
	yaml_node_t *root = yaml_document_get_root_node(&r->doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		return lp_fail(r->err, LP_EINPUT, "%s: not a schedule report (no mapping at the top)",
			       r->name);
	yaml_node_t *policy = get(r, root, "policy", YAML_SCALAR_NODE, true);
	if (!policy)
		return -1;
	sc->policy = g_strdup((const char *)policy->data.scalar.value);
	uint64_t cpus;
	if (get_count(r, root, "quantum", true, &sc->quantum) ||
	    get_count(r, root, "cpus", true, &cpus) || get_count(r, root, "ticks", true, &sc->ticks))
		return -1;
	size_t n = 0;
	yaml_node_t *list = get_list(r, root, "cpu_stats", &n);
	if (!list)
		return -1;
	if (n != cpus || n == 0 || n > MAX_CPUS)
		return bad(r, list, "cpu_stats", "not one entry per CPU of cpus");
	sc->cpu = g_new0(lp_report_cpu, n);
	sc->ncpus = n;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *m = item(r, list, i, "cpu_stats");
		uint64_t cpu;
		if (!m || get_count(r, m, "cpu", true, &cpu) ||
		    get_count(r, m, "references", true, &sc->cpu[i].references) ||
		    get_count(r, m, "idle_ticks", true, &sc->cpu[i].idle_ticks) ||
		    get_count(r, m, "slices", true, &sc->cpu[i].slices))
			return -1;
		if (cpu != i)
			return bad(r, m, "cpu", "not the entry's place in the list");
		if (sc->cpu[i].references > sc->ticks)
			return bad(r, m, "references", "more than ticks");
	}
	if (!(list = get_list(r, root, "units", &n)))
		return -1;
	sc->unit = g_new0(lp_report_unit, n);
	sc->nunits = n;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *m = item(r, list, i, "units");
		lp_report_unit *u = &sc->unit[i];
		if (!m || get_count(r, m, "pid", true, &u->pid) || get_count(r, m, "tid", true, &u->tid) ||
		    get_count(r, m, "incarnation", true, &u->incarnation) ||
		    get_count(r, m, "references", true, &u->references) ||
		    get_count(r, m, "slices", true, &u->slices) ||
		    get_count(r, m, "first_tick", u->references > 0, &u->first_tick) ||
		    get_count(r, m, "last_tick", u->references > 0, &u->last_tick))
			return -1;
		if (u->references && (u->first_tick > u->last_tick || u->last_tick >= sc->ticks))
			return bad(r, m, "last_tick", "not between first_tick and ticks");
	}
	return 0;
}

int lp_report_read_schedule(lp_report *rep, const char *path, lp_error *err)
{
	char *text = NULL;
	size_t len = 0;
	if (lp_read_small_file(path, true, SCHEDULE_MAX_BYTES, "schedule report", &text, &len, err))
		return err->status;
	reader r = {.name = path, .err = err};
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
