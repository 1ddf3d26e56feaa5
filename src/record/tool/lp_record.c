/* laplace-record: a Valgrind tool that records every memory reference of a
   program and the kernel events that change its address space, as
   per-address-space streams that `laplace record` merges into a capture.

   Copyright (C) 2026 the laplace authors

   This program is free software; you can redistribute it and/or modify it
   under the terms of the GNU General Public License as published by the
   Free Software Foundation; either version 2 of the License, or (at your
   option) any later version.

   This program is distributed in the hope that it will be useful, but
   WITHOUT ANY WARRANTY; without even the implied warranty of
   MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
   General Public License for more details.

   You should have received a copy of the GNU General Public License along
   with this program; if not, see <http://www.gnu.org/licenses/>.  The GNU
   General Public License is contained in the file COPYING.

   The stream format is described in README beside this file. */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_machine.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

/* In libcoregrind but not in the tool headers (declared as in Valgrind
   3.19's pub_core_*.h; the Makefile builds against that version). */
extern SysRes VG_(am_shared_mmap_file_float_valgrind)(SizeT length, UInt prot,
						       Int fd, Off64T offset);
extern Int VG_(safe_fd)(Int oldfd);
extern Bool VG_(resolve_filename)(Int fd, const HChar **result);
extern const HChar *VG_(find_executable)(const HChar *exec);
extern SysRes VG_(do_syscall)(UWord sysno, RegWord a1, RegWord a2, RegWord a3,
			      RegWord a4, RegWord a5, RegWord a6, RegWord a7,
			      RegWord a8);
extern const HChar *VG_(strerror)(UWord errnum);
extern Int VG_(count_living_threads)(void);
extern Int VG_(check_executable)(Bool *is_setuid, const HChar *f, Bool allow_setuid);
/* --trace-children-skip's patterns: Valgrind runs a program they match
   untraced (natively) when it is exec'd. */
extern const HChar *VG_(clo_trace_children_skip);

#define LP_TAG_SBDEF 1
#define LP_TAG_BLOCK 2
#define LP_TAG_TASK 3
#define LP_TAG_EVENT 4
#define LP_TAG_BLOCK_NEXT 5
#define LP_MAGIC "LPRSTRM1"

/* ---- the shared clock page ------------------------------------------- */

/* One page of DIR/clock, mapped shared by every tool instance of the
   capture (forked children inherit it, exec'd ones map it again). Its
   slots let laplace record merge the streams while the command runs (see
   README, "Following the streams"): each live stream has one, saying how
   much of its file is written and how early a timestamp among the records
   it has not written yet may be. */
#define LP_SLOTS 126
#define LP_SLOT_CLAIMED (~0ULL) /* vas of a slot being filled in */
typedef struct {
	ULong vas;     /* the stream's; 0: free */
	ULong pid;     /* its process */
	ULong pending; /* 0: none unwritten; else 1 + a bound below their timestamps */
	ULong written; /* bytes of its file written, a whole number of records */
} LpSlot;

typedef struct {
	ULong ts;        /* next timestamp */
	ULong vas;       /* last address-space number handed out */
	ULong cpu;       /* 1 + the processor every traced thread runs on, 0: not chosen */
	ULong slotless;  /* a stream got no slot: it is merged once the command ends */
	LpSlot slots[LP_SLOTS];
	ULong merged;   /* every record below it is merged; 0: no pacing (below) */
	ULong frontend; /* the pid of laplace record, which merges; 0: none */
} LpClock;

static volatile LpClock *lp_clock;
static volatile LpSlot *lp_slot; /* this stream's, NULL: none */

/* A slot for stream VAS of process PID, whose records will not precede
   the clock's present value: said before any of them takes a timestamp.
   NULL when every slot is taken. */
static volatile LpSlot *lp_slot_claim(ULong vas, ULong pid)
{
	for (Int i = 0; i < LP_SLOTS; i++) {
		volatile LpSlot *slot = &lp_clock->slots[i];
		ULong expected = 0;
		if (!__atomic_compare_exchange_n(&slot->vas, &expected, LP_SLOT_CLAIMED, False,
						 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			continue;
		slot->pid = pid;
		slot->written = 0;
		__atomic_store_n(&slot->pending, lp_clock->ts + 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&slot->vas, vas, __ATOMIC_SEQ_CST);
		return slot;
	}
	__atomic_store_n(&lp_clock->slotless, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void lp_slot_release(volatile LpSlot *slot)
{
	if (slot)
		__atomic_store_n(&slot->vas, 0, __ATOMIC_SEQ_CST);
}

static ULong lp_take_ts(ULong n)
{
	/* The bound is said before the timestamps are taken: the front end
	   reads the clock before the slots. */
	if (lp_slot && lp_slot->pending == 0)
		__atomic_store_n(&lp_slot->pending, lp_clock->ts + 1, __ATOMIC_SEQ_CST);
	return __atomic_fetch_add(&lp_clock->ts, n, __ATOMIC_SEQ_CST);
}

static ULong lp_take_vas(void)
{
	return __atomic_add_fetch(&lp_clock->vas, 1, __ATOMIC_SEQ_CST);
}

/* ---- options -------------------------------------------------------- */

static const HChar *lp_dir;
static const HChar *lp_lifeline;

static Bool lp_process_cmd_line_option(const HChar *arg)
{
	if VG_STR_CLO (arg, "--lp-dir", lp_dir) {
	} else if VG_STR_CLO (arg, "--lp-lifeline", lp_lifeline) {
	} else
		return False;
	return True;
}

static void lp_print_usage(void)
{
	VG_(printf)("    --lp-dir=DIR              write the streams and the clock to DIR\n");
	VG_(printf)("    --lp-lifeline=FIFO        end when FIFO's last writer (laplace record) is gone\n");
}

static void lp_print_debug_usage(void)
{
	VG_(printf)("    (none)\n");
}

/* ---- the stream ------------------------------------------------------- */

/* One stream per tool instance and fork: one address space. Valgrind runs
   the threads of a process one at a time, so one buffer serves them all. */
#define LP_BUF_SIZE (1 << 20)
static UChar *lp_buf;
static Int lp_buf_pos;
static Int lp_fd = -1;
static ULong lp_vas;
static UInt lp_stream_gen;  /* changes with each new stream (fork) */
static ULong lp_last_ts;    /* of the last record written to the stream */
static Int lp_written_task; /* the task the stream's blocks belong to */

/* A failure of the recorder: said on stderr, and in DIR/failed, so that
   laplace record can tell it from the command's own exit status 3. */
static void lp_fail(const HChar *what)
{
	VG_(umsg)("laplace-record: %s\n", what);
	if (lp_dir) {
		HChar path[4096];
		VG_(snprintf)(path, sizeof path, "%s/failed", lp_dir);
		SysRes r = VG_(open)(path, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_APPEND, 0644);
		if (!sr_isError(r)) {
			HChar line[256];
			Int n = (Int)VG_(snprintf)(line, sizeof line, "%s\n", what);
			VG_(write)((Int)sr_Res(r), line, n);
			VG_(close)((Int)sr_Res(r));
		}
	}
	VG_(exit)(3);
}

/* A stream that cannot be written: why, in the kernel's words, with the
   limit that says so when it is one. */
static void lp_write_failed(Int n)
{
	HChar what[256];
	if (n == 0)
		VG_(snprintf)(what, sizeof what, "cannot write stream %llu.lps: nothing written",
			      lp_vas);
	else
		VG_(snprintf)(what, sizeof what, "cannot write stream %llu.lps: %s%s", lp_vas,
			      VG_(strerror)((UWord)-n),
			      -n == VKI_EFBIG ? " (the file size limit, RLIMIT_FSIZE: ulimit -f)" : "");
	lp_fail(what);
}

/* ---- the lifeline --------------------------------------------------- */

/* laplace record holds the only writer of a FIFO (--lp-lifeline) for as
   long as it lives and never writes to it. Each instance opens the FIFO
   for reading, an open file of its own (again after a fork: an inherited
   one has its parent as owner), and asks the kernel to send the process
   SIGKILL in place of SIGIO when the pipe's state changes (O_ASYNC,
   F_SETOWN, F_SETSIG): the last writer's close does that. So when laplace
   record is killed, even by SIGKILL, every traced process ends at once,
   one blocked in a system call too, and none starts once it is gone (a
   FIFO without a writer reads as its end). PR_SET_PDEATHSIG would not do:
   it binds the parent thread of one process, and is dropped by fork. */
#define LP_O_ASYNC 020000 /* FASYNC on amd64; not in Valgrind's vki */
static Int lp_lifeline_fd = -1;

static void lp_recorder_gone(void)
{
	VG_(do_syscall)(__NR_kill, (RegWord)VG_(getpid)(), VKI_SIGKILL, 0, 0, 0, 0, 0, 0);
}

static Long lp_fcntl(Int fd, Int cmd, UWord arg)
{
	SysRes r = VG_(do_syscall)(__NR_fcntl, (RegWord)fd, (RegWord)cmd, arg, 0, 0, 0, 0, 0);
	return sr_isError(r) ? -(Long)sr_Err(r) : (Long)sr_Res(r);
}

static void lp_lifeline_hold(void)
{
	if (!lp_lifeline)
		return;
	if (lp_lifeline_fd >= 0)
		VG_(close)(lp_lifeline_fd);
	SysRes r = VG_(open)(lp_lifeline, VKI_O_RDONLY | VKI_O_NONBLOCK, 0);
	if (sr_isError(r))
		lp_recorder_gone(); /* its directory removed as stale */
	/* Out of the client's way, and closed on exec (the new image's
	   instance opens its own). */
	Int fd = VG_(safe_fd)((Int)sr_Res(r));
	if (lp_fcntl(fd, VKI_F_SETOWN, (UWord)VG_(getpid)()) < 0 ||
	    lp_fcntl(fd, VKI_F_SETSIG, VKI_SIGKILL) < 0 ||
	    lp_fcntl(fd, VKI_F_SETFL, VKI_O_NONBLOCK | LP_O_ASYNC) < 0)
		lp_fail("cannot watch the lifeline of laplace record (--lp-lifeline)");
	/* Gone before the kernel was asked: the FIFO reads as its end. */
	UChar byte;
	if (VG_(read)(fd, &byte, 1) == 0)
		lp_recorder_gone();
	lp_lifeline_fd = fd;
}

static void lp_buf_write_out(void)
{
	Int done = 0;
	while (done < lp_buf_pos) {
		Int n = VG_(write)(lp_fd, lp_buf + done, lp_buf_pos - done);
		if (n == -VKI_EINTR)
			continue;
		if (n <= 0)
			lp_write_failed(n);
		done += n;
	}
	lp_buf_pos = 0;
	/* Written before nothing is said to be pending: the front end reads
	   pending, then written. */
	if (lp_slot) {
		__atomic_store_n(&lp_slot->written, lp_slot->written + (ULong)done,
				 __ATOMIC_SEQ_CST);
		__atomic_store_n(&lp_slot->pending, 0, __ATOMIC_SEQ_CST);
	}
}

/* Pacing: laplace record merges the streams while the command runs, and
   says in the clock page how far it has merged. When the records not yet
   merged are more than this many, the process that has just written its
   buffer waits (1 ms at a time) for the merge to catch up, so that the
   streams on disk stay bounded (laplace-record(1)) and the capture is
   written soon after the command ends. A laplace record that is gone is
   not waited for. */
#define LP_BACKLOG (1ULL << 24)

static Bool lp_frontend_gone(ULong pid)
{
	return sr_isError(VG_(do_syscall)(__NR_kill, (RegWord)pid, 0, 0, 0, 0, 0, 0, 0));
}

static void lp_pace(void)
{
	for (;;) {
		ULong merged = __atomic_load_n(&lp_clock->merged, __ATOMIC_SEQ_CST);
		ULong frontend = lp_clock->frontend;
		if (merged == 0 || frontend == 0 ||
		    __atomic_load_n(&lp_clock->ts, __ATOMIC_SEQ_CST) <= merged + LP_BACKLOG ||
		    lp_frontend_gone(frontend))
			return;
		struct vki_timespec pause = {0, 1000000};
		VG_(do_syscall)(__NR_nanosleep, (RegWord)&pause, 0, 0, 0, 0, 0, 0, 0);
	}
}

static void lp_reserve(Int bytes)
{
	tl_assert(bytes < LP_BUF_SIZE);
	if (lp_buf_pos + bytes > LP_BUF_SIZE) {
		lp_buf_write_out();
		lp_pace();
	}
}

static inline void lp_put_byte(UInt b)
{
	lp_buf[lp_buf_pos++] = (UChar)b;
}

static inline void lp_put_varint(ULong v)
{
	while (v >= 0x80) {
		lp_buf[lp_buf_pos++] = (UChar)(v | 0x80);
		v >>= 7;
	}
	lp_buf[lp_buf_pos++] = (UChar)v;
}

static inline ULong lp_zigzag(Long v)
{
	return ((ULong)v << 1) ^ (ULong)(v >> 63);
}

static void lp_stream_open(void)
{
	HChar path[4096];
	VG_(snprintf)(path, sizeof path, "%s/%llu.lps", lp_dir, lp_vas);
	SysRes r = VG_(open)(path, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_EXCL, 0644);
	if (sr_isError(r))
		lp_fail("cannot create a stream file in --lp-dir");
	/* Out of the client's way, and closed on exec. */
	lp_fd = VG_(safe_fd)((Int)sr_Res(r));
	lp_stream_gen++;
	lp_buf_pos = 0;
	lp_last_ts = 0;
	lp_written_task = 0;
	for (Int i = 0; i < 8; i++)
		lp_put_byte((UChar)LP_MAGIC[i]);
	lp_put_varint(lp_vas);
	lp_put_varint((ULong)VG_(getpid)());
}

/* An event at timestamp TS (LP_TS_NEXT: the clock's next, taken once the
   buffer has room, so that a write of the buffer cannot say nothing is
   pending while it waits): its text in the kernel trace's own words (see
   README), with the tool's (device, inode) where the trace has a file. */
#define LP_TS_NEXT (~0ULL)
static void lp_event_at(ULong ts, const HChar *fmt, ...)
{
	HChar text[4200];
	va_list vargs;
	va_start(vargs, fmt);
	UInt len = VG_(vsnprintf)(text, sizeof text, fmt, vargs);
	va_end(vargs);
	if (len >= sizeof text)
		len = sizeof text - 1;
	lp_reserve(32 + (Int)len);
	if (ts == LP_TS_NEXT)
		ts = lp_take_ts(1);
	lp_put_byte(LP_TAG_EVENT);
	lp_put_varint(ts - lp_last_ts);
	lp_last_ts = ts;
	lp_put_varint(len);
	VG_(memcpy)(lp_buf + lp_buf_pos, text, len);
	lp_buf_pos += (Int)len;
}

#define lp_event(...) lp_event_at(LP_TS_NEXT, __VA_ARGS__)

/* ---- tasks -------------------------------------------------------------- */

/* Linux thread id of each Valgrind thread (0: none), and whether its X is
   written. */
static Int *lp_task_of;
static Bool *lp_exited;
static Int lp_cur_task;

static void lp_start_client_code(ThreadId tid, ULong blocks_dispatched)
{
	(void)blocks_dispatched;
	lp_cur_task = lp_task_of[tid];
}

/* Written at each system call (it may block) and, once it holds this
   much, at the end of a time slice: a process that waits, or that the
   kernel runs another in place of, holds back the merge of the others'
   streams only until then. */
#define LP_SLICE_WRITE (256 << 10)

static void lp_write_pending(void)
{
	if (lp_slot && lp_slot->pending != 0) {
		lp_buf_write_out();
		lp_pace();
	}
}

static void lp_stop_client_code(ThreadId tid, ULong blocks_dispatched)
{
	(void)tid;
	(void)blocks_dispatched;
	if (lp_buf_pos >= LP_SLICE_WRITE)
		lp_write_pending();
}

static void lp_thread_first_insn(ThreadId tid)
{
	lp_task_of[tid] = VG_(gettid)();
	lp_exited[tid] = False;
	lp_cur_task = lp_task_of[tid];
}

static void lp_thread_exit(ThreadId tid)
{
	if (lp_task_of[tid] != 0 && !lp_exited[tid]) {
		lp_event("X %x", lp_task_of[tid]);
		lp_exited[tid] = True;
	}
}

static Int lp_running_task(void)
{
	return lp_task_of[VG_(get_running_tid)()];
}

/* ---- references ------------------------------------------------------ */

/* What a superblock (or a piece of one) references, in order. An
   instruction's address is static; a load's or store's is stored by the
   instrumented code into lp_addrs[slot] and read back by lp_flush. */
#define LP_MAX_EVENTS 400
typedef struct {
	UChar kind; /* 'i', 'r' or 'w' */
	UChar len;  /* 1..255 */
	UShort slot;
	UInt offset; /* added to lp_addrs[slot]: pieces of a long access */
	Addr addr;   /* of an instruction */
} LpEvent;

typedef struct LpBlockDef {
	struct LpBlockDef *next; /* in its lp_defs bucket */
	ULong id;
	UInt gen; /* lp_stream_gen when its definition was last written */
	UInt nevents;
	Addr *last; /* each data event's address when it last ran in the stream */
	LpEvent events[];
} LpBlockDef;

/* Every definition made, by content: Valgrind retranslates code when it
   recycles its translation cache, and the same code gets the same
   definition back (bounded memory, no new definition in the stream). */
#define LP_DEF_BUCKETS 65536
static LpBlockDef *lp_defs[LP_DEF_BUCKETS];

static Addr lp_addrs[LP_MAX_EVENTS];
static ULong lp_next_block_id;

static void lp_write_def(LpBlockDef *def)
{
	lp_reserve(32 + 16 * (Int)def->nevents);
	lp_put_byte(LP_TAG_SBDEF);
	lp_put_varint(def->id);
	lp_put_varint(def->nevents);
	Addr next_insn = 0;
	for (UInt k = 0; k < def->nevents; k++) {
		const LpEvent *e = &def->events[k];
		lp_put_byte(e->kind);
		lp_put_byte(e->len);
		if (e->kind == 'i') {
			lp_put_varint(lp_zigzag((Long)(e->addr - next_insn)));
			next_insn = e->addr + e->len;
		}
	}
	def->gen = lp_stream_gen;
	VG_(memset)(def->last, 0, def->nevents * sizeof *def->last);
}

/* Called by the instrumented code at each exit of a superblock, after the
   first N of its references: gives them N consecutive timestamps. */
static VG_REGPARM(2) void lp_flush(LpBlockDef *def, ULong n)
{
	if (def->gen != lp_stream_gen)
		lp_write_def(def);
	lp_reserve(48 + 11 * (Int)n);
	if (lp_cur_task != lp_written_task) {
		lp_put_byte(LP_TAG_TASK);
		lp_put_varint((ULong)lp_cur_task);
		lp_written_task = lp_cur_task;
	}
	ULong base = lp_take_ts(n);
	/* Most blocks run whole, right after the stream's previous record. */
	if (base == lp_last_ts + 1 && n == def->nevents) {
		lp_put_byte(LP_TAG_BLOCK_NEXT);
		lp_put_varint(def->id);
	} else {
		lp_put_byte(LP_TAG_BLOCK);
		lp_put_varint(base - lp_last_ts);
		lp_put_varint(def->id);
		lp_put_varint(n);
	}
	/* A load or store is predicted at its own last address: loops walk
	   with small strides, stack slots repeat. */
	for (ULong k = 0; k < n; k++) {
		const LpEvent *e = &def->events[k];
		if (e->kind != 'i') {
			Addr a = lp_addrs[e->slot] + e->offset;
			lp_put_varint(lp_zigzag((Long)(a - def->last[k])));
			def->last[k] = a;
		}
	}
	lp_last_ts = base + n - 1;
}

/* ---- instrumentation ---------------------------------------------------- */

typedef struct {
	IRSB *out;
	LpEvent events[LP_MAX_EVENTS];
	UInt nevents;
	UInt nslots;
	/* The constants that will point to this piece's LpBlockDef once its
	   size is known: one for each flush (each exit's, and the last). */
	IRConst *def_refs[2 * LP_MAX_EVENTS + 1];
	UInt ndef_refs;
} LpInstr;

static void lp_add_flush(LpInstr *st, IRExpr *guard)
{
	IRConst *def_ref = IRConst_U64(0);
	tl_assert(st->ndef_refs < sizeof st->def_refs / sizeof st->def_refs[0]);
	st->def_refs[st->ndef_refs++] = def_ref;
	IRDirty *d = unsafeIRDirty_0_N(2, "lp_flush", VG_(fnptr_to_fnentry)(&lp_flush),
				       mkIRExprVec_2(IRExpr_Const(def_ref),
						     IRExpr_Const(IRConst_U64(st->nevents))));
	if (guard)
		d->guard = guard;
	addStmtToIRSB(st->out, IRStmt_Dirty(d));
}

/* Ends the current piece: the last flush covers all its references. */
static void lp_end_piece(LpInstr *st)
{
	if (st->nevents == 0)
		return;
	lp_add_flush(st, NULL);
	SizeT size = st->nevents * sizeof(LpEvent);
	UInt bucket = (UInt)((st->events[0].addr * 0x9E3779B97F4A7C15ULL ^ st->nevents) >> 48) %
		      LP_DEF_BUCKETS;
	LpBlockDef *def = lp_defs[bucket];
	while (def && (def->nevents != st->nevents || VG_(memcmp)(def->events, st->events, size)))
		def = def->next;
	if (!def) {
		def = VG_(malloc)("lp.blockdef", sizeof *def + size);
		def->id = ++lp_next_block_id;
		def->gen = 0;
		def->nevents = st->nevents;
		def->last = VG_(malloc)("lp.blockdef.last", st->nevents * sizeof *def->last);
		VG_(memcpy)(def->events, st->events, size);
		def->next = lp_defs[bucket];
		lp_defs[bucket] = def;
	}
	for (UInt k = 0; k < st->ndef_refs; k++)
		st->def_refs[k]->Ico.U64 = (ULong)(Addr)def;
	st->nevents = 0;
	st->nslots = 0;
	st->ndef_refs = 0;
}

static void lp_add_insn(LpInstr *st, Addr addr, UInt len)
{
	if (st->nevents + 1 > LP_MAX_EVENTS)
		lp_end_piece(st);
	LpEvent *e = &st->events[st->nevents++];
	VG_(memset)(e, 0, sizeof *e); /* compared whole by lp_end_piece */
	e->kind = 'i';
	e->len = (UChar)len;
	e->addr = addr;
}

/* A load or store of SIZE bytes at the address ADDR (an IR atom): at most
   255 bytes a record, in address order. */
static void lp_add_data(LpInstr *st, UChar kind, IRExpr *addr, Int size)
{
	UInt pieces = (UInt)(size + 254) / 255;
	if (size <= 0)
		return;
	if (st->nevents + pieces > LP_MAX_EVENTS || st->nslots + 1 > LP_MAX_EVENTS)
		lp_end_piece(st);
	UShort slot = (UShort)st->nslots++;
	addStmtToIRSB(st->out, IRStmt_Store(Iend_LE,
					    IRExpr_Const(IRConst_U64((ULong)(Addr)&lp_addrs[slot])),
					    addr));
	for (UInt p = 0; p < pieces; p++) {
		Int left = size - (Int)p * 255;
		LpEvent *e = &st->events[st->nevents++];
		VG_(memset)(e, 0, sizeof *e); /* compared whole by lp_end_piece */
		e->kind = kind;
		e->len = (UChar)(left > 255 ? 255 : left);
		e->slot = slot;
		e->offset = p * 255;
	}
}

static IRSB *lp_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
			   const VexGuestExtents *vge, const VexArchInfo *archinfo,
			   IRType gWordTy, IRType hWordTy)
{
	(void)closure;
	(void)layout;
	(void)vge;
	(void)archinfo;
	if (gWordTy != hWordTy)
		VG_(tool_panic)("host/guest word size mismatch");
	static LpInstr st;
	st.out = deepCopyIRSBExceptStmts(in);
	st.nevents = st.nslots = st.ndef_refs = 0;
	Int i = 0;
	/* Valgrind's preamble before the first instruction. */
	while (i < in->stmts_used && in->stmts[i]->tag != Ist_IMark) {
		addStmtToIRSB(st.out, in->stmts[i]);
		i++;
	}
	for (; i < in->stmts_used; i++) {
		IRStmt *s = in->stmts[i];
		if (!s || s->tag == Ist_NoOp)
			continue;
		switch (s->tag) {
		case Ist_IMark:
			lp_add_insn(&st, (Addr)s->Ist.IMark.addr, s->Ist.IMark.len);
			break;
		case Ist_WrTmp:
			if (s->Ist.WrTmp.data->tag == Iex_Load)
				lp_add_data(&st, 'r', s->Ist.WrTmp.data->Iex.Load.addr,
					    sizeofIRType(s->Ist.WrTmp.data->Iex.Load.ty));
			break;
		case Ist_Store:
			lp_add_data(&st, 'w', s->Ist.Store.addr,
				    sizeofIRType(typeOfIRExpr(in->tyenv, s->Ist.Store.data)));
			break;
		case Ist_StoreG: /* not made by the amd64 front end: counted as done */
			lp_add_data(&st, 'w', s->Ist.StoreG.details->addr,
				    sizeofIRType(typeOfIRExpr(in->tyenv, s->Ist.StoreG.details->data)));
			break;
		case Ist_LoadG: {
			IRType ty = Ity_INVALID, wide = Ity_INVALID;
			typeOfIRLoadGOp(s->Ist.LoadG.details->cvt, &wide, &ty);
			lp_add_data(&st, 'r', s->Ist.LoadG.details->addr, sizeofIRType(ty));
			break;
		}
		case Ist_CAS: {
			const IRCAS *cas = s->Ist.CAS.details;
			Int size = sizeofIRType(typeOfIRExpr(in->tyenv, cas->dataLo)) *
				   (cas->dataHi ? 2 : 1);
			lp_add_data(&st, 'r', cas->addr, size);
			lp_add_data(&st, 'w', cas->addr, size);
			break;
		}
		case Ist_LLSC:
			if (s->Ist.LLSC.storedata == NULL)
				lp_add_data(&st, 'r', s->Ist.LLSC.addr,
					    sizeofIRType(typeOfIRTemp(in->tyenv, s->Ist.LLSC.result)));
			else
				lp_add_data(&st, 'w', s->Ist.LLSC.addr,
					    sizeofIRType(typeOfIRExpr(in->tyenv, s->Ist.LLSC.storedata)));
			break;
		case Ist_Dirty: {
			const IRDirty *d = s->Ist.Dirty.details;
			if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
				lp_add_data(&st, 'r', d->mAddr, d->mSize);
			if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
				lp_add_data(&st, 'w', d->mAddr, d->mSize);
			break;
		}
		case Ist_Exit:
			/* Leaving early: flush what ran so far, if it leaves. A
			   piece full of exits is cut like one full of events. */
			if (st.nevents > 0) {
				if (st.ndef_refs + 2 > sizeof st.def_refs / sizeof st.def_refs[0])
					lp_end_piece(&st);
				else
					lp_add_flush(&st, s->Ist.Exit.guard);
			}
			break;
		default:
			break;
		}
		addStmtToIRSB(st.out, s);
	}
	lp_end_piece(&st);
	return st.out;
}

/* ---- address-space events ------------------------------------------- */

#define LP_MAP_SHARED 0x01
#define LP_MAP_PRIVATE 0x02
#define LP_MAP_FIXED 0x10
#define LP_MAP_ANON 0x20
#define LP_MADV_DONTNEED 4
#define LP_IPC_RMID 0

static UInt lp_prot(Bool r, Bool w, Bool x)
{
	return (r ? 1 : 0) | (w ? 2 : 0) | (x ? 4 : 0);
}

/* M (or m: a mapping present before the first instruction) of
   [start, start+len) with FLAGS and PROT; the file comes from Valgrind's
   record of the segment. */
static void lp_map_event(HChar tag, Int task, Addr start, SizeT len, UInt flags, UInt prot)
{
	NSegment const *seg = VG_(am_find_nsegment)(start);
	if (seg && seg->kind == SkFileC && !(flags & LP_MAP_ANON)) {
		const HChar *name = VG_(am_get_filename)(seg);
		ULong pgoff = (ULong)(seg->offset + (Off64T)(start - seg->start)) >> 12;
		lp_event("%c %x %lx %lx %llx %x %x %llx %llx %s", tag, task, start, len, pgoff,
			 flags, prot, seg->dev, seg->ino, name ? name : "?");
	} else {
		lp_event("%c %x %lx %lx 0 %x %x 0 0 -", tag, task, start, len,
			 flags | LP_MAP_ANON, prot);
	}
}

static Int lp_main_task;

static void lp_new_mem_startup(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di_handle)
{
	(void)di_handle;
	NSegment const *seg = VG_(am_find_nsegment)(a);
	/* The main stack: Valgrind grows it into the reservation below it on
	   a fault, with no hook, so the reservation is mapped from the start. */
	if (seg && seg->kind == SkAnonC && a > 0) {
		NSegment const *below = VG_(am_find_nsegment)(a - 1);
		if (below && below->kind == SkResvn && below->smode == SmUpper) {
			len += a - below->start;
			a = below->start;
		}
	}
	lp_map_event('m', lp_main_task, a, len, LP_MAP_PRIVATE, lp_prot(rr, ww, xx));
}

static void lp_new_mem_brk(Addr a, SizeT len, ThreadId tid)
{
	Int task = lp_task_of[tid] ? lp_task_of[tid] : lp_main_task;
	lp_event("B %x %lx %lx", task, a, a + len);
}

static void lp_die_mem_brk(Addr a, SizeT len)
{
	Int task = lp_running_task();
	lp_event("B %x %lx %lx", task ? task : lp_main_task, a + len, a);
}

/* Shared anonymous mappings, which MADV_DONTNEED leaves alone (Valgrind's
   segments do not tell them from private ones). */
#define LP_MAX_SHARED_ANON 256
static struct {
	Addr start, end;
} lp_shared_anon[LP_MAX_SHARED_ANON];
static Int lp_nshared_anon;

static void lp_forget_shared_anon(Addr start, Addr end)
{
	for (Int k = 0; k < lp_nshared_anon;)
		if (lp_shared_anon[k].start >= start && lp_shared_anon[k].end <= end)
			lp_shared_anon[k] = lp_shared_anon[--lp_nshared_anon];
		else
			k++;
}

static Bool lp_is_shared_anon(Addr a)
{
	for (Int k = 0; k < lp_nshared_anon; k++)
		if (a >= lp_shared_anon[k].start && a < lp_shared_anon[k].end)
			return True;
	return False;
}

static void lp_madvise_dontneed(Int task, Addr start, SizeT len)
{
	Addr end = start + len;
	for (Addr a = start; a < end;) {
		NSegment const *seg = VG_(am_find_nsegment)(a);
		if (!seg)
			break;
		Addr piece_end = seg->end + 1 < end ? seg->end + 1 : end;
		if (seg->kind == SkAnonC && !lp_is_shared_anon(a)) {
			lp_event("U %x %lx %lx", task, a, piece_end - a);
			lp_event("M %x %lx %lx 0 %x %x 0 0 -", task, a, piece_end - a,
				 LP_MAP_PRIVATE | LP_MAP_ANON,
				 lp_prot(seg->hasR, seg->hasW, seg->hasX));
		}
		a = piece_end;
	}
}

/* Files named in this stream (open addressing on (dev, inode); when full,
   later files go unnamed). */
#define LP_NAMED_FILES 4096
static struct {
	ULong dev, ino;
	UInt gen; /* lp_stream_gen when named */
} lp_named[LP_NAMED_FILES];

/* Names the file open as FD the first time this stream meets it, so that
   the capture can say which file a number is. */
static void lp_name_file(Int fd, const struct vg_stat *st)
{
	UInt h = (UInt)((st->ino * 0x9E3779B97F4A7C15ULL) ^ st->dev) % LP_NAMED_FILES;
	for (UInt probe = 0; probe < 16; probe++, h = (h + 1) % LP_NAMED_FILES) {
		if (lp_named[h].gen == lp_stream_gen && lp_named[h].dev == st->dev &&
		    lp_named[h].ino == st->ino)
			return;
		if (lp_named[h].gen != lp_stream_gen) {
			const HChar *name;
			lp_named[h].dev = st->dev;
			lp_named[h].ino = st->ino;
			lp_named[h].gen = lp_stream_gen;
			if (VG_(resolve_filename)(fd, &name))
				lp_event("N %llx %llx %s", st->dev, st->ino, name);
			return;
		}
	}
}

/* The page-cache side of a read or write of LEN bytes at file offset OFF
   of the regular file open as FD, copied from or to the user buffer BUF. */
static void lp_file_copy(HChar dir, Int task, Int fd, Long off, Addr buf, ULong len)
{
	struct vg_stat st;
	if (VG_(fstat)(fd, &st) != 0 || !VKI_S_ISREG(st.mode) || len == 0)
		return;
	lp_name_file(fd, &st);
	lp_event("P %c %x %llx %llx %llx %lx %llx", dir, task, st.dev, st.ino, (ULong)off, buf,
		 len);
}

static void lp_file_copy_vec(HChar dir, Int task, Int fd, Long off, const struct vki_iovec *iov,
			     UWord iovcnt, ULong total)
{
	for (UWord k = 0; k < iovcnt && total > 0; k++) {
		ULong piece = iov[k].iov_len < total ? iov[k].iov_len : total;
		lp_file_copy(dir, task, fd, off, (Addr)iov[k].iov_base, piece);
		off += (Long)piece;
		total -= piece;
	}
}

/* A kernel copy between two files (sendfile, copy_file_range): each side
   that is a regular file as "dev ino offset", the other as "- - -". */
static void lp_file_side(HChar *out, Int size, Int fd, Long off_after, ULong len)
{
	struct vg_stat st;
	if (off_after >= 0 && VG_(fstat)(fd, &st) == 0 && VKI_S_ISREG(st.mode)) {
		lp_name_file(fd, &st);
		VG_(snprintf)(out, size, "%llx %llx %llx", st.dev, st.ino,
			      (ULong)(off_after - (Long)len));
	} else
		VG_(snprintf)(out, size, "- - -");
}

/* The offset after a copy: from the caller's offset pointer when given
   (the kernel updated it), else the descriptor's position. */
static Long lp_offset_after(Int fd, UWord offset_ptr)
{
	if (offset_ptr != 0)
		return (Long) * (const Long *)offset_ptr;
	return VG_(lseek)(fd, 0, VKI_SEEK_CUR);
}

static void lp_file_to_file(Int task, Int in_fd, UWord in_off, Int out_fd, UWord out_off,
			    ULong len)
{
	HChar in[64], out[64];
	if (len == 0)
		return;
	lp_file_side(in, sizeof in, in_fd, lp_offset_after(in_fd, in_off), len);
	lp_file_side(out, sizeof out, out_fd, lp_offset_after(out_fd, out_off), len);
	if (in[0] != '-' || out[0] != '-')
		lp_event("Y %x %s %s %llx", task, in, out, len);
}

/* The file's pages from SIZE on lose their frames. */
static void lp_truncated(const struct vg_stat *st, ULong size)
{
	if (VKI_S_ISREG(st->mode))
		lp_event("Z %llx %llx %llx", st->dev, st->ino, size);
}

static void lp_truncated_fd(Int fd, ULong size)
{
	struct vg_stat st;
	if (VG_(fstat)(fd, &st) == 0)
		lp_truncated(&st, size);
}

/* Whether PATH is an ELF program of another class than ours (a 32-bit
   one): this Valgrind has no tool for it. */
static Bool lp_foreign_elf(const HChar *path)
{
	UChar ident[5];
	SysRes r = VG_(open)(path, VKI_O_RDONLY, 0);
	if (sr_isError(r))
		return False;
	Int n = VG_(read)((Int)sr_Res(r), ident, sizeof ident);
	VG_(close)((Int)sr_Res(r));
	return n == (Int)sizeof ident && ident[0] == 0x7f && ident[1] == 'E' && ident[2] == 'L' &&
	       ident[3] == 'F' && ident[4] != 2 /* ELFCLASS64 */;
}

/* Programs the recorder cannot run are run untraced, and the stream says
   so (u): a set-user-id, set-group-id or set-capability program (Valgrind
   would run it without its privileges, and with --trace-children=yes it
   fails the exec: the decision is Valgrind's own check on the path as
   given), and a 32-bit one (no tool for it). A path with a comma cannot be
   a pattern: its exec goes as under Valgrind alone. */
static void lp_untraced_exec(ThreadId tid, UInt sysno, const UWord *args)
{
	static HChar pattern[4200];
	const HChar *path = (const HChar *)(sysno == __NR_execve ? args[0] : args[1]);
	Bool is_setuid = False;
	VG_(clo_trace_children_skip) = NULL;
	if (!path || (sysno == __NR_execveat && (Int)args[0] != VKI_AT_FDCWD && path[0] != '/') ||
	    VG_(strchr)(path, ','))
		return;
	Bool privileged = VG_(check_executable)(&is_setuid, path, False) != 0 && is_setuid;
	if (!privileged && !lp_foreign_elf(path))
		return;
	/* Valgrind's patterns take * and ? as wildcards, \\ before any
	   character as that character. */
	Int n = 0;
	for (const HChar *p = path; *p && n < (Int)sizeof pattern - 2; p++) {
		if (*p == '*' || *p == '?' || *p == '\\')
			pattern[n++] = '\\';
		pattern[n++] = *p;
	}
	pattern[n] = '\0';
	VG_(clo_trace_children_skip) = pattern;
	lp_event("u %x %s", lp_task_of[tid], path);
}

/* ---- Valgrind's limits --------------------------------------------------- */

/* The process is about to fail on a limit of Valgrind (laplace-record(1)
   lists them): the stream says which, as an L event written at once,
   since Valgrind then ends the process without the tool's fini. */
static void lp_limit(ThreadId tid, const HChar *what)
{
	lp_event("L %x %s", lp_task_of[tid], what);
	lp_buf_write_out();
}

/* Valgrind runs a clone that makes a thread (CLONE_VM, CLONE_FS and
   CLONE_FILES), a fork, or a vfork (CLONE_VM|CLONE_VFORK, run as a fork),
   looking at these four flags alone; any other mix ends the process
   ("Unsupported clone() flags"). A thread needs a free slot of Valgrind's
   (--max-threads; laplace record raises the default). */
static void lp_check_clone(ThreadId tid, UWord flags)
{
	HChar what[160];
	UWord kind = flags & (VKI_CLONE_VM | VKI_CLONE_FS | VKI_CLONE_FILES | VKI_CLONE_VFORK);
	if (kind == (VKI_CLONE_VM | VKI_CLONE_FS | VKI_CLONE_FILES)) {
		if (VG_(count_living_threads)() < (Int)VG_N_THREADS - 1)
			return;
		VG_(snprintf)(what, sizeof what,
			      "more than %u threads at once (Valgrind's --max-threads=%u)",
			      VG_N_THREADS - 1, VG_N_THREADS);
	} else if (kind == (VKI_CLONE_VM | VKI_CLONE_VFORK) || kind == 0) {
		return;
	} else {
		VG_(snprintf)(what, sizeof what,
			      "clone() with flags 0x%lx: a child sharing the address space that is "
			      "neither a thread nor a vfork",
			      flags);
	}
	lp_limit(tid, what);
}

/* An exec of /proc/self/exe (or of the process's own /proc/PID/exe) runs
   Valgrind's tool itself, which refuses to run without its launcher. */
static void lp_check_exec(ThreadId tid, const HChar *path)
{
	HChar own[64];
	VG_(snprintf)(own, sizeof own, "/proc/%d/exe", VG_(getpid)());
	if (path && (!VG_(strcmp)(path, "/proc/self/exe") || !VG_(strcmp)(path, own)))
		lp_limit(tid, "exec of /proc/self/exe (it runs Valgrind's tool, not the program)");
}

/* The file an unlink is about to remove its last name of, by thread. */
static struct vg_stat *lp_unlinking;
static Bool *lp_unlinking_last;

static void lp_pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs)
{
	(void)nargs;
	/* A successful exec ends this instance without a word: write what it
	   has. */
	if (sysno == __NR_execve || sysno == __NR_execveat) {
		lp_untraced_exec(tid, sysno, args);
		lp_check_exec(tid, (const HChar *)(sysno == __NR_execve ? args[0] : args[1]));
		lp_buf_write_out();
	}
	if (sysno == __NR_clone)
		lp_check_clone(tid, args[0]);
	lp_write_pending();
	if (sysno == __NR_unlink || sysno == __NR_unlinkat) {
		const HChar *path = (const HChar *)(sysno == __NR_unlink ? args[0] : args[1]);
		Bool resolvable = sysno == __NR_unlink || (Int)args[0] == VKI_AT_FDCWD ||
				  (path && path[0] == '/');
		lp_unlinking_last[tid] = False;
		if (resolvable && path && !sr_isError(VG_(stat)(path, &lp_unlinking[tid])))
			lp_unlinking_last[tid] =
			    VKI_S_ISREG(lp_unlinking[tid].mode) && lp_unlinking[tid].nlink == 1;
	}
}

static void lp_fork_ended(ThreadId tid, SysRes res);

static void lp_post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs, SysRes res)
{
	(void)nargs;
	lp_fork_ended(tid, res);
	if (sr_isError(res))
		return;
	Int task = lp_task_of[tid];
	UWord r = sr_Res(res);
	switch (sysno) {
	case __NR_mmap: {
		UInt flags = (UInt)args[3] & (LP_MAP_SHARED | LP_MAP_PRIVATE | LP_MAP_FIXED | LP_MAP_ANON);
		lp_map_event('M', task, r, args[1], flags, (UInt)args[2] & 7);
		if ((flags & LP_MAP_ANON) && (flags & LP_MAP_SHARED) &&
		    lp_nshared_anon < LP_MAX_SHARED_ANON) {
			lp_shared_anon[lp_nshared_anon].start = r;
			lp_shared_anon[lp_nshared_anon].end = r + args[1];
			lp_nshared_anon++;
		}
		break;
	}
	case __NR_munmap:
		lp_event("U %x %lx %lx", task, args[0], args[1]);
		lp_forget_shared_anon(args[0], args[0] + args[1]);
		break;
	case __NR_mremap:
		if (args[1] > 0)
			lp_event("K %x %lx %lx %lx %lx", task, args[0], args[1], r, args[2]);
		break;
	case __NR_madvise:
		if (args[2] == LP_MADV_DONTNEED)
			lp_madvise_dontneed(task, args[0], args[1]);
		break;
	case __NR_clone:
		if (args[0] & VKI_CLONE_VM && !(args[0] & VKI_CLONE_VFORK))
			lp_event("T %x %lx", task, r);
		break;
	case __NR_shmget:
		lp_event("G %lx %lx", r, args[1]);
		break;
	case __NR_shmat: {
		NSegment const *seg = VG_(am_find_nsegment)(r);
		SizeT size = seg ? seg->end + 1 - r : 0;
		lp_event("H %x %lx %lx %lx", task, args[0], r, size);
		break;
	}
	case __NR_shmdt:
		lp_event("D %x %lx", task, args[0]);
		break;
	case __NR_shmctl:
		if ((args[1] & 0xff) == LP_IPC_RMID)
			lp_event("Q %lx", args[0]);
		break;
	case __NR_read:
	case __NR_write: {
		Long off = VG_(lseek)((Int)args[0], 0, VKI_SEEK_CUR);
		if (off >= 0)
			lp_file_copy(sysno == __NR_read ? 'r' : 'w', task, (Int)args[0],
				     off - (Long)r, args[1], r);
		break;
	}
	case __NR_pread64:
	case __NR_pwrite64:
		lp_file_copy(sysno == __NR_pread64 ? 'r' : 'w', task, (Int)args[0], (Long)args[3],
			     args[1], r);
		break;
	case __NR_readv:
	case __NR_writev: {
		Long off = VG_(lseek)((Int)args[0], 0, VKI_SEEK_CUR);
		if (off >= 0)
			lp_file_copy_vec(sysno == __NR_readv ? 'r' : 'w', task, (Int)args[0],
					 off - (Long)r, (const struct vki_iovec *)args[1], args[2], r);
		break;
	}
	case __NR_preadv:
	case __NR_pwritev:
		lp_file_copy_vec(sysno == __NR_preadv ? 'r' : 'w', task, (Int)args[0], (Long)args[3],
				 (const struct vki_iovec *)args[1], args[2], r);
		break;
	case __NR_sendfile:
		lp_file_to_file(task, (Int)args[1], args[2], (Int)args[0], 0, r);
		break;
	case __NR_copy_file_range:
		lp_file_to_file(task, (Int)args[0], args[1], (Int)args[2], args[3], r);
		break;
	case __NR_open:
	case __NR_openat:
	case __NR_creat: {
		UWord flags = sysno == __NR_open ? args[1] : sysno == __NR_openat ? args[2] : VKI_O_TRUNC;
		if (flags & VKI_O_TRUNC)
			lp_truncated_fd((Int)r, 0);
		break;
	}
	case __NR_ftruncate:
		lp_truncated_fd((Int)args[0], args[1]);
		break;
	case __NR_truncate: {
		struct vg_stat st;
		if (!sr_isError(VG_(stat)((const HChar *)args[0], &st)))
			lp_truncated(&st, args[1]);
		break;
	}
	case __NR_unlink:
	case __NR_unlinkat:
		/* The frames go with the last name: a descriptor still open keeps
		   the file, but its later copies get new frames, which is no
		   other page. */
		if (lp_unlinking_last[tid])
			lp_truncated(&lp_unlinking[tid], 0);
		break;
	default:
		break;
	}
}

/* ---- processes ---------------------------------------------------------- */

static ULong lp_fork_ts;
static ULong lp_fork_vas;
static volatile LpSlot *lp_fork_slot;
static Int lp_fork_parent;

/* Before fork: the child's F takes its timestamp here, so that it precedes
   whatever the parent does next, and its slot is claimed first, so that
   the F is pending from the start. */
static Bool lp_forking; /* from lp_pre_fork to the end of the fork in the parent */

static void lp_pre_fork(ThreadId tid)
{
	lp_forking = True;
	lp_fork_vas = lp_take_vas();
	lp_fork_slot = lp_slot_claim(lp_fork_vas, 0);
	lp_fork_ts = lp_take_ts(1);
	lp_fork_parent = lp_task_of[tid];
}

/* In the parent, after a system call: a fork that failed made no child,
   whose slot is freed (else it would hold back the merge for ever). Out
   of processes (ulimit -u), Valgrind 3.19 may not survive the failure. */
static void lp_fork_ended(ThreadId tid, SysRes res)
{
	if (!lp_forking)
		return;
	lp_forking = False;
	if (!sr_isError(res))
		return;
	lp_slot_release(lp_fork_slot);
	if (sr_Err(res) == VKI_EAGAIN)
		lp_limit(tid, "a fork failed for want of processes (EAGAIN: the process limit, "
			      "ulimit -u), which Valgrind may not survive");
}

static void lp_child_fork(ThreadId tid)
{
	lp_forking = False;
	lp_lifeline_hold();
	VG_(close)(lp_fd);
	lp_vas = lp_fork_vas;
	lp_slot = lp_fork_slot;
	if (lp_slot)
		lp_slot->pid = (ULong)VG_(getpid)();
	lp_stream_open();
	for (UInt t = 0; t < VG_N_THREADS; t++)
		lp_task_of[t] = 0;
	lp_task_of[tid] = VG_(getpid)();
	lp_exited[tid] = False;
	lp_main_task = lp_task_of[tid];
	lp_cur_task = lp_main_task;
	lp_event_at(lp_fork_ts, "F %x %x", lp_fork_parent, lp_main_task);
}

/* Every traced thread runs on one processor: the first instance picks the
   one it runs on, later ones (and their threads, by inheritance) follow. */
static void lp_pin(void)
{
	ULong mask[16];
	VG_(memset)(mask, 0, sizeof mask);
	if (lp_clock->cpu == 0) {
		SysRes r = VG_(do_syscall)(__NR_sched_getaffinity, 0, sizeof mask, (RegWord)mask,
					   0, 0, 0, 0, 0);
		if (sr_isError(r))
			lp_fail("cannot read the processor affinity");
		ULong cpu = 0;
		while (cpu < 64 * 16 && !(mask[cpu / 64] >> (cpu % 64) & 1))
			cpu++;
		ULong expected = 0;
		__atomic_compare_exchange_n(&lp_clock->cpu, &expected, cpu + 1, False,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		VG_(memset)(mask, 0, sizeof mask);
	}
	ULong cpu = lp_clock->cpu - 1;
	mask[cpu / 64] = 1ULL << (cpu % 64);
	SysRes r = VG_(do_syscall)(__NR_sched_setaffinity, 0, sizeof mask, (RegWord)mask, 0, 0, 0,
				   0, 0);
	if (sr_isError(r))
		lp_fail("cannot pin the process to one processor");
}

static void lp_clock_map(void)
{
	HChar path[4096];
	VG_(snprintf)(path, sizeof path, "%s/clock", lp_dir);
	SysRes r = VG_(open)(path, VKI_O_RDWR | VKI_O_CREAT, 0644);
	if (sr_isError(r))
		lp_fail("cannot open the clock file in --lp-dir");
	Int fd = (Int)sr_Res(r);
	struct vg_stat st;
	if (VG_(fstat)(fd, &st) != 0)
		lp_fail("cannot read the clock file");
	if (st.size < 4096) {
		static UChar zeros[4096];
		if (VG_(write)(fd, zeros, sizeof zeros) != (Int)sizeof zeros)
			lp_fail("cannot write the clock file");
	}
	SysRes m = VG_(am_shared_mmap_file_float_valgrind)(4096, VKI_PROT_READ | VKI_PROT_WRITE, fd,
							  0);
	if (sr_isError(m))
		lp_fail("cannot map the clock file");
	VG_(close)(fd);
	lp_clock = (volatile LpClock *)sr_Res(m);
	tl_assert(sizeof(LpClock) <= 4096);
}

static void lp_post_clo_init(void)
{
	if (!lp_dir)
		lp_fail("--lp-dir=DIR is required");
	lp_lifeline_hold();
	lp_clock_map();
	lp_pin();
	lp_task_of = VG_(malloc)("lp.tasks", VG_N_THREADS * sizeof *lp_task_of);
	lp_exited = VG_(malloc)("lp.exited", VG_N_THREADS * sizeof *lp_exited);
	lp_unlinking = VG_(malloc)("lp.unlinking", VG_N_THREADS * sizeof *lp_unlinking);
	lp_unlinking_last = VG_(malloc)("lp.unlinking", VG_N_THREADS * sizeof *lp_unlinking_last);
	for (UInt t = 0; t < VG_N_THREADS; t++) {
		lp_task_of[t] = 0;
		lp_exited[t] = False;
		lp_unlinking_last[t] = False;
	}
	lp_main_task = VG_(getpid)();
	lp_task_of[1] = lp_main_task;
	lp_cur_task = lp_main_task;
	lp_buf = VG_(malloc)("lp.buf", LP_BUF_SIZE);
	/* The image this one replaces by exec wrote its stream whole before
	   the exec: its slot is free. */
	ULong pid = (ULong)VG_(getpid)();
	for (Int i = 0; i < LP_SLOTS; i++)
		if (lp_clock->slots[i].pid == pid)
			lp_slot_release(&lp_clock->slots[i]);
	lp_vas = lp_take_vas();
	lp_slot = lp_slot_claim(lp_vas, pid);
	lp_stream_open();
	/* The program as a path: found through PATH, from the directory it
	   started in. */
	const HChar *name = VG_(args_the_exename);
	if (!VG_(strchr)(name, '/'))
		name = VG_(find_executable)(name);
	if (name[0] == '/')
		lp_event("E %x %s", lp_main_task, name);
	else
		lp_event("E %x %s/%s", lp_main_task, VG_(get_startup_wd)(), name);
}

static void lp_fini(Int exitcode)
{
	(void)exitcode;
	for (UInt t = 0; t < VG_N_THREADS; t++)
		if (lp_task_of[t] != 0 && !lp_exited[t]) {
			lp_event("X %x", lp_task_of[t]);
			lp_exited[t] = True;
		}
	lp_buf_write_out();
	VG_(close)(lp_fd);
	lp_slot_release(lp_slot);
}

static void lp_pre_clo_init(void)
{
	VG_(details_name)("laplace-record");
	VG_(details_version)("0.1.0");
	VG_(details_description)("records memory references and address-space events for laplace");
	VG_(details_copyright_author)("Copyright (C) 2026 the laplace authors; GPL-2.0-or-later");
	VG_(details_bug_reports_to)("the laplace project");
	VG_(details_avg_translation_sizeB)(400);
	VG_(basic_tool_funcs)(lp_post_clo_init, lp_instrument, lp_fini);
	VG_(needs_command_line_options)(lp_process_cmd_line_option, lp_print_usage,
					lp_print_debug_usage);
	VG_(needs_syscall_wrapper)(lp_pre_syscall, lp_post_syscall);
	VG_(track_new_mem_startup)(lp_new_mem_startup);
	VG_(track_new_mem_brk)(lp_new_mem_brk);
	VG_(track_die_mem_brk)(lp_die_mem_brk);
	VG_(track_start_client_code)(lp_start_client_code);
	VG_(track_stop_client_code)(lp_stop_client_code);
	VG_(track_pre_thread_first_insn)(lp_thread_first_insn);
	VG_(track_pre_thread_ll_exit)(lp_thread_exit);
	VG_(atfork)(lp_pre_fork, NULL, lp_child_fork);
}

VG_DETERMINE_INTERFACE_VERSION(lp_pre_clo_init)
