/* LD_PRELOAD shim for the end-to-end cases: I/O faults on demand.
 *
 *   LP_FAULT_WRITE=K   the K-th write to a regular file (from 1) fails
 *   LP_FAULT_FSYNC=K   the K-th fsync or fdatasync fails with EIO
 *   LP_FAULT_ERRNO=E   the write's error: ENOSPC (default) or EIO
 *   LP_FAULT_PREAD=K   the K-th pread from a regular file (from 1) fails
 *                      with EIO, as a failing disk under a temporary file
 *   LP_FAULT_COUNT=F   at exit, append "writes N fsyncs M" to file F, so a
 *                      case can spread K over a whole run
 *   LP_FAULT_SPAWN=1   every posix_spawn fails with EAGAIN, as when the
 *                      processes run out
 *   LP_FAULT_SHRINK=NAME:SIZE
 *                      a regular file whose path ends in /NAME is truncated
 *                      to SIZE bytes as soon as the program maps it (mmap),
 *                      as if another program shrank it under the reader
 *   LP_FAULT_SHRINK_AT=create
 *                      instead, when the program creates its first file
 *                      (openat with O_CREAT: a staged output), the file
 *                      NAME it mapped last
 *   LP_FAULT_SHRINK_AT=read
 *                      instead, once the program's first read of the file
 *                      NAME has returned its bytes
 *   LP_FAULT_CLOCK_STEP_US=N
 *                      CLOCK_MONOTONIC moves N microseconds at each reading
 *                      (from the first real one), however fast the program
 *                      runs: a progress line redrawn every quarter second is
 *                      then redrawn at every update with N >= 250000
 *
 * Writes to pipes, terminals and devices are neither counted nor failed:
 * the faults are those of a full or failing disk. Counts are per process
 * (a child process that loads the shim counts from 0 again), and atomic
 * (threads that write or flush at once count each call once). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static unsigned long writes, syncs, preads;

static unsigned long env_number(const char *name)
{
	const char *s = getenv(name);
	return s ? strtoul(s, NULL, 10) : 0;
}

static int is_regular(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* Whether this write to fd is the one to fail (counting it if it is a
 * write to a regular file). */
static int write_fails(int fd)
{
	if (!is_regular(fd))
		return 0;
	if (__atomic_add_fetch(&writes, 1, __ATOMIC_RELAXED) != env_number("LP_FAULT_WRITE"))
		return 0;
	const char *e = getenv("LP_FAULT_ERRNO");
	errno = e && !strcmp(e, "EIO") ? EIO : ENOSPC;
	return 1;
}

static int sync_fails(void)
{
	if (__atomic_add_fetch(&syncs, 1, __ATOMIC_RELAXED) != env_number("LP_FAULT_FSYNC"))
		return 0;
	errno = EIO;
	return 1;
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void *buf, size_t n)
{
	return write_fails(fd) ? -1 : REAL(write)(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return write_fails(fd) ? -1 : REAL(pwrite)(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	return write_fails(fd) ? -1 : REAL(writev)(fd, iov, n);
}

int fsync(int fd)
{
	return sync_fails() ? -1 : REAL(fsync)(fd);
}

int fdatasync(int fd)
{
	return sync_fails() ? -1 : REAL(fdatasync)(fd);
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
		const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return env_number("LP_FAULT_SPAWN") ? EAGAIN
					    : REAL(posix_spawn)(pid, path, actions, attr, argv, envp);
}

/* The path of the file LP_FAULT_SHRINK names that was mapped last. */
static char shrink_path[4096];
static int shrunk_on_read;

static void shrink(void)
{
	const char *size = strrchr(getenv("LP_FAULT_SHRINK"), ':') + 1;
	if (truncate(shrink_path, (off_t)strtoull(size, NULL, 10)))
		abort();
	shrink_path[0] = 0;
}

static int shrink_at(const char *when)
{
	const char *at = getenv("LP_FAULT_SHRINK_AT");
	return at ? !strcmp(at, when) : !strcmp(when, "map");
}

/* Whether fd is the file LP_FAULT_SHRINK names (its path into shrink_path). */
static int is_shrink_file(int fd)
{
	const char *name = getenv("LP_FAULT_SHRINK"), *colon = name ? strrchr(name, ':') : NULL;
	char link[64], path[sizeof shrink_path];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = fd >= 0 && colon && is_regular(fd) ? readlink(link, path, sizeof path - 1) : -1;
	ssize_t k = colon ? colon - name : 0;
	if (n <= k || path[n - k - 1] != '/' || memcmp(path + n - k, name, (size_t)k))
		return 0;
	path[n] = 0;
	memcpy(shrink_path, path, (size_t)n + 1);
	return 1;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = REAL(mmap)(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && is_shrink_file(fd) && shrink_at("map"))
		shrink();
	return p;
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	if (is_regular(fd) &&
	    __atomic_add_fetch(&preads, 1, __ATOMIC_RELAXED) == env_number("LP_FAULT_PREAD")) {
		errno = EIO;
		return -1;
	}
	return REAL(pread)(fd, buf, n, off);
}

ssize_t read(int fd, void *buf, size_t n)
{
	ssize_t r = REAL(read)(fd, buf, n);
	if (r > 0 && !shrunk_on_read && getenv("LP_FAULT_SHRINK") && shrink_at("read") &&
	    is_shrink_file(fd)) {
		shrunk_on_read = 1;
		shrink();
	}
	return r;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	int fd = REAL(openat)(dirfd, path, flags, mode);
	if (fd >= 0 && (flags & O_CREAT) && shrink_path[0] && shrink_at("create"))
		shrink();
	return fd;
}

__attribute__((destructor)) static void report_counts(void)
{
	const char *path = getenv("LP_FAULT_COUNT");
	FILE *f = path ? fopen(path, "a") : NULL;
	if (!f)
		return;
	fprintf(f, "writes %lu fsyncs %lu\n", writes, syncs);
	fclose(f);
}

int clock_gettime(clockid_t clock, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	static long long first_us = -1, readings;
	if (!real)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	long long step = (long long)env_number("LP_FAULT_CLOCK_STEP_US");
	if (clock != CLOCK_MONOTONIC || step == 0)
		return real(clock, ts);
	if (__atomic_load_n(&first_us, __ATOMIC_ACQUIRE) < 0) {
		struct timespec now;
		int r = real(clock, &now);
		if (r != 0)
			return r;
		long long us = now.tv_sec * 1000000LL + now.tv_nsec / 1000, unset = -1;
		__atomic_compare_exchange_n(&first_us, &unset, us, 0, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
	}
	long long us = __atomic_load_n(&first_us, __ATOMIC_ACQUIRE) +
		       step * __atomic_fetch_add(&readings, 1, __ATOMIC_RELAXED);
	ts->tv_sec = us / 1000000;
	ts->tv_nsec = us % 1000000 * 1000;
	return 0;
}
