/* YAML read back (laplace/yamlload.h). */
#include "laplace/yamlload.h"

#include <string.h>

int lp_yaml_load(const char *name, const char *text, size_t len, yaml_document_t *doc,
		 lp_error *err)
{
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	int rc = 0;
	if (!yaml_parser_load(&parser, doc)) {
		rc = lp_fail(err, LP_EINPUT, "%s:%zu: not YAML: %s", name, parser.problem_mark.line + 1,
			     parser.problem ? parser.problem : "parse error");
		memset(doc, 0, sizeof *doc);
		yaml_document_initialize(doc, NULL, NULL, NULL, 1, 1);
	}
	yaml_parser_delete(&parser);
	return rc;
}
