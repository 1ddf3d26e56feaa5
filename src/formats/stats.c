/* Statistics as YAML, laid out as laplace-formats(5), "STATISTICS" shows:
 * one line a key, groups as flow mappings, numbers in decimal. */
#include "laplace/stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "laplace/io.h"

static int scalar(yaml_emitter_t *em, const char *text)
{
	yaml_event_t ev;
	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), 1, 1,
				     YAML_PLAIN_SCALAR_STYLE);
	return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

static int number(yaml_emitter_t *em, uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "%" PRIu64, v);
	return scalar(em, buf);
}

static int flow_start(yaml_emitter_t *em)
{
	yaml_event_t ev;
	yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_FLOW_MAPPING_STYLE);
	return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

static int mapping_end(yaml_emitter_t *em)
{
	yaml_event_t ev;
	yaml_mapping_end_event_initialize(&ev);
	return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

int lp_stats_emit(yaml_emitter_t *em, const lp_stats *st)
{
	char key[2] = {0, 0};
	if (scalar(em, "references") || flow_start(em))
		return -1;
	for (int i = 0; i < 6; i++) {
		key[0] = lp_ref_types[i];
		if (scalar(em, key) || number(em, st->refs[i]))
			return -1;
	}
	if (mapping_end(em) || scalar(em, "events") || flow_start(em))
		return -1;
	for (int t = 0; t < LP_TAG_COUNT; t++) {
		key[0] = lp_tag_chars[t];
		if (scalar(em, key) || number(em, st->events[t]))
			return -1;
	}
	if (mapping_end(em) || scalar(em, "canonical_pages") || flow_start(em) ||
	    scalar(em, "total") || number(em, lp_stats_total_pages(st)))
		return -1;
	for (int k = 0; k < LP_PAGE_KIND_COUNT; k++)
		if (scalar(em, lp_page_kind_names[k]) || number(em, st->pages[k]))
			return -1;
	if (mapping_end(em))
		return -1;
	const struct { const char *key; uint64_t value; } counts[] = {
		{"cow_copies", st->cow_copies},
		{"unmapped_pages", st->unmapped_pages},
		{"orphan_spaces", st->orphan_spaces},
		{"mismatches", st->mismatches},
		{"warnings", st->warnings},
	};
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
		if (scalar(em, counts[i].key) || number(em, counts[i].value))
			return -1;
	return 0;
}

typedef struct yaml_sink {
	lp_output *out;
	lp_error *err;
	int rc;
} yaml_sink;

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
	yaml_sink *ys = data;
	if (!ys->rc)
		ys->rc = lp_output_write(ys->out, buffer, size, ys->err);
	return ys->rc == 0;
}

int lp_stats_write_yaml(lp_output *out, const lp_stats *st, lp_error *err)
{
	yaml_sink ys = {out, err, 0};
	yaml_emitter_t em;
	yaml_event_t ev;
	yaml_emitter_initialize(&em);
	yaml_emitter_set_output(&em, write_handler, &ys);
	yaml_emitter_set_width(&em, -1);
	yaml_emitter_set_unicode(&em, 1);
	int ok = 1;
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	ok = ok && yaml_emitter_emit(&em, &ev);
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	ok = ok && yaml_emitter_emit(&em, &ev);
	yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
	ok = ok && yaml_emitter_emit(&em, &ev);
	ok = ok && lp_stats_emit(&em, st) == 0;
	ok = ok && mapping_end(&em) == 0;
	yaml_document_end_event_initialize(&ev, 1);
	ok = ok && yaml_emitter_emit(&em, &ev);
	yaml_stream_end_event_initialize(&ev);
	ok = ok && yaml_emitter_emit(&em, &ev);
	ok = ok && yaml_emitter_flush(&em);
	yaml_emitter_delete(&em);
	if (!ok)
		return ys.rc ? ys.rc
			     : lp_fail(err, LP_EIO, "cannot write statistics to %s", lp_output_name(out));
	return 0;
}
