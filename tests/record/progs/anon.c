/* Private anonymous memory written then read back, through mmap and brk. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
	size_t len = 64 * 4096;
	volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	for (size_t i = 0; i < len; i += 4096)
		p[i] = (char)(i / 4096);
	long sum = 0;
	for (size_t i = 0; i < len; i += 4096)
		sum += p[i];
	char *heap = sbrk(8192);
	heap[0] = 1;
	heap[8191] = 2;
	sbrk(-8192);
	madvise((void *)p, len, MADV_DONTNEED);
	p[0] = 3;
	p = mremap((void *)p, len, 2 * len, MREMAP_MAYMOVE);
	p[len] = 4;
	munmap((void *)p, 2 * len);
	return sum == 0 ? 1 : 0;
}
