import sys

sys.path.insert(0, 'benchmarks/locomo_offline')
import numpy as np
from ev import D, evaluate, fmt, p2, z

TRAIN = {'conv-26', 'conv-30', 'conv-41'}; TEST = {'conv-42', 'conv-43'}
def feats(d, q, w=0.3):
    b = z(q['bm25s']); v = z(q['vec'])
    fused = w * b + (1 - w) * v
    nb = np.array([max((fused[j] for j in d['adj'][i]), default=0.0) for i in range(len(b))])
    nb = np.maximum(nb, 0)
    qmark = np.array([1.0 if body.strip().split('\n')[0].rstrip().endswith('?') else 0.0 for body in d['bodies']])
    blen = np.array([np.log1p(len(body.split())) for body in d['bodies']])
    return np.stack([b, v, nb, qmark, blen], 1), fused + 0.2 * nb
def dataset(shape, convs):
    X, Y = [], []
    for (sh, conv), d in D.items():
        if sh != shape or conv not in convs: continue
        for q in d['qs']:
            F, s = feats(d, q)
            top = np.argsort(-s)[:100]
            ev = set(q['ev'])
            X.append(F[top]); Y.append(np.array([d['ids'][i] in ev for i in top], float))
    return np.concatenate(X), np.concatenate(Y)
def fit(X, Y, l2=1e-3, it=3000, lr=0.5):
    mu, sd = X.mean(0), X.std(0) + 1e-9
    Xs = (X - mu) / sd; w = np.zeros(X.shape[1]); b0 = 0.0
    pw = (len(Y) - Y.sum()) / Y.sum()
    sw = np.where(Y > 0, pw, 1.0); sw /= sw.mean()
    for _ in range(it):
        p = 1 / (1 + np.exp(-(Xs @ w + b0)))
        g = sw * (p - Y)
        w -= lr * (Xs.T @ g / len(Y) + l2 * w); b0 -= lr * g.mean()
    return w / sd, b0 - (mu / sd) @ w
for shape in ('linked', 'flat'):
    X, Y = dataset(shape, TRAIN)
    W, B0 = fit(X, Y)
    print(shape, 'weights b,v,nb,qmark,len', np.round(W, 3))
    def plr(d, q, **kw):
        F, s = feats(d, q); top = np.argsort(-s)[:100]
        sc = F[top] @ W
        return list(top[np.argsort(-sc)])
    print(shape, 'LR   test', fmt(evaluate(shape, fn=plr, convs=TEST)))
    print(shape, 'hand test', fmt(evaluate(shape, fn=p2, convs=TEST, w=0.3, smooth=0.2)))
    print(shape, 'LR   train', fmt(evaluate(shape, fn=plr, convs=TRAIN)))
    print(shape, 'hand train', fmt(evaluate(shape, fn=p2, convs=TRAIN, w=0.3, smooth=0.2)))
