/* Threads seen and refused, for the tests of code that starts them. */
#ifndef LAPLACE_TEST_THREADS_H
#define LAPLACE_TEST_THREADS_H

#include <stddef.h>

/* A stack size no thread can be given: with it as the default, no new
 * thread can start (its stack cannot be mapped). */
#define THREAD_STACK_TOO_LARGE ((size_t)1 << 50)

/* Threads of this process named name. */
unsigned threads_named(const char *name);
/* The stack size of the threads started from now on. */
void thread_stacks(size_t size);

#endif
