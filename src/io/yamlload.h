/* YAML read back: one document from the whole text of a small file (job
 * files, index.yaml, batch and schedule reports), with one message for
 * text that is not YAML, and the fields of its mappings, with one form of
 * message for a field that is missing or wrong. */
#ifndef LAPLACE_YAMLLOAD_H
#define LAPLACE_YAMLLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "core/error.h"

/* Load text[0, len) as one document into doc. Returns 0, or LP_EINPUT with
 * err (which may be NULL) set to "NAME:LINE: not YAML: PROBLEM"; doc is
 * then an empty document. Either way yaml_document_delete(doc) frees it. */
int lp_yaml_load(const char *name, const char *text, size_t len, yaml_document_t *doc,
		 lp_error *err);

/* The 1-based line of the problem a parser of text[0, len) stopped at. */
size_t lp_yaml_problem_line(const yaml_parser_t *parser, const char *text, size_t len);

/* The value of key in map, or NULL when there is none or map is not a
 * mapping (reports and manifests read back, where a missing key is no
 * error). */
yaml_node_t *lp_yaml_value(yaml_document_t *doc, const yaml_node_t *map, const char *key);
/* The text of map's scalar key, or NULL. */
const char *lp_yaml_text(yaml_document_t *doc, const yaml_node_t *map, const char *key);

/* A loaded document, the file it came from and where its errors go. */
typedef struct lp_yaml_doc {
	yaml_document_t doc;
	const char *name;
	lp_error *err;
} lp_yaml_doc;

/* "NAME:LINE: field FIELD: WHAT" (LP_EINPUT), LINE that of node; returns -1. */
int lp_yaml_bad(lp_yaml_doc *d, const yaml_node_t *node, const char *field, const char *what);
/* The value of key in mapping map, or NULL when there is none (no error). */
yaml_node_t *lp_yaml_find(lp_yaml_doc *d, yaml_node_t *map, const char *key);
/* The value of key in map, which must be there and of type; else NULL with
 * err set ("missing", "not a single value", "not a mapping", "not a list"). */
yaml_node_t *lp_yaml_get(lp_yaml_doc *d, yaml_node_t *map, const char *key, yaml_node_type_t type);
/* The decimal count of key in map (which must be there): 0, or -1 with err
 * set ("not a decimal count", or as lp_yaml_get). */
int lp_yaml_get_count(lp_yaml_doc *d, yaml_node_t *map, const char *key, uint64_t *out);

#endif
