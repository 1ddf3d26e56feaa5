/* The page cache: a file written, copied with sendfile and
   copy_file_range, truncated, and unlinked; writev and readv. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	char buf[3 * 4096];
	memset(buf, 'y', sizeof buf);
	int a = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	int b = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
	struct iovec iov[2] = {{buf, 5000}, {buf + 5000, sizeof buf - 5000}};
	if (a < 0 || b < 0 || writev(a, iov, 2) != sizeof buf)
		return 1;
	off_t off = 0;
	if (sendfile(b, a, &off, 6000) != 6000)
		return 1;
	loff_t in = 6000;
	if (copy_file_range(a, &in, b, NULL, 100, 0) != 100)
		return 1;
	if (ftruncate(a, 4096) != 0 || lseek(a, 0, SEEK_SET) != 0 || readv(a, iov, 2) != 4096)
		return 1;
	close(b);
	unlink(argv[2]);
	return 0;
}
