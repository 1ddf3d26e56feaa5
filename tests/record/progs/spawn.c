/* posix_spawn (clone with CLONE_VM|CLONE_VFORK) and vfork: each child execs
   true; Valgrind runs both as forks, so each is an F. */
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(void)
{
	pid_t pid;
	char *args[] = {"/bin/true", NULL};
	int status;
	if (posix_spawn(&pid, "/bin/true", NULL, NULL, args, environ) != 0 ||
	    waitpid(pid, &status, 0) != pid)
		return 1;
	pid = vfork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(9);
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
