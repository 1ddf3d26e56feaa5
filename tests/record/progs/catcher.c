/* Says "ready", then "caught" at each SIGINT, and never ends by itself. */
#include <signal.h>
#include <unistd.h>

static void caught(int sig)
{
	(void)sig;
	write(1, "caught\n", 7);
}

int main(void)
{
	signal(SIGINT, caught);
	write(1, "ready\n", 6);
	for (;;)
		pause();
}
