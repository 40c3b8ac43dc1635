import pickle
import sys

sys.path.insert(0, '.')
import numpy as np

from benchmarks.common import WORK

D = pickle.load(open(WORK / 'exp' / 'arrays.pkl', 'rb'))
CATS = {1: 'multi-hop', 2: 'temporal', 3: 'open', 4: 'single', 5: 'adv'}

def z(x):
    sd = x.std()
    return (x - x.mean()) / (6 * sd) if sd > 1e-12 else np.zeros_like(x)

def pipeline(d, q, w=0.25, seeds=5, gw=0.3, decay=0.5, cand=100, vec=None, smooth=0.0, rel=0.5, depth=1, extra=None):
    b = w * z(q['bm25']); v = (1 - w) * z(q['vec'] if vec is None else vec)
    tot = b + v
    if extra is not None: tot = tot + extra
    if smooth:
        nb = np.array([max((tot[j] for j in d['adj'][i]), default=0.0) for i in range(len(tot))])
        tot = tot + smooth * np.maximum(nb, 0)
    idx = np.argsort(-tot)[:cand]
    final = {int(i): float(tot[i]) for i in idx}
    if seeds and gw:
        top = idx[:seeds]; best = tot[top[0]]
        if best > 0:
            S = {int(i): float(tot[i]) for i in top if tot[i] >= rel * best}
            bonus = {}
            frontier = dict(S)
            for hop in range(1, depth + 1):
                nxt = {}
                for s, val in frontier.items():
                    for j in d['adj'][s]:
                        if j in S: continue
                        vv = val * decay
                        if vv > bonus.get(j, 0): bonus[j] = vv; nxt[j] = vv
                frontier = {j: S.get(j, 0) or v0 / decay * 1 for j, v0 in nxt.items()} if False else {j: v0 for j, v0 in nxt.items()}
            for j, bb in bonus.items():
                final[j] = float(tot[j]) + gw * bb
    order = sorted(final, key=lambda i: -final[i])
    return order

def evaluate(shape, fn=pipeline, convs=None, ks=(10,), **kw):
    rows = []
    for (sh, conv), d in D.items():
        if sh != shape or (convs and conv not in convs): continue
        for qi, q in enumerate(d['qs']):
            order = fn(d, q, **kw)
            ranked = [d['ids'][i] for i in order[:50]]
            ev = set(q['ev'])
            rows.append((q['cat'], conv, {k: len(ev & set(ranked[:k])) / len(ev) for k in (5, 10, 25, 50)}))
    out = {'all': 100 * np.mean([r[2][10] for r in rows])}
    for c, n in CATS.items():
        out[n] = 100 * np.mean([r[2][10] for r in rows if r[0] == c])
    return out

def fmt(o): return ' '.join(f"{k} {v:.1f}" for k, v in o.items())

import pickle as _p

B = _p.load(open(WORK/'exp'/'bm25strip.pkl','rb'))
for k in D:
    for q, b in zip(D[k]['qs'], B[k]): q['bm25s']=b

def p2(d, q, prf=0.0, prf_m=5, div=0.0, **kw):
    q = dict(q); q['bm25'] = q['bm25s']
    if prf:
        w = kw.get('w', 0.25)
        tot = w * z(q['bm25']) + (1 - w) * z(q['vec'])
        top = np.argsort(-tot)[:prf_m]
        qv = q['qvec'] + prf * d['vecs'][top].mean(0)
        qv /= np.linalg.norm(qv)
        kw['vec'] = d['vecs'] @ qv
    order = pipeline(d, q, **kw)
    if div:
        # greedy: penalise notes whose session already has selected notes
        ses = d.setdefault('ses', [next((j for j in d['adj'][i] if d['ids'][j].startswith('S')), -1) for i in range(len(d['ids']))])
        w = kw.get('w', 0.25)
        sc = {i: r for r, i in enumerate(order)}
        count = {}
        out = []
        rest = list(order)
        while rest and len(out) < 50:
            best = min(rest, key=lambda i: sc[i] + div * count.get(ses[i], 0))
            rest.remove(best); out.append(best); count[ses[best]] = count.get(ses[best], 0) + 1
        order = out
    return order
