"""How chunks combine into a note's vector score, SciFact train (offline): max, mean, normalised
mean vector, max mixed with mean / second-best chunk, by bm25 weight.
    python benchmarks/learned/pooling.py
"""
import sys; sys.path.insert(0, 'benchmarks/learned')
import math
import pickle

import numpy as np
from ev import WORK, W, z

D = pickle.load(open(WORK/'exp'/'scifact-arrays.pkl','rb'))
rows, M = D['chunk_rows'], D['chunk_matrix']; nch=D['nchunks']; n=len(nch)
NV = np.zeros((n, M.shape[1])); np.add.at(NV, rows, M); NV /= np.linalg.norm(NV,axis=1,keepdims=True)
notes = D['notes']
def nd(q, s):
    order = np.argsort(-s)[:10]
    gains=[q['qrels'].get(notes['ids'][i],0) for i in order]
    dcg=sum(g/math.log2(i+2) for i,g in enumerate(gains)); ideal=sorted(q['qrels'].values(),reverse=True)[:10]
    return dcg/sum(g/math.log2(i+2) for i,g in enumerate(ideal))
def run(split, vf, w=W):
    return np.mean([nd(q, w*z(q['bm25'])+(1-w)*z(vf(q))) for q in D[split]])
print('max', run('train', lambda q:q['vmax']))
print('mean', run('train', lambda q:q['vmean']))
print('notevec', run('train', lambda q:NV@q['qvec']))
for a in (0.25,0.5,0.75):
    print('max+a*(mean-max)',a, round(run('train', lambda q:(1-a)*q['vmax']+a*q['vmean']),4))
    print('max+a*(v2-max)',a, round(run('train', lambda q:(1-a)*q['vmax']+a*q['v2']),4))
    print('max+a*notevec',a, round(run('train', lambda q:(1-a)*q['vmax']+a*(NV@q['qvec'])),4))
for w in (0.25,0.3,0.35):
  for a in (0.5,0.75,1.0):
    print('w',w,'mean-combo',a, round(run('train', lambda q:(1-a)*q['vmax']+a*q['vmean'],w),4), 'v2',round(run('train', lambda q:(1-a)*q['vmax']+a*q['v2'],w),4))
