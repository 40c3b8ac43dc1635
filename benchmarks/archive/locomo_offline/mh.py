"""Multi-hop variants offline (issue 18): the recall pipeline of main over harness.py's arrays
(time boost included), evaluated on the 3/2 split (A = conv-26/30/41, B = conv-42/43)."""
import pickle
import sys

sys.path.insert(0, '.')
import numpy as np

from benchmarks.common import WORK

D = pickle.load(open(WORK / 'exp' / 'arrays.pkl', 'rb'))
CATS = {1: 'mh', 2: 'temp', 3: 'open', 4: 'single', 5: 'adv'}
A = ('conv-26', 'conv-30', 'conv-41')
B = ('conv-42', 'conv-43')


def z(x):
    sd = x.std()
    return (x - x.mean()) / (6 * sd) if sd > 1e-12 else np.zeros_like(x)


def base(d, q, w=0.3, smooth=0.2, vec=None, bm25=None):
    """fused + context, as recall._retrieve computes it."""
    fused = w * z(q['bm25'] if bm25 is None else bm25) + (1 - w) * z(q['vec'] if vec is None else vec)
    nb = np.array([max((fused[j] for j in d['adj'][i]), default=0.0) for i in range(len(fused))])
    return fused + smooth * np.maximum(nb, 0), fused


def finish(d, q, tot, cand=100, seeds=5, gw=0.3, decay=0.5, extra=None):
    """Candidates, time boost, graph bonus, ranking (list of positions)."""
    idx = np.argsort(-tot)[:cand]
    scored = {int(i): float(tot[i]) for i in idx}
    inside = q.get('inside') or []
    if inside and len(inside) <= cand:
        for i in inside: scored.setdefault(i, float(tot[i]))
    if extra:
        for i, v in extra.items(): scored[i] = scored.get(i, float(tot[i])) + v
    top = sorted(scored, key=lambda i: -scored[i])[:seeds]
    bonus = {}
    if top and scored[top[0]] > 0:
        best = scored[top[0]]
        S = {i: scored[i] for i in top if scored[i] >= 0.5 * best}
        for s, val in S.items():
            for j in d['adj'][s]:
                if j in S: continue
                if val * decay > bonus.get(j, 0): bonus[j] = val * decay
    final = dict(scored)
    for j, b in bonus.items():
        final[j] = final.get(j, float(tot[j])) + gw * b
    ins = set(inside)
    if ins:
        for j in final:
            if j in ins: final[j] += 1.0
    return sorted(final, key=lambda i: -final[i])


def pipeline(d, q, **kw):
    tot, _ = base(d, q, **{k: kw.pop(k) for k in ('w', 'smooth') if k in kw})
    return finish(d, q, tot, **kw)


def evaluate(shape, fn=pipeline, convs=None, k=10, cats=False, **kw):
    rows = []
    for (sh, conv), d in D.items():
        if sh != shape or (convs and conv not in convs): continue
        for q in d['qs']:
            order = fn(d, q, **kw)
            ranked = {d['ids'][i] for i in order[:k]}
            ev = set(q['ev'])
            rows.append((q['cat'], len(ev & ranked) / len(ev)))
    out = {'all': 100 * np.mean([r[1] for r in rows])}
    for c, n in CATS.items():
        if cats or c == 1:
            out[n] = 100 * np.mean([r[1] for r in rows if r[0] == c])
    return out


def report(fn=pipeline, shapes=('flat', 'linked'), **kw):
    parts = []
    for sh in shapes:
        for name, cv in (('A', A), ('B', B)):
            o = evaluate(sh, fn, cv, **kw)
            parts.append(f"{sh[0]}{name} {o['all']:.1f}/{o['mh']:.1f}")
    return '  '.join(parts)


if __name__ == '__main__':
    for sh in ('flat', 'linked'):
        o = evaluate(sh, cats=True)
        print(sh, ' '.join(f'{k} {v:.1f}' for k, v in o.items()))
    print(report())
