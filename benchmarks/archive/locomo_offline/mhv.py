"""Variants for mh.py (run: python benchmarks/locomo_offline/mhv.py NAME)."""
import re
import sys

sys.path.insert(0, 'benchmarks/locomo_offline')
import numpy as np
from mh import WORK, D, base, evaluate, finish, pipeline, report, z

SPK = re.compile(r"^\s*([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}):\s")
WORD = re.compile(r"[^\W_]+", re.UNICODE)


def speakers(d):
    if 'spk' not in d:
        d['spk'] = []
        for b in d['bodies']:
            m = SPK.match(b)
            d['spk'].append(m.group(1) if m else None)
        d['names'] = sorted({s for s in d['spk'] if s})
    return d['spk']


def named(d, q):
    speakers(d)
    words = set(WORD.findall(q['q']))
    return {s for s in d['names'] if s.split()[0] in words or s in q['q']}


def spk_lift(d, q, s=0.05, only_one=True, **kw):
    tot, _ = base(d, q, **{k: kw.pop(k) for k in ('w', 'smooth') if k in kw})
    nm = named(d, q)
    if nm and (len(nm) == 1 or not only_one):
        mask = np.array([sp in nm for sp in speakers(d)])
        tot = tot + s * mask
    return finish(d, q, tot, **kw)


if __name__ == '__main__':
    what = sys.argv[1]
    if what == 'spk':
        for s in (0.02, 0.05, 0.1, 0.2):
            for oo in (True, False):
                print('spk', s, oo, report(spk_lift, s=s, only_one=oo), flush=True)


def ctx_dedupe(d, q, pen=3, **kw):
    """A note lifted mostly by a neighbour's context drops ``pen`` ranks when that neighbour ranks above it."""
    w, sm = kw.pop('w', 0.3), kw.pop('smooth', 0.2)
    tot, fused = base(d, q, w=w, smooth=sm)
    order = finish(d, q, tot, **kw)
    ctx = tot - fused
    pos = {i: r for r, i in enumerate(order)}
    def key(i):
        nbs = d['adj'][i]
        if not nbs or ctx[i] <= max(fused[i], 0): return pos[i]
        nb = max(nbs, key=lambda j: fused[j])
        return pos[i] + (pen if pos.get(nb, 10**6) < pos[i] else 0)
    return sorted(order, key=key)


def ctx_scaled(d, q, **kw):
    """Context lift only from neighbours by the same speaker (a reply does not inherit)."""
    w, sm = kw.pop('w', 0.3), kw.pop('smooth', 0.2)
    spk = speakers(d)
    fused = w * z(q['bm25']) + (1 - w) * z(q['vec'])
    nb = np.array([max((fused[j] for j in d['adj'][i] if spk[j] is None or spk[j] == spk[i]), default=0.0) for i in range(len(fused))])
    tot = fused + sm * np.maximum(nb, 0)
    return finish(d, q, tot, **kw)
if __name__ == '__main__' and what == 'ctx':
    print('base', report())
    for pen in (2, 5, 10):
        print('dedupe', pen, report(ctx_dedupe, pen=pen), flush=True)
    print('ctx same speaker', report(ctx_scaled))

NOTPL = {'is', 'was', 'does', 'has', 'this', 'his', 'its', 'us', 'yes', 'as', 'always'}


def listy(text):
    t = text.lower()
    if re.search(r"\b(both|in common|all the|ways|things|some|each)\b", t): return True
    if re.match(r"\s*(what|which)\b", t):
        for w in re.findall(r"[a-z'-]+", t)[1:4]:
            if len(w) > 3 and w.endswith('s') and not w.endswith("'s") and not w.endswith('ss') and w not in NOTPL: return True
    return False


def gated(inner):
    def fn(d, q, **kw):
        if listy(q['q']): return inner(d, q, **kw)
        kw = {k: v for k, v in kw.items() if k in ('w', 'smooth', 'cand', 'seeds', 'gw', 'decay')}
        return pipeline(d, q, **kw)
    return fn


def session_of(d):
    if 'ses' not in d:
        d['ses'] = [next((d['ids'][j] for j in d['adj'][i] if d['ids'][j].startswith('S')), d['ids'][i].split(':')[0]) for i in range(len(d['ids']))]
    return d['ses']


def diverse(d, q, div=2.0, top=50, **kw):
    order = pipeline(d, q, **kw)
    ses = session_of(d)
    sc = {i: r for r, i in enumerate(order)}
    count, out, rest = {}, [], list(order[:top])
    while rest:
        best = min(rest, key=lambda i: sc[i] + div * count.get(ses[i], 0))
        rest.remove(best); out.append(best); count[ses[best]] = count.get(ses[best], 0) + 1
    return out + order[top:]


if __name__ == '__main__' and what == 'list':
    for s in (0.05, 0.1, 0.2, 0.3):
        print('list spk', s, report(gated(spk_lift), s=s, only_one=False), flush=True)
    for div in (1, 2, 4):
        print('list div', div, report(gated(diverse), div=div), flush=True)


def centroid(d, q, lam=0.1, m=5, other=True, spk_only=True, s=0.0, **kw):
    w, sm = kw.pop('w', 0.3), kw.pop('smooth', 0.2)
    tot, fused = base(d, q, w=w, smooth=sm)
    nm = named(d, q); spk = speakers(d)
    if s and nm:
        tot = tot + s * np.array([sp in nm for sp in spk])
    order = finish(d, q, tot, **kw)
    turns = [i for i in order if not d['ids'][i].startswith('S') and (not spk_only or not nm or spk[i] in nm)][:m]
    c = d['vecs'][turns].mean(0); c /= np.linalg.norm(c) + 1e-12
    sec = z(d['vecs'] @ c)
    if other:
        ses = session_of(d); hs = {ses[i] for i in turns}
        sec = sec * np.array([ses[i] not in hs for i in range(len(ses))])
    if spk_only and nm:
        sec = sec * np.array([sp in nm for sp in spk])
    return finish(d, q, tot + lam * np.maximum(sec, 0), **kw)


if __name__ == '__main__' and what == 'cent':
    for lam in (0.1, 0.2, 0.4):
        for m in (3, 5):
            for other in (True, False):
                print('cent all', lam, m, other, report(centroid, lam=lam, m=m, other=other), flush=True)
    for lam in (0.1, 0.2, 0.4):
        print('cent list', lam, report(gated(centroid), lam=lam, m=5, s=0.1), flush=True)

import pickle as _pk

try:
    X = _pk.load(open(WORK / 'exp' / 'extra.pkl', 'rb'))
    for key, rows in X.items():
        for q, r in zip(D[key]['qs'], rows): q.update(r)
except FileNotFoundError:
    pass


def noname(d, q, s=0.1, bm='bm25_no', vec='vec', mix=1.0, gate=None, **kw):
    nm = named(d, q)
    if not nm or (gate and not gate(q['q'])):
        return pipeline(d, q, **kw)
    w, sm = kw.pop('w', 0.3), kw.pop('smooth', 0.2)
    v = q[vec] if mix == 1.0 else mix * q[vec] + (1 - mix) * q['vec']
    tot, _ = base(d, q, w=w, smooth=sm, bm25=q[bm], vec=v)
    tot = tot + s * np.array([sp in nm for sp in speakers(d)])
    return finish(d, q, tot, **kw)


if __name__ == '__main__' and what == 'noname':
    for bm in ('bm25', 'bm25_no'):
        for vec in ('vec', 'vec_pr', 'vec_no'):
            for s in (0.0, 0.1, 0.2):
                print(bm, vec, s, report(noname, s=s, bm=bm, vec=vec), flush=True)


def subject(d, q, s=0.1, M=20, minc=2, vec='vec_pr', bm='bm25', cand_only=True, **kw):
    """As the package does it: speakers found among the first round's top M candidates."""
    w, sm = kw.pop('w', 0.3), kw.pop('smooth', 0.2)
    tot, _ = base(d, q, w=w, smooth=sm)
    first = np.argsort(-tot)[:M]
    spk = speakers(d)
    words = set(WORD.findall(q['q']))
    cnt = {}
    for i in first:
        if spk[i] and spk[i].split()[0] in words: cnt[spk[i]] = cnt.get(spk[i], 0) + 1
    nm = {x for x, c in cnt.items() if c >= minc}
    if not nm:
        return finish(d, q, tot, **kw)
    tot, _ = base(d, q, w=w, smooth=sm, bm25=q[bm], vec=q[vec])
    mask = np.array([sp in nm for sp in spk], dtype=float)
    if cand_only:
        keep = np.zeros(len(tot)); keep[np.argsort(-tot)[:kw.get('cand', 100)]] = 1; mask *= keep
    return finish(d, q, tot + s * mask, **kw)


if __name__ == '__main__' and what == 'subject':
    for vec in ('vec_pr', 'vec_no'):
        for s in (0.0, 0.05, 0.1, 0.15, 0.2):
            print(vec, s, report(subject, s=s, vec=vec), flush=True)
    print('not cand only', report(subject, s=0.1, cand_only=False))
    print('minc 1', report(subject, s=0.1, minc=1))
    print('M 10', report(subject, s=0.1, M=10))


def subject_list(d, q, s=0.05, sl=0.1, **kw):
    return subject(d, q, s=s + (sl if listy(q['q']) else 0.0), **kw)


def full(fn, **kw):
    return '  '.join(f"{sh[0]} {evaluate(sh, fn, **kw)['all']:.1f}/{evaluate(sh, fn, **kw)['mh']:.1f}" for sh in ('flat', 'linked'))


if __name__ == '__main__' and what == 'sl':
    for s in (0.05, 0.1):
        for sl in (0.0, 0.05, 0.1, 0.2, 0.3):
            print(s, sl, report(subject_list, s=s, sl=sl), '| all5', full(subject_list, s=s, sl=sl), flush=True)


if __name__ == '__main__' and what == 'ontop':
    S = dict(s=0.05, sl=0.2)
    print('subject', report(subject_list, **S), '| all5', full(subject_list, **S), flush=True)
    print('subject bm25_no', report(subject_list, bm='bm25_no', **S), '| all5', full(subject_list, bm='bm25_no', **S), flush=True)
    print('subject vec_no', report(subject_list, vec='vec_no', **S), '| all5', full(subject_list, vec='vec_no', **S), flush=True)
    for sm in (0.1, 0.3):
        print('subject smooth', sm, report(subject_list, smooth=sm, **S), flush=True)
    for seeds in (3, 10):
        print('subject seeds', seeds, report(subject_list, seeds=seeds, **S), flush=True)
    for w in (0.25, 0.35):
        print('subject w', w, report(subject_list, w=w, **S), flush=True)


def subject_cent(d, q, lam=0.2, m=5, **kw):
    """subject_list, then for list questions a vector round from the centroid of the named speaker's top hits."""
    order = subject_list(d, q, **kw)
    if not listy(q['q']): return order
    nm = named(d, q); spk = speakers(d)
    turns = [i for i in order if not d['ids'][i].startswith('S') and (not nm or spk[i] in nm)][:m]
    c = d['vecs'][turns].mean(0); c /= np.linalg.norm(c) + 1e-12
    sec = np.maximum(z(d['vecs'] @ c), 0) * (np.array([sp in nm for sp in spk]) if nm else 1)
    pos = {i: r for r, i in enumerate(order)}
    sc = {i: -pos[i] / 100 + lam * sec[i] for i in order}
    return sorted(order, key=lambda i: -sc[i])


if __name__ == '__main__' and what == 'scent':
    for lam in (0.05, 0.1, 0.2):
        print('subject+cent', lam, report(subject_cent, lam=lam, s=0.05, sl=0.2), flush=True)


def two_names(d, q, s=0.05, sl=0.2, s2=0.25, mode='interleave', **kw):
    """Questions naming two speakers: one ranking per speaker (that speaker's notes lifted), interleaved."""
    nm = named(d, q)
    if len(nm) != 2:
        return subject_list(d, q, s=s, sl=sl, **kw)
    w, sm = kw.pop('w', 0.3), kw.pop('smooth', 0.2)
    tot, _ = base(d, q, w=w, smooth=sm, bm25=q['bm25'], vec=q['vec_pr'])
    spk = speakers(d)
    orders = []
    for n in sorted(nm):
        orders.append(finish(d, q, tot + s2 * np.array([sp == n for sp in spk]), **kw))
    out, seen = [], set()
    for pair in zip(*orders):
        for i in pair:
            if i not in seen: seen.add(i); out.append(i)
    return out


if __name__ == '__main__' and what == 'two':
    print('kept', report(subject_list, s=0.05, sl=0.2), '| all5', full(subject_list, s=0.05, sl=0.2))
    for s2 in (0.1, 0.25, 0.5):
        print('two', s2, report(two_names, s2=s2), '| all5', full(two_names, s2=s2), flush=True)


_V = {}


def _bm25(key):
    if key not in _V:
        from vaultmem.index.embed import NoEmbedder
        from vaultmem.vault import Vault
        v = Vault(WORK / 'locomo' / key[0] / key[1], NoEmbedder()); _V[key] = (v, v.sources())
    return _V[key][1]


def terms_round(d, q, lam=0.1, m=5, T=8, key=None, **kw):
    """On top of the kept stage: the content terms of the named speaker's top m hits (not in the
    question, rarest first, T of them) as a second BM25 query, added to that speaker's notes."""
    order = subject_list(d, q, s=0.05, sl=0.2, **kw)
    nm = named(d, q)
    if not nm: return order
    src = _bm25(key); spk = speakers(d)
    if 'df' not in d:
        import collections
        df = collections.Counter()
        d['terms'] = [set(src.bm25.terms(b)) for b in d['bodies']]
        for t in d['terms']: df.update(t)
        d['df'] = df
    qt = set(src.bm25.terms(q['q'])) | {t for n in nm for t in src.bm25.terms(n)}
    top = [i for i in order if spk[i] in nm][:m]
    cand = {t for i in top for t in d['terms'][i]} - qt
    cand = sorted(cand, key=lambda t: d['df'][t])[:T]
    if not cand: return order
    b2 = src.bm25.score_all(' '.join(cand), src.index, len(src.universe))
    extra = lam * np.maximum(z(b2), 0) * np.array([sp in nm for sp in spk])
    w, sm = kw.get('w', 0.3), kw.get('smooth', 0.2)
    tot, _ = base(d, q, w=w, smooth=sm, bm25=q['bm25'], vec=q['vec_pr'])
    lift = (0.05 + (0.2 if listy(q['q']) else 0)) * np.array([sp in nm for sp in spk])
    return finish(d, q, tot + lift + extra, **{k: v for k, v in kw.items() if k not in ('w', 'smooth')})


def _keyed(fn):
    def f(d, q, **kw):
        key = next(k for k, dd in D.items() if dd is d)
        return fn(d, q, key=key, **kw)
    return f


if __name__ == '__main__' and what == 'terms':
    for lam in (0.05, 0.1, 0.2):
        for T in (5, 10):
            print('terms', lam, T, report(_keyed(terms_round), lam=lam, T=T), flush=True)
