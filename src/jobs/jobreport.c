/* Job reports in YAML, for `laplace batch --report` and the daemon's
 * done/ and failed/ directories; the inputs they and study manifests
 * record. */
#include "jobs/jobreport.h"
#include "jobs/jobfile.h"
#include "jobs/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <glib/gstdio.h>

#include "formats/stats.h"

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

void lp_input_state_read(const char *path, lp_input_state *st)
{
	GStatBuf sb;
	memset(st, 0, sizeof *st);
	if (!path || g_stat(path, &sb) < 0)
		return;
	st->known = true;
	st->size = (uint64_t)sb.st_size;
	g_snprintf(st->mtime, sizeof st->mtime, "%lld.%09ld", (long long)sb.st_mtim.tv_sec,
		   (long)sb.st_mtim.tv_nsec);
}

int lp_make_output_dir(const char *output, lp_error *err)
{
	char *dir = g_path_get_dirname(output);
	int r = g_mkdir_with_parents(dir, 0777) < 0
		? lp_fail(err, LP_EIO, "cannot create directory %s: %s", dir, g_strerror(errno))
		: 0;
	g_free(dir);
	return r;
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
