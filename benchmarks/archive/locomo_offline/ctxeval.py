import sys

sys.path.insert(0, 'benchmarks/locomo_offline'); sys.path.insert(0, '.')
import numpy as np
from ctx_texts import ctx_texts, samples
from ev import D, evaluate, fmt, p2

from benchmarks.common import CachedEmbedder

emb = CachedEmbedder()
for s in samples:
    t = ctx_texts(s, 'prev')
    for sh in ('flat', 'linked'):
        d = D[(sh, s['sample_id'])]
        M = d['vecs'].copy()
        ids = [i for i, k in enumerate(d['ids']) if k in t]
        M[ids] = emb.embed([t[d['ids'][i]] for i in ids])
        d['cvecs'] = M
def pc(d, q, mix='ctx', **kw):
    own = q['vec']; c = d['cvecs'] @ q['qvec']
    v = {'ctx': c, 'max': np.maximum(own, c), 'mean': (own + c) / 2}[mix]
    return p2(d, q, vec=v, **kw)
for sh in ('flat', 'linked'):
    for mix in ('ctx', 'max', 'mean'):
        for sm in (0.0, 0.2):
            print(sh, mix, 'smooth', sm, fmt(evaluate(sh, fn=pc, mix=mix, w=0.3, smooth=sm)))
    print(sh, 'no ctx', fmt(evaluate(sh, fn=p2, w=0.3, smooth=0.2)))
