/* 600 threads alive at once (Valgrind's default limit is 500). */
#include <pthread.h>
#include <stdio.h>

#define N 600
static pthread_barrier_t all;

static void *wait_all(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&all);
	return NULL;
}

int main(void)
{
	pthread_t t[N];
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1 << 16);
	pthread_barrier_init(&all, NULL, N + 1);
	for (int k = 0; k < N; k++)
		if (pthread_create(&t[k], &attr, wait_all, NULL))
			return 2;
	pthread_barrier_wait(&all);
	for (int k = 0; k < N; k++)
		pthread_join(t[k], NULL);
	puts("600 threads");
	return 0;
}
