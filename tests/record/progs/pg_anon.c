/* Page checks: eight private anonymous pages, each written then read; each
   is its own page. Prints "region ADDR PAGES". */
#include <stdio.h>
#include <sys/mman.h>

int main(void)
{
	enum { PAGES = 8 };
	volatile char *p = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	for (int k = 0; k < PAGES; k++)
		p[k * 4096] = (char)k;
	int sum = 0;
	for (int k = 0; k < PAGES; k++)
		sum += p[k * 4096 + 100];
	printf("region %lx %d\n", (unsigned long)p, PAGES);
	return sum == 0 ? 0 : 1;
}
