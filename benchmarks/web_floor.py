"""The web search page's relevance floor (vaultmem/web/relevance.py) on the demo vault, real model.

    python benchmarks/web_floor.py

For each of benchmarks/data/hook_prompts.jsonl's 70 prompts (36 with the memory that answers
them, 34 that need none), five questions the vault has no memory for, and 22 one-word or
two-word searches with the note they name: recall's top 10 (the page's default), then what
each rule lists. Reported per rule: the answers in the top 10 still listed, the hits listed
for prompts that need no memory, those left empty, the one-word searches whose note is listed.
Rules: none (every hit, as before), the floor (and with a stricter cosine for strong keyword
matches), the prompt hook's floor alone, and a floor
relative to the best hit's score (0.5; the scores of a question without a memory are as
spread as those of one with it, so this cuts answers and keeps noise).
Results: benchmarks/results/web-floor.json.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import own_home, parser, write_result
from benchmarks.hook_bench import demo_copy, load_prompts
from vaultmem.agents.hooks import DEFAULT_FLOOR
from vaultmem.vault import Vault
from vaultmem.web.relevance import above_floor

NO_MEMORY = ["banana smoothie recipe", "what is the weather", "kubernetes helm chart", "how do I cook pasta",
             "favorite movie"]  # fmt: skip
SEARCHES = {"stripe": "Payment flow", "celery": "Background jobs with Celery", "advisory lock": "Use Postgres advisory",
            "dana": "Dana Okafor", "fly": "Deploy on Fly.io", "expo": "Use Expo", "timezone": "Reproduce timezone",
            "JPY": "JPY is", "pgbouncer": "Session advisory locks leak", "migration": "Always test migrations",
            "webhook": "Idempotent webhook", "harbor point": "Harbor Point Marina", "kasumi": "Kasumi Bay Marina",
            "GiST": "GiST index", "redis": "Postgres-only job", "tstzrange": "Store slip bookings",
            "safari": "Safari calendar", "sqlalchemy": "Prefer SQLAlchemy", "mypy": "Strict typing",
            "money": "Store money", "marina_id": "Multi-tenant", "OTA": "Expo OTA"}  # fmt: skip
Rule = Callable[[list[dict]], list[dict]]
RULES: dict[str, Rule] = {
    "none (every hit)": lambda hits: hits,
    "the floor (web/relevance.py)": above_floor,
    "the floor, strong keyword matches at cosine >= 0.2": lambda hits: above_floor(hits, near=0.2),
    "the prompt hook's floor alone": lambda hits: [h for h in hits if DEFAULT_FLOOR.keep(h)],
    "score >= 0.5 x the best hit's": lambda hits: [
        h for h in hits if hits and h["score"] >= 0.5 * hits[0]["score"]
    ],
}


def collect(root: Path) -> list[dict]:
    rows = [{**p, "kind": "needs" if p["needs"] else "none"} for p in load_prompts()]
    rows += [{"prompt": q, "kind": "none"} for q in NO_MEMORY]
    rows += [{"prompt": q, "kind": "search", "title": t} for q, t in SEARCHES.items()]
    with Vault(root) as v:
        for r in rows:
            found = v.recall(r["prompt"], k=10, log=False, include_resolved=r["prompt"] == "safari")
            r["hits"] = [h.as_dict(True) for h in found]
    return rows


def measure(rows: list[dict], rule: Rule) -> dict:
    answers = [r for r in rows if r.get("expect") in [h["path"] for h in r["hits"]]]
    kept_answers = [r for r in answers if r["expect"] in [h["path"] for h in rule(r["hits"])]]
    none = [r for r in rows if r["kind"] == "none"]
    searches = [r for r in rows if r["kind"] == "search"]
    return {
        "answers_listed": f"{len(kept_answers)}/{len(answers)}",
        "answers_lost": [r["prompt"] for r in answers if r not in kept_answers],
        "hits_listed_without_a_memory": f"{sum(len(rule(r['hits'])) for r in none)}/{sum(len(r['hits']) for r in none)}",
        "no_memory_prompts_empty": f"{sum(not rule(r['hits']) for r in none)}/{len(none)}",
        "searches_note_listed": f"{sum(any(h['title'].startswith(r['title']) for h in rule(r['hits'])) for r in searches)}/{len(searches)}",
        "hits_listed_for_prompts_with_a_memory": sum(len(rule(r["hits"])) for r in rows if r["kind"] == "needs"),
    }  # fmt: skip


def main() -> None:
    parser(__doc__).parse_args()
    own_home("home")  # never the user's own service, config or state
    rows = collect(demo_copy())
    result = {"k": 10, "rules": {name: measure(rows, rule) for name, rule in RULES.items()}}
    for name, m in result["rules"].items():
        print(f"{name:32} answers {m['answers_listed']}  no-memory hits {m['hits_listed_without_a_memory']} "
              f"(empty {m['no_memory_prompts_empty']})  searches {m['searches_note_listed']}")  # fmt: skip
    print(f"wrote {write_result('web-floor', result)}")


if __name__ == "__main__":
    main()
