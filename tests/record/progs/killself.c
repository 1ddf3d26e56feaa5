/* Killed by a signal: the capture of what ran is still whole, and the
   status says the signal. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	volatile char *p = malloc(100000);
	p[0] = p[99999] = 1;
	kill(getpid(), SIGTERM);
	return 0;
}
