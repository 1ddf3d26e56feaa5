/* Three threads, each writing its own counter many times. */
#include <pthread.h>

static volatile long counters[3];

static void *work(void *arg)
{
	volatile long *c = arg;
	for (int i = 0; i < 100000; i++)
		(*c)++;
	return NULL;
}

int main(void)
{
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, work, (void *)&counters[i]);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return counters[0] + counters[1] + counters[2] == 300000 ? 0 : 1;
}
