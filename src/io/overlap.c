/* Refusing an output that would overwrite an input (laplace-formats(5):
 * Exit status): checked by device and inode before anything is written, so
 * that any path or link to an input is caught. */
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

/* stat() of a path, "-" being the standard stream fd. */
static bool stat_of(const char *path, int std_fd, struct stat *st)
{
	return !strcmp(path, "-") ? fstat(std_fd, st) == 0 : stat(path, st) == 0;
}

/* Where a path that may not exist yet would be: its directory resolved,
 * then its last component; NULL when the directory does not exist. */
static char *resolved_target(const char *path)
{
	char *resolved = realpath(path, NULL);
	if (resolved)
		return resolved;
	char *dir = g_path_get_dirname(path);
	char *base = g_path_get_basename(path);
	char *rdir = realpath(dir, NULL);
	char *target = rdir ? g_build_filename(rdir, base, NULL) : NULL;
	free(rdir);
	g_free(dir);
	g_free(base);
	return target;
}

/* Whether the directory dir holds path at any depth: whether one of the
 * directories above path, once resolved, is dir. */
static bool holds(const struct stat *dir, const char *path)
{
	char *r = realpath(path, NULL);
	bool inside = false;
	for (char *slash; r && !inside && (slash = strrchr(r, '/')) && slash != r;) {
		*slash = '\0';
		struct stat st;
		inside = stat(r, &st) == 0 && st.st_dev == dir->st_dev && st.st_ino == dir->st_ino;
	}
	free(r);
	return inside;
}

/* The checks against the inputs of an output whose stat is ost. */
static int check_output(const char *out, const struct stat *ost, const char *const *inputs,
			size_t nin, lp_error *err)
{
	if (!(S_ISREG(ost->st_mode) || S_ISDIR(ost->st_mode)))
		return 0;
	const char *shown_out = strcmp(out, "-") ? out : "<stdout>";
	for (size_t i = 0; i < nin; i++) {
		struct stat ist;
		if (!inputs[i] || !stat_of(inputs[i], STDIN_FILENO, &ist))
			continue;
		const char *shown_in = strcmp(inputs[i], "-") ? inputs[i] : "<stdin>";
		if (ist.st_dev == ost->st_dev && ist.st_ino == ost->st_ino)
			return lp_fail(err, LP_EUSAGE, "%s: refusing to overwrite the input %s",
				       shown_out, shown_in);
		if (S_ISDIR(ost->st_mode) && strcmp(inputs[i], "-") && holds(ost, inputs[i]))
			return lp_fail(err, LP_EUSAGE, "%s: refusing to replace a directory holding the input %s",
				       shown_out, shown_in);
	}
	return 0;
}

int lp_check_output_in(int dir_fd, const char *output, const char *const *inputs, size_t nin,
		       lp_error *err)
{
	char *base = g_path_get_basename(output);
	struct stat ost;
	int found = fstatat(dir_fd, base, &ost, AT_SYMLINK_NOFOLLOW);
	g_free(base);
	return found == 0 ? check_output(output, &ost, inputs, nin, err) : 0;
}

int lp_check_outputs(const char *const *inputs, size_t nin, const char *const *outputs,
		     size_t nout, lp_error *err)
{
	for (size_t o = 0; o < nout; o++) {
		if (!outputs[o])
			continue;
		/* "" names no file: rename() would fail at the end of the run. */
		if (!outputs[o][0])
			return lp_fail(err, LP_EUSAGE, "an output file name is empty");
		struct stat ost;
		int rc = stat_of(outputs[o], STDOUT_FILENO, &ost)
				 ? check_output(outputs[o], &ost, inputs, nin, err) : 0;
		if (rc)
			return rc;
		/* Two outputs renamed onto one name would lose one of them. */
		for (size_t p = 0; p < o; p++) {
			if (!outputs[p] || !strcmp(outputs[o], "-") || !strcmp(outputs[p], "-"))
				continue;
			char *a = resolved_target(outputs[o]), *b = resolved_target(outputs[p]);
			bool same = a && b && !strcmp(a, b);
			g_free(a);
			g_free(b);
			if (same)
				return lp_fail(err, LP_EUSAGE, "%s and %s name the same output file",
					       outputs[p], outputs[o]);
		}
	}
	return 0;
}
