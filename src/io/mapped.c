/* Input files mapped for reading, guarded against their shrinking (see
 * mapped.h).
 *
 * Why a handler and not checks: the file's size can be looked at
 * (fstat) before each read of the mapping, but it can shrink just after,
 * and the readers that use a mapping (the per-process directory's, for
 * schedule) read it from several threads, in code that copies records
 * straight out of it: no check comes between the size and the touch.
 * Reading instead of mapping has no such hazard (a read past the end
 * just ends early), and is what every file but a plain one of the binary
 * task form gets; mapping saves a copy of every record, which the
 * schedule of a large directory needs to keep its pace. Nor does the
 * handler jump out of the reader (siglongjmp): that would leave locks
 * held and buffers half made in whatever code touched the page. It puts
 * zero pages where the file's were, which mmap with MAP_FIXED does in one
 * system call (async-signal-safe on Linux, where mmap is the bare system
 * call), and the reader carries on to an error or an end of its own,
 * which it then reports as the file's shrinking.
 *
 * The registry is read by the handler without a lock: slots live in
 * chunks that are never freed, a slot's bounds are atomic, and slots are
 * published (used_slots) only after their chunk. */
#include "io/mapped.h"

#include <errno.h>
#include <glib.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define SLOTS_PER_CHUNK 1024u
#define CHUNKS 4096u /* four million files mapped at once */

typedef struct guard_slot {
	_Atomic uintptr_t start, end; /* the mapping, whole pages; end 0: free */
	atomic_bool shrunk;
} guard_slot;

static _Atomic(guard_slot *) chunks[CHUNKS];
static atomic_uint used_slots; /* slots [0, used_slots) may be in use */
static GMutex lock;            /* registrations: free_slots, new slots */
static GArray *free_slots;     /* unsigned: slots given back */
static struct sigaction previous;
static uintptr_t page;

static guard_slot *slot_at(unsigned i)
{
	return &atomic_load(&chunks[i / SLOTS_PER_CHUNK])[i % SLOTS_PER_CHUNK];
}

static void on_sigbus(int sig, siginfo_t *si, void *context)
{
	(void)context;
	uintptr_t a = (uintptr_t)si->si_addr;
	unsigned n = atomic_load(&used_slots);
	for (unsigned i = 0; si->si_code > 0 && i < n; i++) {
		guard_slot *s = slot_at(i);
		uintptr_t start = atomic_load(&s->start), end = atomic_load(&s->end);
		if (a < start || a >= end)
			continue;
		/* Every page from the one touched to the mapping's end is past
		 * the file's end now: one call replaces them all. */
		uintptr_t from = a & ~(page - 1);
		int saved = errno;
		void *p = mmap((void *)from, end - from, PROT_READ,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		errno = saved;
		if (p == MAP_FAILED)
			break;
		atomic_store(&s->shrunk, true);
		return;
	}
	/* Not ours (or no room for the zero pages): as if never caught. */
	sigaction(sig, &previous, NULL);
	raise(sig);
}

static gpointer install(gpointer data)
{
	(void)data;
	page = (uintptr_t)sysconf(_SC_PAGESIZE);
	free_slots = g_array_new(FALSE, FALSE, sizeof(unsigned));
	struct sigaction sa = {.sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &previous);
	return NULL;
}

/* A free slot, or UINT_MAX when there are CHUNKS full of them. */
static unsigned take_slot(void)
{
	if (free_slots->len) {
		unsigned i = g_array_index(free_slots, unsigned, free_slots->len - 1);
		g_array_set_size(free_slots, free_slots->len - 1);
		return i;
	}
	unsigned i = atomic_load(&used_slots);
	if (i / SLOTS_PER_CHUNK >= CHUNKS)
		return UINT_MAX;
	if (!atomic_load(&chunks[i / SLOTS_PER_CHUNK]))
		atomic_store(&chunks[i / SLOTS_PER_CHUNK], g_new0(guard_slot, SLOTS_PER_CHUNK));
	atomic_store(&used_slots, i + 1);
	return i;
}

int lp_mapped_open(lp_mapped *m, int fd, size_t size)
{
	static GOnce once = G_ONCE_INIT;
	g_once(&once, install, NULL);
	*m = (lp_mapped){0};
	g_mutex_lock(&lock);
	unsigned slot = take_slot();
	g_mutex_unlock(&lock);
	if (slot == UINT_MAX) {
		errno = ENOMEM;
		return -1;
	}
	void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		int saved = errno;
		g_mutex_lock(&lock);
		g_array_append_val(free_slots, slot);
		g_mutex_unlock(&lock);
		errno = saved;
		return -1;
	}
	guard_slot *s = slot_at(slot);
	atomic_store(&s->shrunk, false);
	atomic_store(&s->start, (uintptr_t)p);
	atomic_store(&s->end, (uintptr_t)p + (size + page - 1) / page * page);
	*m = (lp_mapped){p, size, slot};
	return 0;
}

bool lp_mapped_shrunk(const lp_mapped *m)
{
	return m->data && atomic_load(&slot_at(m->slot)->shrunk);
}

void lp_mapped_close(lp_mapped *m)
{
	if (!m->data)
		return;
	/* Out of the registry first: the range may be mapped anew by the
	 * time the handler could look at it. */
	guard_slot *s = slot_at(m->slot);
	atomic_store(&s->end, 0);
	atomic_store(&s->start, 0);
	munmap((void *)m->data, m->size);
	g_mutex_lock(&lock);
	g_array_append_val(free_slots, m->slot);
	g_mutex_unlock(&lock);
	*m = (lp_mapped){0};
}
