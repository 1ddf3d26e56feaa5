/* The daemon's confinement of job outputs, and the cleanup of what a killed
 * job leaves behind. */
#include "laplace/jobfile.h"

#include "laplace/staging.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

/* "FILE:LINE: key 'KEY': ..." for a key of the job. */
static int G_GNUC_PRINTF(5, 6) key_error(const lp_job_spec *spec, const char *name,
					 enum lp_job_key key, lp_error *err, const char *fmt, ...)
{
	char what[768];
	va_list ap;
	va_start(ap, fmt);
	g_vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return lp_fail(err, LP_EINPUT, "%s:%zu: key '%s': %s", name, spec->key_line[key],
		       lp_job_key_names[key], what);
}

static bool has_dotdot(const char *path)
{
	char **parts = g_strsplit(path, "/", -1);
	bool found = false;
	for (char **p = parts; *p; p++)
		if (!strcmp(*p, ".."))
			found = true;
	g_strfreev(parts);
	return found;
}

static bool is_inside(const char *path, const char *root)
{
	size_t n = strlen(root);
	if (n == 1) /* root is "/" */
		return true;
	return !strncmp(path, root, n) && (path[n] == '\0' || path[n] == '/');
}

int lp_job_confine(lp_job_spec *spec, const char *name, const char *root, lp_error *err)
{
	if (!g_path_is_absolute(spec->reference))
		return key_error(spec, name, LP_JOB_KEY_REFERENCE, err,
				 "'%s' is not an absolute path", spec->reference);
	if (!g_path_is_absolute(spec->kernel))
		return key_error(spec, name, LP_JOB_KEY_KERNEL, err,
				 "'%s' is not an absolute path", spec->kernel);
	const char *out = spec->output;
	if (has_dotdot(out))
		return key_error(spec, name, LP_JOB_KEY_OUTPUT, err,
				 "'%s': '..' is not allowed", out);
	char *full = g_path_is_absolute(out) ? g_strdup(out) : g_build_filename(root, out, NULL);
	char *dir = g_path_get_dirname(full);
	char *base = g_path_get_basename(full);
	g_free(full);
	int r = 0;
	char real_dir[PATH_MAX];
	if (!strcmp(base, ".") || !strcmp(base, "/") || g_str_has_suffix(out, "/"))
		r = key_error(spec, name, LP_JOB_KEY_OUTPUT, err, "'%s' does not name a file", out);
	else if (!realpath(dir, real_dir))
		r = key_error(spec, name, LP_JOB_KEY_OUTPUT, err, "directory of '%s': %s", out,
			      g_strerror(errno));
	else if (!is_inside(real_dir, root))
		r = key_error(spec, name, LP_JOB_KEY_OUTPUT, err,
			      "'%s' is outside the output root %s", out, root);
	char *resolved = r ? NULL : g_build_filename(real_dir, base, NULL);
	struct stat st;
	if (!r && lstat(resolved, &st) == 0) {
		/* Replacing a symbolic link is harmless, but writing through one to
		 * a device or a directory elsewhere is not: refuse them all. */
		if (S_ISLNK(st.st_mode))
			r = key_error(spec, name, LP_JOB_KEY_OUTPUT, err, "'%s' is a symbolic link", out);
		else if (spec->per_process && !S_ISDIR(st.st_mode))
			r = key_error(spec, name, LP_JOB_KEY_OUTPUT, err, "'%s' is not a directory", out);
		else if (!spec->per_process && !S_ISREG(st.st_mode))
			r = key_error(spec, name, LP_JOB_KEY_OUTPUT, err, "'%s' is not a regular file", out);
	}
	g_free(dir);
	g_free(base);
	if (r) {
		g_free(resolved);
		return r;
	}
	g_free(spec->output);
	spec->output = resolved;
	return 0;
}

int lp_job_remove_partials(const char *output)
{
	char *dir = g_path_get_dirname(output);
	char *base = g_path_get_basename(output);
	char *tmp_prefix = g_strconcat(".", base, LP_TMP_FILE_INFIX, NULL);
	char *partial_prefix = g_strconcat(base, LP_TMP_DIR_INFIX, NULL);
	int removed = 0;
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *entry;
	while (d && (entry = g_dir_read_name(d))) {
		bool tmp = g_str_has_prefix(entry, tmp_prefix);
		if (!tmp && !g_str_has_prefix(entry, partial_prefix))
			continue;
		char *path = g_build_filename(dir, entry, NULL);
		if (tmp ? unlink(path) == 0 : lp_remove_tree(path) == 0)
			removed++;
		g_free(path);
	}
	if (d)
		g_dir_close(d);
	g_free(dir);
	g_free(base);
	g_free(tmp_prefix);
	g_free(partial_prefix);
	return removed;
}
