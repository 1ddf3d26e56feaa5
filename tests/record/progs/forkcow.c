/* Fork: the child writes its copy of a page and exits 5; the parent waits. */
#include <sys/wait.h>
#include <unistd.h>

static volatile int shared_word = 1;

int main(void)
{
	pid_t child = fork();
	if (child == 0) {
		shared_word = 2;
		_exit(5);
	}
	int status;
	waitpid(child, &status, 0);
	shared_word = 3;
	return WIFEXITED(status) && WEXITSTATUS(status) == 5 ? 7 : 1;
}
