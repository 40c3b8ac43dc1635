import json
import pickle
import re
import sys

sys.path.insert(0, '.')
from benchmarks.common import WORK
from benchmarks.locomo import DEFAULT_DATA, Vault, evidence_of
from vaultmem.index.embed import NoEmbedder

QW = set("what whats what's which who whom whose when where why how did does do is are was were has have had would could should can will might may the a an of to in on for about kind type".split())
def strip(q):
    words = re.findall(r"[\w'’-]+", q)
    return " ".join(w for w in words if w.lower() not in QW) or q
samples = json.loads(DEFAULT_DATA.read_text())
out = {}
for shape in ('flat', 'linked'):
    for s in samples:
        v = Vault(WORK / 'locomo' / shape / s['sample_id'], NoEmbedder())
        src = v.sources()
        known = {src.records[p].key for p in src.universe}
        arr = []
        for qa in s['qa']:
            if not evidence_of(qa, known): continue
            arr.append(src.bm25.score_all(strip(str(qa['question'])), src.index, len(src.universe)))
        out[(shape, s['sample_id'])] = arr
        v.close()
pickle.dump(out, open(WORK / 'exp' / 'bm25strip.pkl', 'wb'))
