import json
import sys

sys.path.insert(0, '.')
from benchmarks.common import CachedEmbedder
from benchmarks.locomo import DEFAULT_DATA, sessions

samples = json.loads(DEFAULT_DATA.read_text())
def ctx_texts(sample, variant):
    conv = sample['conversation']; out = {}
    for n, date, turns in sessions(conv):
        prev = None
        for t in turns:
            own = f"{t['speaker']}: {t['text']}" + (f"\n(image: {t['blip_caption']})" if t.get('blip_caption') else "")
            if variant == 'prev':
                ctx = f"Session {n}, {date}\n" + (f"{prev}\n" if prev else "")
                out[t['dia_id']] = ctx + own
            elif variant == 'date':
                out[t['dia_id']] = f"Session {n}, {date}\n" + own
            prev = f"{t['speaker']}: {t['text']}"
    return out
if __name__ == '__main__':
    emb = CachedEmbedder()
    for variant in sys.argv[1:]:
        for s in samples:
            texts = ctx_texts(s, variant)
            emb.embed(list(texts.values()))
            print(variant, s['sample_id'], emb.embedded, flush=True)
