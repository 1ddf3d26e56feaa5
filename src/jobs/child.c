/* The child processes of the batch engine and the daemon as fresh images of
 * the running program (jobs/child.h): the description written before the
 * spawn, the spawn, and the description read back in the child. */
#include "jobs/child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* The running program even when its file has been replaced or removed
 * since (an upgrade under a running daemon): the child is the very build
 * that wrote its description. */
#define PROGRAM "/proc/self/exe"
/* The child's descriptors, from LP_CHILD_PIPE_FD on, in this order; ours
 * are first copied from FIRST_FREE_FD on. */
#define CHILD_FD_COUNT 3
#define FIRST_FREE_FD (LP_CHILD_PIPE_FD + CHILD_FD_COUNT)
G_STATIC_ASSERT(LP_CHILD_DESC_FD == LP_CHILD_PIPE_FD + 1);
G_STATIC_ASSERT(LP_CHILD_ROOT_FD == LP_CHILD_PIPE_FD + 2);

extern char **environ;

/* ---- the description, written ---- */

GByteArray *lp_job_desc_new(const char *command)
{
	GByteArray *desc = g_byte_array_new();
	lp_job_desc_put_str(desc, command);
	return desc;
}

void lp_job_desc_put_u64(GByteArray *desc, uint64_t value)
{
	g_byte_array_append(desc, (const guint8 *)&value, sizeof value);
}

/* Its size with the NUL, then its bytes; size 0 for NULL. */
void lp_job_desc_put_str(GByteArray *desc, const char *s)
{
	size_t size = s ? strlen(s) + 1 : 0;
	lp_job_desc_put_u64(desc, size);
	if (s)
		g_byte_array_append(desc, (const guint8 *)s, (guint)size);
}

/* ---- the spawn ---- */

/* desc in a memory file: the child may read it whenever it likes, and a
 * child that never does blocks nobody (a pipe's writer could). */
static int desc_file(const GByteArray *desc, lp_error *err)
{
	int fd = memfd_create("laplace-job", MFD_CLOEXEC);
	if (fd < 0) {
		lp_fail(err, LP_EIO, "cannot create the job's description: %s", g_strerror(errno));
		return -1;
	}
	for (size_t done = 0; done < desc->len;) {
		ssize_t n = write(fd, desc->data + done, desc->len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			lp_fail(err, LP_EIO, "cannot write the job's description: %s",
				g_strerror(errno));
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	return fd;
}

/* What the child starts with: fds[i] (or nothing, for -1) at descriptor
 * LP_CHILD_PIPE_FD + i and nothing else of ours (the daemon's spool lock
 * above all), the ending signals blocked. 0 or an errno value. */
static int child_setup(posix_spawn_file_actions_t *actions, posix_spawnattr_t *attr,
		       const int fds[CHILD_FD_COUNT])
{
	int e = 0;
	for (int i = 0; i < CHILD_FD_COUNT && !e; i++) {
		int target = LP_CHILD_PIPE_FD + i;
		e = fds[i] >= 0 ? posix_spawn_file_actions_adddup2(actions, fds[i], target)
				: posix_spawn_file_actions_addclose(actions, target);
	}
	if (!e)
		e = posix_spawn_file_actions_addclosefrom_np(actions, FIRST_FREE_FD);
	sigset_t ending;
	sigemptyset(&ending);
	sigaddset(&ending, SIGINT);
	sigaddset(&ending, SIGTERM);
	sigaddset(&ending, SIGHUP);
	if (!e)
		e = posix_spawnattr_setsigmask(attr, &ending);
	if (!e)
		e = posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK);
	return e;
}

int lp_job_spawn(const char *command, const GByteArray *desc, int pipe_fd, int root_fd,
		 pid_t *pid, lp_error *err)
{
	int desc_fd = desc_file(desc, err);
	if (desc_fd < 0)
		return err->status;
	/* Copied above the child's numbers first: one of them may be the
	 * target of another. */
	const int given[CHILD_FD_COUNT] = {pipe_fd, desc_fd, root_fd};
	int moved[CHILD_FD_COUNT];
	int e = 0;
	for (int i = 0; i < CHILD_FD_COUNT; i++) {
		moved[i] = given[i] < 0 ? -1 : fcntl(given[i], F_DUPFD_CLOEXEC, FIRST_FREE_FD);
		if (given[i] >= 0 && moved[i] < 0 && !e)
			e = errno;
	}
	close(desc_fd);
	posix_spawn_file_actions_t actions;
	posix_spawnattr_t attr;
	posix_spawn_file_actions_init(&actions);
	posix_spawnattr_init(&attr);
	if (!e)
		e = child_setup(&actions, &attr, moved);
	/* Our name as its argv[0], for the child to take: ps and pgrep show
	 * it as they show us, not as "exe". */
	char name[16] = "";
	prctl(PR_GET_NAME, name);
	char *argv[] = {name, (char *)command, NULL};
	if (!e)
		e = posix_spawn(pid, PROGRAM, &actions, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&actions);
	for (int i = 0; i < CHILD_FD_COUNT; i++)
		if (moved[i] >= 0)
			close(moved[i]);
	if (e)
		return lp_fail(err, LP_EIO, "cannot start the job process (%s %s): %s", PROGRAM,
			       command, g_strerror(e));
	return 0;
}

int lp_command_spawn(char *const *argv, int err_fd, pid_t *pid, lp_error *err)
{
	size_t argc = g_strv_length((char **)argv);
	char **args = g_new0(char *, argc + 2);
	args[0] = "laplace";
	memcpy(args + 1, argv, argc * sizeof *argv);
	posix_spawn_file_actions_t actions;
	posix_spawnattr_t attr;
	posix_spawn_file_actions_init(&actions);
	posix_spawnattr_init(&attr);
	sigset_t ending;
	sigemptyset(&ending);
	sigaddset(&ending, SIGINT);
	sigaddset(&ending, SIGTERM);
	sigaddset(&ending, SIGHUP);
	int e = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
	if (!e)
		e = posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
	if (!e)
		e = posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
	if (!e)
		e = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
	if (!e)
		e = posix_spawnattr_setsigmask(&attr, &ending);
	if (!e)
		e = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	if (!e)
		e = posix_spawn(pid, PROGRAM, &actions, &attr, args, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&actions);
	g_free(args);
	if (e)
		return lp_fail(err, LP_EIO, "cannot start %s %s: %s", PROGRAM, argv[0] ? argv[0] : "",
			       g_strerror(e));
	return 0;
}

/* ---- the description, read back ---- */

int lp_job_child_check_fd(int fd, lp_error *err)
{
	if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
		return lp_fail(err, LP_EUSAGE, "a child process of laplace batch and laplace "
			       "daemon, started by them: not a command to run by hand (descriptor "
			       "%d is not open)", fd);
	return 0;
}

int lp_job_desc_receive(const char *command, lp_job_desc *desc, lp_error *err)
{
	memset(desc, 0, sizeof *desc);
	int r = lp_job_child_check_fd(LP_CHILD_DESC_FD, err);
	if (r)
		return r;
	struct stat st;
	if (fstat(LP_CHILD_DESC_FD, &st) < 0)
		return lp_fail(err, LP_EIO, "cannot read the job's description (descriptor %d): %s",
			       LP_CHILD_DESC_FD, g_strerror(errno));
	/* Anything but a regular file (the memory file) holds nothing here. */
	size_t size = S_ISREG(st.st_mode) ? (size_t)st.st_size : 0;
	desc->bytes = g_malloc(size + 1); /* never NULL */
	const char *why = NULL;
	for (size_t done = 0; done < size && !why;) {
		ssize_t n = pread(LP_CHILD_DESC_FD, desc->bytes + done, size - done, (off_t)done);
		if (n > 0)
			done += (size_t)n;
		else if (n == 0)
			why = "it is shorter than it was";
		else if (errno != EINTR)
			why = g_strerror(errno);
	}
	close(LP_CHILD_DESC_FD);
	if (why)
		return lp_fail(err, LP_EIO, "cannot read the job's description (descriptor %d): %s",
			       LP_CHILD_DESC_FD, why);
	desc->next = desc->bytes;
	desc->end = desc->bytes + size;
	const char *what = lp_job_desc_get_str(desc);
	if (!what || strcmp(what, command))
		return lp_fail(err, LP_EIO, "descriptor %d holds no description of a job for "
			       "laplace %s", LP_CHILD_DESC_FD, command);
	return 0;
}

uint64_t lp_job_desc_get_u64(lp_job_desc *desc)
{
	uint64_t value;
	if (desc->bad || (size_t)(desc->end - desc->next) < sizeof value) {
		desc->bad = true;
		return 0;
	}
	memcpy(&value, desc->next, sizeof value);
	desc->next += sizeof value;
	return value;
}

const char *lp_job_desc_get_str(lp_job_desc *desc)
{
	uint64_t size = lp_job_desc_get_u64(desc);
	if (!size || desc->bad)
		return NULL;
	const char *s = desc->next;
	if (size > (uint64_t)(desc->end - s) || strnlen(s, size) != size - 1) {
		desc->bad = true;
		return NULL;
	}
	desc->next += size;
	return s;
}

int lp_job_desc_end(const lp_job_desc *desc, lp_error *err)
{
	if (desc->bad || desc->next != desc->end)
		return lp_fail(err, LP_EIO, "the job's description (descriptor %d) is malformed",
			       LP_CHILD_DESC_FD);
	return 0;
}

void lp_job_desc_clear(lp_job_desc *desc)
{
	g_free(desc->bytes);
	memset(desc, 0, sizeof *desc);
}
