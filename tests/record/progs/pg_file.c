/* Page checks: a file written with write() and read back with read()
   (the kernel copies through the page cache), then mapped MAP_SHARED and
   read by the process and by a child: the mapped pages are the very pages
   the kernel touched. Prints "parent ADDR" and "child ADDR" (two pages). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[2 * 4096];
	if (argc != 2)
		return 2;
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	memset(buf, 'x', sizeof buf);
	if (fd < 0 || write(fd, buf, sizeof buf) != sizeof buf || lseek(fd, 0, SEEK_SET) != 0 ||
	    read(fd, buf, sizeof buf) != sizeof buf)
		return 1;
	fflush(stdout);
	pid_t child = fork();
	volatile char *m = mmap(NULL, sizeof buf, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return 1;
	printf("%s %lx\n", child == 0 ? "child" : "parent", (unsigned long)m);
	fflush(stdout);
	int sum = m[0] + m[4096];
	if (child == 0)
		_exit(sum == 2 * 'x' ? 0 : 1);
	int status;
	waitpid(child, &status, 0);
	return sum == 2 * 'x' && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
