/* Statistics as YAML, laid out as laplace-formats(5), "STATISTICS" shows:
 * one line a key, groups as flow mappings, numbers in decimal. */
#include "formats/stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "io/io.h"
#include "io/yamlout.h"

int lp_stats_emit(yaml_emitter_t *em, const lp_stats *st)
{
	char key[2] = {0, 0};
	if (lp_yaml_key(em, "references") || lp_yaml_begin_flow(em, false))
		return -1;
	for (int i = 0; i < 6; i++) {
		key[0] = lp_ref_types[i];
		if (lp_yaml_pair_u64(em, key, st->refs[i]))
			return -1;
	}
	if (lp_yaml_end(em, false) || lp_yaml_key(em, "events") || lp_yaml_begin_flow(em, false))
		return -1;
	for (int t = 0; t < LP_TAG_COUNT; t++) {
		key[0] = lp_tag_chars[t];
		if (lp_yaml_pair_u64(em, key, st->events[t]))
			return -1;
	}
	if (lp_yaml_end(em, false) || lp_yaml_key(em, "canonical_pages") ||
	    lp_yaml_begin_flow(em, false) || lp_yaml_pair_u64(em, "total", lp_stats_total_pages(st)))
		return -1;
	for (int k = 0; k < LP_PAGE_KIND_COUNT; k++)
		if (lp_yaml_pair_u64(em, lp_page_kind_names[k], st->pages[k]))
			return -1;
	if (lp_yaml_end(em, false))
		return -1;
	const struct { const char *key; uint64_t value; } counts[] = {
		{"cow_copies", st->cow_copies},
		{"unmapped_pages", st->unmapped_pages},
		{"orphan_spaces", st->orphan_spaces},
		{"mismatches", st->mismatches},
		{"warnings", st->warnings},
	};
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
		if (lp_yaml_pair_u64(em, counts[i].key, counts[i].value))
			return -1;
	return 0;
}

int lp_stats_write_yaml(lp_output *out, const lp_stats *st, lp_error *err)
{
	GString *text = g_string_new(NULL);
	yaml_emitter_t em;
	int rc = 0;
	bool failed = lp_yaml_start(&em, text) || lp_stats_emit(&em, st);
	if (lp_yaml_finish(&em) || failed) /* finish frees the emitter in any case */
		rc = lp_fail(err, LP_EIO, "cannot write statistics to %s", lp_output_name(out));
	else
		rc = lp_output_write(out, text->str, text->len, err);
	g_string_free(text, TRUE);
	return rc;
}
