/* Page checks: System V shared memory written by a child and read by its
   parent, each attaching it where it may. Prints "child ADDR" and
   "parent ADDR" (two pages each). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	int id = shmget(IPC_PRIVATE, 2 * 4096, IPC_CREAT | 0600);
	if (id < 0)
		return 1;
	pid_t child = fork();
	if (child == 0) {
		volatile char *s = shmat(id, NULL, 0);
		if (s == (void *)-1)
			_exit(1);
		printf("child %lx\n", (unsigned long)s);
		fflush(stdout);
		s[0] = 1;
		s[4096] = 2;
		shmdt((void *)s);
		_exit(0);
	}
	int status;
	waitpid(child, &status, 0);
	/* Elsewhere than the child's, as another process would. */
	char *hole = malloc(1);
	volatile char *s = shmat(id, NULL, 0);
	(void)hole;
	if (s == (void *)-1)
		return 1;
	printf("parent %lx\n", (unsigned long)s);
	int sum = s[0] + s[4096];
	shmdt((void *)s);
	shmctl(id, IPC_RMID, NULL);
	return sum == 3 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
