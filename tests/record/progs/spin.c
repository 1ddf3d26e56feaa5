/* Two busy processes: forks, and both write memory in a tight loop for
   SECONDS (argv[1]) of wall time, as fast as they are let (tests/record/run,
   "temporary space"). */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 5);
	pid_t child = fork();
	static volatile char mem[1 << 16];
	for (unsigned long k = 1; k % (1 << 16) || time(NULL) < end; k++)
		mem[k % sizeof mem] = (char)k;
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}
