/* YAML output: libyaml's emitter behind the few calls every YAML file
 * laplace writes is made of (statistics, index.yaml, job reports, laplace
 * jobs --format yaml). Each returns 0, or -1 when the emitter fails. */
#ifndef LAPLACE_YAMLOUT_H
#define LAPLACE_YAMLOUT_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>
#include <yaml.h>

/* Begin a document appended to the string to: the stream, the document
 * and its top block mapping. Lines are never folded. */
int lp_yaml_start(yaml_emitter_t *em, GString *to);
/* Close what lp_yaml_start opened, flush and free the emitter (also after
 * a failure). */
int lp_yaml_finish(yaml_emitter_t *em);

/* A block mapping or sequence; lp_yaml_begin_flow: a flow one ({...} or
 * [...] on one line). */
int lp_yaml_begin(yaml_emitter_t *em, bool sequence);
int lp_yaml_begin_flow(yaml_emitter_t *em, bool sequence);
int lp_yaml_end(yaml_emitter_t *em, bool sequence);

/* A scalar in the given style. Text that is not UTF-8 (names from a trace
 * or the command line) is mended first: libyaml refuses it. */
int lp_yaml_scalar(yaml_emitter_t *em, const char *text, yaml_scalar_style_t style);
int lp_yaml_key(yaml_emitter_t *em, const char *key);     /* plain */
int lp_yaml_str(yaml_emitter_t *em, const char *value);   /* the emitter's choice */
int lp_yaml_pair(yaml_emitter_t *em, const char *key, const char *value);
/* Messages quote names with '...': double quotes keep them readable. */
int lp_yaml_pair_message(yaml_emitter_t *em, const char *key, const char *message);
int lp_yaml_pair_u64(yaml_emitter_t *em, const char *key, uint64_t value); /* decimal */
/* Ids and timestamps in hex, as in file names and trace lines; quoted so
 * that a YAML reader does not take "10" for ten. */
int lp_yaml_pair_hex(yaml_emitter_t *em, const char *key, uint64_t value);

#endif
