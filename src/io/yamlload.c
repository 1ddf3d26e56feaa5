/* YAML read back (io/yamlload.h). */
#include "io/yamlload.h"

#include <string.h>

#include "core/numbers.h"

size_t lp_yaml_problem_line(const yaml_parser_t *parser, const char *text, size_t len)
{
	/* A reader error (a byte YAML does not allow, such as NUL) comes with
	 * its offset only: its mark stays at the first line. */
	if (parser->error != YAML_READER_ERROR)
		return parser->problem_mark.line + 1;
	size_t end = parser->problem_offset < len ? parser->problem_offset : len;
	size_t line = 1;
	for (const char *nl = text; (nl = memchr(nl, '\n', end - (size_t)(nl - text))); nl++)
		line++;
	return line;
}

int lp_yaml_load(const char *name, const char *text, size_t len, yaml_document_t *doc,
		 lp_error *err)
{
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	int rc = 0;
	if (!yaml_parser_load(&parser, doc)) {
		rc = lp_fail(err, LP_EINPUT, "%s:%zu: not YAML: %s", name,
			     lp_yaml_problem_line(&parser, text, len),
			     parser.problem ? parser.problem : "parse error");
		memset(doc, 0, sizeof *doc);
		yaml_document_initialize(doc, NULL, NULL, NULL, 1, 1);
	}
	yaml_parser_delete(&parser);
	return rc;
}

int lp_yaml_bad(lp_yaml_doc *d, const yaml_node_t *node, const char *field, const char *what)
{
	lp_fail(d->err, LP_EINPUT, "%s:%zu: field %s: %s", d->name, node->start_mark.line + 1, field,
		what);
	return -1;
}

yaml_node_t *lp_yaml_value(yaml_document_t *doc, const yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		if (k && k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key))
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

const char *lp_yaml_text(yaml_document_t *doc, const yaml_node_t *map, const char *key)
{
	yaml_node_t *v = lp_yaml_value(doc, map, key);
	return v && v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : NULL;
}

yaml_node_t *lp_yaml_find(lp_yaml_doc *d, yaml_node_t *map, const char *key)
{
	return lp_yaml_value(&d->doc, map, key);
}

yaml_node_t *lp_yaml_get(lp_yaml_doc *d, yaml_node_t *map, const char *key, yaml_node_type_t type)
{
	yaml_node_t *v = lp_yaml_find(d, map, key);
	if (!v) {
		lp_yaml_bad(d, map, key, "missing");
		return NULL;
	}
	if (v->type != type) {
		lp_yaml_bad(d, v, key, type == YAML_SCALAR_NODE ? "not a single value"
				       : type == YAML_MAPPING_NODE ? "not a mapping" : "not a list");
		return NULL;
	}
	return v;
}

int lp_yaml_get_count(lp_yaml_doc *d, yaml_node_t *map, const char *key, uint64_t *out)
{
	yaml_node_t *v = lp_yaml_get(d, map, key, YAML_SCALAR_NODE);
	if (!v)
		return -1;
	if (!lp_parse_decimal((const char *)v->data.scalar.value, 0, UINT64_MAX, out))
		return lp_yaml_bad(d, v, key, "not a decimal count");
	return 0;
}
