/* Page checks: three threads write and read the pages of one private
   anonymous mapping made before them: one page each, whichever thread
   touches it. Prints "region ADDR 4". */
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>

static volatile char *region;

static void *work(void *arg)
{
	long id = (long)arg;
	for (int k = 0; k < 4; k++) {
		region[k * 4096 + id] = (char)id;
		(void)region[k * 4096 + 8 + id];
	}
	return NULL;
}

int main(void)
{
	region = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		return 1;
	region[0] = 9;
	pthread_t t[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, work, (void *)(i + 1));
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("region %lx 4\n", (unsigned long)region);
	return 0;
}
