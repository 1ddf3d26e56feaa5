/* YAML read back: one document from the whole text of a small file (job
 * files, index.yaml, batch and schedule reports), with one message for
 * text that is not YAML. */
#ifndef LAPLACE_YAMLLOAD_H
#define LAPLACE_YAMLLOAD_H

#include <stddef.h>
#include <yaml.h>

#include "laplace/error.h"

/* Load text[0, len) as one document into doc. Returns 0, or LP_EINPUT with
 * err (which may be NULL) set to "NAME:LINE: not YAML: PROBLEM"; doc is
 * then an empty document. Either way yaml_document_delete(doc) frees it. */
int lp_yaml_load(const char *name, const char *text, size_t len, yaml_document_t *doc,
		 lp_error *err);

#endif
