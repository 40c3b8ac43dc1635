import sys

sys.path.insert(0, 'benchmarks/locomo_offline')
import numpy as np
from ev import D, evaluate, fmt, p2

for d in D.values():
    d['qmark'] = np.array([1.0 if body.strip().split('\n')[0].rstrip().endswith('?') else 0.0 for body in d['bodies']])
def pq(d, q, lam=0.05, **kw):
    return p2(d, q, extra=-lam * d['qmark'], **kw)
for lam in (0.03, 0.06, 0.1):
    for sh in ('flat', 'linked'):
        print(lam, sh, fmt(evaluate(sh, fn=pq, lam=lam, w=0.3, smooth=0.2 if sh == 'linked' else 0)))
