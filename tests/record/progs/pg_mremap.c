/* Page checks: mremap moves four written pages elsewhere; read there they
   are the same pages. Prints "old ADDR" and "new ADDR". */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>

int main(void)
{
	size_t len = 4 * 4096;
	volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* A place to move to: reserved, then replaced by the move. */
	void *to = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || to == MAP_FAILED)
		return 1;
	for (int k = 0; k < 4; k++)
		p[k * 4096] = (char)(k + 1);
	volatile char *q = mremap((void *)p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	if (q == MAP_FAILED)
		return 1;
	int sum = 0;
	for (int k = 0; k < 4; k++)
		sum += q[k * 4096];
	printf("old %lx\nnew %lx\n", (unsigned long)p, (unsigned long)q);
	return sum == 10 ? 0 : 1;
}
