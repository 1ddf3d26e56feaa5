/* The daemon's confinement of job outputs, and the cleanup of what a killed
 * job leaves behind.
 *
 * The daemon checks a job's output by its text alone (no "..", inside the
 * output root). Everything that touches the file system is done with the
 * job owner's rights (by a child process, for a daemon running as root),
 * through the descriptor of the output root the daemon opened at start:
 * openat2() resolves the output's directory beneath it refusing every
 * symbolic link, and the output is then written, renamed and flushed
 * through that directory's descriptor alone (staging invariant (2),
 * src/io/staging.c). */
#include "jobs/confine.h"
#include "jobs/jobfile.h"
#include "jobs/child.h"

#include "io/staging.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

static bool is_inside(const char *path, const char *root)
{
	size_t n = strlen(root);
	if (n == 1) /* root is "/" */
		return path[0] == '/' && path[1] != '\0';
	return !strncmp(path, root, n) && path[n] == '/';
}

/* path with its "." and empty components left out, absolute; NULL if one
 * of them is "..". */
static char *normalise(const char *path)
{
	char **parts = g_strsplit(path, "/", -1);
	GString *out = g_string_new(NULL);
	bool dotdot = false;
	for (char **p = parts; *p; p++) {
		if (!strcmp(*p, ".."))
			dotdot = true;
		else if (**p && strcmp(*p, "."))
			g_string_append_printf(out, "/%s", *p);
	}
	g_strfreev(parts);
	if (dotdot || !out->len) {
		g_string_free(out, TRUE);
		return NULL;
	}
	return g_string_free(out, FALSE);
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
	char *base = g_path_get_basename(out);
	bool names_file = strcmp(base, ".") && strcmp(base, "/") && !g_str_has_suffix(out, "/");
	g_free(base);
	if (!names_file)
		return key_error(spec, name, LP_JOB_KEY_OUTPUT, err, "'%s' does not name a file", out);
	char *full = g_path_is_absolute(out) ? g_strdup(out) : g_build_filename(root, out, NULL);
	char *normal = normalise(full);
	g_free(full);
	if (!normal)
		return key_error(spec, name, LP_JOB_KEY_OUTPUT, err, "'%s': '..' is not allowed", out);
	if (!is_inside(normal, root)) {
		g_free(normal);
		return key_error(spec, name, LP_JOB_KEY_OUTPUT, err,
				 "'%s' is outside the output root %s", out, root);
	}
	g_free(spec->output);
	spec->output = normal;
	return 0;
}

/* The directory of output (confined by lp_job_confine), opened beneath the
 * output root without following any symbolic link; -1 with err set. */
static int open_output_dir(const lp_job_confinement *c, const char *output, lp_error *err)
{
	size_t n = strlen(c->root);
	char *dir = g_path_get_dirname(output + (n == 1 ? 0 : n));
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	/* The root itself is "/" relative to it: openat2 wants "." there. */
	const char *relative = strcmp(dir, "/") ? dir + 1 : ".";
	int fd = (int)syscall(SYS_openat2, c->root_fd, relative, &how, sizeof how);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			lp_fail(err, LP_EINPUT, "%s: '%s': a symbolic link is on its way; outputs are "
				"written only through real directories", c->what, output);
		else if (e == EXDEV)
			lp_fail(err, LP_EINPUT, "%s: '%s' is outside the output root %s", c->what,
				output, c->root);
		else if (e == ENOSYS)
			lp_fail(err, LP_EIO, "%s: confining outputs needs openat2 (Linux 5.6 or later)",
				c->what);
		else
			lp_fail(err, e == ENOENT || e == ENOTDIR ? LP_EINPUT : LP_EIO,
				"%s: directory of '%s': %s", c->what, output, g_strerror(e));
	}
	g_free(dir);
	return fd;
}

/* Supplementary groups, gid and uid in that order: each needs the rights
 * the next one drops. Then make sure there is no way back. */
int lp_job_become(uid_t owner, lp_error *err)
{
	struct passwd pw, *found = NULL;
	char buf[16384];
	if (getpwuid_r(owner, &pw, buf, sizeof buf, &found) != 0 || !found)
		return lp_fail(err, LP_EIO, "cannot run as uid %u: no such user", (unsigned)owner);
	if (initgroups(pw.pw_name, pw.pw_gid) < 0 || setgid(pw.pw_gid) < 0 || setuid(owner) < 0)
		return lp_fail(err, LP_EIO, "cannot run as %s (uid %u): %s", pw.pw_name,
			       (unsigned)owner, g_strerror(errno));
	if (getuid() != owner || geteuid() != owner || getgid() != pw.pw_gid ||
	    getegid() != pw.pw_gid || (owner != 0 && setuid(0) == 0))
		return lp_fail(err, LP_EIO, "cannot run as %s (uid %u): credentials did not change",
			       pw.pw_name, (unsigned)owner);
	return 0;
}

int lp_job_open_output_dir(const lp_job_confinement *c, const char *output, bool per_process,
			   lp_error *err)
{
	int fd = open_output_dir(c, output, err);
	if (fd < 0)
		return -1;
	/* Nothing at the output's name is ever followed (a link there would be
	 * replaced), but saying so beats a surprise. */
	char *base = g_path_get_basename(output);
	struct stat st;
	int r = 0;
	if (fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			r = lp_fail(err, LP_EINPUT, "%s: '%s' is a symbolic link", c->what, output);
		else if (per_process && !S_ISDIR(st.st_mode))
			r = lp_fail(err, LP_EINPUT, "%s: '%s' is not a directory", c->what, output);
		else if (!per_process && !S_ISREG(st.st_mode))
			r = lp_fail(err, LP_EINPUT, "%s: '%s' is not a regular file", c->what, output);
	}
	g_free(base);
	if (r) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Remove the leftovers beside output; how many, or -1. */
static int remove_partials_now(const lp_job_confinement *c, const char *output)
{
	lp_error err = {0};
	int fd = open_output_dir(c, output, &err);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char *base = g_path_get_basename(output);
	int removed = 0;
	const struct dirent *e;
	while ((e = readdir(d)))
		if (lp_is_tmp_of(e->d_name, base) && lp_remove_tree(dirfd(d), e->d_name) == 0)
			removed++;
	closedir(d);
	g_free(base);
	return removed;
}

/* The most a child can report in its exit status; more count as this. */
#define MAX_REPORTED_REMOVALS 250
#define REMOVAL_FAILED 255

int lp_job_remove_partials(const lp_job_confinement *c, const char *output, uid_t owner)
{
	if (owner == LP_NO_OWNER) {
		int removed = remove_partials_now(c, output);
		return removed < 0 ? 0 : removed;
	}
	/* As owner: in a child that becomes owner, written down for it as
	 * lp_remove_partials_child_main reads it back. */
	GByteArray *desc = lp_job_desc_new(LP_REMOVE_PARTIALS_COMMAND);
	lp_job_desc_put_u64(desc, owner);
	lp_job_desc_put_str(desc, c->root);
	lp_job_desc_put_str(desc, c->what);
	lp_job_desc_put_str(desc, output);
	lp_error err = {0};
	pid_t pid;
	int r = lp_job_spawn(LP_REMOVE_PARTIALS_COMMAND, desc, -1, c->root_fd, &pid, &err);
	g_byte_array_unref(desc);
	if (r)
		return 0;
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) != REMOVAL_FAILED ? WEXITSTATUS(status) : 0;
}

int lp_remove_partials_child_main(lp_error *err)
{
	lp_job_desc desc;
	int r = lp_job_desc_receive(LP_REMOVE_PARTIALS_COMMAND, &desc, err);
	uid_t owner = (uid_t)lp_job_desc_get_u64(&desc);
	lp_job_confinement c = {LP_CHILD_ROOT_FD, NULL, NULL};
	c.root = lp_job_desc_get_str(&desc);
	c.what = lp_job_desc_get_str(&desc);
	const char *output = lp_job_desc_get_str(&desc);
	if (!r)
		r = lp_job_desc_end(&desc, err);
	int removed = -1;
	lp_error become_err = {0};
	if (!r && !lp_job_become(owner, &become_err))
		removed = remove_partials_now(&c, output);
	lp_job_desc_clear(&desc);
	if (r == LP_EUSAGE)
		return r;
	return removed < 0 ? REMOVAL_FAILED : MIN(removed, MAX_REPORTED_REMOVALS);
}
