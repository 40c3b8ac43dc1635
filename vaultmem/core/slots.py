"""Same-slot value change: does a new memory give a new value to the old one's slot? (pure)

"CI runs on ubuntu-20.04" -> "CI now runs on ubuntu-22.04": the two titles have one frame
(the same subject words) and differ in one value, which the new text says changed. Three
shapes, decided on the titles: a number slot (the values have digits: versions, sizes, times),
a name slot (the old title ends in its value: "Logs shipped to Papertrail" -> "... to Grafana
Loki"), the old title said changed ("Staging DB host" -> "Staging DB host changed") and a
label given a new value ("On-call rotation lead" -> "On-call rotation lead is now Dev").

Guards (any one keeps the pair a possible update): the new title adds a word that is neither
a value nor a change word (another subject: "Staging runs on ..."); a name slot after "for" or
"of" (a purpose is a subject: "Cache TTL for search results"); fewer new values than old ones
(one of two changed); no change said next to the new value ("Migration 0043 is now applied");
a hedge, a negation or a temporary change ("not raised", "proposal", "trying", "during", "?");
an addition ("also", "added", "as well"); the old value still said outside a retraction
("stays on Node 18"); an environment or tier of the old text left out ("production",
"backend"); a title noun with a modifier the old text lacks ("the data team", "avatar uploads",
"the CDN cache"); a part or an owner the old text does not name ("the lint job", "the docs
repository", "Austria's"); an opening or a recurring time that narrows ("For Acme, ...", "With
remember-me checked, ...", "on Fridays", "... for the cart fragment"); an exception
("except in production"); the new value said of something else (before the old value a word
gone and two new ones before the new value, "The read replica is now ..." for "The primary
database is ...", or a new word in a gone one's place, "Team Beta now runs" for "Team Alpha
runs", or an environment or part named before it, "The iOS tracker now has 7");
a frame of one word
("Retention") whose old text the new one does not repeat ("Logs" vs "Audit events"); memories
of other files without the old value retracted in so many words. Measured by
``benchmarks/supersede_v2.py`` (``--probe``: on real notes). The key words of ``updates`` live
here too (``key_words``).
"""

from __future__ import annotations

import re
from functools import lru_cache

STOPWORDS = frozenset("""a an the and or but of to in on at by for from with without into onto is are was were be
been being it its this that these those as we our us i you they them he she his her their there here not no now
so then than too very can could will would should may might must do does did done has have had use used uses
using via per all any each every only just also still""".split())  # fmt: skip
WORD_RE = re.compile(r"[a-z0-9][a-z0-9_.\-/]*", re.IGNORECASE)
# key words of a title that only say "it changed"
CHANGE_WORDS = frozenset("""moved raised lowered increased decreased reduced upgraded downgraded bumped switched changed
grew shrank down renamed migrated updated cut extended""".split())  # fmt: skip
CHANGE_CUE = re.compile(
    r"\b(now|moved|raised|lowered|increased|decreased|reduced|upgraded|downgraded|bumped|switched|changed|"
    r"grew|shrank|down to|up to|renamed|migrated|updated|went|cut|extended|no longer|instead|replaced)\b",
    re.IGNORECASE,
)
NUMBER_WORDS = frozenset("zero one two three four five six seven eight nine ten eleven twelve".split())
UNITS = frozenset("""ms sec second minute min hour hr day week month year kb mb gb tb px % percent req/min req/s rp
qp request people person core cpu replica worker shard thread connection seat user item row line character char
approval review""".split())  # fmt: skip
HEDGE = re.compile(
    r"\b(not|never|will|would|could|might|maybe|perhaps|planned|planning|plans? to|propos(?:e|ed|al)|"
    r"consider(?:ing)?|try(?:ing)?|trial|experiment(?:ing)?|pilot|draft|if|unless|until|soon|tbd|todo|"
    r"should we|next (?:sprint|week|month|quarter|year)|during|temporar\w*|for now|this (?:week|month|quarter)|"
    r"today|tonight|holidays?|except|excluding|apart from|other than|only (?:for|in|on|at))\b|\?|n't\b",
    re.IGNORECASE,
)
ADDITION = re.compile(
    r"\btoo\b(?=\s*(?:[.;,)]|$))|\b(also|as well|additionally|in addition|added|adds|adding|alongside|both|"
    r"plus|besides|next to|another|second)\b",
    re.IGNORECASE,
)
# said of the old value in a clause that retracts it ("Node 18 is out of support")
RETRACTED = re.compile(
    r"\b(no longer|removed|dropped|gone|out of support|unsupported|deprecated|retired|replaced|instead of|"
    r"rather than|from|was|were|before|previously|anymore|any more|not|no)\b|->|\u2192",
    re.IGNORECASE,
)
STRONG = re.compile(
    r"\b(no longer|removed|dropped|gone|replaced|instead of|rather than|anymore)\b", re.IGNORECASE
)
KEPT = re.compile(r"\b(stays?|kept|keeps?|still|remains?|unchanged|alongside)\b", re.IGNORECASE)
# words that name an environment, a tier or a part: a different one is a different subject
SCOPES = frozenset("""prod production staging stage dev development local ci mobile web ios android desktop backend
frontend admin api free pro enterprise internal public partner eu us unit e2e end-to-end integration""".split())  # fmt: skip
# a part of a system: "the lint job", "the docs repository" that the old text does not name
PARTS = frozenset("""job repo repository service team project app module package cluster region tier
customer account client endpoint pipeline workflow branch database""".split())  # fmt: skip
SUBJECT_PREPOSITIONS = frozenset({"for", "of", "about"})
OWNER_RE = re.compile(r"\b([A-Za-z][\w-]*)['\u2019]s\b")
FRONTED_RE = re.compile(
    r"\s*(?:for|in|on|at|within|inside|with|without|under|over)\s+([^,.;:]{1,60}),",
    re.IGNORECASE,
)
# "... now 1 minute for the cart fragment": a purpose or a beneficiary after the value
FOR_RE = re.compile(r"\bfor\s+(?:the\s+|our\s+|its\s+)?([\w./-]+(?:\s+[\w./-]+)?)\s*[.;,)]", re.IGNORECASE)
PERIODIC_RE = re.compile(
    r"\b(?:on|at|over)\s+((?:mon|tues|wednes|thurs|fri|satur|sun)days|weekends|weekdays|nights)\b",
    re.IGNORECASE,
)
CLAUSE_RE = re.compile(r"[;:.!?](?:\s|$)|,\s|\s\(|\)")
MAX_TEXT = 2000  # characters of a memory's text the rule reads; a longer one is never a slot change


@lru_cache(maxsize=65536)
def norm(word: str) -> str:
    """A word as ``key_words`` keeps it: lower case, edge punctuation and a plural ``s`` off."""
    w = word.lower().strip(".-/_")
    plural = len(w) > 3 and w.endswith("s") and not w.endswith("ss") and w not in STOPWORDS
    return w[:-1] if plural else w


def tokens(text: str) -> list[str]:
    """Every word of a text, normalised (``norm``), in order, stop words included."""
    return list(_tokens(text))


@lru_cache(maxsize=256)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(w for w in (norm(m) for m in WORD_RE.findall(text)) if w)


def key_words(text: str) -> set[str]:
    """Lower-cased words of a text without stop words, a plural ``s`` and edge punctuation."""
    return {w for w in tokens(text) if is_key(w)}


def is_key(word: str) -> bool:
    """Whether a normalised word (``tokens``) is a key word: two letters or more, no stop word."""
    return len(word) >= 2 and word not in STOPWORDS


def _is_number(w: str) -> bool:
    return any(c.isdigit() for c in w) or w in NUMBER_WORDS


def _values(title: list[str]) -> set[str]:
    """The value words of a title: numbers and versions, with the unit after one ("4 minutes")."""
    out = set()
    for i, w in enumerate(title):
        if _is_number(w):
            out.add(w)
            if i + 1 < len(title) and title[i + 1] in UNITS:
                out.add(title[i + 1])
    return out


def _keys(words: list[str]) -> list[str]:
    """The key words of normalised words, in order; a number of one digit counts ("4 minutes")."""
    return [w for w in words if (len(w) >= 2 or w.isdigit()) and w not in STOPWORDS]


def _cue_near(text: str, values: set[str]) -> bool:
    """Whether a change is said at most four words before one of ``values`` ("now runs on
    Node 20", "raised to 500")."""
    words = text.split()
    for i, raw in enumerate(words):
        if norm(raw.strip(".,;:()\"'")) in values and CHANGE_CUE.search(" ".join(words[max(0, i - 4) : i])):
            return True
    return False


def _old_value_kept(content: str, old_values: set[str]) -> bool:
    """Whether the new text says an old value outside a clause that retracts it, or keeps it."""
    for clause in CLAUSE_RE.split(content):
        if old_values & set(tokens(clause)) and (KEPT.search(clause) or not RETRACTED.search(clause)):
            return True
    return False


def _old_value_retracted(content: str, old_values: set[str]) -> bool:
    """Whether the new text retracts an old value in so many words ("the Papertrail handler was
    removed", "config.ini is no longer read")."""
    for clause in CLAUSE_RE.split(content):
        parts = {p for w in tokens(clause) for p in [w, *re.split(r"[./_-]", w)]}
        if old_values & parts and RETRACTED.search(clause) and not KEPT.search(clause):
            return True
    return False


def _unsaid(old_content: str, new_text: str, old_values: set[str]) -> set[str]:
    """The key words of the old text (not numbers, units or old values) the new text lacks."""
    said = set(tokens(new_text)) | old_values | UNITS
    return {w for w in _keys(tokens(old_content)) if not _is_number(w) and w not in said}


def _modifiers(text: str) -> dict[str, set[str]]:
    """For each word, the key words right before it in a clause ("platform" for "team")."""
    out: dict[str, set[str]] = {}
    for clause in CLAUSE_RE.split(text):
        words = tokens(clause)
        for a, b in zip(words, words[1:], strict=False):
            if _keys([a]):
                out.setdefault(b, set()).add(a)
    return out


def _new_parts(text: str, known: set[str]) -> bool:
    """Whether a text names a part (``PARTS``) with a key word before it that ``known`` lacks
    ("the lint job", "the EU instance of the app"), within a clause."""
    for clause in CLAUSE_RE.split(text):
        keys = _keys(tokens(clause))
        for a, b in zip(keys, keys[1:], strict=False):
            if b in PARTS and a not in known and not _is_number(a) and a not in CHANGE_WORDS:
                return True
    return False


def _known(words: list[str]) -> set[str]:
    """Words of a text with the parts of its compound words ("primary" of "primary_region")."""
    return set(words) | {p for w in words for p in re.split(r"[./_-]", w) if p}


def other_subject(old_text: str, new_text: str, nouns: set[str], values: set[str]) -> bool:
    """Whether the new text leaves out an environment, tier or part the old one names ("backend",
    "production"), names a part ("the lint job") or an owner ("Austria's") the old one does not,
    or gives one of ``nouns`` (the old title's subject words) a modifier the old text lacks
    ("the data team", "avatar uploads", "the CDN cache"); ``values`` (the old and new values)
    and change words are no modifiers."""
    old, new = tokens(old_text), tokens(new_text)
    known = _known(old)
    so, sn = set(old) & SCOPES, set(new) & SCOPES
    if so - sn:
        return True
    if _new_parts(new_text, known) or any(norm(o) not in known for o in OWNER_RE.findall(new_text)):
        return True
    mn = _modifiers(new_text)
    skip = values | CHANGE_WORDS
    return any(not _is_number(w) for noun in mn.keys() & (nouns | PARTS) for w in mn[noun] - known - skip)


def _narrowed(content: str, known: set[str]) -> bool:
    """Whether the new text narrows what it says to something the old one does not name: an
    opening ("For Acme, ...", "With remember-me checked, ...") or a recurring time ("on
    Fridays")."""
    m = FRONTED_RE.match(content)
    if m is not None and not set(_keys(tokens(m.group(1)))) <= known:
        return True
    if any(norm(w) not in known for w in PERIODIC_RE.findall(content)):
        return True
    return any(not set(_keys(tokens(m))) <= known for m in FOR_RE.findall(content))


def _before_value(content: str, values: set[str]) -> list[str] | None:
    """The key words before ``values`` in the first clause that says one (what the value is
    of), in order, or None when the text does not say a value."""
    for clause in CLAUSE_RE.split(content):
        words = tokens(clause)
        at = [i for i, w in enumerate(words) if values & {w, *re.split(r"[./_-]", w)}]
        if at:  # its last place in the clause ("into 4 shards the suite takes about 4 minutes")
            return [k for k in _keys(words[: at[-1]]) if not _is_number(k) and k not in CHANGE_WORDS]
    return None


def _said(word: str, known: set[str]) -> bool:
    """Whether ``known`` has ``word`` or another form of it ("written" for "write")."""
    return word in known or len(word) >= 4 and any(k[:4] == word[:4] for k in known if len(k) >= 4)


def _value_of_another(
    old: tuple[str, str, set[str]], new: tuple[str, str, set[str]], title: set[str]
) -> bool:
    """Whether the new value is said of something else: a word before the old value is not in
    the new text (a title word: not in its content) and two new ones come before the new value
    ("The read replica is now db2.internal" for "The primary database is db1.internal",
    "Pull-request previews now live at ..." for "Staging lives at ..."), or one takes a gone one's place ("Team Beta now runs"
    for "Team Alpha runs", "Shipping to Switzerland now costs" for "Shipping within Germany
    costs")."""
    (old_text, old_content, old_values), (new_text, new_content, new_values) = old, new
    a, b = _before_value(old_content, old_values), _before_value(new_content, new_values)
    if a is None or b is None:
        return False
    known_old, in_new = _known(tokens(old_text)), _known(b)
    added = [j for j, w in enumerate(b) if w not in title and not _said(w, known_old)]
    if len(added) >= 2 and any(not _said(w, in_new) for w in a):  # a title word counts here
        return True
    if any(b[j] in SCOPES for j in added):  # "The iOS tracker now has 7" for "The tracker has 12"
        return True
    known_new = _known(tokens(new_text))
    gone = [i for i, w in enumerate(a) if w not in title and not _said(w, known_new)]

    def near(words: list[str], i: int) -> tuple[str | None, str | None]:
        return (words[i - 1] if i else None), (words[i + 1] if i + 1 < len(words) else None)

    return any(x is not None and x == y for i in gone for j in added for x, y in zip(near(a, i), near(b, j)))


def _shape(old_t: list[str], new_t: list[str]) -> tuple[str, set[str], set[str]] | None:
    """The slot shape of two titles ("number", "name", "changed", "label") with the old and new values,
    or None."""
    ok, nk = _keys(old_t), _keys(new_t)
    if not (set(ok) & set(nk)) - _values(old_t):
        return None  # no subject word in common
    d_old, d_new = set(ok) - set(nk), set(nk) - set(ok) - CHANGE_WORDS
    v_old, v_new = _values(old_t) & d_old, _values(new_t) & d_new
    if not d_old and not d_new:
        return ("changed", set(), set()) if set(nk) - set(ok) else None
    if not d_old and _labelled(old_t, new_t, d_new):
        return "label", set(), d_new
    numbers = sum(map(_is_number, v_old)), sum(map(_is_number, v_new))
    if numbers[0] and numbers[1] and d_new <= v_new and numbers[0] <= numbers[1]:
        return "number", v_old, v_new
    if v_old or v_new or len(d_old) > 3 or len(d_new) > 3 or not (_at_end(ok, d_old) and _at_end(nk, d_new)):
        return None  # a name is a few words at the end of both titles
    first = min(old_t.index(w) for w in d_old)
    if first and old_t[first - 1] in SUBJECT_PREPOSITIONS:
        return None  # a purpose is a subject ("Cache TTL for search results")
    return "name", d_old, d_new


LABEL_CUES = frozenset({"now", *CHANGE_WORDS})


def _labelled(old_t: list[str], new_t: list[str], d_new: set[str]) -> bool:
    """Whether the old title is a label and the new one says its new value right after it, a
    change said in between ("On-call rotation lead" -> "... is now Dev", "Free plan storage" ->
    "... cut to 500 MB"): the whole old title first, then "is now", "now", "cut to", ...; a
    value of at most three words."""
    n = len(old_t)
    if not d_new or len(d_new) > 3 or new_t[:n] != old_t:
        return False
    rest = new_t[n:]
    rest = rest[1:] if rest[:1] in (["is"], ["are"], ["was"]) else rest
    return bool(rest) and rest[0] in LABEL_CUES


def _at_end(keys: list[str], part: set[str]) -> bool:
    """Whether ``part`` is the tail of a title's key words (its value)."""
    return bool(part) and set(keys[-len(part) :]) == part


def _change_said(kind: str, new_title: str, new_content: str, v_new: set[str]) -> bool:
    """Whether the new memory says its value changed, with no hedge, negation or addition."""
    new_text = f"{new_title}. {new_content}"
    if HEDGE.search(new_title) or HEDGE.search(new_content) or ADDITION.search(new_text):
        return False
    if kind == "changed":
        return bool(CHANGE_CUE.search(new_content))
    return bool(CHANGE_CUE.search(new_title)) or _cue_near(new_content, v_new)


def _old_value_gone(new_t: list[str], new_content: str, v_old: set[str], other_files: bool) -> bool:
    """Whether the new memory no longer says the old value, or only where it retracts it; with
    ``other_files``, retracts it in so many words."""
    if v_old & set(new_t) or _old_value_kept(new_content, v_old):
        return False
    if other_files:
        return _old_value_retracted(new_content, v_old) if v_old else bool(STRONG.search(new_content))
    return True


def _same_subject(old: tuple[str, str], new: tuple[str, str], v_old: set[str], v_new: set[str]) -> bool:
    """Whether the new memory is about what the old one is about (the guards on subjects of
    the module's docstring)."""
    (old_title, old_content), (new_title, new_content) = old, new
    old_t, new_t = tokens(old_title), tokens(new_title)
    old_text, new_text = f"{old_title}. {old_content}", f"{new_title}. {new_content}"
    old_subject = set(_keys(old_t)) - v_old
    if not old_subject <= set(tokens(new_text)):
        return False
    if len(set(_keys(old_t)) - _values(old_t)) == 1 and _unsaid(old_content, new_text, v_old):
        return False  # a frame of one word names little: the new text keeps every word of the old
    if _narrowed(new_content, _known(tokens(old_text))):
        return False
    title = set(_keys(old_t)) | set(_keys(new_t))
    if _value_of_another((old_text, old_content, v_old), (new_text, new_content, v_new), title):
        return False
    return not other_subject(old_text, new_text, old_subject, v_old | v_new)


def slot_change(
    old_title: str, old_content: str, new_title: str, new_content: str, other_files: bool = False
) -> bool:
    """Whether the new memory gives the old one's slot a new value (see the module). With
    ``other_files`` (each names files, none in common) the new text must also retract the old
    value ("the Papertrail handler was removed"): a limit in another file may be another one."""
    if len(old_content) > MAX_TEXT or len(new_content) > MAX_TEXT:
        return False  # a long note says more than one value: its guards would be slow to read
    new_t = tokens(new_title)
    shape = _shape(tokens(old_title), new_t)
    if shape is None:
        return False
    kind, v_old, v_new = shape
    return (
        _change_said(kind, new_title, new_content, v_new)
        and _old_value_gone(new_t, new_content, v_old, other_files)
        and _same_subject((old_title, old_content), (new_title, new_content), v_old, v_new)
    )
