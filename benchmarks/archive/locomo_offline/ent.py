import json
import re
import sys

sys.path.insert(0, 'benchmarks/locomo_offline'); sys.path.insert(0, '.')
from ev import WORK, D, evaluate, fmt, p2, z

from benchmarks.locomo import DEFAULT_DATA
from vaultmem.index.embed import NoEmbedder
from vaultmem.vault import Vault

CAP = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b")
samples = json.loads(DEFAULT_DATA.read_text())
vaults = {(sh, s['sample_id']): Vault(WORK / 'locomo' / sh / s['sample_id'], NoEmbedder()) for sh in ('linked',) for s in samples}
def pent(d, q, lam=0.1, m=5, key=None, **kw):
    order = p2(d, q, **kw)
    top = order[:m]
    qwords = {w.lower() for w in re.findall(r"\w+", q['q'])}
    ents = {}
    for i in top:
        text = d['bodies'][i].split('\n')[0]
        text = text.split(':', 1)[1] if ':' in text else text
        for e in CAP.findall(text):
            if e.lower() not in qwords: ents[e] = ents.get(e, 0) + 1
    if not ents: return order
    v = vaults[key]; src = v.sources()
    b2 = src.bm25.score_all(" ".join(ents), src.index, len(src.universe))
    extra = lam * z(b2)
    return p2(d, q, extra=extra, **kw)
def wrap(d, q, **kw):
    key = next(k for k, dd in D.items() if dd is d)
    return pent(d, q, key=key, **kw)
for lam in (0.05, 0.1, 0.2):
    print(lam, fmt(evaluate('linked', fn=wrap, lam=lam, w=0.3, smooth=0.2)))
