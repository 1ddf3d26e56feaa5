/* Forks until fork fails (the process limit, ulimit -u), and says how;
   the children end after 3 s. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	for (int k = 0; k < 64; k++) {
		pid_t pid = fork();
		if (pid < 0) {
			printf("fork %d failed: %s\n", k, strerror(errno));
			return 0;
		}
		if (pid == 0) {
			sleep(3);
			_exit(0);
		}
	}
	puts("no failure");
	return 0;
}
