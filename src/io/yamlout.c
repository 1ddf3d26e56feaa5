/* YAML output (io/yamlout.h). */
#include "io/yamlout.h"

#include <string.h>

#include "core/numbers.h"

static int append_output(void *data, unsigned char *buffer, size_t size)
{
	g_string_append_len(data, (const char *)buffer, (gssize)size);
	return 1;
}

/* Emit an event that its initializer made (made != 0). */
static int emit(yaml_emitter_t *em, yaml_event_t *ev, int made)
{
	if (!made)
		return -1;
	return yaml_emitter_emit(em, ev) ? 0 : -1;
}

static int begin(yaml_emitter_t *em, bool sequence, bool flow)
{
	yaml_event_t ev;
	if (sequence)
		return emit(em, &ev, yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
			flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE));
	return emit(em, &ev, yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
		flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE));
}

int lp_yaml_begin(yaml_emitter_t *em, bool sequence) { return begin(em, sequence, false); }
int lp_yaml_begin_flow(yaml_emitter_t *em, bool sequence) { return begin(em, sequence, true); }

int lp_yaml_end(yaml_emitter_t *em, bool sequence)
{
	yaml_event_t ev;
	if (sequence)
		return emit(em, &ev, yaml_sequence_end_event_initialize(&ev));
	return emit(em, &ev, yaml_mapping_end_event_initialize(&ev));
}

int lp_yaml_start(yaml_emitter_t *em, GString *to)
{
	if (!yaml_emitter_initialize(em))
		return -1;
	yaml_emitter_set_output(em, append_output, to);
	yaml_emitter_set_unicode(em, 1);
	yaml_emitter_set_width(em, -1); /* never fold long error messages */
	yaml_event_t ev;
	if (emit(em, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING)) ||
	    emit(em, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1)))
		return -1;
	return lp_yaml_begin(em, false);
}

int lp_yaml_finish(yaml_emitter_t *em)
{
	yaml_event_t ev;
	int r = lp_yaml_end(em, false);
	if (!r)
		r = emit(em, &ev, yaml_document_end_event_initialize(&ev, 1));
	if (!r)
		r = emit(em, &ev, yaml_stream_end_event_initialize(&ev));
	if (!r && !yaml_emitter_flush(em))
		r = -1;
	yaml_emitter_delete(em);
	return r;
}

int lp_yaml_scalar(yaml_emitter_t *em, const char *text, yaml_scalar_style_t style)
{
	yaml_event_t ev;
	char *valid = g_utf8_make_valid(text, -1);
	int r = emit(em, &ev, yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)valid,
							   (int)strlen(valid), 1, 1, style));
	g_free(valid);
	return r;
}

int lp_yaml_key(yaml_emitter_t *em, const char *key)
{
	return lp_yaml_scalar(em, key, YAML_PLAIN_SCALAR_STYLE);
}

int lp_yaml_str(yaml_emitter_t *em, const char *value)
{
	return lp_yaml_scalar(em, value, YAML_ANY_SCALAR_STYLE);
}

int lp_yaml_pair(yaml_emitter_t *em, const char *key, const char *value)
{
	return lp_yaml_key(em, key) || lp_yaml_str(em, value) ? -1 : 0;
}

int lp_yaml_pair_message(yaml_emitter_t *em, const char *key, const char *message)
{
	return lp_yaml_key(em, key) || lp_yaml_scalar(em, message, YAML_DOUBLE_QUOTED_SCALAR_STYLE)
		       ? -1 : 0;
}

int lp_yaml_pair_u64(yaml_emitter_t *em, const char *key, uint64_t value)
{
	char text[24];
	g_snprintf(text, sizeof text, "%" G_GUINT64_FORMAT, value);
	return lp_yaml_key(em, key) || lp_yaml_scalar(em, text, YAML_PLAIN_SCALAR_STYLE) ? -1 : 0;
}

int lp_yaml_pair_hex(yaml_emitter_t *em, const char *key, uint64_t value)
{
	char text[32];
	text[lp_fmt_hex(text, value)] = '\0';
	return lp_yaml_key(em, key) || lp_yaml_scalar(em, text, YAML_DOUBLE_QUOTED_SCALAR_STYLE)
		       ? -1 : 0;
}
