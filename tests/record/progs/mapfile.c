/* A file written with write(), mapped shared and read, read back with
   pread(); then System V shared memory attached, written and removed. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	char buf[10000];
	memset(buf, 'x', sizeof buf);
	if (fd < 0 || write(fd, buf, sizeof buf) != sizeof buf)
		return 1;
	volatile char *m = mmap(NULL, sizeof buf, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return 1;
	long sum = m[0] + m[5000] + m[9999];
	if (pread(fd, buf, 5000, 3000) != 5000)
		return 1;
	munmap((void *)m, sizeof buf);
	close(fd);
	int id = shmget(IPC_PRIVATE, 3 * 4096, IPC_CREAT | 0600);
	volatile char *s = shmat(id, NULL, 0);
	s[0] = 1;
	s[8192] = 2;
	shmdt((void *)s);
	shmctl(id, IPC_RMID, NULL);
	return sum == 3 * 'x' ? 0 : 1;
}
