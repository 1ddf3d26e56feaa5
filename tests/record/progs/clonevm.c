/* clone(CLONE_VM|SIGCHLD): a child sharing the address space that is not
   a thread, which Valgrind cannot run. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

static int child(void *arg)
{
	(void)arg;
	return 0;
}

int main(void)
{
	char *stack = malloc(1 << 16);
	int pid = clone(child, stack + (1 << 16), CLONE_VM | SIGCHLD, NULL);
	if (pid < 0)
		return 2;
	int status;
	waitpid(pid, &status, 0);
	puts("clone ran");
	return 0;
}
