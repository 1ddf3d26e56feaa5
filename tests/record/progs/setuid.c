/* Installed set-user-id by the tests: a program the recorder cannot trace.
   Says so and exits with its argument. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	puts("untraced ran");
	return argc > 1 ? atoi(argv[1]) : 0;
}
