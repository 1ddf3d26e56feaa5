/* Says "ready" and waits for a signal: interrupted, it ends as SIGINT
   ends a program. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	puts("ready");
	fflush(stdout);
	pause();
	return 0;
}
