/* Study files (laplace-study(5)). The document is loaded whole (a study is
 * nested and small), after one pass over its events that refuses aliases
 * and further documents, as job files are refused them (jobfile.c); then
 * every mapping is checked key by key, each message naming the file, the
 * line and the key. */
#include "jobs/study.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>
#include <yaml.h>

#include "core/numbers.h"
#include "io/inbuf.h"
#include "io/yamlload.h"
#include "jobs/jobfile.h"

const char *const lp_study_sched_keys[LP_SCHED_KEY_COUNT] = {
	"policy", "quantum", "cpus", "replacement", "fault_ticks", "seed",
};

typedef struct reader {
	yaml_document_t doc;
	const char *name;
	const char *base_dir;
	lp_error *err;
} reader;

static size_t line_of(const yaml_node_t *node) { return node->start_mark.line + 1; }

static const char *text_of(const yaml_node_t *node)
{
	return (const char *)node->data.scalar.value;
}

/* What a node is, for "expected X, found Y" messages. */
static void describe(const yaml_node_t *node, char *buf, size_t size)
{
	if (node->type == YAML_MAPPING_NODE)
		g_strlcpy(buf, "a mapping", size);
	else if (node->type == YAML_SEQUENCE_NODE)
		g_strlcpy(buf, "a list", size);
	else if (!node->data.scalar.length)
		g_strlcpy(buf, "nothing", size);
	else
		g_snprintf(buf, size, "'%.60s'", text_of(node));
}

static int wrong_type(reader *r, const yaml_node_t *node, const char *key, const char *expected)
{
	char found[80];
	describe(node, found, sizeof found);
	return lp_fail(r->err, LP_EINPUT, "%s:%zu: key '%s': expected %s, found %s", r->name,
		       line_of(node), key, expected, found);
}

/* A non-empty scalar without NUL bytes. */
static bool is_text(const yaml_node_t *node)
{
	return node->type == YAML_SCALAR_NODE && node->data.scalar.length &&
	       strlen(text_of(node)) == node->data.scalar.length;
}

static bool is_plain(const yaml_node_t *node)
{
	return is_text(node) && node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* The values of map's keys, by their index in names (NULL: not given);
 * unknown keys and keys given twice are errors. */
static int take_keys(reader *r, const yaml_node_t *map, const char *where,
		     const char *const *names, size_t n, yaml_node_t **values)
{
	memset(values, 0, n * sizeof *values);
	size_t key_lines[16];
	g_assert(n <= G_N_ELEMENTS(key_lines));
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *key = yaml_document_get_node(&r->doc, p->key);
		if (!is_text(key)) {
			char found[80];
			describe(key, found, sizeof found);
			return lp_fail(r->err, LP_EINPUT, "%s:%zu: %s: expected a key, found %s",
				       r->name, line_of(key), where, found);
		}
		size_t k = 0;
		while (k < n && strcmp(text_of(key), names[k]))
			k++;
		if (k == n)
			return lp_fail(r->err, LP_EINPUT, "%s:%zu: unknown key '%.60s'", r->name,
				       line_of(key), text_of(key));
		if (values[k])
			return lp_fail(r->err, LP_EINPUT, "%s:%zu: key '%s' given twice (first on line %zu)",
				       r->name, line_of(key), names[k], key_lines[k]);
		values[k] = yaml_document_get_node(&r->doc, p->value);
		key_lines[k] = line_of(key);
	}
	return 0;
}

static int missing(reader *r, const yaml_node_t *map, const char *key)
{
	return lp_fail(r->err, LP_EINPUT, "%s:%zu: missing key '%s'", r->name, line_of(map), key);
}

static int need_mapping(reader *r, const yaml_node_t *node, const char *key)
{
	return node->type == YAML_MAPPING_NODE ? 0 : wrong_type(r, node, key, "a mapping");
}

/* Booleans as in job files: the plain words true and false. */
static int read_bool(reader *r, const yaml_node_t *node, const char *key, bool *out)
{
	if (is_plain(node)) {
		const char *s = text_of(node);
		if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
			return *out = true, 0;
		if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
			return *out = false, 0;
	}
	return wrong_type(r, node, key, "true or false");
}

/* A plain decimal number from min to max, as canonical text. */
static int read_number(reader *r, const yaml_node_t *node, const char *key, uint64_t min,
		       uint64_t max, uint64_t *value)
{
	if (is_plain(node) && lp_parse_decimal(text_of(node), min, max, value))
		return 0;
	char expected[80];
	g_snprintf(expected, sizeof expected, "a whole number from %" G_GUINT64_FORMAT " to %"
		   G_GUINT64_FORMAT, min, max);
	return wrong_type(r, node, key, expected);
}

static bool in_words(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (!strcmp(s, *words))
			return true;
	return false;
}

static int read_word(reader *r, const yaml_node_t *node, const char *key,
		     const char *const *words, const char *expected)
{
	return is_text(node) && in_words(text_of(node), words) ? 0
							       : wrong_type(r, node, key, expected);
}

/* A path: relative ones joined to the study file's directory; it must
 * exist, a directory when dir, else a file. */
static int read_path(reader *r, const yaml_node_t *node, const char *key, bool dir, char **out)
{
	if (!is_text(node))
		return wrong_type(r, node, key, dir ? "a directory" : "a path");
	const char *given = text_of(node);
	char *path = g_path_is_absolute(given) || !strcmp(r->base_dir, ".")
			     ? g_strdup(given)
			     : g_build_filename(r->base_dir, given, NULL);
	GStatBuf st;
	int rc = 0;
	if (g_stat(path, &st) < 0)
		rc = lp_fail(r->err, LP_EINPUT, "%s:%zu: key '%s': cannot find %s: %s", r->name,
			     line_of(node), key, path, g_strerror(errno));
	else if (dir && !S_ISDIR(st.st_mode))
		rc = lp_fail(r->err, LP_EINPUT, "%s:%zu: key '%s': %s is not a directory", r->name,
			     line_of(node), key, path);
	else if (!dir && S_ISDIR(st.st_mode))
		rc = lp_fail(r->err, LP_EINPUT, "%s:%zu: key '%s': %s is a directory", r->name,
			     line_of(node), key, path);
	if (rc)
		g_free(path);
	else
		*out = path;
	return rc;
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	return n >= 1 && n <= LP_STUDY_NAME_MAX && s[0] != '.' &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

enum { CAP_REFERENCE, CAP_KERNEL, CAP_STREAM, CAP_DIRECTORY, CAP_KEY_COUNT };
static const char *const capture_keys[CAP_KEY_COUNT] = {"reference", "kernel", "stream",
							 "directory"};

static int read_capture(reader *r, yaml_node_t *key, yaml_node_t *value, lp_study_capture *c)
{
	c->line = line_of(key);
	if (!valid_name(text_of(key)))
		return lp_fail(r->err, LP_EINPUT, "%s:%zu: capture name '%.70s': expected 1 to %d "
			       "characters of A-Z a-z 0-9 . _ -, not starting with '.'", r->name,
			       c->line, text_of(key), LP_STUDY_NAME_MAX);
	c->name = g_strdup(text_of(key));
	if (need_mapping(r, value, c->name))
		return -1;
	yaml_node_t *v[CAP_KEY_COUNT];
	if (take_keys(r, value, "capture", capture_keys, CAP_KEY_COUNT, v))
		return -1;
	int forms = !!(v[CAP_REFERENCE] || v[CAP_KERNEL]) + !!v[CAP_STREAM] + !!v[CAP_DIRECTORY];
	if (forms != 1)
		return lp_fail(r->err, LP_EINPUT, "%s:%zu: capture '%s': expected reference and "
			       "kernel, or stream, or directory", r->name, line_of(value), c->name);
	if (v[CAP_STREAM]) {
		c->kind = LP_STUDY_STREAM;
		return read_path(r, v[CAP_STREAM], "stream", false, &c->path);
	}
	if (v[CAP_DIRECTORY]) {
		c->kind = LP_STUDY_DIRECTORY;
		return read_path(r, v[CAP_DIRECTORY], "directory", true, &c->path);
	}
	c->kind = LP_STUDY_CAPTURE;
	if (!v[CAP_REFERENCE] || !v[CAP_KERNEL])
		return missing(r, value, v[CAP_REFERENCE] ? "kernel" : "reference");
	if (read_path(r, v[CAP_REFERENCE], "reference", false, &c->reference))
		return -1;
	return read_path(r, v[CAP_KERNEL], "kernel", false, &c->kernel);
}

static int read_captures(reader *r, yaml_node_t *node, lp_study *s)
{
	if (need_mapping(r, node, "captures"))
		return -1;
	size_t n = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
	if (!n)
		return wrong_type(r, node, "captures", "at least one capture");
	s->captures = g_new0(lp_study_capture, n);
	for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
		yaml_node_t *key = yaml_document_get_node(&r->doc, p->key);
		if (!is_text(key)) {
			char found[80];
			describe(key, found, sizeof found);
			return lp_fail(r->err, LP_EINPUT, "%s:%zu: captures: expected a name, found %s",
				       r->name, line_of(key), found);
		}
		for (size_t i = 0; i < s->ncaptures; i++)
			if (!strcmp(s->captures[i].name, text_of(key)))
				return lp_fail(r->err, LP_EINPUT,
					       "%s:%zu: key '%s' given twice (first on line %zu)",
					       r->name, line_of(key), text_of(key), s->captures[i].line);
		lp_study_capture *c = &s->captures[s->ncaptures++];
		if (read_capture(r, key, yaml_document_get_node(&r->doc, p->value), c))
			return -1;
	}
	return 0;
}

static int read_merge(reader *r, yaml_node_t *node, lp_study *s)
{
	static const char *const keys[] = {"user_only", "strict"};
	yaml_node_t *v[2];
	if (need_mapping(r, node, "merge") || take_keys(r, node, "merge", keys, 2, v))
		return -1;
	if (v[0] && read_bool(r, v[0], keys[0], &s->merge_user_only))
		return -1;
	return v[1] ? read_bool(r, v[1], keys[1], &s->merge_strict) : 0;
}

static int need_list(reader *r, const yaml_node_t *node, const char *key)
{
	if (node->type != YAML_SEQUENCE_NODE || node->data.sequence.items.top == node->data.sequence.items.start)
		return wrong_type(r, node, key, "a list of one value or more");
	return 0;
}

#define FOR_ITEMS(r, list, item)                                                              \
	for (yaml_node_item_t *it_ = (list)->data.sequence.items.start;                       \
	     it_ < (list)->data.sequence.items.top &&                                          \
	     ((item) = yaml_document_get_node(&(r)->doc, *it_));                               \
	     it_++)

/* laplace sim --frames or --window: a word (pow2, all, 1-64...) passed as
 * it is, or a list of sizes. */
static int read_sizes(reader *r, yaml_node_t *node, const char *key, char **out)
{
	if (node->type == YAML_SCALAR_NODE) {
		if (!is_text(node))
			return wrong_type(r, node, key, "sizes (as laplace sim takes them) or a list of sizes");
		*out = g_strdup(text_of(node));
		return 0;
	}
	if (need_list(r, node, key))
		return -1;
	GString *s = g_string_new(NULL);
	yaml_node_t *item;
	FOR_ITEMS(r, node, item) {
		uint64_t v;
		if (read_number(r, item, key, 1, UINT32_MAX, &v)) {
			g_string_free(s, TRUE);
			return -1;
		}
		g_string_append_printf(s, "%s%" G_GUINT64_FORMAT, s->len ? "," : "", v);
	}
	*out = g_string_free(s, FALSE);
	return 0;
}

/* laplace sim's options, '-' written '_': booleans (given when true) and
 * whole numbers. */
static const struct {
	const char *key;
	bool boolean;
} sim_options[] = {
	{"user_only", true},       {"clock_load_bit", false}, {"segq_lru_frames", false},
	{"eelru_early", false},    {"eelru_late", false},     {"sample_pages", false},
};

static int read_sim_options(reader *r, yaml_node_t *node, lp_study *s)
{
	const char *names[G_N_ELEMENTS(sim_options)];
	yaml_node_t *v[G_N_ELEMENTS(sim_options)];
	for (size_t i = 0; i < G_N_ELEMENTS(sim_options); i++)
		names[i] = sim_options[i].key;
	if (need_mapping(r, node, "options") ||
	    take_keys(r, node, "options", names, G_N_ELEMENTS(sim_options), v))
		return -1;
	for (size_t i = 0; i < G_N_ELEMENTS(sim_options); i++) {
		if (!v[i])
			continue;
		char *option = g_strdelimit(g_strconcat("--", names[i], NULL), "_", '-');
		bool on = false;
		uint64_t n;
		if (sim_options[i].boolean ? read_bool(r, v[i], names[i], &on)
					   : read_number(r, v[i], names[i], 0, UINT32_MAX, &n)) {
			g_free(option);
			return -1;
		}
		if (!sim_options[i].boolean)
			g_ptr_array_add(s->sim_options,
					g_strdup_printf("%s=%" G_GUINT64_FORMAT, option, n));
		else if (on)
			g_ptr_array_add(s->sim_options, g_strdup(option));
		g_free(option);
	}
	return 0;
}

static const char *const sim_policies[] = {"lru", "opt", "fifo", "clock", "segq", "arc",
					   "eelru", "ws", "vmin", NULL};

static int read_sim(reader *r, yaml_node_t *node, lp_study *s)
{
	static const char *const keys[] = {"policies", "frames", "windows", "options"};
	yaml_node_t *v[4];
	if (need_mapping(r, node, "sim") || take_keys(r, node, "sim", keys, 4, v))
		return -1;
	if (!v[0])
		return missing(r, node, "policies");
	if (need_list(r, v[0], "policies"))
		return -1;
	GString *policies = g_string_new(NULL);
	yaml_node_t *item;
	FOR_ITEMS(r, v[0], item) {
		if (read_word(r, item, "policies", sim_policies,
			      "lru, opt, fifo, clock, segq, arc, eelru, ws or vmin")) {
			g_string_free(policies, TRUE);
			return -1;
		}
		g_string_append_printf(policies, "%s%s", policies->len ? "," : "", text_of(item));
	}
	s->sim_policies = g_string_free(policies, FALSE);
	s->sim = true;
	if (v[1] && read_sizes(r, v[1], "frames", &s->sim_frames))
		return -1;
	if (v[2] && read_sizes(r, v[2], "windows", &s->sim_windows))
		return -1;
	return v[3] ? read_sim_options(r, v[3], s) : 0;
}

static gint compare_numbers(gconstpointer a, gconstpointer b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The sweep's memory sizes, ascending, each once. */
static int read_memory(reader *r, yaml_node_t *node, lp_study *s)
{
	if (need_list(r, node, "memory"))
		return -1;
	GArray *sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	yaml_node_t *item;
	int rc = 0;
	FOR_ITEMS(r, node, item) {
		uint64_t v;
		if ((rc = read_number(r, item, "memory", 1, UINT32_MAX, &v)))
			break;
		for (guint i = 0; i < sizes->len && !rc; i++)
			if (g_array_index(sizes, uint64_t, i) == v)
				rc = lp_fail(r->err, LP_EINPUT, "%s:%zu: key 'memory': %" G_GUINT64_FORMAT
					     " given twice", r->name, line_of(item), v);
		if (rc)
			break;
		g_array_append_val(sizes, v);
	}
	if (!rc) {
		g_array_sort(sizes, compare_numbers);
		GString *text = g_string_new(NULL);
		for (guint i = 0; i < sizes->len; i++)
			g_string_append_printf(text, "%s%" G_GUINT64_FORMAT, i ? "," : "",
					       g_array_index(sizes, uint64_t, i));
		/* laplace schedule sweeps two sizes or more: one size is swept
		 * twice (the same run from scratch), its row kept once. */
		if (sizes->len == 1)
			g_string_append_printf(text, ",%s", text->str);
		s->memory = g_string_free(text, FALSE);
	}
	g_array_free(sizes, TRUE);
	return rc;
}

/* The defaults of laplace schedule for a key not given. */
static const char *const sched_defaults[LP_SCHED_KEY_COUNT] = {"rr", "10000", "1", "lru", "1000",
								NULL};

static int read_schedule(reader *r, yaml_node_t *node, lp_study *s)
{
	static const char *const keys[LP_SCHED_KEY_COUNT + 1] = {
		"policy", "quantum", "cpus", "replacement", "fault_ticks", "seed", "memory",
	};
	static const char *const policies[] = {"rr", "random", NULL};
	static const char *const replacements[] = {"lru", "fifo", "clock", NULL};
	yaml_node_t *v[LP_SCHED_KEY_COUNT + 1];
	if (need_mapping(r, node, "schedule") ||
	    take_keys(r, node, "schedule", keys, LP_SCHED_KEY_COUNT + 1, v))
		return -1;
	if (!v[LP_SCHED_KEY_COUNT])
		return missing(r, node, "memory");
	bool random = false;
	for (int k = 0; k < LP_SCHED_KEY_COUNT; k++) {
		s->sched[k] = g_ptr_array_new_with_free_func(g_free);
		if (!v[k]) {
			if (sched_defaults[k])
				g_ptr_array_add(s->sched[k], g_strdup(sched_defaults[k]));
			continue;
		}
		if (need_list(r, v[k], keys[k]))
			return -1;
		if (k == LP_SCHED_SEED && !random)
			return lp_fail(r->err, LP_EINPUT, "%s:%zu: key 'seed': only with policy random",
				       r->name, line_of(v[k]));
		yaml_node_t *item;
		FOR_ITEMS(r, v[k], item) {
			uint64_t n = 0;
			int rc = 0;
			switch (k) {
			case LP_SCHED_POLICY: rc = read_word(r, item, keys[k], policies, "rr or random"); break;
			case LP_SCHED_REPLACEMENT:
				rc = read_word(r, item, keys[k], replacements, "lru, fifo or clock");
				break;
			case LP_SCHED_QUANTUM: rc = read_number(r, item, keys[k], 1, UINT32_MAX, &n); break;
			case LP_SCHED_CPUS: rc = read_number(r, item, keys[k], 1, 1024, &n); break;
			case LP_SCHED_FAULT_TICKS: rc = read_number(r, item, keys[k], 1, UINT32_MAX, &n); break;
			default: rc = read_number(r, item, keys[k], 0, UINT64_MAX, &n); break;
			}
			if (rc)
				return -1;
			bool word = k == LP_SCHED_POLICY || k == LP_SCHED_REPLACEMENT;
			char *value = word ? g_strdup(text_of(item)) : g_strdup_printf("%" G_GUINT64_FORMAT, n);
			for (guint i = 0; i < s->sched[k]->len; i++)
				if (!strcmp(s->sched[k]->pdata[i], value)) {
					g_free(value);
					return lp_fail(r->err, LP_EINPUT, "%s:%zu: key '%s': %s given twice",
						       r->name, line_of(item), keys[k], text_of(item));
				}
			g_ptr_array_add(s->sched[k], value);
			if (k == LP_SCHED_POLICY && !strcmp(value, "random"))
				random = true;
		}
	}
	if (random && !s->sched[LP_SCHED_SEED]->len)
		g_ptr_array_add(s->sched[LP_SCHED_SEED], g_strdup("0"));
	s->schedule = true;
	return read_memory(r, v[LP_SCHED_KEY_COUNT], s);
}

/* Refuse aliases and a second document before the document is loaded
 * (jobfile.c refuses them as well). */
static int scan_events(const char *name, const char *text, size_t len, lp_error *err)
{
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	int rc = 0;
	size_t documents = 0;
	for (bool end = false; !end && !rc;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			rc = lp_fail(err, LP_EINPUT, "%s:%zu: not YAML: %s%s%s", name,
				     lp_yaml_problem_line(&parser, text, len),
				     parser.problem ? parser.problem : "parse error",
				     parser.context ? " " : "", parser.context ? parser.context : "");
			break;
		}
		size_t line = ev.start_mark.line + 1;
		if (ev.type == YAML_ALIAS_EVENT)
			rc = lp_fail(err, LP_EINPUT, "%s:%zu: aliases are not allowed in study files",
				     name, line);
		else if (ev.type == YAML_DOCUMENT_START_EVENT && ++documents > 1)
			rc = lp_fail(err, LP_EINPUT, "%s:%zu: only one YAML document is allowed", name,
				     line);
		end = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	if (!rc && !documents)
		rc = lp_fail(err, LP_EINPUT, "%s: empty study file", name);
	return rc;
}

enum { TOP_CAPTURES, TOP_MERGE, TOP_SIM, TOP_SCHEDULE, TOP_KEY_COUNT };
static const char *const top_keys[TOP_KEY_COUNT] = {"captures", "merge", "sim", "schedule"};

int lp_study_parse(const char *name, const char *text, size_t len, const char *base_dir,
		   lp_study *s, lp_error *err)
{
	memset(s, 0, sizeof *s);
	s->file = g_strdup(name);
	s->sim_options = g_ptr_array_new_with_free_func(g_free);
	int rc = scan_events(name, text, len, err);
	if (rc)
		return rc;
	reader r = {.name = name, .base_dir = base_dir, .err = err};
	if ((rc = lp_yaml_load(name, text, len, &r.doc, err))) {
		yaml_document_delete(&r.doc);
		return rc;
	}
	yaml_node_t *top = yaml_document_get_root_node(&r.doc);
	yaml_node_t *v[TOP_KEY_COUNT];
	if (!top || top->type != YAML_MAPPING_NODE) {
		char found[80] = "nothing";
		if (top)
			describe(top, found, sizeof found);
		rc = lp_fail(err, LP_EINPUT, "%s:%zu: expected a study (a mapping with the key "
			     "'captures'), found %s", name, top ? line_of(top) : 1, found);
	} else if (take_keys(&r, top, "study", top_keys, TOP_KEY_COUNT, v) ||
		   (!v[TOP_CAPTURES] && missing(&r, top, "captures")) ||
		   read_captures(&r, v[TOP_CAPTURES], s) ||
		   (v[TOP_MERGE] && read_merge(&r, v[TOP_MERGE], s)) ||
		   (v[TOP_SIM] && read_sim(&r, v[TOP_SIM], s)) ||
		   (v[TOP_SCHEDULE] && read_schedule(&r, v[TOP_SCHEDULE], s))) {
		rc = LP_EINPUT;
	} else if (!s->sim && !s->schedule) {
		rc = lp_fail(err, LP_EINPUT, "%s:%zu: expected a key 'sim' or 'schedule' (or both)",
			     name, line_of(top));
	} else if (s->schedule) {
		for (size_t i = 0; i < s->ncaptures && !rc; i++)
			if (s->captures[i].kind == LP_STUDY_STREAM)
				rc = lp_fail(err, LP_EINPUT, "%s:%zu: capture '%s': a stream has no "
					     "per-process directory for 'schedule' (line %zu)", name,
					     s->captures[i].line, s->captures[i].name,
					     line_of(v[TOP_SCHEDULE]));
	}
	if (!rc)
		s->sha256 = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, len);
	yaml_document_delete(&r.doc);
	return rc;
}

int lp_study_load(const char *path, lp_study *s, lp_error *err)
{
	char *text = NULL;
	size_t len = 0;
	memset(s, 0, sizeof *s);
	int rc = lp_read_small_file(path, true, LP_STUDY_MAX_BYTES, "study file", &text, &len, err);
	if (!rc)
		rc = lp_jobfile_check_lines(path, &text, len, err);
	if (!rc) {
		char *base_dir = g_path_get_dirname(path);
		rc = lp_study_parse(path, text, len, base_dir, s, err);
		g_free(base_dir);
	}
	g_free(text);
	return rc;
}

void lp_study_clear(lp_study *s)
{
	for (size_t i = 0; i < s->ncaptures; i++) {
		g_free(s->captures[i].name);
		g_free(s->captures[i].reference);
		g_free(s->captures[i].kernel);
		g_free(s->captures[i].path);
	}
	g_free(s->captures);
	g_free(s->file);
	g_free(s->sha256);
	g_free(s->sim_policies);
	g_free(s->sim_frames);
	g_free(s->sim_windows);
	if (s->sim_options)
		g_ptr_array_unref(s->sim_options);
	for (int k = 0; k < LP_SCHED_KEY_COUNT; k++)
		if (s->sched[k])
			g_ptr_array_unref(s->sched[k]);
	g_free(s->memory);
	memset(s, 0, sizeof *s);
}

char *lp_study_default_dir(const char *path)
{
	size_t n = strlen(path);
	if (g_str_has_suffix(path, ".yaml"))
		n -= 5;
	else if (g_str_has_suffix(path, ".yml"))
		n -= 4;
	char *stem = g_strndup(path, n);
	char *dir = g_strconcat(stem, ".d", NULL);
	g_free(stem);
	return dir;
}
