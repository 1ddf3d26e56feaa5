"""The Python module laplace, from the build tree: arrays read exactly,
merged captures equal to `laplace merge`'s output, statistics, warnings
and errors with the library's messages.

Run by `make check-python`: PYTHONPATH names the built package and
LAPLACE_PROGRAM the laplace program of the same build."""
import ctypes
import gc
import gzip
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

import numpy as np

import laplace

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DEMO_REF = os.path.join(ROOT, "fixtures", "demo", "demo.ref")
DEMO_KERN = os.path.join(ROOT, "fixtures", "demo", "demo.kern")
PROGRAM = os.environ["LAPLACE_PROGRAM"]

# The capture of tests/unit/test_api.c: task 1 from 10 (hex), thread 2
# from 14 to 16; the first and last references while no task is current.
KERNEL = "S 10 1 a\nT 13 1 2\nS 14 2 a\nX 16 2\n"
REFERENCES = ("r 5 4 a 1000\nw 11 4 a 1004\nR 12 4 a c0003000\ni 15 2 a 2000\n"
              "r 17 4 a 1000\n")
N = laplace.NO_TASK
MERGED = [(b"r", 4, 0xa, 0x1000, 0x5, 0, N, N),
          (b"w", 4, 0xa, 0x1004, 0x11, 1, 1, 1),
          (b"R", 4, 0xa, 0xc0003000, 0x12, 2, 1, 1),
          (b"i", 2, 0xa, 0x2000, 0x15, 3, 1, 2),
          (b"r", 4, 0xa, 0x1000, 0x17, 1, N, N)]


def basic_bin(pairs):
    """The binary basic form of (type, canonical) pairs."""
    words = [canonical | "rwiRWI".index(t) << 61 for t, canonical in pairs]
    return b"LPBASIC\x01" + b"".join(w.to_bytes(8, "little") for w in words)


def as_pairs(refs):
    return [(r["type"].decode(), int(r["canonical"])) for r in refs]


def laplace_merge(*args):
    """The basic merge's lines, from the program."""
    out = subprocess.run([PROGRAM, "merge", "-q", *args], check=True, stdout=subprocess.PIPE)
    return [(t, int(c, 16)) for t, c in (line.split() for line in out.stdout.decode().splitlines())]


def assert_interrupted(test, thread, run):
    """Ctrl-C (SIGINT) 0.3 s into run()'s library call, made on the
    thread named thread: KeyboardInterrupt within a second or two, and the
    library's run ended (its thread gone) within 5 s more, not going on
    behind. The signal waits for the call to begin: sent at a fixed time
    it could come while the arguments are made (slow under
    AddressSanitizer) and test nothing of the library."""
    sent = []

    def send():
        deadline = time.monotonic() + 60
        while not any(t.name == thread for t in threading.enumerate()):
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)
        time.sleep(0.3)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=send, daemon=True).start()
    with test.assertRaises(KeyboardInterrupt):
        run()
    test.assertLess(time.monotonic() - sent[0], 3, "KeyboardInterrupt late")
    deadline = time.monotonic() + 5
    while any(t.name == thread for t in threading.enumerate()):
        test.assertLess(time.monotonic(), deadline, "%s: still running 5 s after the "
                        "KeyboardInterrupt" % thread)
        time.sleep(0.05)


class Scratch(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def file(self, name, data):
        path = os.path.join(self.dir.name, name)
        with open(path, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        return path


class ReadBasic(Scratch):
    def test_text_and_binary(self):
        pairs = [("r", 0), ("W", 0x1a), ("i", 2**61 - 1), ("R", 3), ("w", 4), ("I", 5)]
        text = self.file("s.txt", "r 0\nW 1A\ni 1fffffffffffffff\nR 3\nw 4\nI 5\n")
        binary = self.file("s.bin.gz", gzip.compress(basic_bin(pairs), mtime=0))
        for path in (text, binary):
            refs = laplace.read_basic(path)
            self.assertEqual(refs.dtype, laplace.BASIC_REF)
            self.assertEqual(refs.dtype.names, ("type", "canonical"))
            self.assertEqual(refs.dtype.itemsize, 16)
            self.assertEqual(as_pairs(refs), pairs)
            self.assertEqual(as_pairs(laplace.read_basic(path, batch=4)), pairs)

    def test_empty(self):
        refs = laplace.read_basic(self.file("e.bin", basic_bin([])))
        self.assertEqual(len(refs), 0)
        self.assertEqual(refs.dtype, laplace.BASIC_REF)

    def test_equals_the_merge(self):
        want = laplace_merge(DEMO_REF, DEMO_KERN)
        self.assertEqual(len(want), 79)
        self.assertEqual(as_pairs(laplace.read_basic(self.file("demo.bin", basic_bin(want)))), want)

    def test_task_files_of_either_form(self):
        """A per-process merge's task files, as text and in the binary task
        form (compressed), give the same references; a record of the binary
        form cut short is an error naming its byte."""
        dirs = {}
        for name, form in (("text", []), ("bin", ["--format", "bin", "--compress", "zstd"])):
            dirs[name] = os.path.join(self.dir.name, name)
            subprocess.run([PROGRAM, "merge", "-q", *form, "--per-process", dirs[name],
                            DEMO_REF, DEMO_KERN], check=True)
        for task in ("64/64", "65/65", "65/66", "kernel"):
            text = as_pairs(laplace.read_basic(os.path.join(dirs["text"], task)))
            self.assertGreater(len(text), 0)
            self.assertEqual(as_pairs(laplace.read_basic(os.path.join(dirs["bin"], task + ".zst"))), text)
        torn = self.file("torn.task", b"LPTASK\x01\x00r\x04" + bytes(20))
        with self.assertRaises(laplace.Error) as caught:
            laplace.read_basic(torn)
        self.assertEqual(str(caught.exception), "%s: byte 8: field canonical: the reference record "
                         "is cut short (22 of 26 bytes)" % torn)
        self.assertEqual(caught.exception.status, 2)

    def test_errors(self):
        missing = os.path.join(self.dir.name, "absent")
        cases = [
            (missing, 3, "cannot open %s: No such file or directory" % missing),
            (self.file("v2.bin", b"LPBASIC\x02"), 2, "%s: header (byte 7): field version: 2 is not 1"),
            (self.file("torn.bin", basic_bin([("r", 1)])[:-1]), 2,
             "%s: torn last record: 7 bytes left over after 0 whole records, at byte 8"),
            (self.file("bad.txt", "r 1\nr 1 2\n"), 2,
             "%s:2: field canonical: not a hex number of at most 64 bits"),
        ]
        for path, status, message in cases:
            with self.assertRaises(laplace.Error) as caught:
                laplace.read_basic(path)
            self.assertEqual(str(caught.exception), message.replace("%s", path))
            self.assertEqual(caught.exception.status, status)
        with self.assertRaises(ValueError):
            laplace.read_basic(cases[0][0], batch=0)

    def test_damaged_zstd_frames_are_errors_not_hangs(self):
        """24 single bits flipped across a zstd basic merge of six frames
        (bit i % 8 of byte (2i + 1) * size / 48): each is Error status 2
        naming the file. A frame that failed in a decompressing worker
        hung read_basic forever, beyond Ctrl-C, so the reads run in a
        child with a timeout (a guard, not a timing)."""
        cap = os.path.join(self.dir.name, "cap")
        subprocess.run([PROGRAM, "gen", "-q", "--refs", "1000000", "-o", cap], check=True)
        whole = os.path.join(self.dir.name, "x.zst")
        subprocess.run([PROGRAM, "merge", "-q", "-o", whole, cap + ".ref", cap + ".kern"],
                       check=True)
        with open(whole, "rb") as f:
            data = f.read()
        paths = []
        for i in range(24):
            damaged = bytearray(data)
            damaged[(2 * i + 1) * len(data) // 48] ^= 1 << (i % 8)
            paths.append(self.file("f%d.zst" % i, bytes(damaged)))
        child = ("import sys, laplace\n"
                 "for path in sys.argv[1:]:\n"
                 "    try:\n"
                 "        laplace.read_basic(path)\n"
                 "        print('read', path)\n"
                 "    except laplace.Error as e:\n"
                 "        print(e.status, str(e).startswith(path + ':'))\n")
        out = subprocess.run([sys.executable, "-c", child, *paths], check=True, timeout=60,
                             stdout=subprocess.PIPE)
        self.assertEqual(out.stdout.decode().splitlines(), ["2 True"] * 24)

    def test_not_a_path(self):
        for path, error, message in [
                (None, TypeError, "path must be a path (str, bytes or os.PathLike), not None"),
                (3, TypeError, "path must be a path (str, bytes or os.PathLike), not 3"),
                ("s.txt\0x", ValueError, "path must not hold a NUL byte: 's.txt\\x00x'")]:
            with self.assertRaises(error) as caught:
                laplace.read_basic(path)
            self.assertEqual(str(caught.exception), message)


class Library(unittest.TestCase):
    """The library itself, given NULL through ctypes: a usage error, no crash."""

    def test_null_arguments(self):
        lib = laplace._lib
        err = laplace._LpError()
        self.assertIsNone(lib.lp_basic_open(None, ctypes.byref(err)))
        self.assertEqual((err.status, err.msg), (1, b"lp_basic_open: argument path: NULL"))
        self.assertEqual(lib.lp_basic_read(None, None, 4, None), -1)
        self.assertIsNone(lib.lp_capture_open(DEMO_REF.encode(), None, None, ctypes.byref(err)))
        self.assertEqual((err.status, err.msg), (1, b"lp_capture_open: argument kern: NULL"))
        self.assertEqual(lib.lp_capture_read(None, None, 4, ctypes.byref(err)), -1)
        self.assertEqual((err.status, err.msg), (1, b"lp_capture_read: argument c: NULL"))
        self.assertFalse(lib.lp_capture_stats(None))
        lib.lp_capture_options_init_sized(None, 0)
        lib.lp_basic_close(None)
        lib.lp_capture_close(None)


class Merge(Scratch):
    def capture(self):
        return self.file("r.txt", REFERENCES), self.file("k.txt", KERNEL)

    def test_merged_references(self):
        ref, kern = self.capture()
        m = laplace.merge(ref, kern, batch=2)
        arrays = list(m)
        self.assertEqual([len(a) for a in arrays], [2, 2, 1])
        self.assertEqual(arrays[0].dtype, laplace.MERGED_REF)
        self.assertEqual(arrays[0].dtype.names, ("type", "length", "vas", "address", "timestamp",
                                                 "canonical", "pid", "tid"))
        self.assertEqual(np.concatenate(arrays).tolist(), MERGED)
        self.assertEqual(m.stats, {
            "references": {"r": 2, "w": 1, "i": 1, "R": 1, "W": 0, "I": 0},
            "events": {"F": 0, "T": 1, "E": 0, "S": 2, "X": 1, "M": 0, "U": 0, "B": 0, "K": 0,
                       "G": 0, "H": 0, "D": 0, "Q": 0, "C": 0, "V": 0},
            "canonical_pages": {"total": 4, "file": 0, "segment": 0, "shared_anon": 0,
                                "private_anon": 3, "kernel": 1},
            "cow_copies": 0, "unmapped_pages": 3, "orphan_spaces": 1, "mismatches": 0,
            "warnings": 0})
        # The layouts this module copies are the library's (laplace.h, the ABI).
        self.assertEqual(laplace._lib.lp_capture_stats(m._capture).contents.size,
                         ctypes.sizeof(laplace._LpStats))
        m.close()
        with self.assertRaises(ValueError):
            m.stats

    def test_layout(self):
        """MERGED_REF is lp_merged_ref byte for byte: the offsets that
        src/pipeline/capture.c asserts of the C structure, and 64-bit
        values (an address of the direct map, a vas above 32 bits) read
        back whole from the bytes ctypes lays out."""
        offsets = {"type": 0, "length": 1, "vas": 8, "address": 16, "timestamp": 24,
                   "canonical": 32, "pid": 40, "tid": 48}
        self.assertEqual({name: laplace.MERGED_REF.fields[name][1] for name in offsets}, offsets)
        self.assertEqual(laplace.MERGED_REF.itemsize, 56)
        self.assertEqual({name: getattr(laplace._LpMergedRef, name).offset for name in offsets},
                         offsets)
        wide = (b"W", 8, 0x1234567800000000, 0xffff888012345678, 2**64 - 2, 2**61 - 1, N, 7)
        packed = laplace._LpMergedRef(*wide)
        got = np.frombuffer(bytes(packed), laplace.MERGED_REF)
        self.assertEqual(got.tolist(), [wide])
        back = laplace._LpMergedRef.from_buffer_copy(got.tobytes())
        self.assertEqual((back.vas, back.address), (0x1234567800000000, 0xffff888012345678))

    def test_options(self):
        ref, kern = self.capture()
        user = np.concatenate(list(laplace.merge(ref, kern, user_only=True)))
        self.assertEqual(user.tolist(), [r for r in MERGED if r[0] != b"R"])
        with laplace.merge(ref, kern, page_offset=0xd0000000) as m:
            self.assertEqual(np.concatenate(list(m)).tolist(), MERGED)
            self.assertEqual(m.stats["canonical_pages"]["kernel"], 0)
        text = np.concatenate(list(laplace.merge(ref, kern, ref_format="text")))
        self.assertEqual(text.tolist(), MERGED)
        for bad in ({"endian": "middle"}, {"ref_format": "binary"}, {"batch": -1}):
            with self.assertRaises(ValueError):
                laplace.merge(ref, kern, **bad)
        # Not wrapped into 64 bits by ctypes.
        # 2**64 - 1 is the library's default, the capture's width's.
        for offset in (-1, 2**64 - 1, 2**64, 1.5, True):
            with self.assertRaises(ValueError) as caught:
                laplace.merge(ref, kern, page_offset=offset)
            self.assertEqual(str(caught.exception), "page_offset must be None or an integer "
                             "from 0 to 2**64 - 2, not %r" % (offset,))
        # None, as not given: a 32-bit capture's, c0000000.
        with laplace.merge(ref, kern, page_offset=None) as m:
            self.assertEqual(np.concatenate(list(m)).tolist(), MERGED)
            self.assertEqual(m.stats["canonical_pages"]["kernel"], 1)

    def test_argument_types(self):
        """Numpy integers are integers; only bools are flags; an argument
        Python refuses leaves nothing for __del__ to trip on."""
        ref, kern = self.capture()
        arrays = list(laplace.merge(ref, kern, batch=np.int64(2),
                                    page_offset=np.uint64(0xc0000000)))
        self.assertEqual([len(a) for a in arrays], [2, 2, 1])
        basic = self.file("b", "r 1\nw 2\n")
        self.assertEqual(as_pairs(laplace.read_basic(basic, batch=np.int32(1))),
                         [("r", 1), ("w", 2)])
        user = np.concatenate(list(laplace.merge(ref, kern, user_only=np.bool_(True))))
        self.assertEqual(user.tolist(), [r for r in MERGED if r[0] != b"R"])
        for batch in (np.bool_(True), np.float64(2), np.int64(0)):
            with self.assertRaises(ValueError) as caught:
                laplace.merge(ref, kern, batch=batch)
            self.assertEqual(str(caught.exception),
                             "batch must be a positive integer, not %r" % (batch,))
        for name in ("user_only", "strict"):
            for value in ("yes", "", 1, 0, None):
                with self.assertRaises(TypeError) as caught:
                    laplace.merge(ref, kern, **{name: value})
                self.assertEqual(str(caught.exception),
                                 "%s must be True or False, not %r" % (name, value))
        unraisable = []
        hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
        try:
            for bad in ({"bogus": 1}, {"batch": 0}, {"user_only": "yes"}):
                with self.assertRaises((TypeError, ValueError)):
                    laplace.Merge(ref, kern, **bad)
                gc.collect()
        finally:
            sys.unraisablehook = hook
        self.assertEqual([str(u.exc_value) for u in unraisable], [])

    def test_ref_formats_are_the_programs(self):
        """ref_format takes the names laplace merge's --ref-format takes, as
        the library gives them, and a wrong one is refused listing them."""
        out = subprocess.run([PROGRAM, "merge", "--ref-format", "?", "r", "k"],
                             stderr=subprocess.PIPE)
        listed = re.search(r"--ref-format must be (.*), not '\?'", out.stderr.decode())
        self.assertIsNotNone(listed, out.stderr)
        names = re.split(r", | or ", listed.group(1))
        self.assertEqual(sorted(laplace._REF_FORMATS), sorted(names))
        self.assertEqual(laplace._REF_FORMATS["text"], 2)  # LP_REF_TEXT
        ref, kern = self.capture()
        with self.assertRaises(ValueError) as caught:
            laplace.merge(ref, kern, ref_format="binary")
        message = str(caught.exception)
        self.assertTrue(message.startswith("ref_format must be auto, bin"), message)
        self.assertTrue(message.endswith(", not 'binary'"), message)
        for name in names:
            self.assertIn(name, message)

    def test_capture_of_a_64_bit_machine(self):
        """A 64-bit capture (laplace-formats(5) section 10): vas and
        address come whole, above 32 bits; the page offset is the direct
        map's unless one is given."""
        ref = self.file("r64.txt", "#laplace-ref 64\nr 5 8 123456789a 7fffffffeff8\n"
                                   "R 6 8 123456789a ffff888000abc123\n"
                                   "w 7 4 123456789a 7fffffffeffc\n")
        kern = self.file("k64.txt", "S 1 1 123456789a\n")
        want = [(b"r", 8, 0x123456789a, 0x7fffffffeff8, 5, 0, 1, 1),
                (b"R", 8, 0x123456789a, 0xffff888000abc123, 6, 1, 1, 1),
                (b"w", 4, 0x123456789a, 0x7fffffffeffc, 7, 0, 1, 1)]
        for page_offset, kernel_pages in ((None, 1), (0xffffffff80000000, 0)):
            with laplace.merge(ref, kern, page_offset=page_offset) as m:
                self.assertEqual(np.concatenate(list(m)).tolist(), want)
                self.assertEqual(m.stats["canonical_pages"]["kernel"], kernel_pages)

    def test_equals_the_merge(self):
        for args in ((), ("--user-only",)):
            got = np.concatenate(list(laplace.merge(DEMO_REF, DEMO_KERN,
                                                    user_only=bool(args), batch=10)))
            self.assertEqual(as_pairs(got), laplace_merge(*args, DEMO_REF, DEMO_KERN))

    def test_torn_record_warns(self):
        kern = self.file("k.txt", KERNEL)
        record = (b"r" + (5).to_bytes(8, "little") + bytes([4]) + (0xa).to_bytes(4, "little")
                  + (0x1000).to_bytes(4, "little"))
        ref = self.file("r.bin", record + record[:5])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = laplace.merge(ref, kern)
            self.assertEqual(np.concatenate(list(m)).tolist(), [MERGED[0]])
        self.assertEqual([str(w.message) for w in caught],
                         ["%s: torn last record: 5 bytes left over after 1 whole record" % ref])
        self.assertEqual([w.category for w in caught], [laplace.TraceWarning])
        self.assertEqual(m.stats["warnings"], 1)
        with self.assertRaises(laplace.Error) as strict:
            list(laplace.merge(ref, kern, strict=True))
        self.assertEqual(str(strict.exception), str(caught[0].message))
        self.assertEqual(strict.exception.status, 2)

    def test_errors(self):
        ref, kern = self.capture()
        missing = os.path.join(self.dir.name, "absent")
        with self.assertRaises(laplace.Error) as caught:
            laplace.merge(ref, missing)
        self.assertEqual(str(caught.exception),
                         "cannot open %s: No such file or directory" % missing)
        self.assertEqual(caught.exception.status, 3)
        with self.assertRaises(laplace.Error) as caught:
            laplace.merge("-", "-")
        self.assertEqual(caught.exception.status, 1)
        with self.assertRaises(TypeError) as caught:
            laplace.merge(None, kern)
        self.assertEqual(str(caught.exception),
                         "ref must be a path (str, bytes or os.PathLike), not None")
        with self.assertRaises(TypeError) as caught:
            laplace.merge(ref, None)
        self.assertEqual(str(caught.exception),
                         "kern must be a path (str, bytes or os.PathLike), not None")
        bad = self.file("bad.txt", "S 10 1 a\nT 13 1\n")
        m = laplace.merge(ref, bad, batch=100)
        self.assertEqual(next(m).tolist(), MERGED[:1])
        with self.assertRaises(laplace.Error) as caught:
            next(m)
        self.assertEqual(str(caught.exception), "%s:2: tag T: missing field child" % bad)
        self.assertEqual(caught.exception.status, 2)


class Sweep(Scratch):
    """laplace.sweep: the table of `laplace schedule --memory M1,M2,...`."""

    def two_tasks(self):
        # The case two-tasks of laplace-formats(5), 9.4.6 (page 0 shared).
        os.makedirs(os.path.join(self.dir.name, "pp", "1"))
        os.makedirs(os.path.join(self.dir.name, "pp", "2"))
        self.file("pp/index.yaml", 'layout: task\nprocesses:\n- pid: "1"\n  tasks:\n'
                  '  - tid: "1"\n    path: 1/1\n- pid: "2"\n  tasks:\n  - tid: "2"\n'
                  '    path: 2/2\n')
        self.file("pp/kernel", "")
        self.file("pp/1/1", "r 1 4 10 0\nr 2 4 10 0\nr 3 4 11 1\nr 4 4 10 0\n")
        self.file("pp/2/2", "r 5 4 20 2\nr 6 4 21 3\nr 7 4 10 0\n")
        return os.path.join(self.dir.name, "pp")

    def test_the_specs_table(self):
        pp = self.two_tasks()
        os.environ["LAPLACE_PROGRAM"] = PROGRAM
        t = laplace.sweep(pp, [1, 2, 4], quantum=2, fault_ticks=3)
        self.assertEqual(t.dtype, laplace.SWEEP_ROW)
        self.assertEqual(t["memory"].tolist(), [1, 2, 4])
        self.assertEqual(t["ticks"].tolist(), [20, 15, 13])
        self.assertEqual(t["faults"].tolist(), [6, 5, 4])
        self.assertEqual(t["waits"].tolist(), [1, 1, 0])
        self.assertEqual(t["evictions"].tolist(), [5, 3, 0])
        self.assertEqual(t["idle_ticks"].tolist(), [13, 8, 6])
        self.assertEqual(t["utilization"].tolist(), [0.35, 0.466667, 0.538462])
        # The program's own table, field for field.
        text = subprocess.run([PROGRAM, "schedule", "--policy", "rr", "--quantum", "2",
                               "--fault-ticks", "3", "--memory", "1,2,4", pp],
                              stdout=subprocess.PIPE, check=True).stdout.decode()
        self.assertEqual(text.splitlines()[1:],
                         [",".join(str(v) for v in row.tolist()[:-1]) + ",%.6f" % row[-1]
                          for row in t])

    def test_one_size_and_options(self):
        pp = self.two_tasks()
        os.environ["LAPLACE_PROGRAM"] = PROGRAM
        one = laplace.sweep(pp, [2], quantum=2, fault_ticks=3)
        both = laplace.sweep(pp, [2, 2], quantum=2, fault_ticks=3)
        self.assertEqual(one.tolist(), both[:1].tolist())
        t = laplace.sweep(pp, [1, 2], policy="random", seed=5, cpus=2, replacement="clock",
                          fault_ticks=1, threads=1)
        self.assertEqual(t["references"].tolist(), [7, 7])
        # numpy's integers and bools are integers and bools.
        np_sizes = laplace.sweep(pp, np.array([2, 2]), quantum=2, fault_ticks=3,
                                 user_only=np.bool_(False))
        self.assertEqual(np_sizes.tolist(), both.tolist())

    def test_in_process(self):
        # Through the library: no laplace program needed (none on the
        # PATH), sizes given as simulate() takes them, the program's
        # table value for value.
        pp = self.two_tasks()
        text = subprocess.run([PROGRAM, "schedule", "--policy", "rr", "--quantum", "2",
                               "--fault-ticks", "3", "--memory", "8,16,1", pp],
                              stdout=subprocess.PIPE, check=True).stdout.decode()
        saved = os.environ.get("PATH"), os.environ.pop("LAPLACE_PROGRAM", None)
        os.environ["PATH"] = ""
        try:
            for memory in ("8,16,1", [8, "16", 1], np.array([8, 16, 1]), ["8,16", 1]):
                t = laplace.sweep(pp, memory, quantum=2, fault_ticks=3)
                self.assertEqual(text.splitlines()[1:],
                                 [",".join(str(v) for v in row.tolist()[:-1]) + ",%.6f" % row[-1]
                                  for row in t])
            self.assertEqual(laplace.sweep(pp, 8, quantum=2, fault_ticks=3).tolist(),
                             t[:1].tolist())
            self.assertEqual(laplace.sweep(pp, np.uint32(8), quantum=2, fault_ticks=3).tolist(),
                             t[:1].tolist())
        finally:
            os.environ["PATH"] = saved[0]
            if saved[1] is not None:
                os.environ["LAPLACE_PROGRAM"] = saved[1]

    def test_many_sizes(self):
        # 200,000 sizes: as a subprocess's arguments they failed ("Argument
        # list too long"); in process, the program's rows for the same list.
        pp = self.two_tasks()
        sizes = np.arange(1, 200001) % 9 + 1
        t = laplace.sweep(pp, sizes, quantum=2, fault_ticks=3)
        self.assertEqual(len(t), 200000)
        self.assertEqual(t["memory"].tolist(), sizes.tolist())
        few = laplace.sweep(pp, list(range(1, 10)), quantum=2, fault_ticks=3)
        by_size = {int(row["memory"]): row.tolist() for row in few}
        self.assertTrue(all(row.tolist() == by_size[int(row["memory"])] for row in t[:2000]))
        self.assertEqual(t[-9:].tolist(), [by_size[int(m)] for m in sizes[-9:]])

    def test_interrupt(self):
        # Ctrl-C during a long sweep: KeyboardInterrupt at once, and the
        # run stops. Under AddressSanitizer, splitting the list of sizes
        # once took minutes (g_strsplit), the stop flag unseen meanwhile.
        pp = self.two_tasks()
        assert_interrupted(self, "laplace-sweep", lambda: laplace.sweep(
            pp, np.full(500000, 4), quantum=2, fault_ticks=3))

    def test_names_like_options(self):
        # sweep() ends the options with "--": a directory named "-pp" or
        # "--" is a directory (laplace took the "--" for one more input).
        pp = self.two_tasks()
        os.environ["LAPLACE_PROGRAM"] = os.path.abspath(PROGRAM)
        want = laplace.sweep(pp, [1, 2], quantum=2, fault_ticks=3)
        one = laplace.sweep(pp, [2], quantum=2, fault_ticks=3)
        cwd = os.getcwd()
        os.chdir(self.dir.name)
        try:
            for name in ("-pp", "--"):
                os.rename(pp, name)
                pp = os.path.join(self.dir.name, name)
                got = laplace.sweep(name, [1, 2], quantum=2, fault_ticks=3)
                self.assertEqual(got.tolist(), want.tolist())
                got = laplace.sweep(name, [2], quantum=2, fault_ticks=3)
                self.assertEqual(got.tolist(), one.tolist())
        finally:
            os.chdir(cwd)

    def test_errors(self):
        pp = self.two_tasks()
        os.environ["LAPLACE_PROGRAM"] = PROGRAM
        with self.assertRaises(laplace.Error) as e:
            laplace.sweep(pp, [0, 2])
        self.assertEqual(e.exception.status, 1)
        self.assertIn("--memory: 0 is out of range", str(e.exception))
        with self.assertRaises(laplace.Error) as e:
            laplace.sweep(self.dir.name, [1, 2])
        self.assertEqual(e.exception.status, 2)
        self.assertIn("not a per-process directory", str(e.exception))
        with self.assertRaises(laplace.Error) as e:
            laplace.sweep(pp, [])
        self.assertEqual((str(e.exception), e.exception.status),
                         ("--memory must be a decimal number of frames from 1 to 4294967295, or "
                          "several separated by commas, not ''", 1))
        # Bools as bools, sizes as integers (as Merge takes them): "no" was
        # taken for true (--user-only), 2.5 for 2 and True for 1.
        for bad in ("no", 0, None):
            with self.assertRaises(TypeError) as e:
                laplace.sweep(pp, [2], user_only=bad)
            self.assertEqual(str(e.exception), "user_only must be True or False, not %r" % (bad,))
        # Sizes as simulate() takes them: 2.5 and True are no size, a
        # dict no list of them.
        for bad in (2.5, True, None):
            with self.assertRaises(TypeError) as e:
                laplace.sweep(pp, [2, bad])
            self.assertEqual(str(e.exception), "memory must be a string, an integer or a list "
                             "of them, not %r" % ([2, bad],))
        with self.assertRaises(TypeError) as e:
            laplace.sweep(pp, {8: 1, 16: 2})
        self.assertEqual(str(e.exception), "memory must be a string, an integer or a list of "
                         "them, not a dict: {8: 1, 16: 2}")
        for kwargs, message in [
                ({"policy": "as-traced"}, "--memory goes with --policy rr or random"),
                ({"replacement": "arc"}, "--replacement must be lru, fifo or clock, not 'arc'"),
                ({"cpus": 1025}, "--cpus is out of range (1 to 1024), not 1025")]:
            with self.assertRaises(laplace.Error) as e:
                laplace.sweep(pp, 2, **kwargs)
            self.assertEqual((str(e.exception), e.exception.status), (message, 1))
        for kwargs in ({"quantum": 0}, {"cpus": -1}, {"fault_ticks": 2**64}, {"threads": 0}):
            with self.assertRaises(ValueError):
                laplace.sweep(pp, 2, **kwargs)
# Belady's FIFO anomaly: 1 2 3 4 1 2 5 1 2 3 4 5 (pages 1-5). By hand:
# FIFO faults 9 with 3 frames, 10 with 4; LRU 12 12 10 8 5 (the five first
# references, and the seven others' stack distances 4 4 3 3 5 5 5 above
# K); OPT 12 9 7 6 5. The backward distances of those seven: 4 4 3 3 7 7
# 5, so ws and vmin fault 5 + those above
# tau: 12 12 10 8 7 7 5 for tau 1-7 (7 the largest); ws holds the distinct
# pages of the window (space 12 23 33 40 44 46 48), vmin keeps a page
# across a forward distance f <= tau for f - 1 more references (12 + the
# sum of f - 1: 12 12 16 22 26 26 38).
ANOMALY = [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]


class Simulate(Scratch):
    def test_policies(self):
        # The table of laplace sim --list-policies: every name is one
        # that simulate() takes, in its order.
        table = laplace.policies()
        names = [row[0] for row in table]
        self.assertEqual(names[:2], ["lru", "opt"])
        self.assertEqual(list(laplace.simulate(ANOMALY, policies=names, frames=3,
                                               windows=3)), names)
        kinds = {name: kind for name, kind, _, _ in table}
        self.assertEqual((kinds["lru"], kinds["ws"]), ("fixed", "variable"))
        options = {name: opts for name, _, opts, _ in table}
        self.assertEqual(options["eelru"], {"eelru-early": "max(1,floor(K/2))",
                                            "eelru-late": "2K"})
        self.assertEqual(options["lru"], {})
        self.assertTrue(all(row[3] for row in table))

    def check(self, rows, sizes, faults, space=None):
        self.assertEqual(rows.dtype, laplace.SIM_ROW)
        self.assertEqual(rows["size"].tolist(), sizes)
        self.assertEqual(rows["faults"].tolist(), faults)
        self.assertEqual(rows["miss_ratio"].tolist(), [f / len(ANOMALY) for f in faults])
        if space is not None:
            self.assertEqual(rows["space_time"].tolist(), space)

    def test_by_hand(self):
        r = laplace.simulate(ANOMALY, policies="fifo,lru,opt,ws,vmin", frames="1-5",
                             windows="all")
        self.assertEqual(list(r), ["fifo", "lru", "opt", "ws", "vmin"])
        # A fixed-space policy's space: sum of min(K, distinct so far).
        fixed_space = [12, 23, 33, 42, 48]
        self.check(r["fifo"], [1, 2, 3, 4, 5], [12, 12, 9, 10, 5], fixed_space)
        self.check(r["lru"], [1, 2, 3, 4, 5], [12, 12, 10, 8, 5], fixed_space)
        self.check(r["opt"], [1, 2, 3, 4, 5], [12, 9, 7, 6, 5], fixed_space)
        self.check(r["ws"], list(range(1, 8)), [12, 12, 10, 8, 7, 7, 5],
                   [12, 23, 33, 40, 44, 46, 48])
        self.check(r["vmin"], list(range(1, 8)), [12, 12, 10, 8, 7, 7, 5],
                   [12, 12, 16, 22, 26, 26, 38])

    def test_defaults_and_lists(self):
        # lru at pow2 (1 2 4, then D = 5); sizes ascending, each once.
        self.check(laplace.simulate(ANOMALY)["lru"], [1, 2, 4, 5], [12, 12, 8, 5])
        self.check(laplace.simulate(ANOMALY, frames=[4, "1-2", 4, 9])["lru"], [1, 2, 4, 9],
                   [12, 12, 8, 5])
        self.check(laplace.simulate(ANOMALY, policies=["ws"], windows=3)["ws"], [3], [10])

    def test_policy_named_twice(self):
        # One array a policy, its sizes each once, however often it is named.
        r = laplace.simulate(ANOMALY, policies="lru,fifo,lru", frames="3-4")
        self.assertEqual(list(r), ["lru", "fifo"])
        self.check(r["lru"], [3, 4], [10, 8])
        self.check(r["fifo"], [3, 4], [9, 10])
        self.check(laplace.simulate(ANOMALY, policies=["ws", "ws"], windows="2,3")["ws"], [2, 3],
                   [12, 10])

    def test_path_and_array_agree(self):
        path = os.path.join(self.dir.name, "s.bin")
        with open(path, "wb") as f:
            f.write(basic_bin([("rwiRWI"[i % 6], c) for i, c in enumerate(ANOMALY)]))
        a = laplace.simulate(path, policies="opt,clock,arc,segq,eelru", frames="all")
        b = laplace.simulate(np.array(ANOMALY, dtype=np.int32),
                             policies="opt,clock,arc,segq,eelru", frames="all")
        c = laplace.simulate(laplace.read_basic(path)["canonical"],
                             policies="opt,clock,arc,segq,eelru", frames="all")
        for name in a:
            self.assertEqual(a[name].tolist(), b[name].tolist())
            self.assertEqual(a[name].tolist(), c[name].tolist())

    def test_empty(self):
        r = laplace.simulate([], policies="lru,vmin")
        self.assertEqual(list(r), ["lru", "vmin"])
        self.assertEqual(len(r["lru"]), 0)
        self.assertEqual(len(r["vmin"]), 0)

    def test_errors(self):
        for kwargs, message in [
                ({"policies": "lru,belady"}, "--policy: unknown policy 'belady' (lru opt fifo "
                 "clock segq arc eelru ws vmin)"),
                ({"frames": "0"}, "--frames: a size must be at least 1, not 0"),
                ({"windows": "5-2"}, "--window: '5-2' runs backwards"),
                ({"frames": "1-100000000000"},
                 "--frames: more than 67108864 sizes named in '1-100000000000'")]:
            with self.assertRaises(laplace.Error) as caught:
                laplace.simulate(ANOMALY, **kwargs)
            self.assertEqual((str(caught.exception), caught.exception.status), (message, 1))
        with self.assertRaises(laplace.Error) as caught:
            laplace.simulate(os.path.join(self.dir.name, "absent"))
        self.assertEqual(caught.exception.status, 3)
        with self.assertRaises(ValueError):
            laplace.simulate([[1, 2]])
        with self.assertRaises(ValueError):
            laplace.simulate([1, -2])
        with self.assertRaises(TypeError):
            laplace.simulate([1.5])
        with self.assertRaises(TypeError):
            laplace.simulate(ANOMALY, frames=True)

    def test_sampled(self):
        # Miniature simulations: R = 1 (at least D pages) gives the exact
        # rows; lru keeps its exact curve; eelru is refused.
        exact = laplace.simulate(ANOMALY, policies="fifo,clock,segq,arc,lru", frames="all")
        for kwargs in ({"sample_pages": 5}, {"sample_rate": 1}):
            r = laplace.simulate(ANOMALY, policies="fifo,clock,segq,arc,lru", frames="all",
                                 **kwargs)
            for name in exact:
                self.assertEqual(r[name].tolist(), exact[name].tolist())
        # Rate 1/2 samples pages 1 and 3 of 1..5 (h < 2^63): fifo over
        # 1 3 1 1 3 at K' = nearbyint(K / 2) faults 2 times, estimated 4.
        r = laplace.simulate(ANOMALY, policies="fifo,lru", frames="1-3", sample_rate=0.5)
        self.check(r["fifo"], [1, 2, 3], [8, 8, 4])
        self.check(r["lru"], [1, 2, 3], [12, 12, 10])
        with self.assertRaises(laplace.Error) as caught:
            laplace.simulate(ANOMALY, policies="eelru", sample_pages=2)
        self.assertEqual(caught.exception.status, 1)
        for kwargs in ({"sample_rate": 0}, {"sample_rate": 1.5}, {"sample_pages": 0},
                       {"sample_rate": 0.5, "sample_pages": 2}):
            with self.assertRaises(ValueError):
                laplace.simulate(ANOMALY, **kwargs)

    def test_options_as_the_command(self):
        # The policies' options, laplace sim's --NAME VALUE: the same rows
        # as the program's CSV, value for value (miss_ratio to its 6
        # decimals).
        path = os.path.join(self.dir.name, "s.bin")
        pages = np.random.default_rng(7).integers(0, 40, 3000).tolist()
        with open(path, "wb") as f:
            f.write(basic_bin([("r", c) for c in pages]))
        args = ["--segq-lru-frames", "1", "--eelru-early", "2", "--eelru-late", "50",
                "--clock-load-bit", "1"]
        text = subprocess.run([PROGRAM, "sim", "-q", "-p", "segq,eelru,clock,lru",
                               "-m", "3-40", *args, path], stdout=subprocess.PIPE,
                              check=True).stdout.decode()
        options = {"segq-lru-frames": 1, "eelru-early": np.int64(2), "eelru-late": "50",
                   "clock-load-bit": 1}
        for source in (path, pages):
            r = laplace.simulate(source, policies="segq,eelru,clock,lru", frames="3-40",
                                 options=options)
            got = ["%s,%d,%d,%d,%.6f,%d" % (name, row["size"], len(pages), row["faults"],
                                             row["miss_ratio"], row["space_time"])
                   for name in r for row in r[name]]
            self.assertEqual(got, text.splitlines()[1:])
        default = laplace.simulate(pages, policies="segq", frames="3-40")["segq"]
        self.assertNotEqual(default.tolist(), r["segq"].tolist())

    def test_option_errors(self):
        for kwargs, message in [
                ({"options": {"eelru-early": 1}}, "--eelru-early applies only to eelru, and "
                 "--policy names none of them"),
                ({"policies": "segq", "frames": 2, "options": {"segq-lru-frames": 4}},
                 "--segq-lru-frames 4 must be below the frames K (2)"),
                ({"policies": "segq", "options": {"segq-lru-frames": "x"}},
                 "--segq-lru-frames must be a whole number, not 'x'"),
                ({"options": {"lru-frames": 1}}, "options: unknown option 'lru-frames' "
                 "(clock-load-bit segq-lru-frames eelru-early eelru-late)")]:
            with self.assertRaises(laplace.Error) as caught:
                laplace.simulate(ANOMALY, **kwargs)
            self.assertEqual((str(caught.exception), caught.exception.status), (message, 1))
        for bad in ("segq-lru-frames=1", [("segq-lru-frames", 1)], {1: 2},
                    {"segq-lru-frames": 1.5}, {"segq-lru-frames": True}):
            with self.assertRaises(TypeError):
                laplace.simulate(ANOMALY, policies="segq", options=bad)
        with self.assertRaises(ValueError):
            laplace.simulate(ANOMALY, policies="segq", options={"segq-lru-frames": "1,x=2"})

    def test_refusal_keeps_descriptors(self):
        # A refused run once closed descriptor 0, the caller's standard
        # input (its stream, never loaded, cleared as if it had spill
        # files 0 and 0).
        r, w = os.pipe()
        try:
            saved = os.dup(0)
        except OSError:  # run with no standard input
            saved = None
        os.dup2(r, 0)
        try:
            with self.assertRaises(laplace.Error):
                laplace.simulate([1, 2], policies="nope")
            os.write(w, b"x")
            self.assertEqual(os.read(0, 1), b"x")
        finally:
            if saved is None:
                os.close(0)
            else:
                os.dup2(saved, 0)
                os.close(saved)
            os.close(r)
            os.close(w)

    def test_many_sizes_filled_once(self):
        # 2^22 rows from 3 references: held once (numpy's array), not
        # gathered in C and copied.
        r = laplace.simulate([1, 2, 1], frames="1-4194304")["lru"]
        self.assertEqual(len(r), 4194304)
        self.assertEqual(r["size"][-1], 4194304)
        self.assertEqual(r["faults"][:3].tolist(), [3, 2, 2])
        self.assertEqual(r["space_time"][-1], 5)

    def test_interrupt(self):
        # Ctrl-C during a long run: KeyboardInterrupt within a second or
        # two, and the run stops rather than going on behind; so too
        # while a long list of sizes is read.
        pages = np.random.default_rng(1).integers(0, 100000, 2000000).astype(np.uint64)
        assert_interrupted(self, "laplace-simulate", lambda: laplace.simulate(
            pages, policies="fifo,clock,arc", frames="1-1000"))
        assert_interrupted(self, "laplace-simulate", lambda: laplace.simulate(
            pages, policies="fifo,clock,arc", frames=list(range(1, 300001))))


class Reduce(Scratch):
    """laplace.reduce: laplace reduce's output, in process."""

    def test_as_the_command(self):
        # A stream of writes and reads over 60 pages: the program's output
        # line for line, from the path and from read_basic's array.
        rng = np.random.default_rng(3)
        pairs = [("rw"[int(w)], int(c)) for w, c in zip(rng.integers(0, 2, 5000),
                                                          rng.integers(0, 60, 5000))]
        path = os.path.join(self.dir.name, "s.bin")
        with open(path, "wb") as f:
            f.write(basic_bin(pairs))
        lengths = []
        for method in ("sad", "olr"):
            for frames in (1, 8, 40):
                text = subprocess.run([PROGRAM, "reduce", "-q", "--method", method, "--frames",
                                       str(frames), path], stdout=subprocess.PIPE,
                                      check=True).stdout.decode()
                want = [(t, int(c, 16)) for t, c in (line.split() for line in text.splitlines())]
                for source in (path, laplace.read_basic(path)):
                    got = laplace.reduce(source, method, frames)
                    self.assertEqual(got.dtype, laplace.BASIC_REF)
                    self.assertEqual(as_pairs(got), want, (method, frames))
                lengths.append(len(want))
        self.assertLess(min(lengths), len(pairs))
        self.assertEqual(len(laplace.reduce(np.empty(0, laplace.BASIC_REF), "olr", 2)), 0)

    def test_errors(self):
        refs = np.array([(b"r", 1), (b"w", 2)], dtype=laplace.BASIC_REF)
        for args, message in [(("lru", 2), "--method must be sad or olr, not 'lru'")]:
            with self.assertRaises(laplace.Error) as caught:
                laplace.reduce(refs, *args)
            self.assertEqual((str(caught.exception), caught.exception.status), (message, 1))
        bad = np.array([(b"r", 1), (b"x", 2)], dtype=laplace.BASIC_REF)
        with self.assertRaises(laplace.Error) as caught:
            laplace.reduce(bad, "olr", 1)
        self.assertEqual((str(caught.exception), caught.exception.status),
                         ("lp_reduce: refs[1]: type: 120 is not one of r w i R W I", 1))
        with self.assertRaises(laplace.Error) as caught:
            laplace.reduce(os.path.join(self.dir.name, "absent"), "olr", 1)
        self.assertEqual(caught.exception.status, 3)
        for frames in (0, 1.5, True, None):
            with self.assertRaises(ValueError):
                laplace.reduce(refs, "olr", frames)
        with self.assertRaises(TypeError):
            laplace.reduce([1, 2], "olr", 1)
        with self.assertRaises(TypeError):
            laplace.reduce(refs, None, 1)


class Study(Scratch):
    """laplace.study: a study run, its table as a structured array."""

    def test_runs_and_reads(self):
        os.environ["LAPLACE_PROGRAM"] = PROGRAM
        cap = os.path.join(self.dir.name, "cap")
        subprocess.run([PROGRAM, "gen", "-q", "--refs", "20000", "-o", cap], check=True)
        path = self.file("s.yaml", "captures: {c: {reference: cap.ref, kernel: cap.kern}}\n"
                         "sim: {policies: [lru, opt], frames: [8, 64]}\n"
                         "schedule: {policy: [random], seed: [7], memory: [16, 128]}\n")
        t = laplace.study(path, jobs=2)
        self.assertEqual(t.dtype, laplace.STUDY_ROW)
        self.assertEqual(t["experiment"].tolist(), ["sim"] * 4 + ["schedule"] * 2)
        self.assertEqual(t["policy"].tolist(), ["lru", "lru", "opt", "opt", "random", "random"])
        self.assertEqual(t["size"].tolist(), [8, 64, 8, 64, 16, 128])
        self.assertEqual(t["seed"].tolist(), [0, 0, 0, 0, 7, 7])
        self.assertEqual(t["quantum"].tolist(), [-1] * 4 + [10000] * 2)
        self.assertTrue(np.isnan(t["utilization"][0]) and np.isnan(t["miss_ratio"][5]))
        sim = subprocess.run([PROGRAM, "sim", "-p", "lru,opt", "-m", "8,64", cap + ".ref",
                              cap + ".kern"], stdout=subprocess.PIPE, check=True).stdout
        faults = [int(line.split(",")[3]) for line in sim.decode().splitlines()[1:]]
        self.assertEqual(t["faults"][:4].tolist(), faults)
        again = laplace.study(os.path.join(self.dir.name, "s.d"))
        self.assertEqual(again.tobytes(), t.tobytes())
        with self.assertRaises(laplace.Error) as caught:
            laplace.study(self.file("bad.yaml", "captures: {}\n"))
        self.assertEqual(caught.exception.status, 2)


if __name__ == "__main__":
    unittest.main(verbosity=1 if sys.stdout.isatty() else 2)
