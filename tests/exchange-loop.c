/* exchange-loop A B STOP: swap the names A and B atomically
 * (renameat2 RENAME_EXCHANGE), again and again, until the file STOP
 * exists; then leave them as they were and print how many swaps were made.
 * The attacker of the daemon's output confinement case: a directory that
 * is a symbolic link to somewhere else half of the time. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static int swap(const char *a, const char *b)
{
	if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0)
		return 0;
	perror("exchange-loop: renameat2");
	return -1;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: exchange-loop A B STOP\n");
		return 2;
	}
	unsigned long swaps = 0;
	while (access(argv[3], F_OK) != 0) {
		if (swap(argv[1], argv[2]) < 0)
			return 1;
		swaps++;
	}
	if (swaps % 2 && swap(argv[1], argv[2]) < 0)
		return 1;
	printf("%lu\n", swaps - swaps % 2);
	return 0;
}
