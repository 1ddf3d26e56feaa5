# Random small streams reduced by laplace and by tests/reduce-model.py
# (policies.md §5 read apart from the C code): the same bytes, and in the
# model's own LRU every memory of m >= K pages has the input's behaviour
# sequence, dirt included, on both reductions; OLR is never longer than SAD.
import os
import random
import subprocess
import sys

import importlib.util
spec = importlib.util.spec_from_file_location(
    'model', os.path.join(os.environ['TESTLIB'], '..', 'reduce-model.py'))
model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model)

rng = random.Random(35)
streams = int(sys.argv[1])
same = differ = behaviour_ok = shorter = lru_same = lru_runs = 0
for case in range(streams):
    alphabet = rng.randint(1, 8)
    # Canonical numbers small, or far apart (as hand-made streams have them).
    if case % 5 == 4:
        pages = [rng.randrange(1 << 60) for _ in range(alphabet)]
    else:
        pages = list(range(alphabet))
    n = rng.randint(0, 40) if case % 10 else rng.randint(100, 300)
    types = rng.choice(['r', 'rw', 'rwi', 'rwiRWI', 'rwW', 'rR'])
    refs = [(rng.choice(types), rng.choice(pages)) for _ in range(n)]
    k = rng.randint(1, 6)
    with open('in.txt', 'w') as f:
        f.writelines('%s %x\n' % r for r in refs)
    outs = {}
    for method in ('sad', 'olr'):
        want = model.sad(refs, k) if method == 'sad' else model.olr(refs, k)
        text = ''.join('%s %x\n' % r for r in want)
        stderr = 'references %d kept %d\n' % (n, len(want))
        got = subprocess.run(['laplace', 'reduce', '--method', method, '--frames', str(k),
                              'in.txt'], capture_output=True, text=True)
        if got.returncode == 0 and got.stdout == text and got.stderr == stderr:
            same += 1
        else:
            differ += 1
            print('differs: %s K=%d %s' % (method, k, ' '.join('%s %x' % r for r in refs)))
            print('  laplace: %r %r' % (got.stdout, got.stderr))
            print('  model:   %r' % text)
        outs[method] = want
    distinct = len({p for _, p in refs})
    ok = all(model.behaviour(outs[m], size) == model.behaviour(refs, size)
             for m in outs for size in range(k, distinct + 2))
    behaviour_ok += ok
    if not ok:
        print('behaviour differs: K=%d %s' % (k, ' '.join('%s %x' % r for r in refs)))
    shorter += len(outs['olr']) <= len(outs['sad'])
    # The model's LRU is laplace lru's (legacy-formats.md §4), now and then.
    if case % 10 == 0 and n:
        for size in (k, distinct):
            got = subprocess.run(['laplace', 'lru', '--frames', str(size), 'in.txt'],
                                 capture_output=True, text=True).stdout
            lru_same += got == ''.join(l + '\n' for l in model.behaviour(refs, size))
            lru_runs += 1
print('%d of %d reductions the model\'s bytes, %d not' % (same, 2 * streams, differ))
print('%d of %d streams: the same behaviour at every m >= K on both' % (behaviour_ok, streams))
print('%d of %d streams: OLR no longer than SAD' % (shorter, streams))
print('%d of %d laplace lru runs the model\'s behaviour sequence' % (lru_same, lru_runs))
