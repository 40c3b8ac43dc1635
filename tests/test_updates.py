"""The auto-supersede signals and decision (vaultmem.core.updates, pure)."""

from vaultmem.core.updates import (
    Memory,
    Thresholds,
    decide,
    judge,
    key_words,
    retracts,
    signals,
)

OLD = Memory("Error tracking in Rollbar", "Backend errors are reported to Rollbar.", "decision", ("app/errors.py",),
             when="2026-10-01T10:00:00+00:00")  # fmt: skip
NEW = Memory("Error tracking moved to Sentry", "We replaced Rollbar with Sentry for backend errors.", "decision",
             ("app/errors.py",), when="2026-11-01T10:00:00+00:00")  # fmt: skip


def test_key_words_drop_stop_words_and_plurals():
    assert key_words("The errors are reported to Rollbar") == {"error", "reported", "rollbar"}


def test_retracts_needs_an_old_word_next_to_a_retraction_word():
    assert retracts(OLD, NEW)  # "replaced Rollbar"
    other = Memory("Sentry for the frontend", "The web app reports to a Sentry project with source maps.", "decision")
    assert not retracts(OLD, other)
    assert not retracts(OLD, Memory("x", "We replaced the logo.", "decision"))


def test_signals():
    sig = signals(OLD, NEW, 0.7)
    assert sig["context"] == 1.0 and sig["anchor"] == 0.0 and sig["retracts"] == 1.0 and sig["changed"] == 1.0
    assert 0 < sig["title"] < 1 and sig["cosine"] == 0.7


def test_decide():
    th = Thresholds(auto_cosine=0.5, title=0.1, cosine_alone=0.9, possible_cosine=0.4)
    base = {"cosine": 0.6, "context": 1.0, "anchor": 0.0, "title": 0.0, "body": 0.2, "changed": 1.0, "retracts": 1.0}
    assert decide(base, th) == "auto"
    assert decide({**base, "retracts": 0.0}, th) == "possible"
    assert decide({**base, "context": 0.0}, th) == "possible"  # not related: only listed
    assert decide({**base, "context": 0.0, "title": 0.2}, th) == "auto"
    assert decide({**base, "cosine": 0.45}, th) == "possible"
    assert decide({**base, "cosine": 0.3}, th) == "no"
    assert decide({**base, "cosine": 0.95, "retracts": 0.0, "context": 0.0}, th) == "auto"


def test_judge_type_series_and_time_order():
    assert judge(OLD, NEW, 0.7).decision == "auto"
    assert judge(OLD, NEW, 0.7).similarity == 0.7
    other_type = Memory(NEW.title, NEW.content, "fact", NEW.context, when=NEW.when)
    assert judge(OLD, other_type, 0.7).decision == "possible"
    older = Memory(NEW.title, NEW.content, "decision", NEW.context, when="2026-09-01")
    assert judge(OLD, older, 0.7).decision == "possible"
    s_old = Memory("Session", "Worked on Rollbar.", "session_summary", ("app/errors.py",))
    s_new = Memory("Session", "Replaced Rollbar with Sentry.", "session_summary", ("app/errors.py",))
    assert judge(s_old, s_new, 0.99).decision == "possible"
