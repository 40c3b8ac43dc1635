"""Cached score arrays of every LoCoMo question; fast variant evaluation in numpy."""
import json
import pickle
import sys

sys.path.insert(0, '.')
import numpy as np

from benchmarks.common import WORK, CachedEmbedder
from benchmarks.locomo import DEFAULT_DATA, Vault, evidence_of
from vaultmem.index.graph import neighbourhood
from vaultmem.recall import pipeline as R

CACHE = WORK / 'exp' / 'arrays.pkl'

def build():
    samples = json.loads(DEFAULT_DATA.read_text())
    emb = CachedEmbedder()
    data = {}
    for shape in ('flat', 'linked'):
        for s in samples:
            v = Vault(WORK / 'locomo' / shape / s['sample_id'], emb)
            src = v.sources()
            ids = [src.records[p].key for p in src.universe]
            adj = [[src.index[q] for q in neighbourhood(src.graph, p, 1) if q != p] for p in src.universe]
            vi = v.vectors()
            vecs = np.zeros((len(ids), vi.matrix.shape[1]), np.float32)
            for j, p in enumerate(vi.paths):
                vecs[src.index[p]] = vi.matrix[vi._starts[j]]
            qs = []
            known = set(ids)
            for qa in s['qa']:
                ev = evidence_of(qa, known)
                if not ev: continue
                text, span, inside = R.time_query(src, str(qa['question']), R.Options(), R.now_utc())
                b, vv, qv = R.raw_scores(src, text, 'hybrid')
                tin = sorted(src.index[p] for p in inside if p in src.index)
                qs.append(dict(q=qa['question'], cat=qa['category'], ev=ev, bm25=b.copy(), vec=vv.copy(), qvec=qv.copy(),
                               text=text, inside=tin))
            data[(shape, s['sample_id'])] = dict(ids=ids, adj=adj, vecs=vecs, qs=qs,
                bodies=[v.body(p) for p in src.universe], titles=[src.records[p].title for p in src.universe])
            v.close()
            print(shape, s['sample_id'], len(qs), flush=True)
    pickle.dump(data, open(CACHE, 'wb'))

if __name__ == '__main__':
    build()
