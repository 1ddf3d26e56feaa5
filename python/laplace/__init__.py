"""Merged memory reference traces as numpy arrays, read with liblaplace.

    read_basic(path)        a basic merge stream (text or binary, gzip or
                            zstd compressed, "-" for standard input) as one
                            structured array with fields type, canonical
    merge(ref, kern, ...)   a capture merged on the fly: an iterator of
                            structured arrays with the fields of
                            lp_merged_ref (type, length, vas, address,
                            timestamp, canonical, pid, tid; vas and address
                            of up to 64 bits)
    sweep(dir, memory, ...) `laplace schedule --memory M1,M2,...` of a
                            per-process directory, in this process: its
                            table (the thrashing curve) as a structured
                            array, one row per memory size
    simulate(source, ...)   page-replacement policies over a basic merge
                            stream (a path) or an array of canonical page
                            numbers, as laplace sim simulates them: per
                            policy, an array with fields size, faults,
                            miss_ratio, space_time
    reduce(source, method,  laplace reduce's SAD or OLR of a basic merge
           frames)          stream (a path) or an array of BASIC_REF: the
                            references kept, as one such array
    policies()              the policies simulate() takes, as laplace sim
                            --list-policies lists them: name, kind,
                            options and their defaults, what it is

Types are one-byte strings (b"r", b"W", ...); pid and tid are NO_TASK for
references made while no task was current. A failure raises Error with the
library's message (file, line or record, field) and status (2: bad input,
3: cannot read, 1: bad argument). Warnings (a torn last reference record)
are issued as TraceWarning. See laplace(3), laplace-sim(1) and
laplace-formats(5).

The library loaded is the one named by the environment variable
LAPLACE_LIBRARY (a path), else the one `make install` recorded beside this
module, else liblaplace.so.1 as the dynamic loader finds it. policies()
and study() run the laplace program: the one named by LAPLACE_PROGRAM,
else `laplace` on the PATH.
"""
import ctypes
import operator
import os
import subprocess
import threading
import warnings

import numpy as np

__all__ = ["read_basic", "merge", "Merge", "simulate", "policies", "sweep", "reduce", "Error",
           "TraceWarning", "NO_TASK", "BASIC_REF", "MERGED_REF", "SIM_ROW", "SWEEP_ROW"]

NO_TASK = 2**64 - 1
# LP_PAGE_OFFSET_BY_WIDTH: the page offset of the capture's width.
_PAGE_OFFSET_BY_WIDTH = 2**64 - 1


class Error(Exception):
    """A failure reported by liblaplace: str() is its message."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class TraceWarning(UserWarning):
    """A warning about an input that was still read (a torn last record)."""


def _library():
    """The path or soname of the library to load (see the module's doc)."""
    path = os.environ.get("LAPLACE_LIBRARY")
    if path:
        return path
    try:
        from ._library import LIBRARY  # written by make install
    except ImportError:
        return "liblaplace.so.1"
    return LIBRARY


# The C structures of <laplace/laplace.h>; the numpy dtypes follow their
# layout exactly, so the library fills numpy arrays in place.
class _LpError(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("msg", ctypes.c_char * 1024)]


class _LpBasicRef(ctypes.Structure):
    _fields_ = [("type", ctypes.c_char), ("canonical", ctypes.c_uint64)]


class _LpMergedRef(ctypes.Structure):
    _fields_ = [("type", ctypes.c_char), ("length", ctypes.c_uint8),
                ("vas", ctypes.c_uint64), ("address", ctypes.c_uint64),
                ("timestamp", ctypes.c_uint64),
                ("canonical", ctypes.c_uint64), ("pid", ctypes.c_uint64),
                ("tid", ctypes.c_uint64)]


_WARN_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


class _LpCaptureOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("ref_format", ctypes.c_int), ("endian", ctypes.c_int),
                ("page_offset", ctypes.c_uint64), ("user_only", ctypes.c_bool),
                ("strict", ctypes.c_bool), ("warn", _WARN_FN), ("warn_ctx", ctypes.c_void_p)]


_REF_TYPES = "rwiRWI"
_EVENT_TAGS = "FTESXMUBKGHDQCV"
_PAGE_KINDS = ("file", "segment", "shared_anon", "private_anon", "kernel")


class _LpStats(ctypes.Structure):
    # events and pages have room for tags and page kinds to come
    # (LP_STATS_TAGS, LP_STATS_PAGE_KINDS).
    _fields_ = [("size", ctypes.c_size_t), ("refs", ctypes.c_uint64 * len(_REF_TYPES)),
                ("events", ctypes.c_uint64 * 32),
                ("pages", ctypes.c_uint64 * 16),
                ("cow_copies", ctypes.c_uint64), ("unmapped_pages", ctypes.c_uint64),
                ("orphan_spaces", ctypes.c_uint64), ("mismatches", ctypes.c_uint64),
                ("warnings", ctypes.c_uint64)]


class _LpSimRow(ctypes.Structure):
    _fields_ = [("policy", ctypes.c_char * 16), ("size", ctypes.c_uint64),
                ("references", ctypes.c_uint64), ("faults", ctypes.c_uint64),
                ("space_time", ctypes.c_uint64)]


BASIC_REF = np.dtype(_LpBasicRef)
MERGED_REF = np.dtype(_LpMergedRef)
# What simulate returns for each policy, one element per size.
SIM_ROW = np.dtype([("size", np.uint64), ("faults", np.uint64), ("miss_ratio", np.float64),
                    ("space_time", np.uint64)])

_ENDIANS = {"little": 0, "big": 1}

try:
    _lib = ctypes.CDLL(_library())
except OSError as e:
    raise ImportError("laplace: cannot load liblaplace (set LAPLACE_LIBRARY to its path): %s"
                      % e) from None
_lib.lp_version.restype = ctypes.c_uint
_lib.lp_version.argtypes = []
_lib.lp_basic_open.restype = ctypes.c_void_p
_lib.lp_basic_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(_LpError)]
_lib.lp_basic_read.restype = ctypes.c_ssize_t
_lib.lp_basic_read.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                               ctypes.POINTER(_LpError)]
_lib.lp_basic_close.restype = None
_lib.lp_basic_close.argtypes = [ctypes.c_void_p]
_lib.lp_capture_options_init_sized.restype = None
_lib.lp_capture_options_init_sized.argtypes = [ctypes.POINTER(_LpCaptureOptions), ctypes.c_size_t]
_lib.lp_capture_open.restype = ctypes.c_void_p
_lib.lp_capture_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                 ctypes.POINTER(_LpCaptureOptions), ctypes.POINTER(_LpError)]
_lib.lp_capture_read.restype = ctypes.c_ssize_t
_lib.lp_capture_read.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                 ctypes.POINTER(_LpError)]
_lib.lp_capture_stats.restype = ctypes.POINTER(_LpStats)
_lib.lp_capture_stats.argtypes = [ctypes.c_void_p]
_lib.lp_capture_close.restype = None
_lib.lp_capture_close.argtypes = [ctypes.c_void_p]
_lib.lp_ref_format_name.restype = ctypes.c_char_p
_lib.lp_ref_format_name.argtypes = [ctypes.c_int]
# An older library leaves simulate out (it raises Error).
_HAS_SIMULATE = hasattr(_lib, "lp_simulate_request")
_SIM_ROWS_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_LpSimRow),
                                ctypes.c_size_t, ctypes.c_uint64)


class _LpSimRequest(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("policies", ctypes.c_char_p),
                ("frames", ctypes.c_char_p), ("windows", ctypes.c_char_p),
                ("sample_rate", ctypes.c_double), ("sample_pages", ctypes.c_uint64),
                ("stop", ctypes.POINTER(ctypes.c_int)), ("rows", _SIM_ROWS_FN),
                ("ctx", ctypes.c_void_p), ("options", ctypes.c_char_p)]


# The library's version (LP_VERSION_NUMBER): 1.3.0 added the policies'
# options (lp_sim_request.options), reduce and sweep.
_VERSION = _lib.lp_version()
# The size of lp_sim_request the library knows: an older one (1.2.0) has
# no options.
_SIM_REQUEST_SIZE = (ctypes.sizeof(_LpSimRequest) if _VERSION >= 10300
                     else _LpSimRequest.options.offset)


if _HAS_SIMULATE:
    _lib.lp_sim_request_init_sized.restype = None
    _lib.lp_sim_request_init_sized.argtypes = [ctypes.POINTER(_LpSimRequest), ctypes.c_size_t]
    _lib.lp_simulate_request.restype = ctypes.c_int
    _lib.lp_simulate_request.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t,
                                         ctypes.POINTER(_LpSimRequest),
                                         ctypes.POINTER(_LpError)]


def _ref_formats():
    """The reference formats (enum lp_ref_format) by the library's names."""
    formats = {}
    while True:
        name = _lib.lp_ref_format_name(len(formats))
        if name is None:
            return formats
        formats[name.decode()] = len(formats)


_REF_FORMATS = _ref_formats()


def _raise(err):
    raise Error(err.msg.decode("utf-8", "backslashreplace"), err.status)


def _path(name, value):
    """value as the library takes a path; a TypeError names the argument
    (None would be a NULL), a ValueError a NUL byte (which would cut the
    name short)."""
    try:
        path = os.fsencode(value)
    except TypeError:
        raise TypeError("%s must be a path (str, bytes or os.PathLike), not %r"
                        % (name, value)) from None
    if b"\0" in path:
        raise ValueError("%s must not hold a NUL byte: %r" % (name, value))
    return path


def _page_offset(value):
    """value as a uint64_t: ctypes would wrap -1 or 2**64 silently, and
    2**64 - 1 is the library's "the capture's width picks it" (None)."""
    if value is None:
        return _PAGE_OFFSET_BY_WIDTH
    offset = _integer(value)
    if offset is None or not 0 <= offset < _PAGE_OFFSET_BY_WIDTH:
        raise ValueError("page_offset must be None or an integer from 0 to 2**64 - 2, not %r"
                         % (value,))
    return offset


def _integer(value):
    """value as an int if it is an integer, a numpy one (np.int64) included,
    else None: neither a bool (True is no count) nor a float is taken."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _batch_size(batch):
    size = _integer(batch)
    if size is None or size < 1:
        raise ValueError("batch must be a positive integer, not %r" % (batch,))
    return size


def _flag(name, value):
    """value as a bool if it is one (numpy's np.bool_ included): "yes", 0 or
    None would be read as true or false where the caller meant neither."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError("%s must be True or False, not %r" % (name, value))
    return bool(value)


def read_basic(path, batch=1 << 20):
    """Every reference of the basic merge stream at path, as one array with
    fields type and canonical (read batch references at a time)."""
    batch = _batch_size(batch)
    err = _LpError()
    reader = _lib.lp_basic_open(_path("path", path), ctypes.byref(err))
    if not reader:
        _raise(err)
    chunks = []
    try:
        while True:
            buf = np.empty(batch, BASIC_REF)
            n = _lib.lp_basic_read(reader, buf.ctypes.data, batch, ctypes.byref(err))
            if n < 0:
                _raise(err)
            if n == 0:
                break
            chunks.append(buf[:n])
    finally:
        _lib.lp_basic_close(reader)
    return np.concatenate(chunks) if chunks else np.empty(0, BASIC_REF)


class Merge:
    """A capture being merged: iterate for arrays of at most batch merged
    references (MERGED_REF); close() or a with block ends it early."""

    # A class attribute, not only the constructor's: an argument Python
    # refuses (an unknown keyword) leaves an object that __init__ never
    # saw, and __del__ still runs on it.
    _capture = None

    def __init__(self, ref, kern, user_only=False, batch=1 << 20, page_offset=None,
                 ref_format="auto", endian="little", strict=False):
        # Kept here: at interpreter exit, module globals may be gone first.
        self._close = _lib.lp_capture_close
        self._batch = _batch_size(batch)
        opt = _LpCaptureOptions()
        _lib.lp_capture_options_init_sized(ctypes.byref(opt), ctypes.sizeof(opt))
        if ref_format not in _REF_FORMATS:
            *names, last = _REF_FORMATS
            raise ValueError("ref_format must be %s or %s, not %r"
                             % (", ".join(names), last, ref_format))
        if endian not in _ENDIANS:
            raise ValueError("endian must be little or big, not %r" % (endian,))
        opt.ref_format = _REF_FORMATS[ref_format]
        opt.endian = _ENDIANS[endian]
        opt.page_offset = _page_offset(page_offset)
        opt.user_only = _flag("user_only", user_only)
        opt.strict = _flag("strict", strict)
        # Kept with the capture: the library calls it until the end.
        self._warn = _WARN_FN(lambda ctx, msg: warnings.warn(
            msg.decode("utf-8", "backslashreplace"), TraceWarning, stacklevel=3))
        opt.warn = self._warn
        err = _LpError()
        capture = _lib.lp_capture_open(_path("ref", ref), _path("kern", kern), ctypes.byref(opt),
                                       ctypes.byref(err))
        if not capture:
            _raise(err)
        self._capture = capture

    def __iter__(self):
        return self

    def __next__(self):
        if not self._capture:
            raise StopIteration
        buf = np.empty(self._batch, MERGED_REF)
        err = _LpError()
        n = _lib.lp_capture_read(self._capture, buf.ctypes.data, self._batch,
                                 ctypes.byref(err))
        if n < 0:
            _raise(err)
        if n == 0:
            raise StopIteration
        return buf[:n]

    @property
    def stats(self):
        """The statistics of what has been merged so far (final at the end),
        keyed as laplace-formats(5) section 6 and `laplace merge --stats`."""
        if not self._capture:
            raise ValueError("the capture is closed")
        st = _lib.lp_capture_stats(self._capture).contents
        pages = dict(zip(_PAGE_KINDS, st.pages))
        return {
            "references": dict(zip(_REF_TYPES, st.refs)),
            "events": dict(zip(_EVENT_TAGS, st.events)),
            "canonical_pages": {"total": sum(pages.values()), **pages},
            "cow_copies": st.cow_copies,
            "unmapped_pages": st.unmapped_pages,
            "orphan_spaces": st.orphan_spaces,
            "mismatches": st.mismatches,
            "warnings": st.warnings,
        }

    def close(self):
        if self._capture:
            self._close(self._capture)
            self._capture = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def merge(ref, kern, user_only=False, batch=1 << 20, **options):
    """Merge the capture ref (raw reference trace) and kern (kernel event
    trace): an iterator (a Merge) of arrays of at most batch references.
    Options as `laplace merge`'s: page_offset (int; None, the default: the
    one of the capture's width, c0000000 or ffff888000000000), ref_format
    ("auto", "bin", "text": the names the library gives), endian ("little",
    "big"), strict (bool)."""
    return Merge(ref, kern, user_only=user_only, batch=batch, **options)


# A row of a sweep's table (laplace-formats(5), 9.4.6), in its order.
SWEEP_ROW = np.dtype([("memory", np.uint64), ("ticks", np.uint64), ("references", np.uint64),
                      ("faults", np.uint64), ("waits", np.uint64), ("evictions", np.uint64),
                      ("busy_ticks", np.uint64), ("idle_ticks", np.uint64),
                      ("utilization", np.float64)])


def _program():
    return os.environ.get("LAPLACE_PROGRAM") or "laplace"


def _run(args):
    """Run the laplace program; its standard output, or Error."""
    try:
        done = subprocess.run([_program()] + args, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, check=False)
    except OSError as e:
        raise Error("cannot run %s: %s" % (_program(), e.strerror), 3) from e
    if done.returncode:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise Error(message[0] if message else "laplace exited with status %d"
                    % done.returncode, done.returncode)
    return done.stdout


class _LpMemoryRow(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in SWEEP_ROW.names[:-1]] + \
               [("utilization", ctypes.c_double)]


_MEMORY_ROWS_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_LpMemoryRow),
                                   ctypes.c_size_t)


class _LpSweepRequest(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("memory", ctypes.c_char_p),
                ("policy", ctypes.c_char_p), ("quantum", ctypes.c_uint64),
                ("cpus", ctypes.c_uint), ("seed", ctypes.c_uint64),
                ("replacement", ctypes.c_char_p), ("fault_ticks", ctypes.c_uint64),
                ("user_only", ctypes.c_bool), ("threads", ctypes.c_uint),
                ("stop", ctypes.POINTER(ctypes.c_int)), ("rows", _MEMORY_ROWS_FN),
                ("ctx", ctypes.c_void_p)]


# An older library (before 1.3.0) has no sweep (it raises Error).
_HAS_SWEEP = hasattr(_lib, "lp_sweep_memory")
if _HAS_SWEEP:
    _lib.lp_sweep_request_init_sized.restype = None
    _lib.lp_sweep_request_init_sized.argtypes = [ctypes.POINTER(_LpSweepRequest),
                                                 ctypes.c_size_t]
    _lib.lp_sweep_memory.restype = ctypes.c_int
    _lib.lp_sweep_memory.argtypes = [ctypes.c_char_p, ctypes.POINTER(_LpSweepRequest),
                                     ctypes.POINTER(_LpError)]


def _option(name, value, low, high):
    """An integer option from low to high, or None (the library's default)."""
    if value is None:
        return 0
    count = _integer(value)
    if count is None or not low <= count <= high:
        raise ValueError("%s must be an integer from %d to %d, not %r" % (name, low, high, value))
    return count


def _in_thread(name, call, stop):
    """call() on a thread of its own, so that Ctrl-C reaches this one at
    once: it sets stop, gives the run a second to end, and raises
    KeyboardInterrupt. call's result."""
    outcome = []
    done = threading.Event()

    def run():
        try:
            outcome.append(call())
        finally:
            done.set()

    # Waited for through an event, not join: Python 3.11's join, broken
    # off by KeyboardInterrupt, takes the thread for ended (bpo-45274's
    # fix) and would not wait again.
    threading.Thread(target=run, name=name, daemon=True).start()
    try:
        while not done.wait(0.1):
            pass
    except BaseException:
        stop.value = 1
        done.wait(1)
        raise
    return outcome[0]


def sweep(directory, memory, policy="rr", quantum=None, cpus=None, seed=None,
          replacement=None, fault_ticks=None, user_only=False, threads=None):
    """Schedule the per-process directory with a memory of each size in
    memory (frames, in that order, repeats allowed), each run from scratch,
    as `laplace schedule --policy POLICY --memory M1,M2,...` does (see
    laplace-schedule(1)), in this process through the library
    (lp_sweep_memory), and return its table: a structured array of
    SWEEP_ROW, one row per size, e.g. t["memory"], t["utilization"]
    (rounded to 6 decimals as the table prints it). memory is as
    simulate() takes sizes: an integer, a string ("64,128"), or a list or
    array of them. policy is "rr" or "random"; quantum, cpus, seed,
    fault_ticks (integers), replacement (a policy with a victim rule:
    laplace schedule --help names them), user_only (a bool) and threads
    (-j) as the command's options (None: its defaults). A failure raises
    Error with the command's message and exit status (1: a bad option, 2:
    not a per-process directory, 3: cannot read); Ctrl-C stops the run
    (KeyboardInterrupt)."""
    if not _HAS_SWEEP:
        raise Error("sweep: the liblaplace loaded is older than this module (lp_sweep_memory, "
                    "1.3.0)", 1)
    if isinstance(memory, np.ndarray) and memory.dtype.kind in "iu" and memory.ndim == 1:
        memory_c = ",".join(map(str, memory.tolist())).encode("ascii")
    else:
        memory_c = _sim_list("memory", memory)
    if memory_c is None:
        raise TypeError("memory must be a string, an integer or a list of them, not None")
    request = _LpSweepRequest()
    _lib.lp_sweep_request_init_sized(ctypes.byref(request), ctypes.sizeof(request))
    request.memory = memory_c
    for name, value in (("policy", policy), ("replacement", replacement)):
        if value is not None and not isinstance(value, str):
            raise TypeError("%s must be a string, not %r" % (name, value))
    request.policy = None if policy is None else _path("policy", policy)
    request.replacement = None if replacement is None else _path("replacement", replacement)
    request.quantum = _option("quantum", quantum, 1, 2**64 - 1)
    request.cpus = _option("cpus", cpus, 1, 2**32 - 1)
    request.seed = _option("seed", seed, 0, 2**64 - 1)
    request.fault_ticks = _option("fault_ticks", fault_ticks, 1, 2**64 - 1)
    request.threads = _option("threads", threads, 1, 2**32 - 1)
    request.user_only = _flag("user_only", user_only)
    rows = []
    failures = []

    def take(ctx, block, n):
        try:
            rows.append(bytes(ctypes.string_at(block, n * ctypes.sizeof(_LpMemoryRow))))
            return 0
        except BaseException as e:  # told after the run, not lost in ctypes
            failures.append(e)
            return 1

    request.rows = _MEMORY_ROWS_FN(take)
    stop = ctypes.c_int(0)
    request.stop = ctypes.pointer(stop)
    err = _LpError()
    path = _path("directory", directory)
    # The request, the sizes and the callback live as long as the run.
    outcome = _in_thread("laplace-sweep", lambda: _lib.lp_sweep_memory(
        path, ctypes.byref(request), ctypes.byref(err)), stop)
    if failures:
        raise failures[0]
    if outcome < 0:
        _raise(err)
    return np.frombuffer(b"".join(rows), dtype=SWEEP_ROW).copy()


if _HAS_SWEEP:  # lp_reduce came with lp_sweep_memory (1.3.0)
    _lib.lp_reduce.restype = ctypes.c_ssize_t
    _lib.lp_reduce.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t,
                               ctypes.c_char_p, ctypes.c_uint64,
                               ctypes.POINTER(ctypes.POINTER(_LpBasicRef)),
                               ctypes.POINTER(_LpError)]
    _lib.lp_reduce_free.restype = None
    _lib.lp_reduce_free.argtypes = [ctypes.POINTER(_LpBasicRef)]


def reduce(source, method, frames):
    """Reduce a stream as `laplace reduce --method METHOD --frames FRAMES`
    does (laplace-reduce(1)), in this process through the library
    (lp_reduce): method "sad" (a subsequence of the input) or "olr" (the
    shortest stream), either with the input's LRU behaviour for every
    memory of at least frames pages. source is a basic merge stream (a
    path, as read_basic takes it) or an array of BASIC_REF (read_basic's,
    fields type and canonical). Returns the references kept as an array of
    BASIC_REF, reference for reference the command's output. A method or
    frames the command refuses raises Error with status 1 and its
    message."""
    if not _HAS_SWEEP:
        raise Error("reduce: the liblaplace loaded is older than this module (lp_reduce, 1.3.0)",
                    1)
    if not isinstance(method, str):
        raise TypeError("method must be a string, not %r" % (method,))
    count = _integer(frames)
    if count is None or not 1 <= count < 2**64:
        raise ValueError("frames must be an integer from 1 to 2**64 - 1, not %r" % (frames,))
    if isinstance(source, (str, bytes, os.PathLike)):
        path, refs, data = _path("source", source), None, None
    else:
        path = None
        refs = np.asarray(source)
        if refs.dtype != BASIC_REF or refs.ndim != 1:
            raise TypeError("source must be a path or a one-dimensional array of BASIC_REF "
                            "(read_basic's), not %s of shape %r" % (refs.dtype, refs.shape))
        refs = np.ascontiguousarray(refs)
        data = refs.ctypes.data if refs.size else None
    kept = ctypes.POINTER(_LpBasicRef)()
    err = _LpError()
    n = _lib.lp_reduce(path, data, 0 if refs is None else refs.size,
                       method.encode("utf-8", "surrogateescape"), count, ctypes.byref(kept),
                       ctypes.byref(err))
    if n < 0:
        _raise(err)
    if n == 0:
        return np.empty(0, BASIC_REF)
    try:
        return np.frombuffer(ctypes.string_at(kept, n * BASIC_REF.itemsize), BASIC_REF).copy()
    finally:
        _lib.lp_reduce_free(kept)


def policies():
    """The policies of laplace sim, in its order, as `laplace sim
    --list-policies` prints its table (laplace-sim(1)): a list of tuples
    (name, kind, options, description), kind "fixed" (sized in frames) or
    "variable" (in windows of references), options a dict from each
    option's name (laplace sim's --NAME) to its default, in words."""
    table = []
    for line in _run(["sim", "--list-policies"]).decode("utf-8").splitlines()[1:]:
        name, kind, options, description = line.split("\t")
        pairs = [] if options == "-" else [o[2:].split("=", 1) for o in options.split(" ")]
        table.append((name, kind, dict(pairs), description))
    return table


def _sim_list(name, value):
    """A list of policies or sizes as laplace sim's options spell it: a
    string as given, an integer, or an iterable of strings and integers
    (joined by commas); None is the library's default."""
    if value is None:
        return None
    if isinstance(value, dict):
        raise TypeError("%s must be a string, an integer or a list of them, not a dict: %r"
                        % (name, value))
    if isinstance(value, (str, bytes)):
        items = [value]
    elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        items = [value]
    else:
        try:
            items = list(value)
        except TypeError:
            raise TypeError("%s must be a string, an integer or a list of them, not %r"
                            % (name, value)) from None
    words = []
    for item in items:
        if isinstance(item, bytes):
            item = item.decode("utf-8", "surrogateescape")
        if isinstance(item, bool) or not isinstance(item, (str, int, np.integer)):
            raise TypeError("%s must be a string, an integer or a list of them, not %r"
                            % (name, value))
        words.append(str(item))
    text = ",".join(words).encode("utf-8", "surrogateescape")
    if b"\0" in text:
        raise ValueError("%s must not hold a NUL byte: %r" % (name, value))
    return text


def _sim_options(options):
    """The policies' options as lp_sim_request.options spells them,
    "NAME=VALUE,...", from a dict of laplace sim's option names (without
    dashes: policies() lists them) to integers or strings; None: none."""
    if options is None:
        return None
    if not isinstance(options, dict):
        raise TypeError("options must be a dict from option names to values, not %r"
                        % (options,))
    items = []
    for name, value in options.items():
        if not isinstance(name, str):
            raise TypeError("options: an option's name must be a string, not %r" % (name,))
        count = _integer(value)
        if count is None and not isinstance(value, str):
            raise TypeError("options: %s must be an integer or a string, not %r"
                            % (name, value))
        text = "%s=%s" % (name, value if count is None else count)
        if "," in text or "\0" in text:
            raise ValueError("options: %s must not hold a comma or a NUL byte: %r"
                             % (name, value))
        items.append(text)
    return ",".join(items).encode("utf-8", "surrogateescape")


def simulate(source, policies="lru", frames=None, windows=None, sample_rate=None,
             sample_pages=None, options=None):
    """Simulate page replacement as `laplace sim` does (laplace-sim(1)) and
    return a dict from each policy,
    in the order given, to an array of SIM_ROW (size, faults, miss_ratio =
    faults / references, space_time), sizes ascending.

    source is a basic merge stream (a path, as read_basic takes it) or the
    canonical page numbers of the references in order (anything numpy
    makes a one-dimensional array of unsigned 64-bit integers of, e.g. the
    canonical field of read_basic's array). policies, frames and windows
    are laplace sim's --policy, --frames and --window: a string ("lru,opt",
    "pow2", "all", "1-100"), an integer, or a list of them; None for frames
    or windows is "pow2". sample_rate (0 < R <= 1) or sample_pages (S >= 1)
    are its --sample-rate and --sample-pages: fifo, clock, segq and arc
    then run miniature simulations of a sample of the pages, every size
    scaled by R, their faults estimates. options are the policies'
    options, laplace sim's --NAME VALUE, as a dict from NAME (without its
    dashes, e.g. {"segq-lru-frames": 8, "eelru-early": 2}; policies()
    names them) to an integer or a string; None: every default. A size
    list, an option or a value that laplace sim refuses, or an unknown
    policy, raises Error with status 1 and its message. Each array is filled as its rows come, not held twice; Ctrl-C
    stops the run (KeyboardInterrupt)."""
    if not _HAS_SIMULATE:
        raise Error("simulate: the liblaplace loaded is older than this module "
                    "(lp_simulate_request)", 1)
    policies_c = _sim_list("policies", policies)
    frames_c = _sim_list("frames", frames)
    windows_c = _sim_list("windows", windows)
    request = _LpSimRequest()
    _lib.lp_sim_request_init_sized(ctypes.byref(request), _SIM_REQUEST_SIZE)
    # A policy named twice has the same rows twice: it is run once.
    names = list(dict.fromkeys((policies_c or b"lru").split(b",")))
    request.policies = b",".join(names)
    request.frames = frames_c
    request.windows = windows_c
    options_c = _sim_options(options)
    if options_c and _VERSION < 10300:
        raise Error("simulate: the liblaplace loaded is older than this module: no policy "
                    "options (1.3.0)", 1)
    request.options = options_c
    if sample_rate is not None and sample_pages is not None:
        raise ValueError("simulate: sample_rate and sample_pages cannot both be given")
    if sample_rate is not None:
        if isinstance(sample_rate, bool) or not isinstance(sample_rate, (int, float, np.number)):
            raise TypeError("sample_rate must be a number, not %r" % (sample_rate,))
        if not 0 < float(sample_rate) <= 1:
            raise ValueError("sample_rate must be above 0 and at most 1, not %r"
                             % (sample_rate,))
        request.sample_rate = float(sample_rate)
    if sample_pages is not None:
        count = _integer(sample_pages)
        if count is None or not 1 <= count < 2**32 - 1:
            raise ValueError("sample_pages must be an integer from 1 to %d, not %r"
                             % (2**32 - 2, sample_pages))
        request.sample_pages = count
    if isinstance(source, (str, bytes, os.PathLike)):
        path, pages, data = _path("source", source), None, None
    else:
        path = None
        pages = np.asarray(source)
        if pages.ndim != 1:
            raise ValueError("source must be a path or a one-dimensional array of canonical "
                             "page numbers, not an array of shape %r" % (pages.shape,))
        if pages.size and not np.issubdtype(pages.dtype, np.integer):
            raise TypeError("source's canonical page numbers must be integers, not %s"
                            % pages.dtype)
        if pages.size and np.issubdtype(pages.dtype, np.signedinteger) and pages.min() < 0:
            raise ValueError("source's canonical page numbers must not be negative")
        pages = np.ascontiguousarray(pages, dtype=np.uint64)
        data = pages.ctypes.data if pages.size else None
    tables = []  # [name, array, rows filled]
    failures = []

    def take(ctx, rows, n, total):
        try:
            block = np.ctypeslib.as_array(rows, shape=(n,))
            if not tables or tables[-1][2] == len(tables[-1][1]):
                name = rows[0].policy.decode("ascii")
                tables.append([name, np.empty(total, dtype=SIM_ROW), 0])
            _, table, i = tables[-1]
            part = table[i:i + n]
            part["size"] = block["size"]
            part["faults"] = block["faults"]
            np.divide(block["faults"], block["references"], out=part["miss_ratio"])
            part["space_time"] = block["space_time"]
            tables[-1][2] += n
            return 0
        except BaseException as e:  # told after the run, not lost in ctypes
            failures.append(e)
            return 1

    request.rows = _SIM_ROWS_FN(take)
    stop = ctypes.c_int(0)
    request.stop = ctypes.pointer(stop)
    err = _LpError()
    # The request, the pages and the callback live as long as the run.
    outcome = _in_thread("laplace-simulate", lambda: _lib.lp_simulate_request(
        path, data, 0 if pages is None else pages.size, ctypes.byref(request),
        ctypes.byref(err)), stop)
    if failures:
        raise failures[0]
    if outcome < 0:
        _raise(err)
    got = {name: table for name, table, _ in tables}
    return {name: got.get(name, np.zeros(0, dtype=SIM_ROW))
            for name in (w.decode("utf-8", "surrogateescape") for w in names)}


# A row of a study's table (laplace-study(1), TABLE). Fields a row leaves
# empty are -1 (integers), nan (ratios), 0 (seed) or "" (words).
STUDY_ROW = np.dtype([("capture", "U64"), ("experiment", "U8"), ("policy", "U16"),
                      ("quantum", np.int64), ("cpus", np.int64), ("replacement", "U8"),
                      ("fault_ticks", np.int64), ("seed", np.uint64), ("size", np.int64),
                      ("references", np.int64), ("faults", np.int64),
                      ("miss_ratio", np.float64), ("space_time", np.int64),
                      ("ticks", np.int64), ("waits", np.int64), ("evictions", np.int64),
                      ("busy_ticks", np.int64), ("idle_ticks", np.int64),
                      ("utilization", np.float64)])


def study(path, jobs=None, directory=None, run=True):
    """Run the study file path as `laplace study -q [-j JOBS] [-d
    DIRECTORY] PATH` does (laplace-study(1): only the cells not done run)
    and return its table, DIRECTORY/table.csv, as a structured array of
    STUDY_ROW, one row per result, e.g. t[t["experiment"] == "sim"]. With
    run=False, or path a study's work directory, read a finished table
    without running anything. A study that fails (a cell not ok: status 2,
    a bad study file: 2, a bad option: 1) raises Error with the program's
    first message and exit status."""
    path = os.fsdecode(_path("path", path))
    if os.path.isdir(path):
        directory, run = path, False
    if directory is None:
        stem = path[:-5] if path.endswith(".yaml") else path[:-4] if path.endswith(".yml") else path
        directory = stem + ".d"
    if run:
        args = ["study", "-q"]
        if jobs is not None:
            count = _integer(jobs)
            if count is None:
                raise ValueError("study: jobs must be an integer, not %r" % (jobs,))
            args += ["-j", str(count)]
        args += ["-d", os.fsdecode(directory), "--", path]
        _run(args)
    with open(os.path.join(directory, "table.csv"), encoding="ascii") as f:
        lines = f.read().splitlines()[1:]
    table = np.zeros(len(lines), dtype=STUDY_ROW)
    for i, line in enumerate(lines):
        row = []
        for (name, (kind, _)), value in zip(STUDY_ROW.fields.items(), line.split(",")):
            if kind.kind == "U":
                row.append(value)
            elif kind.kind == "f":
                row.append(float(value) if value else float("nan"))
            elif kind.kind == "u":
                row.append(int(value) if value else 0)
            else:
                row.append(int(value) if value else -1)
        table[i] = tuple(row)
    return table
