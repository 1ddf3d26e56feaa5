/* Page checks: madvise(MADV_DONTNEED) on the first of two written private
   anonymous pages: read again, it is a fresh (zero) page; the second page
   is the same page as before. Prints "region ADDR". */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>

int main(void)
{
	volatile char *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	if (p == MAP_FAILED)
		return 1;
	p[0] = 1;
	p[4096] = 2;
	if (madvise((void *)p, 4096, MADV_DONTNEED) != 0)
		return 1;
	int first = p[8], second = p[4096 + 8];
	printf("region %lx\n", (unsigned long)p);
	return first == 0 && second == 0 && p[4096] == 2 ? 0 : 1;
}
