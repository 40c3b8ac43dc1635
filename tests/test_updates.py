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


def test_retracts_needs_an_old_title_word_where_a_retraction_points():
    assert retracts(OLD, NEW)  # "replaced Rollbar"
    other = Memory(
        "Sentry for the frontend", "The web app reports to a Sentry project with source maps.", "decision"
    )
    assert not retracts(OLD, other)
    assert not retracts(OLD, Memory("x", "We replaced the logo.", "decision"))
    assert retracts(OLD, Memory("Errors in Sentry", "Rollbar is gone; errors go to Sentry.", "decision"))
    assert not retracts(OLD, Memory("Errors in Sentry", "Sentry is gone; errors go to Rollbar.", "decision"))


# the adversarial shapes: two different memories about one subject
SQLITE = Memory("Use SQLite for the cache", "Because the data is small and local; Redis would be another service "
                "to run. See [[Cache invalidation on deploy]].", "decision", anchors=("app",))  # fmt: skip
PURGE = Memory("Purge the cache in the post-deploy hook", "Decided to delete cache.db after every deploy instead "
               "of versioning the cache file.", "decision", anchors=("app",))  # fmt: skip


def test_a_different_decision_that_retracts_a_body_word_is_no_update():
    assert not retracts(SQLITE, PURGE)  # "deploy ... instead": not a word of the old title
    assert judge(SQLITE, PURGE, 0.541).decision == "possible"


def test_near_identical_notes_are_never_updates_of_each_other():
    for n, m in ((100, 295), (290, 295)):
        a = Memory(f"Burst note {n}", f"Burst note {n} mentions the word xylophonic.", "fact")
        b = Memory(f"Burst note {m}", f"Burst note {m} mentions the word xylophonic.", "fact")
        assert judge(a, b, 0.99).decision == "possible"


def test_signals():
    sig = signals(OLD, NEW, 0.7)
    assert sig["context"] == 1.0 and sig["anchor"] == 0.0 and sig["retracts"] == 1.0 and sig["changed"] == 1.0
    assert 0 < sig["title"] < 1 and sig["cosine"] == 0.7


def test_decide():
    th = Thresholds(auto_cosine=0.5, title=0.1, possible_cosine=0.4, body=0.15)
    base = {
        "cosine": 0.6,
        "context": 1.0,
        "anchor": 0.0,
        "title": 0.0,
        "body": 0.2,
        "changed": 1.0,
        "retracts": 1.0,
    }
    assert decide(base, th) == "auto"
    assert decide({**base, "retracts": 0.0}, th) == "possible"
    assert decide({**base, "context": 0.0}, th) == "auto"  # the retraction names the old subject
    assert decide({**base, "retracts": 0.5, "context": 0.0}, th) == "possible"  # not related: only listed
    assert decide({**base, "retracts": 0.5}, th) == "auto"
    assert decide({**base, "context": 0.0, "title": 0.2}, th) == "auto"
    assert decide({**base, "cosine": 0.45}, th) == "possible"
    assert decide({**base, "cosine": 0.3}, th) == "no"
    assert (
        decide({**base, "cosine": 0.99, "retracts": 0.0, "context": 0.0}, th) == "possible"
    )  # never similarity alone
    assert (
        decide({**base, "cosine": 0.42, "retracts": 0.0, "context": 0.0, "changed": 0.0}, th) == "possible"
    )  # body
    assert (
        decide({**base, "cosine": 0.42, "retracts": 0.0, "context": 0.0, "changed": 0.0, "body": 0.1}, th)
        == "no"
    )


def test_judge_type_series_and_time_order():
    assert judge(OLD, NEW, 0.7).decision == "auto"
    assert judge(OLD, NEW, 0.7).similarity == 0.7
    other_type = Memory(NEW.title, NEW.content, "fact", NEW.context, when=NEW.when)
    assert judge(OLD, other_type, 0.7).decision == "possible"
    older = Memory(NEW.title, NEW.content, "decision", NEW.context, when="2026-09-01")
    assert judge(OLD, older, 0.7).decision == "possible"
    s_old = Memory("Session", "Worked on Rollbar.", "session_summary", ("app/errors.py",))
    s_new = Memory("Session", "Replaced Rollbar with Sentry.", "session_summary", ("app/errors.py",))
    assert judge(s_old, s_new, 0.99).decision == "no"  # session summaries never update one another


def test_anchors_sessions_and_handoffs_are_never_updates_of_one_another():
    """Issue 36: a project's anchor was marked a possible update of another's."""
    alpha = Memory("Project: Alpha", "Anchor note for Project: Alpha.", "project")
    beta = Memory("Project: Beta", "Anchor note for Project: Beta.", "project")
    assert judge(alpha, beta, 0.95).decision == "no"
    h_old = Memory("Handoff 1", "Next steps: ship.", "handoff")
    h_new = Memory("Handoff 2", "Next steps: ship it now instead.", "handoff")
    assert judge(h_old, h_new, 0.95).decision == "no"
    # a project note under an anchor is a memory like any other (tests/data/supersede_pairs.json)
    p_old = Memory("Tidewater: beta in June", "Public beta in June.", "project", anchors=("tidewater",))
    p_new = Memory("Tidewater beta moved to September", "The beta slipped from June to September.", "project",
                   anchors=("tidewater",))  # fmt: skip
    assert judge(p_old, p_new, 0.8).decision != "no"


def test_no_adversarial_distinct_pair_can_be_automatic_at_any_similarity():
    """tests/data/supersede_adversarial.json: the distinct pairs retract none of the old title's
    words and give none of its slots a new value, so no cosine makes them automatic; the true
    updates of those shapes are, but two whose values the slot rule does not read (a host gaining
    a digit, an e-mail address): those are possible updates."""
    import json
    from pathlib import Path

    only_possible = {"Staging URL moved to stg2.acme.io", "Email sender now hello@acme.io"}
    pairs = json.loads((Path(__file__).parent / "data" / "supersede_adversarial.json").read_text())
    for p in pairs:
        old, new = (Memory(p[s]["title"], p[s]["content"], p["type"], tuple(p[s].get("context") or ()),
                           (p[s].get("anchor") or "",)) for s in ("old", "new"))  # fmt: skip
        auto = p["label"] == "update" and p["new"]["title"] not in only_possible
        assert judge(old, new, 0.999).decision == ("auto" if auto else "possible"), (
            p["old"]["title"],
            p["new"]["title"],
        )


def test_a_retraction_must_retract_the_old_subject():
    """Issue 37: the retracted word must be the old memory's subject and the new one about what
    the old one applies to ("API auth", not "the web app")."""
    jwt = Memory("JWT for API auth", "The public API authenticates with short-lived JWTs.", "decision")
    cookies = Memory("Session cookies for the web app", "The web app uses HttpOnly session cookies instead of "
                     "storing JWTs in localStorage.", "decision")  # fmt: skip
    opaque = Memory(
        "API auth with opaque tokens", "The public API uses opaque tokens instead of JWTs.", "decision"
    )
    assert retracts(jwt, cookies) == 0.0 and judge(jwt, cookies, 0.99).decision == "possible"
    assert retracts(jwt, opaque) == 1.0 and judge(jwt, opaque, 0.7).decision == "auto"
    bare = Memory("Rollbar", "Errors go to Rollbar.", "decision")  # only what is retracted: needs a relation
    assert retracts(bare, NEW) == 0.5 and judge(bare, NEW, 0.7).decision == "possible"
    assert (
        judge(Memory(bare.title, bare.content, "decision", ("app/errors.py",)), NEW, 0.7).decision == "auto"
    )


def test_a_new_value_in_the_old_slot_is_an_update_on_its_own():
    """Issue 37: the same title frame, one value changed and the change said (no retraction word
    pointing at the old title): automatic when related and similar enough."""
    from vaultmem.core.slots import slot_change

    ci = Memory("CI runs on ubuntu-20.04", "CI jobs run on ubuntu-20.04 runners.", "tech_context")
    new = Memory("CI now runs on ubuntu-22.04", "CI jobs now run on ubuntu-22.04 runners.", "tech_context")
    assert retracts(ci, new) == 0.0 and signals(ci, new, 0.8)["slot"] == 1.0
    assert judge(ci, new, 0.8).decision == "auto"
    assert judge(ci, new, 0.45).decision == "possible"  # below slot_cosine
    assert slot_change("Logs shipped to Papertrail", "Logs go to Papertrail.", "Logs shipped to Grafana Loki",
                       "Logs now go to Grafana Loki.")  # fmt: skip
    assert slot_change(
        "Staging DB host", "db-1.internal", "Staging DB host changed", "It moved to db-2.internal."
    )


def test_the_same_frame_is_not_enough():
    """Another subject, an identifier, an addition, a negation, a trial, a kept old value or
    another part: never a slot change, whatever the similarity."""
    from vaultmem.core.slots import slot_change

    old = ("CI runs on ubuntu-20.04", "GitHub Actions CI jobs run on ubuntu-20.04 runners.")
    for title, content in [
        ("Staging now runs on ubuntu-22.04", "The staging VMs now run ubuntu-22.04."),
        ("CI now runs on ubuntu-22.04", "CI jobs now also run on ubuntu-22.04."),
        ("CI now runs on ubuntu-22.04", "The lint job in CI now runs on ubuntu-22.04."),
        ("CI not moved to ubuntu-22.04", "CI was not moved to ubuntu-22.04."),
        ("CI moved to ubuntu-22.04?", "Trying ubuntu-22.04 on a branch."),
        (
            "CI now runs on ubuntu-22.04",
            "Linux jobs now run on ubuntu-22.04; macOS jobs keep ubuntu-20.04 images.",
        ),
        ("CI runs on ubuntu-22.04", "GitHub Actions CI jobs run on ubuntu-22.04 runners."),  # no change said
    ]:
        assert not slot_change(*old, title, content), title + " / " + content
    assert not slot_change("Migration 0042 applied", "Applied on staging.", "Migration 0043 applied",
                           "Migration 0043 is now applied on staging.")  # fmt: skip
    assert not slot_change("Cache TTL for product pages", "15 minutes.", "Cache TTL now for search results",
                           "Search results are now cached 60 seconds.")  # fmt: skip
    assert not slot_change("DB size is 400 GB", "The production database is 400 GB.", "DB size is now 40 GB",
                           "The staging database is now 40 GB.")  # fmt: skip


def test_a_generic_frame_or_another_file_needs_more_than_the_title():
    """Third round of issue 37's pairs: a one-word frame ("Retention") must keep the old text's
    words, and between memories of other files the old value must be retracted in so many words."""
    from vaultmem.core.slots import slot_change

    retention = ("Retention is 30 days", "Logs are kept 30 days.")
    assert not slot_change(*retention, "Retention is now 90 days", "Audit events are now kept 90 days.")
    assert slot_change(*retention, "Retention raised to 90 days", "Logs are now kept 90 days.")
    conns = ("Max connections is 100", "Postgres max_connections is 100.")
    other = ("Max connections now 200", "PgBouncer now allows 200 client connections.")
    assert not slot_change(*conns, *other, other_files=True)
    raised = ("Max connections now 200", "Postgres max_connections was raised from 100 to 200.")
    assert slot_change(*conns, *raised, other_files=True)


def test_a_narrower_subject_in_the_new_text_is_no_slot_change():
    """Fourth round: another part, customer, country or cache named in the new text only."""
    from vaultmem.core.slots import slot_change

    react = ("Frontend on React 17", "The storefront uses React 17.")
    assert not slot_change(*react, "Frontend on React 18", "The admin frontend now uses React 18.")
    assert slot_change(*react, "Frontend upgraded to React 18", "The storefront now uses React 18.")
    vat = ("VAT rate is 19%", "Germany charges 19% VAT.")
    assert not slot_change(*vat, "VAT rate is now 20%", "Austria's VAT rate is now 20%.")
    assert slot_change(*vat, "VAT rate is now 20%", "Germany now charges 20% VAT.")
    assert not slot_change("Invoice due in 30 days", "Invoices are due 30 days after issue.",
                           "Invoice due now in 60 days", "For Acme, invoices are now due 60 days after issue.")  # fmt: skip
    assert not slot_change("Upload limit is 50 MB", "MAX_UPLOAD_SIZE is 50 MB for every upload.",
                           "Upload limit now 5 MB", "Avatar uploads are now limited to 5 MB.")  # fmt: skip


def test_a_value_said_of_something_else_or_narrowed_is_no_slot_change():
    """Fifth round: another host of the same title, a condition, a recurring day."""
    from vaultmem.core.slots import slot_change

    host = ("DB host is db1.internal", "The primary database is db1.internal.")
    assert not slot_change(*host, "DB host now db2.internal", "The read replica is now db2.internal.")
    assert slot_change(*host, "DB host moved to db2.internal", "The primary database moved to db2.internal.")
    session = ("Session timeout is 30 minutes", "Sessions expire after 30 minutes idle.")
    assert not slot_change(*session, "Session timeout now 12 hours", "With remember-me checked, sessions now last 12 hours.")  # fmt: skip
    assert slot_change(
        *session, "Session timeout now 60 minutes", "Sessions now expire after 60 minutes idle."
    )
    assert not slot_change("Office closes at 18:00", "The office closes at 18:00.", "Office now closes at 16:00",
                           "The office now closes at 16:00 on Fridays.")  # fmt: skip


def test_an_exception_a_purpose_or_another_subject_before_the_value_is_no_slot_change():
    """Sixth round: "except in production", "for the cart fragment", "Webhook deliveries"."""
    from vaultmem.core.slots import slot_change

    level = ("Log level is INFO", "Services log at INFO.")
    assert not slot_change(*level, "Log level now DEBUG", "Services now log at DEBUG except in production.")
    assert slot_change(*level, "Log level now DEBUG", "Services now log at DEBUG.")
    retries = ("Max retries is 3", "Jobs retry 3 times.")
    assert not slot_change(*retries, "Max retries now 5", "Webhook deliveries now retry 5 times.")
    assert slot_change(*retries, "Max retries now 5", "Jobs now retry 5 times.")
    assert not slot_change("Cache TTL is 5 minutes", "Product page cache TTL is 5 minutes.",
                           "Cache TTL now 1 minute", "It is now 1 minute for the cart fragment.")  # fmt: skip


def test_another_word_in_the_place_of_a_gone_one_is_no_slot_change():
    """Seventh round: "Team Beta" for "Team Alpha", "to Switzerland" for "within Germany"."""
    from vaultmem.core.slots import slot_change

    fee = ("Shipping fee is 5 EUR", "Shipping within Germany costs 5 EUR.")
    assert not slot_change(*fee, "Shipping fee now 9 EUR", "Shipping to Switzerland now costs 9 EUR.")
    assert slot_change(*fee, "Shipping fee now 6 EUR", "Shipping within Germany now costs 6 EUR.")
    assert not slot_change("Sprint length is 2 weeks", "Team Alpha runs 2-week sprints.",
                           "Sprint length now 1 week", "Team Beta now runs 1-week sprints.")  # fmt: skip


def test_a_title_word_the_new_text_drops_before_new_words_is_no_slot_change():
    """Eighth round: "Pull-request previews now live at ..." under the title "Staging URL"."""
    from vaultmem.core.slots import slot_change

    staging = ("Staging URL is stg.acme.io", "Staging lives at stg.acme.io.")
    assert not slot_change(*staging, "Staging URL now preview.acme.io", "Pull-request previews now live at preview.acme.io.")  # fmt: skip


def test_a_scope_word_before_the_new_value_is_no_slot_change():
    """Ninth round: "The iOS tracker now has 7 open bugs" for "The tracker has 12 open bugs"."""
    from vaultmem.core.slots import slot_change

    bugs = ("Open bugs: 12", "The tracker has 12 open bugs.")
    assert not slot_change(*bugs, "Open bugs now 7", "The iOS tracker now has 7 open bugs.")
    assert slot_change(*bugs, "Open bugs now 7", "The tracker now has 7 open bugs.")


def test_the_value_clause_names_another_subject_though_the_old_one_is_named_elsewhere():
    """Tenth round: "Google Play now has version 3.3; the App Store review is pending"."""
    from vaultmem.core.slots import slot_change

    app = ("Mobile app version is 3.2", "The App Store has version 3.2.")
    other = "Google Play now has version 3.3; the App Store review is pending."
    assert not slot_change(*app, "Mobile app version now 3.3", other)
    assert slot_change(*app, "Mobile app version now 3.3", "The App Store now has version 3.3.")


def test_a_name_is_a_few_words_at_the_end_of_the_title():
    """The probe of real notes: two scientific titles sharing one word are no slot change."""
    from vaultmem.core.slots import slot_change

    assert not slot_change("Functional Architecture of RNA Polymerase I", "Functional architecture of RNA Polymerase I.",
                           "Functional Consequences of Splicing of the Antisense Transcript COOLAIR on FLC Transcription",
                           "COOLAIR splicing now changes FLC transcription.")  # fmt: skip


def test_a_long_memory_is_never_a_slot_change():
    """A note longer than ``MAX_TEXT`` says more than one value: it stays a possible update."""
    from vaultmem.core.slots import MAX_TEXT, slot_change

    old = ("CI runs on ubuntu-20.04", "CI jobs run on ubuntu-20.04 runners.")
    new = "CI jobs now run on ubuntu-22.04 runners."
    assert slot_change(*old, "CI now runs on ubuntu-22.04", new)
    assert not slot_change(*old, "CI now runs on ubuntu-22.04", new + " More." * MAX_TEXT)


def _pairs(name: str) -> list[tuple[Memory, Memory, str]]:
    import json
    from pathlib import Path

    pairs = json.loads((Path(__file__).parent / "data" / name).read_text())
    return [(*(Memory(p[s]["title"], p[s]["content"], p["type"], tuple(p[s].get("context") or ()),
                      (p[s].get("anchor") or "",)) for s in ("old", "new")), p["label"]) for p in pairs]  # fmt: skip


def test_no_fresh_distinct_pair_can_be_automatic_at_any_similarity():
    """tests/data/supersede_fresh.json (issue 47, written before the status, correction and label
    rules, sharing no wording with the labelled pairs): no distinct pair is automatic."""
    for old, new, label in _pairs("supersede_fresh.json"):
        if label == "distinct":
            assert judge(old, new, 0.999).decision != "auto", (old.title, new.title)


def test_a_new_status_of_one_effort_is_an_update():
    """Issue 47: a progress note is a state; the same effort with a new status replaces it, never
    another effort, part or period."""
    from vaultmem.core.revisions import status_change

    assert status_change("progress", "Dark mode not started", "Dark mode shipped", "Released in v2.3.")
    assert status_change("progress", "Payments refactor: 40%", "Payments refactor: 80%", "Webhooks done.")
    assert status_change(
        "progress", "Docs migration blocked", "Docs migration unblocked and done", "On MkDocs."
    )
    assert not status_change("progress", "Week 41 progress", "Week 42 progress", "Started the webhooks.")
    assert not status_change("progress", "Migration 0042 applied", "Migration 0043 applied", "0044 next.")
    assert not status_change("progress", "Dark mode shipped", "German translation shipped", "Released.")
    assert not status_change("progress", "Kiln repair done", "Kiln shelf replacement pending", "Ordered.")
    assert not status_change("progress", "Dark mode planned", "Dark mode shipped too", "Also the toggle.")
    assert not status_change("decision", "Dark mode not started", "Dark mode shipped", "Released in v2.3.")
    old = Memory("Dark mode not started", "Dark mode for the dashboard is planned.", "progress")
    new = Memory("Dark mode shipped", "Dark mode for the dashboard is released in v2.3.", "progress")
    assert judge(old, new, 0.7).decision == "auto" and judge(old, new, 0.45).decision == "possible"


def test_a_correction_of_the_same_fix_is_an_update():
    from vaultmem.core.revisions import corrects

    assert corrects("Scraper 403 fixed with a User-Agent", "Real fix for the scraper 403",
                    "Correction: the 403s came from missing cookies.")  # fmt: skip
    assert corrects(
        "Invoice rounding bug fix", "Correct fix for invoice rounding", "Correction: use Decimal."
    )
    assert not corrects("Drone drift fixed by a new propeller", "Real fix for the drone camera blur",
                        "Correction of the camera settings.")  # fmt: skip
    assert not corrects("Invoice rounding bug fix", "Invoice JPY decimals bug fix", "JPY has no decimals.")


def test_a_label_given_a_new_value_is_a_slot_change():
    from vaultmem.core.slots import slot_change

    assert slot_change("On-call rotation lead", "Maria leads the on-call rotation.",
                       "On-call rotation lead is now Dev", "Dev took over leading the on-call rotation from Maria.")  # fmt: skip
    assert not slot_change("On-call rotation lead", "Maria leads the on-call rotation.",
                           "On-call rotation lead for the EU is now Dev", "Dev leads the EU on-call rotation.")  # fmt: skip
    assert not slot_change("On-call rotation lead", "Maria leads the on-call rotation.",
                           "On-call rotation lead is now also Dev", "Dev also leads it.")  # fmt: skip


def test_more_ways_to_retract_the_old_subject():
    """Issue 47, second round: "moved out of", "left the", a bare "removed" ending a clause, "were
    imported and deleted", a compound split in two ("times out" for "timeout") and an old title
    word the new title says only after a negation ("works without VPN") retract the old subject."""
    pairs = [
        (("Auth inside the monolith", "Login and sessions are handled by the monolith's auth module."),
         ("Auth extracted to its own service", "Authentication moved out of the monolith into auth-service.")),
        (("Lena: data team lead", "Lena leads the data team."),
         ("Lena moved to the platform team", "Lena left the data team; she now leads platform.")),
        (("Memory leak in worker: restart daily", "Worker memory grows; we restart it daily."),
         ("Worker memory leak fixed", "Bounded the cache in worker/main.py, daily restarts removed.")),
        (("Infra with CloudFormation", "Infrastructure is described in CloudFormation templates."),
         ("Terraform for infra", "All infra is Terraform now; the CloudFormation stacks were imported and deleted.")),
        (("CSV export timeout", "CSV export timed out for big accounts."),
         ("CSV export streams now", "CSV export no longer times out: it streams rows.")),
        (("Staging deploy needs VPN", "Deploying to staging only works from the office VPN."),
         ("Staging deploy works without VPN", "Staging deploy no longer needs the VPN since it runs from CI.")),
    ]  # fmt: skip
    for (ot, oc), (nt, nc) in pairs:
        old, new = Memory(ot, oc, "fact"), Memory(nt, nc, "fact")
        assert retracts(old, new) == 1.0 and judge(old, new, 0.7).decision == "auto", (ot, nt)


def test_a_retraction_of_another_thing_while_the_old_subject_stays_is_no_update():
    """Issue 47, second round: the new text retracts a word of the old title but says the old
    subject stays as it is ("staging deploys still do", "infra stays on CloudFormation"); "was
    still" (the past) and "keeps" (a verb) are no such word."""
    distinct = [
        (("Worker restarts daily", "The worker is restarted daily by cron."),
         ("Nightly report job removed", "The nightly report job in the worker was dropped; worker daily restarts stay.")),
        (("Staging deploy needs VPN", "Deploying to staging only works from the office VPN."),
         ("Preview deploys work without VPN", "Preview deploys no longer need the VPN; staging deploys still do.")),
        (("CSV export timeout", "CSV export timed out for big accounts."),
         ("PDF export no longer times out", "PDF export no longer times out; CSV export still does.")),
        (("Infra with CloudFormation", "Infrastructure is described in CloudFormation templates."),
         ("Old Lambda functions deleted", "The old Lambda functions were archived and deleted; infra stays on CloudFormation.")),
        (("Lena: data team lead", "Lena leads the data team."),
         ("Omar left the data team", "Omar left the data team for a startup; Lena is hiring.")),
        (("Auth inside the monolith", "Login is handled by the monolith's auth module."),
         ("Billing moved out of the monolith", "Billing moved out of the monolith into billing-service.")),
    ]  # fmt: skip
    for (ot, oc), (nt, nc) in distinct:
        old, new = Memory(ot, oc, "fact"), Memory(nt, nc, "fact")
        assert judge(old, new, 0.999).decision != "auto", (ot, nt)
    redis = Memory(
        "Redis for the rate limiter", "The API rate limiter keeps its counters in Redis.", "decision"
    )
    memory = Memory("Rate limiter counters in memory", "The rate limiter keeps its counters in process memory; "
                    "Redis is no longer used for it.", "decision")  # fmt: skip
    assert judge(redis, memory, 0.7).decision == "auto"
    wait = Memory("Flaky login test: add wait", "The flaky test_login was fixed by waiting.", "bug_fix")
    jar = Memory("Flaky login test: real cause was a shared cookie jar", "test_login was still flaky; the real "
                 "fix was a cookie jar per test, the extra wait was removed.", "bug_fix")  # fmt: skip
    assert judge(wait, jar, 0.7).decision == "auto"
    # "still" of another subject, or in another clause, keeps nothing (the demo vault's update)
    locks = Memory("Use Redis locks for job leasing", "Jobs take a Redis lock with a TTL.", "decision")
    advisory = Memory("Use Postgres advisory locks for job leasing", "Replaces Redis locks: TTLs expire while "
                      "a long job is still running. Redlock across several Redis nodes: overkill, still "
                      "TTL-based.", "decision")  # fmt: skip
    assert judge(locks, advisory, 0.7).decision == "auto"
