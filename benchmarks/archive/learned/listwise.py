"""Listwise-softmax linear rankers over candidate features (ev.py), fit on SciFact train, LoCoMo
conv-26/30/41, or both; held-out conv-42/43 (no graph step in this replica).
    python benchmarks/learned/listwise.py
"""
import sys; sys.path.insert(0, 'benchmarks/learned')
from ev import fit, linear, locomo, normalised, scifact, score_lc, score_sf, today

TR={'conv-26','conv-30','conv-41'}; TE={'conv-42','conv-43'}
sf = scifact('train')
L = {s: locomo(s, TR) for s in ('flat','linked')}
LT = {s: locomo(s, TE) for s in ('flat','linked')}
def rep(name, fn):
    print(f"{name:<50} sf {score_sf(sf, fn):.4f} | train flat {score_lc(L['flat'],fn)['all']:.1f} linked {score_lc(L['linked'],fn)['all']:.1f} mh {score_lc(L['linked'],fn)['multi-hop']:.1f} | held flat {score_lc(LT['flat'],fn)['all']:.1f} linked {score_lc(LT['linked'],fn)['all']:.1f} mh {score_lc(LT['linked'],fn)['multi-hop']:.1f}", flush=True)
rep('today', today)
for feats in (['bm25','vector','context'], ['bm25','vector','context','length'], ['bm25','vector','context','title'], ['bm25','vector','context','coverage'],['bm25','vector','context','idf_coverage'],
              ['bm25','vector','context','v2'], ['bm25','vector','context','v2','length'], ['bm25','vector','context','v2','length','coverage','title']):
    for mix in ('sf', 'lc', 'both'):
        groups = (sf if mix!='lc' else []) + ((L['flat']+L['linked']) if mix!='sf' else [])
        wt = None
        if mix=='both':
            nsf = sum(q.rel.sum()>0 for q in sf); nlc = sum(q.rel.sum()>0 for q in L['flat']+L['linked'])
            wt = [1.0/nsf]*len(sf) + [1.0/nlc]*(len(groups)-len(sf))
        w = fit(groups, feats, weight=wt)
        rep(f"{mix} {','.join(feats[2:])} " + ' '.join(f"{k[:3]}{v:.2f}" for k,v in normalised(w).items()), linear(w))
