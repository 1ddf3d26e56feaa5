/* The open files of a set that may hold only so many at once, in the order
 * they were last used: the per-process writer's (formats/procdir.c) and
 * the per-process reader's (formats/taskdir.c) close the least recently
 * used to open another. A list threaded through the files' own records
 * (an lp_lru_link member), newest first; the record of a link is
 * LP_LRU_ENTRY's. No memory of its own, nothing that can fail. */
#ifndef LAPLACE_LRULIST_H
#define LAPLACE_LRULIST_H

#include <stddef.h>

typedef struct lp_lru_link {
	struct lp_lru_link *newer, *older; /* NULL at either end */
} lp_lru_link;

typedef struct lp_lru_list {
	lp_lru_link *newest, *oldest; /* NULL when empty */
} lp_lru_list;

/* The record of type TYPE whose member MEMBER is link (not NULL). */
#define LP_LRU_ENTRY(link, type, member) ((type *)(void *)((char *)(link) - offsetof(type, member)))

/* Take e (in l) out of l. */
static inline void lp_lru_unlink(lp_lru_list *l, lp_lru_link *e)
{
	if (e->newer)
		e->newer->older = e->older;
	else
		l->newest = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		l->oldest = e->newer;
	e->newer = e->older = NULL;
}

/* Put e (not in l) in l as its newest. */
static inline void lp_lru_push_newest(lp_lru_list *l, lp_lru_link *e)
{
	e->older = l->newest;
	e->newer = NULL;
	if (l->newest)
		l->newest->newer = e;
	else
		l->oldest = e;
	l->newest = e;
}

/* Make e (in l) the newest of l. */
static inline void lp_lru_touch(lp_lru_list *l, lp_lru_link *e)
{
	if (l->newest != e) {
		lp_lru_unlink(l, e);
		lp_lru_push_newest(l, e);
	}
}

#endif
