/* Exec while another thread runs: the thread ends with the old image. */
#include <pthread.h>
#include <unistd.h>

static void *wait_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, wait_forever, NULL);
	execl("/bin/true", "true", (char *)NULL);
	return 1;
}
