"""Pseudo-relevance feedback on SciFact train (offline): Rocchio on the query vector from the top-k
fused hits, and a 'cluster' feature (similarity to the mean of the top-k notes' vectors).
    python benchmarks/learned/prf.py
"""
import sys; sys.path.insert(0, 'benchmarks/learned')
import math
import pickle

import numpy as np
from ev import WORK, W, idf_of, z

D = pickle.load(open(WORK/'exp'/'scifact-arrays.pkl','rb'))
rows, M = D['chunk_rows'], D['chunk_matrix']
nch = D['nchunks']
print('chunks per note', np.bincount(nch)[:10], 'notes', len(nch))
n = len(nch)
# note vector = normalised mean of chunk vectors
NV = np.zeros((n, M.shape[1])); np.add.at(NV, rows, M); NV /= np.linalg.norm(NV,axis=1,keepdims=True)
notes = D['notes']; notes['idf']=idf_of(notes['content_terms']); notes['nchunks']=nch.astype(float)
def run(split, beta=0.0, k=3, gamma=0.0, wv2=None):
    res=[]
    for q in D[split]:
        b=z(q['bm25']); v=z(q['vmax'])
        fused = W*b+(1-W)*v
        vm = q['vmax']
        if beta:
            top = np.argsort(-fused)[:k]
            qv = q['qvec'] + beta*NV[top].mean(0); qv/=np.linalg.norm(qv)
            sims = M@qv; mx=np.full(n,-1.0); np.maximum.at(mx, rows, sims); vm = mx
            fused = W*b+(1-W)*z(vm)
        if gamma:
            top = np.argsort(-fused)[:k]
            cl = NV @ NV[top].mean(0)
            fused = fused + gamma*z(cl)
        order = np.argsort(-fused)[:10]
        ids=[notes['ids'][i] for i in order]
        gains=[q['qrels'].get(d,0) for d in ids]
        dcg=sum(g/math.log2(i+2) for i,g in enumerate(gains)); ideal=sorted(q['qrels'].values(),reverse=True)[:10]
        res.append(dcg/sum(g/math.log2(i+2) for i,g in enumerate(ideal)))
    return np.mean(res)
print('base', run('train'))
for beta in (0.2,0.4,0.7):
  for k in (1,3,5):
    print('rocchio',beta,k, round(run('train',beta,k),4))
for g in (0.05,0.1,0.2):
  for k in (3,5,10):
    print('cluster',g,k, round(run('train',gamma=g,k=k),4))
