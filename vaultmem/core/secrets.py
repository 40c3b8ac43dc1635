"""Keep secrets and private spans out of memory text.

``redact(text)`` replaces every secret it finds with ``[REDACTED:<kind>]`` and returns the
findings (kind, 1-based line); ``scan(text)`` only reports them (for ``doctor`` and sync, which
never rewrite a person's file); ``redact_title`` keeps titles and file names marker-free;
``strip_private`` drops ``<private>...</private>`` spans.

Detection uses Yelp's detect-secrets (``detect-secrets>=1.5,<2``): its regex plugins' public
``denylist`` patterns run over the whole text (``scan_line`` gives no offsets and, on prose,
flags every word), each match widened to the whole token; its entropy formula and placeholder
heuristics score values in assignment or header position. Patterns it lacks (Anthropic and
new OpenAI keys, Stripe test keys, fine-grained GitHub tokens, whole PEM blocks, basic-auth
URLs with sub-delimiters, password and token assignments, bearer headers) are added here.
Each detector names cheap literals the text must contain first (the prefilter), so prose
costs ~0.15 ms a note. detect-secrets (and ``requests``, which its plugins import: ~140 ms)
loads on the first scan, never on import of this module; no plugin's network ``verify`` runs.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from functools import cache
from types import SimpleNamespace
from typing import Any, NamedTuple, overload

# Values after a secret keyword or in a header (API_KEY=..., token: ..., Bearer ...).
KW_MIN_LEN = 12
KW_MIN_ENTROPY = 3.0  # base64-charset Shannon entropy (detect-secrets' formula)
# Values with no keyword (UPPER_SNAKE= lines, quoted strings): detect-secrets' own default limit.
FREE_MIN_LEN = 20
FREE_MIN_ENTROPY = 4.5
AWS_MIN_ENTROPY = 3.5  # a 40-character key after "aws" in the same line
# Password assignments: an unquoted value must look like a credential.
PW_MIN_LEN_UNQUOTED = 6
PW_MIN_LEN_QUOTED = 4

MARKER_RE = re.compile(r"\[REDACTED:([\w-]+)\]")


class Finding(NamedTuple):
    """One secret found: its kind (e.g. ``github-token``) and 1-based line; never the value."""

    kind: str
    line: int


class Span(NamedTuple):
    """A finding with its character offsets in the text."""

    start: int
    end: int
    kind: str
    line: int


RawSpan = tuple[int, int, str]

from .private import strip_private  # noqa: E402  (part of this module's interface)

# --------------------------------------------------------------------------- detect-secrets


@cache
def _ds() -> SimpleNamespace:
    """detect-secrets' plugins and heuristics, imported on first use (~140 ms)."""
    from detect_secrets.filters.heuristic import is_sequential_string, is_templated_secret
    from detect_secrets.plugins import (
        artifactory,
        aws,
        azure_storage_key,
        basic_auth,
        cloudant,
        discord,
        github_token,
        gitlab_token,
        high_entropy_strings,
        ibm_cloud_iam,
        ibm_cos_hmac,
        jwt,
        mailchimp,
        npm,
        openai,
        pypi_token,
        sendgrid,
        slack,
        softlayer,
        square_oauth,
        stripe,
        telegram_token,
        twilio,
    )  # fmt: skip

    tok, first_word = _extend(_TOKEN_TAIL), _first_word
    made = {  # kind -> (plugin, post-processing of a match); their prefilter needs: _PLUGIN_NEEDS
        "aws-key": (aws.AWSKeyDetector(), tok),
        "github-token": (github_token.GitHubTokenDetector(), tok),
        "gitlab-token": (gitlab_token.GitLabTokenDetector(), tok),
        "slack-token": (slack.SlackDetector(), tok),
        "stripe-key": (stripe.StripeDetector(), tok),
        "openai-key": (openai.OpenAIDetector(), tok),
        "jwt": (jwt.JwtTokenDetector(), _jwt_post),
        "basic-auth": (basic_auth.BasicAuthDetector(), _basic_auth_post),
        "pypi-token": (pypi_token.PypiTokenDetector(), tok),
        "npm-token": (npm.NpmDetector(), first_word),
        "sendgrid-key": (sendgrid.SendGridDetector(), tok),
        "discord-token": (discord.DiscordBotTokenDetector(), tok),
        "twilio-key": (twilio.TwilioKeyDetector(), tok),
        "mailchimp-key": (mailchimp.MailchimpDetector(), None),
        "square-secret": (square_oauth.SquareOAuthDetector(), tok),
        "telegram-token": (telegram_token.TelegramBotTokenDetector(), None),
        "azure-storage-key": (azure_storage_key.AzureStorageKeyDetector(), None),
        "artifactory-token": (artifactory.ArtifactoryDetector(), None),
        "ibm-cloud-key": (ibm_cloud_iam.IbmCloudIamDetector(), None),
        "ibm-cos-key": (ibm_cos_hmac.IbmCosHmacDetector(), None),
        "cloudant-key": (cloudant.CloudantDetector(), None),
        "softlayer-key": (softlayer.SoftlayerDetector(), None),
    }
    plugins = {kind: (*made[kind], needs) for kind, needs in _PLUGIN_NEEDS.items()}
    # not used: IPPublicDetector (an IP is no secret), KeywordDetector and the entropy
    # plugins' own regexes (they run to the end of a prose line or need quotes)
    entropy = high_entropy_strings.Base64HighEntropyString(limit=FREE_MIN_ENTROPY).calculate_shannon_entropy
    return SimpleNamespace(plugins=plugins, entropy=entropy, sequential=is_sequential_string,
                           templated=is_templated_secret, jwt_valid=jwt.JwtTokenDetector.is_formally_valid)  # fmt: skip


LONG = ("<long>",)  # prefilter literal: a run of 20 or more token characters
_PLUGIN_NEEDS: dict[str, list[tuple[Any, ...]]] = {  # a literal, or a pattern searched for  # checked before detect-secrets is even imported
    "aws-key": [("a3t", "akia", "asia", "abia", "acca", "aws")],
    "github-token": [("ghp_", "gho_", "ghu_", "ghs_", "ghr_")],
    "gitlab-token": [("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "gr1348941", "glcbt-", "glimt-", "glptt-",
                      "glagent-", "gloas-")],
    "slack-token": [("xox", "hooks.slack.com")],
    "stripe-key": [("k_live_",)],
    "openai-key": [("t3blbkfj",)],
    "jwt": [("eyj",)],
    "basic-auth": [("://",)],
    "pypi-token": [("pypi-",)],
    "npm-token": [("_authtoken",)],
    "sendgrid-key": [("sg.",), LONG],
    "discord-token": [(re.compile(r"[MNO][\w-]{23,25}\.[\w-]{6}\.[\w-]{27}"),)],
    "twilio-key": [("AC", "SK"), LONG],
    "mailchimp-key": [("-us",), LONG],
    "square-secret": [("sq0csp-",)],
    "telegram-token": [(re.compile(r"\d{8,10}:[\w-]{35}"),)],
    "azure-storage-key": [("accountkey=",)],
    "artifactory-token": [("AKC", "AP")],
    "ibm-cloud-key": [("key", "pwd", "pass", "token"), LONG],
    "ibm-cos-key": [("secret",), LONG],
    "cloudant-key": [("cl",), ("key", "pw", "pass", "token"), LONG],
    "softlayer-key": [(re.compile(r"(?i)(?:softlayer|\bsl)[_-]?(?:api)?[_-]?(?:key|pwd|pass|token)"),), LONG],
}  # fmt: skip

# --------------------------------------------------------------------------- value tests

_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-]*")
_JWT_TAIL = re.compile(r"[A-Za-z0-9_\-.=+/]*")
_PLACEHOLDER_WORDS = {
    "none", "null", "nil", "true", "false", "password", "passwd", "secret", "token", "redacted", "changeme",
    "example", "placeholder", "your_password", "yourpassword", "xxx", "required", "optional", "string", "str",
    "undefined", "empty", "hidden", "masked", "unset", "todo", "tbd", "n/a", "env", "...",
}  # fmt: skip
_REF_RE = re.compile(  # unquoted values that name a value instead of being one
    r"""^(?:
        [a-z_][a-z0-9_]*(?:\.[A-Za-z_]\w*)+(?:\(["'\w.,\ ]*\)?|\[["'\w.,\ ]*\]?)?  # settings.x os.environ[
      | [A-Za-z_]\w*\((?:["'\w.,\ ]*\))?         # getenv(  getenv("X")
      | [A-Za-z_][\w.]*\[[\w.,\ \[\]"']*\]       # Optional[str]
      | [A-Z][A-Z0-9_]*                          # DB_PASSWORD (an environment variable's name)
    )$""",
    re.X,
)
_TEMPLATE_RE = re.compile(  # placeholders, quoted or not
    r"""^(?:
        \$\{?[A-Za-z_][\w.]*\}?                  # $VAR ${VAR}
      | %\([\w.]*\)s|%s                          # %(x)s
      | \{\{.*\}\}|\{[\w.]*\}|<[^<>]*>           # {{ x }} {x} <x>
      | \[REDACTED:[\w-]+\]\S*
      | [*xX.\u2022\u00b7#-]{3,}                 # ******** xxxxxx ....
    )$""",
    re.X,
)
_PATHLIKE = re.compile(r"^(?:~|\.{1,2})?/[\w./-]*$|^https?://[^@\s]*$")
_HEXONLY = re.compile(r"^[0-9a-fA-F]+$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_OBJECT_ID = re.compile(r"^[a-z]{2,8}(?:_(?:test|live))?_[A-Za-z0-9]{6,}$")  # evt_..., cs_test_..., cus_...
_PW_SYMBOLS = set("!@#$%^&*+=?~/\\|-_.:;,()[]{}")


def _is_placeholder(v: str, quoted: bool = False) -> bool:
    """A template, an empty-ish word or (unquoted) a reference such as ``os.environ["X"]``."""
    if not v or v.lower() in _PLACEHOLDER_WORDS or v.startswith("[REDACTED:"):
        return True
    if _TEMPLATE_RE.match(v) or _ds().templated(v):
        return True
    return not quoted and bool(_REF_RE.match(v))


def _credential_like(v: str) -> bool:
    """An unquoted password value that does not read like a word of prose."""
    if len(v) < PW_MIN_LEN_UNQUOTED or _is_placeholder(v) or _PATHLIKE.match(v):
        return False
    if v.isdigit():
        return True  # a PIN
    return any(c.isdigit() for c in v) or any(c in _PW_SYMBOLS for c in v) or any(c.isupper() for c in v[1:])


def _is_alphabet(v: str) -> bool:
    """Strictly ascending characters (an id alphabet such as ``0123456789abcdefghjk...``)."""
    return len(v) >= 10 and all(a < b for a, b in zip(v, v[1:]))


def _token_like(
    v: str, min_len: int = KW_MIN_LEN, min_entropy: float = KW_MIN_ENTROPY, quoted: bool = False
) -> bool:
    """A random-looking token: long enough, letters with digits (or long mixed case), entropic."""
    if len(v) < min_len or _is_placeholder(v, quoted) or _PATHLIKE.match(v):
        return False
    if " " in v or _ds().sequential(v) or _is_alphabet(v) or not any(c.isalpha() for c in v):
        return False
    mixed_case = len(v) >= 20 and any(c.isupper() for c in v) and any(c.islower() for c in v)
    if not any(c.isdigit() for c in v) and not mixed_case:
        return False
    return _ds().entropy(v) >= min_entropy


def _free_token_like(v: str) -> bool:
    """A value with no keyword around it: stricter, and never a hash, uuid or vendor object id."""
    if _HEXONLY.match(v) or _OBJECT_ID.match(v) or _UUID.match(v):
        return False
    return _token_like(v, FREE_MIN_LEN, FREE_MIN_ENTROPY, quoted=True)


# --------------------------------------------------------------------------- match post-processing
# post(text, match, start, end) -> (start, end) or None adjusts a detect-secrets match.
Post = Callable[[str, "re.Match[str]", int, int], "tuple[int, int] | None"]


def _extend(tail: re.Pattern[str]) -> Post:
    """Widen a match to the end of its token (``ghp`` alone, 24-char Stripe prefixes)."""

    def post(text: str, m: re.Match[str], s: int, e: int) -> tuple[int, int]:
        return s, tail.match(text, e).end()  # type: ignore[union-attr]

    return post


def _first_word(text: str, m: re.Match[str], s: int, e: int) -> tuple[int, int] | None:
    """The npm plugin's group runs to the end of the line: keep the token."""
    return (s, s + len(text[s:e].split(None, 1)[0])) if text[s:e].strip() else None


def _jwt_post(text: str, m: re.Match[str], s: int, e: int) -> tuple[int, int] | None:
    """The whole JWT (the plugin's lazy regex leaves the signature out), if it decodes."""
    e = _JWT_TAIL.match(text, e).end()  # type: ignore[union-attr]
    while e > s and text[e - 1] in ".=+/":
        e -= 1
    return (s, e) if _ds().jwt_valid(text[s:e]) else None


def _basic_auth_post(text: str, m: re.Match[str], s: int, e: int) -> tuple[int, int] | None:
    """``user:password`` between ``://`` and ``@`` (the plugin's group is the password only)."""
    if _ds().templated(m.group(1)) or m.group(1).startswith("[REDACTED"):
        return None
    return m.start() + 3, m.end() - 1


# --------------------------------------------------------------------------- supplementary detectors

_LONG_RUN = re.compile(r"[A-Za-z0-9+/=_\-]{20}")
_NB = r"(?<![A-Za-z0-9_\-])"  # a token does not start mid-word
_SUPPLEMENT: list[tuple[str, re.Pattern[str], list[tuple[str, ...]]]] = [
    ("anthropic-key", re.compile(_NB + r"sk-ant-[A-Za-z0-9_\-]{20,}"), [("sk-ant-",)]),
    ("openai-key", re.compile(_NB + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}"), [("sk-",)]),
    ("openai-key", re.compile(_NB + r"sk-[A-Za-z0-9]{32,}(?![A-Za-z0-9_\-])"), [("sk-",)]),
    (
        "api-key",
        re.compile(_NB + r"[sr]k-(?:live|test|prod)-[A-Za-z0-9_\-]{16,}"),
        [("k-live-", "k-test-", "k-prod-")],
    ),
    ("stripe-key", re.compile(_NB + r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"), [("k_live_", "k_test_")]),
    ("stripe-key", re.compile(_NB + r"whsec_[0-9A-Za-z]{24,}"), [("whsec_",)]),
    ("github-token", re.compile(_NB + r"github_pat_[A-Za-z0-9_]{40,}"), [("github_pat_",)]),
    ("slack-token", re.compile(_NB + r"xapp-\d-[A-Za-z0-9\-]{20,}"), [("xapp-",)]),
    ("slack-token", re.compile(_NB + r"xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9\-]{20,}"), [("xoxe",)]),
    ("google-api-key", re.compile(_NB + r"AIza[0-9A-Za-z_\-]{35}"), [("aiza",)]),
    ("huggingface-token", re.compile(_NB + r"hf_[A-Za-z]{34,}"), [("hf_",)]),
    ("shopify-token", re.compile(_NB + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])"), [("shp",)]),
    ("digitalocean-token", re.compile(_NB + r"do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9])"), [("_v1_",)]),
    ("npm-token", re.compile(_NB + r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"), [("npm_",)]),
    ("doppler-token", re.compile(_NB + r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,}"), [("dp.",)]),
    ("linear-key", re.compile(_NB + r"lin_api_[A-Za-z0-9]{40}(?![A-Za-z0-9])"), [("lin_api_",)]),
    ("planetscale-token", re.compile(_NB + r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{32,}"), [("pscale_",)]),
]
# detect-secrets' BasicAuth leaves RFC 3986 sub-delims (!$&'()*+,;=) out of the password.
_BASIC_AUTH_LOOSE = re.compile(r"[a-z][a-z0-9+.\-]*://([^\s:/?#@\[\]]*):([^\s/?#@\[\]]+)@(?=[\w\[])", re.I)
_CURL_USER = re.compile(r"(?:^|\s)(?:-u|--user)[ \t=]+[\"']?([^\s:\"'@/\[]+):([^\s\"']+)")

_PEM_BEGIN = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----|---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----"
)
_PEM_BODY_LINE = re.compile(
    r"\n?[ \t>]*(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment): .*|)[ \t]*(?=\n|$)"
)
_PEM_END = re.compile(r"-{4,5} ?END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}")
_PUTTY = re.compile(r"PuTTY-User-Key-File-\d: .*")
_PUTTY_END = re.compile(r"Private-MAC: [0-9a-fA-F]+")


def _pem_body_end(text: str, pos: int) -> int | None:
    """End of the base64 lines after a BEGIN line with no END (a cut-off paste), or None."""
    end, body = pos, 0
    while pos < len(text):
        lm = _PEM_BODY_LINE.match(text, pos)
        if not lm or lm.end() == pos:
            break
        if lm.group(0).strip():
            body, end = body + 1, lm.end()
        elif body:  # a blank line after the body ends the block
            break
        pos = lm.end()
    return end if body else None


def _after(positions: list[int], pos: int) -> int | None:
    """The first of the sorted ``positions`` at or after ``pos``."""
    i = bisect.bisect_left(positions, pos)
    return positions[i] if i < len(positions) else None


def _private_keys(text: str, out: list[RawSpan]) -> None:
    """Whole armored private-key blocks (detect-secrets matches only the header words).

    Each END line, blank line and newline is found once, so many BEGIN lines cost linear time."""
    ends = {m.start(): m.end() for m in _PEM_END.finditer(text)}
    end_starts, newlines = sorted(ends), [m.start() for m in re.finditer("\n", text)]
    taken = 0
    for m in _PEM_BEGIN.finditer(text):
        if m.start() < taken:
            continue
        end = _after(end_starts, m.end())
        if (
            end is not None
            and bisect.bisect_left(newlines, end) - bisect.bisect_left(newlines, m.end()) <= 200
        ):
            taken = ends[end]
        elif (body_end := _pem_body_end(text, m.end())) is not None:
            taken = body_end - 1 if text[body_end - 1] == "\n" else body_end
        else:
            continue
        out.append((m.start(), taken, "private-key"))
    mac_ends = {m.start(): m.end() for m in _PUTTY_END.finditer(text)}
    mac_starts, blank_lines = sorted(mac_ends), [m.start() for m in re.finditer("\n\n", text)]
    for m in _PUTTY.finditer(text):
        mac = _after(mac_starts, m.end())
        blank = _after(blank_lines, m.end())
        out.append(
            (
                m.start(),
                mac_ends[mac] if mac is not None else blank if blank is not None else len(text),
                "private-key",
            )
        )


# <name containing a keyword> (:|=|:=|=>| is ) <value>; matching starts at the keyword (fast)
_PW_WORDS = r"pass(?:word|wd|phrase|(?![a-z]))|pwd"
_TOKEN_WORDS = (
    r"secret|token|api[_\-]?key|apikey|access[_\-]?key|auth[_\-]?key|private[_\-]?key|client[_\-]?secret|"
    r"credentials?|signing[_\-]?key|session[_\-]?key|encryption[_\-]?key|master[_\-]?key|secret[_\-]?key"
)
_ASSIGN = re.compile(
    r"(?P<kw>" + _PW_WORDS + "|" + _TOKEN_WORDS + r")(?P<suffix>[\w.\-]{0,40})"
    r"(?P<close>[\"'\]`*]{0,3})"
    r"(?:[ \t]*(?P<op>:=|=>|=|:)|[ \t]+(?P<is>is|was)(?:[ \t]+set[ \t]+to)?)[ \t]*[*_]{0,2}[ \t]*@?"
    r"(?:(?P<q>[\"'`])(?P<qval>[^\"'`\n]{1,300}?)(?P=q)|(?P<val>[^\s\"'`]{1,300}))",
    re.I,
)
_NAME_NOT_SECRET = re.compile(
    r"(?i)(?:^|[_\-.])(?:ids?|url|uri|path|file|filename|dir|name|type|len|length|count|"
    r"size|ttl|expiry|expires?|expires_at|at|header|field|prefix|version|limit|policy|"
    r"rotation|hash_alg|algorithm|format|endpoint|store|manager|vault|env|var|provider)$"
    r"|tokens$|^max_|^num_|token_?(?:count|usage|limit|budget)|keyword|tokeniz"
)
_PW_NAME = re.compile(_PW_WORDS, re.I)


def _assigned_value(text: str, m: re.Match[str], name_start: int) -> tuple[str, int, bool]:
    """(value, its offset, quoted?) of an assignment match, trimmed of query and sentence ends."""
    quoted = m.group("qval") is not None
    val = m.group("qval") if quoted else m.group("val")
    start = m.start("qval") if quoted else m.start("val")
    if not quoted:
        if name_start and text[name_start - 1] in "?&":  # ?token=...&page=2
            val = val.split("&", 1)[0]
        if val[-1:] in (".", ",", ";", ")"):  # at most one character of sentence punctuation
            val = val[:-1]
    return val, start, quoted


def _assignment_kind(name: str, val: str, quoted: bool, prose_is: bool) -> str | None:
    """``password``, ``high-entropy`` or None for a value assigned to ``name``."""
    if _NAME_NOT_SECRET.search(name):
        return None
    if _PW_NAME.search(name):
        if quoted:
            ok = len(val) >= PW_MIN_LEN_QUOTED and not _is_placeholder(val, quoted=True)
        else:
            ok = _credential_like(val)
        return "password" if ok else None
    if prose_is:  # "the token is ..." names no token
        return None
    return "high-entropy" if _token_like(val, quoted=quoted) else None


def _assignments(text: str, out: list[RawSpan]) -> None:
    """Values assigned to a password or token name (JSON, YAML, .env, flags, prose ``is``)."""
    for m in _ASSIGN.finditer(text):
        i = m.start()
        while i > 0 and m.start() - i < 40 and (text[i - 1].isalnum() or text[i - 1] in "_.-"):
            i -= 1  # the name's prefix, found backwards
        if m.group("kw").lower() == "pass" and m.start() > i and text[m.start() - 1].islower():
            continue  # bypass: / compass= (DBPASS=, db_pass= still count)
        val, start, quoted = _assigned_value(text, m, i)
        if val and (kind := _assignment_kind(text[i : m.end("suffix")], val, quoted, bool(m.group("is")))):
            out.append((start, start + len(val), kind))


_AUTH_HEADER = re.compile(
    r"(?i)\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?P<scheme>bearer|token|basic|digest|apikey|"
    r"api-key|sso-key|bot)?[ \t]*(?P<val>[A-Za-z0-9._~+/=\-:]{8,})"
)
_BEARER = re.compile(r"(?i)\bbearer[ \t]+(?P<val>[A-Za-z0-9._~+/=\-]{12,})")


def _headers(text: str, out: list[RawSpan]) -> None:
    """``Authorization:`` header values and ``Bearer <token>``."""
    for m in _AUTH_HEADER.finditer(text):
        val = m.group("val").rstrip(".,;\"'")
        if _is_placeholder(val):
            continue
        if (m.group("scheme") or "").lower() == "basic" and len(val) >= 8:
            out.append((m.start("val"), m.start("val") + len(val), "basic-auth"))
        elif _token_like(val, 8):
            out.append((m.start("val"), m.start("val") + len(val), "bearer-token"))
    for m in _BEARER.finditer(text):
        val = m.group("val").rstrip(".,;\"'")
        if _token_like(val):
            out.append((m.start("val"), m.start("val") + len(val), "bearer-token"))


_ENV = re.compile(
    r"(?m)^[ \t>\-*]*(?:export[ \t]+)?(?P<name>[A-Z][A-Z0-9_]{2,})[ \t]*=[ \t]*"
    r"[\"']?(?P<val>[A-Za-z0-9+/=_\-.~]{20,})[\"']?[ \t]*$"
)
_QUOTED = re.compile(r"([\"'])(?P<val>[A-Za-z0-9+/=_\-]{20,})\1")
_KEY_BEFORE = re.compile(r"[\"']?([\w.\-]+)[\"']?\s*[:=]\s*$")


def _free(text: str, out: list[RawSpan]) -> None:
    """High-entropy values with no secret keyword: ``UPPER_SNAKE=`` lines and quoted strings."""
    for rx in (_ENV, _QUOTED):
        for m in rx.finditer(text):
            if rx is _ENV:
                name = m.group("name")
            else:  # a JSON/YAML key in front of the quoted value, if any
                k = _KEY_BEFORE.search(text, max(0, m.start() - 60), m.start())
                name = k.group(1) if k else ""
            if not (name and _NAME_NOT_SECRET.search(name)) and _free_token_like(m.group("val")):
                out.append((m.start("val"), m.end("val"), "high-entropy"))


def _basic_auth_loose(text: str, out: list[RawSpan]) -> None:
    """``scheme://user:pass@host`` with sub-delimiters, and ``curl -u user:pass``."""
    for m in _BASIC_AUTH_LOOSE.finditer(text):
        if (
            not m.group(2).startswith("[")
            and not _ds().templated(m.group(2))
            and not _is_placeholder(m.group(2))
        ):
            out.append((m.start(1) if m.group(1) else m.start(2), m.end(2), "basic-auth"))
    for m in _CURL_USER.finditer(text):
        if not _is_placeholder(m.group(2)) and not m.group(2).startswith("$"):
            out.append((m.start(1), m.end(2), "basic-auth"))


_QVAL = r"""(?P<val>'[^'\n]{1,200}'|"[^"\n]{1,200}"|[^\s'"`;|&]{1,200})"""
_FLAGS = [  # (pattern, needs): a password given on a command line
    (re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb(?:-dump|-admin)?)\b"
                r"[^\n|;&]{0,160}?[ \t]-p" + _QVAL), ("mysql", "mariadb")),
    (re.compile(r"\bsshpass\b[^\n|;&]{0,40}?[ \t]-p[ \t]*" + _QVAL), ("sshpass",)),
    (re.compile(r"\b(?:docker|podman|buildah|skopeo|nerdctl|oras|helm(?:[ \t]+registry)?)[ \t]+login\b"
                r"[^\n|;&]{0,160}?[ \t](?:-p|--password)(?:[ \t]+|=)" + _QVAL), ("login",)),
    (re.compile(r"\bredis-cli\b[^\n|;&]{0,120}?[ \t](?:-a|--pass)[ \t]+" + _QVAL), ("redis-cli",)),
    (re.compile(r"(?<![\w-])--(?:[a-z]+[-_])*(?:password|passwd|pass|pwd|secret|token|api[-_]?key|access[-_]?key|"
                r"secret[-_]?key|auth[-_]?token)[ \t]+" + _QVAL, re.I), ("--",)),
]  # fmt: skip


def _flags(text: str, out: list[RawSpan]) -> None:
    """Passwords given to commands: ``mysql -pX``, ``sshpass -p X``, ``docker login -p X``,
    ``redis-cli -a X``, ``--password X`` (the ``--password=X`` form is an assignment)."""
    pre = _Prefilter(text)
    for rx, needs in _FLAGS:
        if not pre.ok([needs]):
            continue
        for m in rx.finditer(text):
            val, start = m.group("val"), m.start("val")
            quoted = val[0] in "'\"" and val[-1] == val[0] and len(val) > 1
            if quoted:
                val, start = val[1:-1], start + 1
            ok = (len(val) >= PW_MIN_LEN_QUOTED and not _is_placeholder(val, quoted=True)) if quoted else (
                not val.startswith(("-", "$", "%")) and _credential_like(val))  # fmt: skip
            if ok and not val.startswith("$"):
                out.append((start, start + len(val), "password"))


_AWS_PROSE = re.compile(
    r"(?i:aws|amazon)[^\n]{0,80}?(?<![A-Za-z0-9/+=])(?P<val>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
)


def _aws_secret(text: str, out: list[RawSpan]) -> None:
    """A 40-character AWS secret access key within a line after "aws" (prose, no quotes)."""
    for m in _AWS_PROSE.finditer(text):
        v = m.group("val")
        if any(c.isupper() for c in v) and any(c.islower() for c in v) and any(c.isdigit() for c in v) \
                and not _HEXONLY.match(v) and _ds().entropy(v) >= AWS_MIN_ENTROPY:  # fmt: skip
            out.append((m.start("val"), m.end("val"), "aws-key"))


_COOKIE = re.compile(
    r"(?im)(?:\b(?:set-)?cookie[\"']?[ \t]*:|(?<![\w-])(?:-b|--cookie)[ \t]+)[ \t]*[\"']?(?P<jar>[^\n\"']*)"
)
_COOKIE_PAIR = re.compile(r"(?:^|;)[ \t]*(?P<name>[^=;\s]+)=(?P<val>[^;\s]+)")


def _cookies(text: str, out: list[RawSpan]) -> None:
    """Each value of a ``Cookie:`` / ``Set-Cookie:`` header or ``curl -b`` that looks like a token."""
    for m in _COOKIE.finditer(text):
        base = m.start("jar")
        for p in _COOKIE_PAIR.finditer(m.group("jar")):
            val = p.group("val").rstrip(".,)")
            if p.group("name").lower() not in (
                "path",
                "domain",
                "expires",
                "max-age",
                "samesite",
            ) and _token_like(val):
                out.append((base + p.start("val"), base + p.start("val") + len(val), "cookie"))


# --------------------------------------------------------------------------- prefilter and scan


class _Prefilter:
    """What a text contains, tested with C-speed ``in`` before any detector's regex runs."""

    __slots__ = ("text", "lower", "_long")

    def __init__(self, text: str) -> None:
        self.text, self.lower = text, text.lower()
        self._long: bool | None = None

    def _has(self, lit: str | re.Pattern[str]) -> bool:
        if isinstance(lit, re.Pattern):
            return bool(lit.search(self.text))
        if lit == LONG[0]:
            if self._long is None:
                self._long = bool(_LONG_RUN.search(self.text))
            return self._long
        return lit in (self.lower if lit.islower() or not lit.isalpha() else self.text)

    def ok(self, needs: list[tuple[Any, ...]]) -> bool:
        """Every group of ``needs`` has one literal in the text."""
        return all(any(self._has(lit) for lit in group) for group in needs)


_CHECKS: list[tuple[list[tuple[str, ...]], Callable[[str, list[RawSpan]], None]]] = [
    ([("://", "-u", "--user")], _basic_auth_loose),
    ([("pass", "pwd", "secret", "token", "key", "credential")], _assignments),
    ([("authorization", "bearer")], _headers),
    ([("=", '"', "'"), LONG], _free),
    ([("mysql", "mariadb", "sshpass", "login", "redis-cli", "--")], _flags),
    ([("aws", "amazon"), LONG], _aws_secret),
    ([("cookie", "-b")], _cookies),
]
_PEM_NEEDS: list[tuple[str, ...]] = [("-----begin", "---- begin", "putty-user-key")]

# The detectors' regexes (several of detect-secrets' backtrack over a run of token characters from
# every start) see at most SEGMENT characters at once, so a hostile note costs linear time: whole
# lines packed into segments, a longer line cut into windows overlapping by OVERLAP characters
# (a secret up to OVERLAP long lies whole in one window; a longer token is widened at the cut).
SEGMENT = 4096
OVERLAP = 1024


def _segments(text: str) -> Iterator[tuple[int, str, bool]]:
    """(offset, piece, cut mid-line?) covering ``text`` in pieces of at most SEGMENT characters."""
    start = 0
    while len(text) - start > SEGMENT:
        nl = text.rfind("\n", start, start + SEGMENT)
        if nl > start:
            yield start, text[start : nl + 1], False
            start = nl + 1
        else:
            yield start, text[start : start + SEGMENT], True
            start += SEGMENT - OVERLAP
    yield start, text[start:], False


def _plugin_spans(text: str, plugin: object, post: Post | None) -> list[tuple[int, int]]:
    """One detect-secrets plugin's denylist matches, as (start, end) of the whole secret."""
    spans = []
    for rx in plugin.denylist:  # type: ignore[attr-defined]
        for m in rx.finditer(text):
            groups = [i for i in range(1, rx.groups + 1) if m.group(i)]
            s, e = m.span(groups[0]) if groups else m.span()
            if not rx.groups:  # Artifactory's pattern takes the delimiters around the token
                frag = text[s:e]
                s, e = (
                    s + len(frag) - len(frag.lstrip(' \t\n=:"')),
                    e - (len(frag) - len(frag.rstrip(' \t\n"'))),
                )
            if post is not None:
                if (r := post(text, m, s, e)) is None:
                    continue
                s, e = r
            if e > s:
                spans.append((s, e))
    return spans


def _segment_spans(text: str, prefilter: bool) -> list[RawSpan]:
    """Every regex detector's findings in one segment, overlapping, unsorted."""
    pre = _Prefilter(text)
    ok: Callable[[list[tuple[str, ...]]], bool] = pre.ok if prefilter else (lambda needs: True)
    out: list[RawSpan] = []
    wanted = [kind for kind, needs in _PLUGIN_NEEDS.items() if ok(needs)]
    plugins = _ds().plugins if wanted else {}  # detect-secrets is imported only when a plugin may match
    for kind in wanted:
        plugin, post, _ = plugins[kind]
        out += [(s, e, kind) for s, e in _plugin_spans(text, plugin, post)]
    for kind, rx, needs in _SUPPLEMENT:
        if ok(needs):
            out += [(m.start(), m.end(), kind) for m in rx.finditer(text)]
    for needs, check in _CHECKS:
        if ok(needs):
            check(text, out)
    return out


def _raw_spans(text: str, prefilter: bool = True) -> list[RawSpan]:
    """Every detector's findings in ``text``, overlapping, unsorted."""
    out: list[RawSpan] = []
    if not prefilter or _Prefilter(text).ok(_PEM_NEEDS):
        _private_keys(text, out)  # multi-line, linear on the whole text
    for offset, piece, cut in _segments(text):
        tails: dict[re.Pattern[str], int] = {}  # each tail is followed once per window
        for s, e, kind in _segment_spans(piece, prefilter):
            e += offset
            if cut and e == offset + len(piece):  # a token running past the window's end
                tail = _JWT_TAIL if kind == "jwt" else _TOKEN_TAIL
                if tail not in tails:
                    tails[tail] = tail.match(text, e).end()  # type: ignore[union-attr]
                e = tails[tail]
            out.append((offset + s, e, kind))
    return out


# When findings overlap, the more specific kind names the merged one.
_PRIORITY = {k: i for i, k in enumerate([
    "private-key", "anthropic-key", "openai-key", "aws-key", "github-token", "gitlab-token", "slack-token",
    "stripe-key", "google-api-key", "huggingface-token", "jwt", "basic-auth", "pypi-token", "npm-token",
    "sendgrid-key", "discord-token", "twilio-key", "mailchimp-key", "square-secret", "telegram-token",
    "azure-storage-key", "artifactory-token", "ibm-cloud-key", "ibm-cos-key", "cloudant-key", "softlayer-key",
    "shopify-token", "digitalocean-token", "doppler-token", "linear-key", "planetscale-token",
    "api-key", "bearer-token", "password", "cookie", "high-entropy"])}  # fmt: skip
_GENERIC = _PRIORITY["api-key"]


def _merge(spans: list[RawSpan]) -> list[RawSpan]:
    """Overlapping spans joined; a specific kind inside a generic one names the union."""
    merged: list[list] = []
    for s, e, k in sorted(spans, key=lambda t: (t[0], t[0] - t[1], _PRIORITY.get(t[2], 99))):
        if merged and s < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], e)
            if _PRIORITY.get(k, 99) < _PRIORITY.get(last[2], 99) and _PRIORITY.get(last[2], 99) >= _GENERIC:
                last[2] = k
        else:
            merged.append([s, e, k])
    return [(s, e, k) for s, e, k in merged]


def scan_spans(text: str, prefilter: bool = True) -> list[Span]:
    """Every secret in ``text`` with its offsets, in order, overlaps merged."""
    spans = _merge(_raw_spans(text, prefilter))
    newlines = [i for i, c in enumerate(text) if c == "\n"] if len(spans) > 2 else None
    return [
        Span(
            s, e, k, (bisect.bisect_left(newlines, s) if newlines is not None else text.count("\n", 0, s)) + 1
        )
        for s, e, k in spans
    ]


def scan(text: str) -> list[Finding]:
    """The secrets in ``text`` (kind, line), for reports that must not rewrite (doctor, sync)."""
    return [Finding(sp.kind, sp.line) for sp in scan_spans(text)]


def redact(text: str) -> tuple[str, list[Finding]]:
    """``text`` with each secret replaced by ``[REDACTED:<kind>]``, and the findings.

    Idempotent: the result holds nothing ``scan`` reports."""
    spans = scan_spans(text)
    if not spans:
        return text, []
    parts, pos = [], 0
    for sp in spans:
        parts += [text[pos : sp.start], f"[REDACTED:{sp.kind}]"]
        pos = sp.end
    parts.append(text[pos:])
    return "".join(parts), [Finding(sp.kind, sp.line) for sp in spans]


def redact_title(text: str) -> str:
    """A title (or file name) without secrets; the marker becomes the name-safe ``redacted-<kind>``."""
    return MARKER_RE.sub(r"redacted-\1", redact(text)[0])


class Scrubber:
    """Cleans every field of one write that came from a transcript, an agent or an import:
    private spans dropped, secrets redacted; ``kinds`` collects what was redacted."""

    def __init__(self) -> None:
        self.kinds: list[str] = []

    @overload
    def text(self, text: str) -> str: ...
    @overload
    def text(self, text: None) -> None: ...
    def text(self, text: str | None) -> str | None:
        """A body or free text: private spans dropped, each secret replaced by its marker."""
        if not text:
            return text
        new, findings = redact(strip_private(text))
        self.kinds += [f.kind for f in findings]
        return new

    @overload
    def title(self, text: str) -> str: ...
    @overload
    def title(self, text: None) -> None: ...
    def title(self, text: str | None) -> str | None:
        """A title, tag, anchor or file name: the marker becomes ``redacted-<kind>``."""
        new = self.text(text)
        return MARKER_RE.sub(r"redacted-\1", new) if new else new
