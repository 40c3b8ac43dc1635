"""Extra arrays for multi-hop variants: BM25 of the question without speaker names, and the
query vector of the question with the speaker's name replaced by a pronoun."""
import pickle
import re
import sys

sys.path.insert(0, '.'); sys.path.insert(0, 'benchmarks/locomo_offline')
from mhv import D, named
from vaultmem.recall.question import content_query

from benchmarks.common import WORK, CachedEmbedder
from vaultmem.index.embed import NoEmbedder
from vaultmem.vault import Vault

emb = CachedEmbedder()
out = {}
for (sh, conv), d in D.items():
    v = Vault(WORK / 'locomo' / sh / conv, NoEmbedder()); src = v.sources()
    n = len(src.universe)
    rows = []
    for q in d['qs']:
        nm = named(d, q)
        text = q.get('text', q['q'])
        t_no, t_pr = text, text
        for s in nm:
            f = s.split()[0]
            t_no = re.sub(rf"\b{re.escape(f)}(?:'s|’s)?\b", " ", t_no)
            t_pr = re.sub(rf"\b{re.escape(f)}(?:'s|’s)\b", "their", t_pr)
            t_pr = re.sub(rf"\b{re.escape(f)}\b", "they" if len(nm) == 1 else "", t_pr)
        b_no = src.bm25.score_all(content_query(t_no), src.index, n)
        rows.append(dict(t_no=t_no, t_pr=t_pr, bm25_no=b_no))
    qv = emb.embed([r['t_pr'] for r in rows] + [r['t_no'] for r in rows])
    k = len(rows)
    for j, r in enumerate(rows):
        r['vec_pr'] = d['vecs'] @ qv[j]; r['vec_no'] = d['vecs'] @ qv[k + j]
    out[(sh, conv)] = rows
    v.close(); print(sh, conv, flush=True)
pickle.dump(out, open(WORK / 'exp' / 'extra.pkl', 'wb'))
