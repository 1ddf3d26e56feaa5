/* vfork, then exec of /proc/self/exe: the program runs itself again. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child"))
		return 5;
	pid_t pid = vfork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	printf("child %d\n", WEXITSTATUS(status));
	return WEXITSTATUS(status) == 5 ? 0 : 1;
}
