/* Page checks: copy-on-write after fork. The parent writes an anonymous
   page and forks; the child reads it (the parent's page), writes it (a
   fresh page of its own) and reads it again; the parent, once the child
   is gone, reads it (still its page). Prints "page ADDR". */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	volatile char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	if (p == MAP_FAILED)
		return 1;
	p[0] = 1;
	printf("page %lx\n", (unsigned long)p);
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		int seen = p[0];
		p[0] = 2;
		seen += p[0];
		_exit(seen == 3 ? 0 : 1);
	}
	int status;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return p[0] == 1 ? 0 : 1;
}
