/* Job reports in YAML, for `laplace batch --report` and the daemon's
 * done/ and failed/ directories. */
#include "laplace/jobfile.h"

#include <fcntl.h>
#include <string.h>

#include "laplace/stats.h"

static int append_output(void *data, unsigned char *buffer, size_t size)
{
	g_string_append_len(data, (const char *)buffer, (gssize)size);
	return 1;
}

static int emit(yaml_emitter_t *em, yaml_event_t *ev, int made)
{
	if (!made)
		return -1;
	return yaml_emitter_emit(em, ev) ? 0 : -1;
}

int lp_yaml_begin(yaml_emitter_t *em, bool sequence)
{
	yaml_event_t ev;
	if (sequence)
		return emit(em, &ev, yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
									  YAML_BLOCK_SEQUENCE_STYLE));
	return emit(em, &ev, yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
								 YAML_BLOCK_MAPPING_STYLE));
}

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

static int scalar(yaml_emitter_t *em, const char *value, yaml_scalar_style_t style)
{
	yaml_event_t ev;
	return emit(em, &ev, yaml_scalar_event_initialize(&ev, NULL, NULL,
							  (yaml_char_t *)(uintptr_t)value,
							  (int)strlen(value), 1, 1, style));
}

int lp_yaml_str(yaml_emitter_t *em, const char *value)
{
	return scalar(em, value, YAML_ANY_SCALAR_STYLE);
}

/* Messages quote names with '...': double quotes keep them readable. */
int lp_yaml_pair_message(yaml_emitter_t *em, const char *key, const char *message)
{
	return lp_yaml_key(em, key) || scalar(em, message, YAML_DOUBLE_QUOTED_SCALAR_STYLE) ? -1 : 0;
}

int lp_yaml_key(yaml_emitter_t *em, const char *key) { return lp_yaml_str(em, key); }

int lp_yaml_pair(yaml_emitter_t *em, const char *key, const char *value)
{
	return lp_yaml_key(em, key) || lp_yaml_str(em, value) ? -1 : 0;
}

int lp_yaml_pair_u64(yaml_emitter_t *em, const char *key, uint64_t value)
{
	char text[24];
	g_snprintf(text, sizeof text, "%" G_GUINT64_FORMAT, value);
	return lp_yaml_pair(em, key, text);
}

int lp_job_report_emit(yaml_emitter_t *em, const lp_job_spec *spec, const lp_job_outcome *outcome)
{
	bool ok = outcome->status == LP_OK;
	char seconds[32];
	g_snprintf(seconds, sizeof seconds, "%.3f", outcome->seconds);
	if (lp_yaml_pair(em, "reference", spec->reference) ||
	    lp_yaml_pair(em, "kernel", spec->kernel) ||
	    lp_yaml_pair(em, "mode", spec->per_process ? "per-process" : "basic") ||
	    lp_yaml_pair(em, "output", spec->output) ||
	    lp_yaml_pair(em, "status", ok ? "succeeded" : "failed") ||
	    lp_yaml_pair_u64(em, "exit_status", (uint64_t)outcome->status) ||
	    (!ok && lp_yaml_pair_message(em, "error", outcome->msg)) ||
	    lp_yaml_pair(em, "duration", seconds))
		return -1;
	if (!ok)
		return 0;
	if (lp_yaml_key(em, "statistics") || lp_yaml_begin(em, false) ||
	    lp_stats_emit(em, &outcome->stats) || lp_yaml_end(em, false))
		return -1;
	return 0;
}

int lp_write_file_atomic(int dir_fd, const char *path, const char *text, size_t len,
			 lp_error *err)
{
	lp_output *out = dir_fd == AT_FDCWD ? lp_output_open(path, LP_COMPRESS_NONE, err)
					    : lp_output_open_in(dir_fd, path, LP_COMPRESS_NONE, err);
	if (!out)
		return err->status;
	int r = lp_output_write(out, text, len, err);
	if (r) {
		lp_output_abort(out);
		return r;
	}
	return lp_output_commit(out, err);
}
