/* Keeps a thread and itself busy writing memory (4096 bytes, then a
   pause of a millisecond, so that its capture stays small), after saying
   "ready" with its process id and the thread's: a program to kill while
   it is recorded (tests/record/run, "killed"). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static pid_t thread_id;

static void touch(volatile char *mem)
{
	for (unsigned k = 0; k < 4096; k++)
		mem[k] = (char)k;
	usleep(1000);
}

static void *work(void *arg)
{
	volatile char *mem = arg;
	__atomic_store_n(&thread_id, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	for (;;)
		touch(mem);
	return NULL;
}

int main(void)
{
	pthread_t thread;
	char *mem = calloc(2, 4096);
	if (!mem || pthread_create(&thread, NULL, work, mem + 4096))
		return 1;
	while (!__atomic_load_n(&thread_id, __ATOMIC_SEQ_CST))
		sched_yield();
	printf("ready %d %d\n", (int)getpid(), (int)thread_id);
	fflush(stdout);
	for (;;)
		touch(mem);
	return 0;
}
