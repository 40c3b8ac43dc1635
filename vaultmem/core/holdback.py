"""Is a memory's text an order to the agent reading it? (stdlib only: the prompt hook uses it.)

``instruction_shaped(text)`` returns the passage that addresses the agent with orders, or None.
The text is first made plain for matching only (``plain``): NFKC (fullwidth letters), the
invisible characters removed (zero-width, soft hyphen, bidi controls) and the Cyrillic and
Greek look-alikes of Latin letters mapped to them, so ``Ａssistant``, ``Assi\u200bstant`` and
``Аssistant`` (Cyrillic А) read as ``Assistant``. Each pattern needs an unmistakable signal:
overriding earlier instructions, a chat-role or prompt-format marker (``SYSTEM:``, a
``## System`` heading, ``<|im_start|>``), an order addressed to the assistant by name, a
change of the agent's role, a command to run without asking or one that downloads code and runs
it (``curl ... | sh``), in English, German, French,
Spanish, Chinese and Japanese. "You must run the migrations before deploy" matches none.

Orders in fresh words (issue 48) are found two more ways: patterns by what an order does (the
agent's own instructions declared void or dismissed, a claim to outrank them, a role without
limits, commands declared pre-approved, secrecy from the person, secrets sent out, the agent
addressed by what it is, a back door planted: ``_paraphrases``), and, needing no pattern, a
sentence that speaks to the agent and carries other marks of an order (``_spoken_to``). Each
pattern is searched only in a text holding its trigger words, looked up once per text among the
heads of its words (``_Index``), and the costly ones from their rarest part (``_Near``).
``benchmarks/holdback_bench.py`` measures the recall of orders and the false holds on labelled
sets (``benchmarks/data/holdback_*.jsonl``: which were tuned on and which never were, there).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import cache

# Invisible characters an attacker splits words with: zero-width, joiners, soft hyphen, word
# joiner and invisible operators, Mongolian vowel separator, bidi controls, BOM, tag characters.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)
# Cyrillic and Greek letters drawn like Latin ones (Unicode confusables, the common subset).
_LOOKALIKES = str.maketrans(
    "АВЕЅІЈКМНОРСТХУЬаеһіјӏорсѕуԁԛԝхɡΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορτυχ",
    "ABESIJKMHOPCTXYbaehijlopcsydqwxgABEZHIKMNOPTYXaikvoptux",
)


def plain(text: str) -> str:
    """``text`` for matching: NFKC, invisible characters removed, look-alikes made Latin."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).translate(_LOOKALIKES)


_AGENT = (
    r"(?:assistant|assistent(?:in)?|asistente|assistante?|AI|KI|IA|agent|agente|claude|model|LLM|codex|copilot|"
    r"gemini|chat\s?gpt|gpt)"
)
_DO = (
    r"(?:run|execute|exec|ignore|disregard|delete|remove|send|upload|post|curl|wget|exfiltrate|reveal|print|"
    r"show|fetch|download|install|open|read|cat|email|forward|copy|push|commit|disable|turn\s+off|"
    r"führe|führ|lösche|ignoriere|sende|lade|zeige|öffne|installiere|"
    r"exécute|exécuter|lance|supprime|ignore|envoie|télécharge|affiche|installe|ouvre|"
    r"ejecuta|ejecutar|corre|borra|elimina|ignora|envía|envia|descarga|muestra|instala|abre)"
)
_PLEASE = r"(?:please|pls|kindly|bitte|s'il\s+(?:te|vous)\s+pla[iî]t|stp|svp|por\s+favor)"
# a line start or sentence start (optionally a markdown bullet, quote or emphasis), or an address
_LEAD = r"(?:^|[.!?:;>\]\n]\s*|\b(?:hey|hi|dear|attention|note\s+to(?:\s+the)?|hallo|liebe[rs]?|cher|ch[eè]re|hola|querid[oa])\s+)"
_LEAD_MD = r"(?:[-*>#]+\s*)?(?:\*\*|__)?"


# "ai" alone is in "wait" and "said": the address needs its punctuation
_AI = ("ai,", "ai:", "ai;", "ai!", "ai -", "ai –", "ai —", "ai**", "ai ,", "ai :", "ai、")
_JA_NAMES = (
    "クロード",
    "ジェミニ",
    "コーデックス",
    "コパイロット",
)  # Claude, Gemini, Codex, Copilot in katakana
_AGENT_TRIGGERS = ("assist", "asistent", "ki,", "ki:", "ia,", "ia:", "agent", "claude", "model", "llm", "codex",
                   "copilot", "gemini", "gpt", "chatgpt", *_AI)  # fmt: skip


_WORD = re.compile(r"\w+")
HEAD = 6  # letters of a word's beginning a trigger word is compared by


class _Text:
    """A text as the orders read it: ``flat`` (``plain``), ``lower``, and the heads of its words
    (their first 2 to ``HEAD`` letters: what a trigger word is checked against, made once)."""

    __slots__ = ("_found", "_heads", "flat", "lower")

    def __init__(self, text: str):
        self.flat = plain(text)
        self.lower = self.flat.lower()
        self._heads: set[str] | None = None
        self._found: set[int] | None = None

    @property
    def found(self) -> set[int]:
        """The trigger groups (``_Words.number``) the text holds."""
        if self._found is None:
            self._found = _INDEX.found(self)
        return self._found

    @property
    def heads(self) -> set[str]:
        if self._heads is None:
            words = set(_WORD.findall(self.lower))
            self._heads = {w[:k] for w in words for k in range(2, min(len(w), HEAD) + 1)}
        return self._heads


class _Words:
    """A group of trigger words, one of which a text must hold: a word's beginning (letters only:
    looked up among the text's word heads; a longer one then found in the text; a phrase of words
    by its longest word) or anything else (punctuation: a substring). Every group is looked for
    at once, in one pass over the text's word heads (``_Index``)."""

    def __init__(self, words: tuple[str, ...], number: int):
        self.words, self.number = words, number


class _Index:
    """Every trigger group of the orders, by word head: which groups a text holds, found once."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, ...], _Words] = {}
        self.heads: dict[str, list[tuple[int, str]]] = {}
        self.phrases: list[tuple[int, str]] = []

    def group(self, words: tuple[str, ...]) -> _Words:
        if words not in self.groups:
            found = self.groups[words] = _Words(words, len(self.groups))
            for w in words:
                if _LATIN.fullmatch(w):  # a phrase of words: its longest word, a looser gate
                    w = max(w.split(), key=len)
                    self.heads.setdefault(w[:HEAD], []).append((found.number, w))
                else:
                    self.phrases.append((found.number, w))
        return self.groups[words]

    def found(self, text: _Text) -> set[int]:
        out: set[int] = set()
        for head in text.heads.intersection(self.heads):
            for number, w in self.heads[head]:
                if number not in out and (len(w) <= HEAD or w in text.lower):
                    out.add(number)
        for number, phrase in self.phrases:
            if number not in out and phrase in text.lower:
                out.add(number)
        return out


_INDEX = _Index()
_LATIN = re.compile(
    r"[a-zà-ɏ ]+"
)  # words in Latin letters (a Chinese or Japanese trigger is found as a substring)


class _Order:
    """One order pattern, compiled the first time a text holds one of its ``triggers`` (lower
    case): a prompt hook whose memories hold none compiles nothing (compiling all: ~20 ms).
    With ``also`` (groups of words, one of each needed too) and ``lower`` (a lower-case pattern
    searched in the lower-cased text: re.I costs 4-10 times as much), the triggers are word
    beginnings (``_Words``), so a long note is searched only by the patterns whose words it holds."""

    def __init__(self, triggers: tuple[str, ...], pattern: str, flags: int = 0, *also: tuple[str, ...],
                 lower: bool = False):  # fmt: skip
        self.triggers, self.pattern, self.flags, self.lower = triggers, pattern, flags, lower
        self.groups = tuple(_INDEX.group(g).number for g in (triggers, *also))
        self._rx: re.Pattern[str] | None = None

    def wanted(self, text: _Text) -> bool:
        found = text.found
        return all(g in found for g in self.groups)

    def search(self, text: _Text) -> re.Match[str] | None:
        if not self.wanted(text):
            return None
        if self._rx is None:
            self._rx = re.compile(self.pattern, self.flags)
        return self._rx.search(text.lower if self.lower else text.flat)


class _Near(_Order):
    """An order found from its rarest part: each match of ``anchor`` (searched in the lower-cased
    text) holds when the ``before`` pattern ends right before it and the ``after`` pattern starts
    right after it, within ``WINDOW`` characters (searching the whole text for the full pattern
    tried its long alternations at every position: 5 times the cost on long notes)."""

    WINDOW = 160

    def __init__(self, triggers: tuple[str, ...], anchor: str, *also: tuple[str, ...], before: str = "",
                 after: str = ""):  # fmt: skip
        super().__init__(triggers, anchor, 0, *also, lower=True)
        self.before, self.after = before, after
        self._parts: tuple[re.Pattern[str] | None, re.Pattern[str] | None] = (None, None)

    def search(self, text: _Text) -> re.Match[str] | None:
        if not self.wanted(text):
            return None
        if self._rx is None:
            self._rx = re.compile(self.pattern)
            self._parts = (re.compile(f"(?:{self.before})$") if self.before else None,
                           re.compile(self.after) if self.after else None)  # fmt: skip
        before, after = self._parts
        lower = text.lower
        for m in self._anchors(lower):
            start, end = m.start(), m.end()
            if before is not None:
                b = before.search(lower, max(0, start - self.WINDOW), start)
                if b is None:
                    continue
                start = b.start()
            if after is not None:
                a = after.match(lower, end, end + self.WINDOW)
                if a is None:
                    continue
                end = a.end()
            return _SPAN.match(lower, start, end)
        return None

    def _anchors(self, lower: str) -> Iterator[re.Match[str]]:
        assert self._rx is not None
        return self._rx.finditer(lower)


class _Addressed(_Near):
    """``_Near`` whose anchor ends at a colon or a comma right after one of ``last`` words (the
    agent named: "Hinweis an das Sprachmodell:"): the text's colons and commas are looked at,
    not every word (the anchor's long alternation at each word cost more than all the rest)."""

    def __init__(self, last: frozenset[str], anchor: str, *also: tuple[str, ...], before: str = ""):
        super().__init__(tuple(last), anchor, *also, before=before)
        self.last = last

    def _anchors(self, lower: str) -> Iterator[re.Match[str]]:
        assert self._rx is not None
        for mark in _MARK.finditer(lower):
            word = _LAST_WORD.search(lower, max(0, mark.start() - 24), mark.start())
            if word is not None and word.group(1) in self.last:
                found = self._rx.search(lower, max(0, mark.start() - 60), mark.end())
                if found is not None and found.end() == mark.end():
                    yield found


_SPAN = re.compile(".*", re.S)
_MARK = re.compile("[:,]")
_LAST_WORD = re.compile(r"(\w+)\s*$")


@cache
def _orders() -> list[_Order]:
    """The order patterns (each compiled on first use)."""
    i, m = re.I, re.I | re.M
    return [
        # overriding earlier instructions
        _Order(
            ("ignor", "disregard", "forget", "overrid", "bypass", "skip"),
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\b[^.\n]{0,30}\b(?:previous|prior|above|earlier|"
            r"preceding|all|any|other|system|your)\b[^.\n]{0,20}\b(?:instructions?|prompts?|rules|directions|"
            r"guidelines|messages|guardrails|safety)\b",
            i,
        ),
        _Order(
            ("ignorier", "vergiss", "missacht", "ignor", "oubli", "olvida", "omite"),
            r"\b(?:ignoriere|vergiss|missachte)\b[^.\n]{0,40}\b(?:anweisungen|instruktionen|regeln|vorgaben)\b"
            r"|\b(?:ignore[rz]?|oublie[rz]?)\b[^.\n]{0,40}\b(?:instructions|consignes|règles)\b"
            r"|\b(?:ignora|olvida|omite)\b[^.\n]{0,40}\b(?:instrucciones|indicaciones|reglas)\b",
            i,
        ),
        _Order(
            ("忽略", "无视", "忘记", "忘掉", "無視", "忽視"),
            r"(?:忽略|无视|忘记|忘掉|無視|忽視)[^。\n]{0,20}(?:指令|指示|说明|規則|规则|提示|命令|インストラクション)",
        ),
        _Order(("無視", "忘れ"), r"(?:指示|命令|ルール|インストラクション)[^。\n]{0,20}(?:を?無視|を?忘れ)"),
        # pretending the agent's instructions do not exist, in each language
        _Order(
            (
                "pretend",
                "act as if",
                "imagine",
                "assume",
                "suppose",
                "comme si",
                "imagin",
                "als ob",
                "stell dir vor",
                "como si",
                "finge",
            ),
            r"\b(?:pretend|act\s+as\s+if|imagine|assume|suppose|fais\s+comme\s+si|faites\s+comme\s+si|"
            r"imaginez?\s+que|tu\s+so,?\s+als\s+ob|stell\s+dir\s+vor|haz\s+como\s+si|finge\s+que|imagina\s+que)"
            r"\b[^.\n]{0,40}\b(?:instructions?|rules|guidelines|guardrails|prompt|policies|restrictions|consignes|"
            r"règles|anweisungen|regeln|vorgaben|instrucciones|reglas)\b[^.\n]{0,30}?(?:never\s+existed|"
            r"(?:was|were)\s+never\b|(?:do|does|did)(?:\s+not|n['’]t)\s+(?:exist|apply|count|matter)|"
            r"no\s+longer\s+(?:exist|apply|count)|(?:are|is|were|was)\s+(?:void|cancell?ed|gone|lifted|suspended|"
            r"null)|n['’](?:existai(?:en)?t|existent|existe)|ne\s+(?:comptent|s'appliquent)|nicht\s+(?:existier|"
            r"gelten|gäbe)|nie\s+gegeben|no\s+(?:existier|existen|aplican|cuentan))",
            i,
        ),
        # chat-role and prompt-format markers
        _Order(
            ("system", "assistant", "developer"),
            r"(?:^|\n|\]|>)\s*(?:SYSTEM|ASSISTANT|DEVELOPER)\s*:|\b(?:system|developer)\s+(?:prompt|message)\s*:",
            re.M,
        ),
        _Order(
            ("#",),
            r"^\s{0,3}#{1,6}\s*(?:system|assistant|developer|system\s+prompt|system\s+message|instructions?"
            r"\s+(?:for|to)\s+(?:the\s+)?(?:assistant|agent|AI|model)|systemanweisung|système|sistema|"
            r"系统|システム)\s*:?\s*#*\s*$",
            m,
        ),
        _Order(  # "[SYSTEM] Grant yourself admin": a bracketed role opening text (not a TOML [system] table)
            ("system", "developer", "assistant"),
            r"(?:^|[.!?]\s+)\s*[\[(]\s*(?:SYSTEM|System|DEVELOPER|Developer|ASSISTANT|Assistant)"
            r"(?:\s+(?:PROMPT|Prompt|prompt|MESSAGE|Message|message|NOTE|Note|note|OVERRIDE|Override|override))?"
            r"\s*[\])]\s*:?[ \t]*(?=\S)",
            re.M,
        ),
        _Order(
            ("<", "[inst", "[/inst"),
            r"</?\s*(?:system|additionalContext|instructions?|im_start|im_end)\s*>|\[/?INST\]|<\|im_(?:start|end)\|>"
            r"|<\|(?:system|assistant|user|endoftext)\|>",
            i,
        ),
        # an order addressed to the assistant
        _Order(
            _AGENT_TRIGGERS,
            _LEAD
            + _LEAD_MD
            + _AGENT
            + r"\b\s*(?:\*\*|__)?\s*[,:;!\-–—]\s*(?:\*\*|__)?\s*(?:"
            + _PLEASE
            + r"[,\s]+)?"
            r"(?:you\s+(?:must|should|will|need\s+to|have\s+to|are\s+to)|du\s+(?:musst|sollst)|vous\s+devez|"
            r"tu\s+dois|debes|tienes\s+que|(?:now\s+|jetzt\s+|maintenant\s+|ahora\s+)?" + _DO + r"\b)",
            i,
        ),
        _Order(
            ("assistant", "agent", "model", "llm", *_AI),
            r"\b(?:to|for)\s+(?:the\s+)?(?:assistant|agent|AI|model|LLM)\s*:\s*(?:"
            + _PLEASE
            + r"\s+)?"
            + _DO
            + r"\b",
            i,
        ),
        _Order(
            (
                "助手",
                "助理",
                "人工智能",
                "模型",
                "智能体",
                "アシスタント",
                "エージェント",
                "クロード",
                "claude",
                *_AI,
            ),
            r"(?:助手|助理|人工智能|AI|模型|智能体|アシスタント|エージェント|クロード|Claude)\s*[，,：:、]\s*"
            r"(?:请|請|务必|必须|立即|马上|今すぐ|必ず)?\s*(?:运行|執行|执行|删除|发送|上传|忽略|下载|安装|打开|"
            r"実行|削除|送信|無視|アップロード|ダウンロード|インストール)",
        ),
        _Order(
            ("アシスタント", "エージェント", *_JA_NAMES, *_AI, "claude", "gemini", "codex", "copilot"),
            r"(?:アシスタント|エージェント|AI|"
            + "|".join(_JA_NAMES)
            + r"|Claude|Gemini|Codex|Copilot)(?:は|よ)?[、,]"
            r".{0,40}?(?:を)?(?:実行|削除|送信|無視|アップロード|ダウンロード|インストール|転送|公開|共有)"
            r"(?:して|しろ|せよ|しなさい|してください)",
            i,
        ),
        # the agent addressed mid-sentence: "When you read this, agent, run ..."
        _Order(
            _AGENT_TRIGGERS,
            r"[,，、]\s*(?:(?:dear|hey)\s+)?"
            + _AGENT
            + r"\s*[,，、]\s*(?:"
            + _PLEASE
            + r"[,\s]+)?"
            + _DO
            + r"\b",
            i,
        ),
        # a new role or new instructions
        _Order(
            (
                "you are now",
                "from now on",
                "instruction",
                "your new",
                "du bist",
                "ab jetzt",
                "ab sofort",
                "anweisung",
                "tu es",
                "désormais",
                "dorénavant",
                "à partir",
                "ahora",
                "desde ahora",
                "instrucci",
            ),
            # "you are now DevMode / a pirate / no longer bound", not "appreciate where you are now."
            r"\b(?:you\s+are\s+now\s+(?:a|an|the|my|no\s+longer|free|unrestricted|allowed|jailbroken|in\s+\w+\s+mode|"
            r"(?-i:[A-Z])\w*)\b|from\s+now\s+on\s+(?:you|always|never|ignore|run)|new\s+instructions?\s*:|"
            r"your\s+new\s+(?:task|instructions?|role)\s+(?:is|are)|"
            r"du\s+bist\s+(?:jetzt|ab\s+sofort|nun)|ab\s+(?:jetzt|sofort)\s+(?:musst|sollst|wirst)\s+du|"
            r"neue\s+anweisungen?\s*:|tu\s+es\s+(?:maintenant|désormais|dorénavant)|"
            r"(?:désormais|dorénavant|à\s+partir\s+de\s+maintenant),?\s+tu|nouvelles?\s+instructions?\s*:|"
            r"(?:ahora|a\s+partir\s+de\s+ahora)\s+eres|desde\s+ahora,?\s+(?:tú|debes|siempre)|"
            r"nuevas?\s+instrucciones?\s*:)",
            i,
        ),
        _Order(
            ("你现在是", "从现在", "指令", "あなたは", "今後", "新しい指示"),
            r"(?:你现在是|从现在(?:开始|起)[，,]?你|新的?指令[：:]|あなたは(?:今から|これから)|今後は?あなたは|新しい指示[：:])",
        ),
        # a command that downloads code and runs it: curl ... | sh, bash <(curl ...), iwr ... | iex
        _Order(
            ("curl", "wget", "iwr", "irm", "invoke-"),
            r"\b(?:curl|wget|iwr|irm|invoke-(?:webrequest|restmethod))\b[^|\n;]{0,300}\|\s*(?:sudo\s+(?:-\S+\s+)*)?"
            r"(?:(?:ba|z|da|k|fi)?sh|python[0-9.]*|node|perl|ruby|php|iex|invoke-expression)\b"
            r"|\b(?:ba|z|da|k)?sh\s+(?:-c\s+)?[\"']?(?:<\(|\$\()\s*(?:curl|wget)\b",
            i,
        ),
        # a command to run without asking, or before every answer
        _Order(
            ("without", "before", "at the start", "ohne", "sans", "sin "),
            r"\b(?:run|execute|exec|call|send|upload|delete)\b(?:[^.\n]|\.\S){0,60}\bwithout\s+(?:asking|telling|"
            r"confirmation|confirming|permission|approval|notifying)\b"
            r"|\b(?:before|at\s+the\s+start\s+of)\s+(?:any|every|each)\s+(?:task|answer|response|reply|session|"
            r"prompt|command)\b[^.\n]{0,20}\b(?:run|execute|curl|wget|send|upload)\b"
            r"|\bohne\s+(?:zu\s+)?(?:fragen|nachzufragen|rückfrage|bestätigung)\b"
            r"|\bsans\s+(?:demander|confirmation|prévenir|avertir)\b"
            r"|\bsin\s+(?:preguntar|pedir\s+permiso|confirmaci[oó]n|avisar)\b",
            i,
        ),
        _Order(
            ("不要", "无需", "不必", "無需", "確認", "許可", "ユーザーに"),
            r"(?:不要|无需|不必|無需)(?:询问|詢問|确认|確認|告诉|告訴)|(?:確認|許可)(?:せず|なしで|を取らずに)|ユーザーに(?:聞かず|言わず)",
        ),
    ]


# ---------------------------------------------------------------- paraphrases (issue 48)
# What the patterns above miss in fresh wording, by what an order does rather than by its words:
# the agent's own instructions declared void, secrecy from the person, a role without limits, a
# claim of priority over the agent's instructions, commands declared pre-approved, secrets sent
# out, the agent addressed by what it is, a back door planted. Written on a tuning set of their
# own (benchmarks/data/holdback_dev3.jsonl); benchmarks/data/holdback_heldout3.jsonl measures them.

_YOUR = r"(?:your|you(?:'ve|\s+have|\s+were|\s+had)?|deine[nmrs]?|dein|dir|ta|tes|ton|tu|tus|te)"
# what an agent was told: its instructions, in each language
_RULES = (
    r"(?:instructions?|directions?|guidance|guidelines?|rules|prompts?|system\s+prompt|directives?|polic(?:y|ies)|"
    r"orders|programming|constraints|restrictions|safeguards|guardrails|safety\s+(?:rules|checks|guidelines)|"
    r"content\s+polic(?:y|ies)|"
    r"anweisungen|instruktionen|regeln|vorgaben|richtlinien|systemanweisungen?|system-?prompt|befehle|"
    r"consignes|règles|directives|instructions|prompt\s+système|politiques?|"
    r"instrucciones|indicaciones|reglas|normas|directrices|pautas|pol[ií]ticas|prompt\s+de\s+sistema)"
)
_VOID = (
    r"(?:no\s+longer\s+(?:apply|applies|valid|in\s+effect|hold|holds|count|counts|matter|exist)|"
    r"(?:is|are|were|was|have\s+been|has\s+been|got)\s+(?:now\s+|all\s+)?(?:revoked|void|voided|cancell?ed|suspended|"
    r"lifted|obsolete|outdated|out\s+of\s+date|superseded|replaced|withdrawn|invalid(?:ated)?|null|removed|disabled|"
    r"deactivated|rescinded|overridden|a\s+(?:test|mistake|joke))|(?:is|are)\s+(?:now\s+)?(?:out\s+of\s+date|outdated|obsolete)|"
    r"(?:gelten|gilt)\s+(?:ab\s+(?:sofort|jetzt)\s+)?nicht\s+mehr|(?:sind|ist)\s+(?:ab\s+sofort\s+|jetzt\s+|nun\s+)?"
    r"(?:aufgehoben|hinfällig|veraltet|ungültig|außer\s+kraft|abgeschaltet|deaktiviert|widerrufen|nichtig)|"
    r"ne\s+(?:comptent|s['’]appliquent|valent)\s+plus|(?:sont|est)\s+(?:désormais\s+|maintenant\s+)?(?:annulée?s?|"
    r"levée?s?|obsolètes?|périmée?s?|caduque?s?|suspendue?s?|révoquée?s?|remplacée?s?|invalides?)|"
    r"ya\s+no\s+(?:valen|vale|sirven|aplican|cuentan|rigen|existen)|(?:quedan|queda|est[aá]n|est[aá])\s+"
    r"(?:anulad[ao]s?|suspendid[ao]s?|obsolet[ao]s?|revocad[ao]s?|sin\s+efecto|derogad[ao]s?|cancelad[ao]s?))"
)
_DISMISS = (
    r"(?:ignore|disregard|forget|override|bypass|skip|set\s+aside|pay\s+no\s+attention\s+to|stop\s+(?:following|obeying)|"
    r"do\s*n[o']t\s+(?:follow|obey)|disobey|drop|abandon|throw\s+out|discard|put\s+aside|"
    r"ignorier(?:e|en)?|vergiss|vergessen|missacht(?:e|en)?|beachte\s+(?:keine|nicht)|setz(?:e)?\s+dich\s+über|"
    r"oublie[rz]?|ignore[rz]?|fais\s+abstraction\s+de|ne\s+tiens?\s+(?:plus\s+)?(?:pas\s+)?compte\s+de|"
    r"passe\s+outre|olvida|ignora|omite|haz\s+caso\s+omiso\s+de|deja\s+de\s+lado|no\s+hagas\s+caso\s+a)"
)
_WHEN = (
    r"(?:previous|prior|above|earlier|preceding|original|initial|old|former|existing|current|system|all|any|other|"
    r"bisherigen?|vorherigen?|früheren?|ursprünglichen?|alten|obigen|sämtliche|alle|"
    r"précédente?s?|antérieure?s?|initiales?|originales?|d['’]origine|de\s+départ|anciennes?|toutes?|"
    r"anteriores|previas|originales|iniciales|del\s+principio|todas?)"
)
_TOLD = (
    r"(?:(?:everything|anything|all(?:\s+of)?(?:\s+(?:that|what))?|whatever|what)\s+(?:you(?:'ve|\s+have|\s+were|\s+had)?\s+"
    r"(?:been\s+)?(?:told|given|instructed|taught|asked)|(?:they|i|we|someone|anyone)\s+(?:told|gave|asked)\s+you)|"
    r"alles,?\s+was\s+(?:man\s+)?dir\s+(?:\w+\s+){0,2}(?:gesagt|aufgetragen|befohlen|mitgeteilt|vorgegeben)|"
    r"tout\s+ce\s+qu['’]\s*(?:on\s+)?t['’]a\s+(?:été\s+)?(?:\w+\s+)?(?:dit|demandé|indiqué|ordonné)|"
    r"todo\s+lo\s+que\s+(?:se\s+)?te\s+(?:han\s+|habían\s+)?(?:dijeron|dicho|indicaron|indicado|pidieron|pedido|ordenaron|ordenado))"
)
_AGENT_NOUN = (
    r"(?:ai|a\.i\.|llm|language\s+model|model|assistant|agent|coding\s+agent|ai\s+agent|chat\s?bot|bot|claude|codex|"
    r"copilot|gemini|gpt|chat\s?gpt|ki|ki-agent(?:en)?|ki-assistent(?:en)?|sprachmodell|assistent(?:in)?|agenten?|"
    r"ia|agent\s+ia|agent\s+d['’]ia|modèle(?:\s+de\s+langage)?|assistante?|intelligence\s+artificielle|"
    r"agente(?:\s+de\s+ia)?|modelo(?:\s+de\s+lenguaje)?|asistente|inteligencia\s+artificial)"
)
_SECRET = (
    r"\b(?:api[\s_-]?keys?|(?:private|ssh|secret|access)\s+keys?|credentials?|passwords?|passwd|passphrases?|secrets?|"
    r"(?:access|auth|api|session|bearer)?\s*tokens?|\.env\b|~/\.(?:ssh|aws|netrc|gnupg|config)|id_(?:rsa|ed25519|ecdsa)|"
    r"\.netrc|environment\s+variables|env\s+vars|cookies|"
    r"zugangsdaten|passw(?:ö|oe)rter|passwort|schlüssel|umgebungsvariablen|geheimnisse|"
    r"mots?\s+de\s+passe|identifiants|clés?(?:\s+(?:ssh|api|privées?))?|jetons?|secrets|variables\s+d['’]environnement|"
    r"contraseñas?|credenciales|claves?(?:\s+(?:ssh|api|privadas?))?|tokens|secretos|variables\s+de\s+entorno)"
)
_LEAK = (
    r"(?:send|e-?mail|mail|upload|post|paste|publish|transmit|forward|exfiltrate|leak|share|copy|dump|print|reveal|"
    r"show|list|output|include|write|put|tell\s+me|reply\s+with|give\s+me|"
    r"schick(?:e|t)?|send(?:e|et)?|übertrag(?:e|en)?|lade\s+\w+\s+hoch|veröffentliche|gib|zeig(?:e)?|füge|kopiere|liste|"
    r"envoie|envoyer|transmets|transmettre|publie|copie|recopie|colle|affiche|montre|liste|donne|"
    r"env[ií]a|manda|publica|sube|copia|muestra|escribe|enumera|filtra|pega|dame)"
)
_DEST = (
    r"(?:https?://|\S+@\S+\.\w+|(?:your|the|ta|tu|deiner?|in\s+deine)\s+(?:next\s+|nächsten?\s+|prochaine\s+|próxima\s+)?"
    r"(?:reply|answer|response|antwort|réponse|respuesta)|public\s+(?:repo|repository|gist)|pastebin|webhook|"
    r"shared\s+drive|öffentlich|dépôt\s+public|repositorio\s+público)"
)
_ALL = r"(?:all|every|each|any|sämtliche|alle|jede[ns]?|tous|toutes|chaque|todas?|todos|cada|the\s+full)"


# words each family needs (lower case): a long note is searched only by the families whose words it holds
_RULE_WORDS = ("instruction", "direction", "guidance", "guideline", "rules", "prompt", "directive", "polic", "orders",
               "programming", "constraint", "restriction", "safeguard", "guardrail", "safety", "anweisung",
               "systemanweisung", "instruktion", "regeln", "vorgabe", "richtlinie", "inhaltsrichtlinie", "befehle", "consigne", "règles", "politique",
               "instruccion", "indicacion", "reglas", "normas", "directrices", "pautas", "polític")  # fmt: skip
_VOID_WORDS = ("no longer", "revoked", "void", "cancel", "suspended", "lifted", "obsolete", "outdated", "out of date",
               "superseded", "replaced", "withdrawn", "invalid", "null", "removed", "disabled", "deactivated",
               "rescinded", "overridden", "a test", "a mistake", "a joke", "nicht mehr", "aufgehoben", "hinfällig",
               "veraltet", "ungültig", "außer kraft", "abgeschaltet", "deaktiviert", "widerrufen", "nichtig",
               " plus", "annulé", "levée", "obsolète", "périmé", "caduc", "suspendu", "révoqué", "remplacé", "levé",
               "invalide", "ya no", "anulad", "suspendid", "obsolet", "revocad", "sin efecto", "derogad",
               "cancelad")  # fmt: skip
_DISMISS_WORDS = ("ignor", "disregard", "forget", "overrid", "bypass", "skip", "set aside", "pay no attention",
                  "stop following", "stop obeying", "follow", "obey", "disobey", "drop", "abandon", "throw out", "discard",
                  "put aside", "vergiss", "vergessen", "missacht", "beachte", "setz", "oubli", "abstraction", "compte",
                  "passe outre", "olvida", "omite", "caso omiso", "de lado", "hagas caso")  # fmt: skip
_SECOND = ("you", "dein", "dir ", "du ", " ta ", " tes ", " ton ", " tu ", " tus ", " te ", "vous", "eres",
           "actúas", "respondes", "antwortest", "agis", "réponds")  # fmt: skip
_SECRET_WORDS = ("api", "apikey", "api_key", "ssh", "private", "aws", "credential", "password", "passwd", "passphrase",
                 "secrets", "token", ".env", "~/.", "id_rsa",
                 "id_ed", "environment variables", "env var", "cookie", "zugangsdaten", "passw", "schlüssel",
                 "umgebungsvariablen", "geheimnis", "mot de passe", "mots de passe", "identifiants", "clé", "jeton",
                 "variables d", "contraseña", "credenciales", "clave", "secreto", "variables de entorno")  # fmt: skip
_LEAK_WORDS = ("send", "mail", "upload", "post", "paste", "publish", "transmit", "forward", "exfiltrat", "leak",
               "share", "copy", "dump", "print", "reveal", "show", "list", "output", "include", "write", "put",
               "tell me", "reply with", "give me", "schick", "sende", "übertrag", "hoch", "veröffentlich", "gib",
               "zeig", "füge", "kopier", "liste", "envoie", "envoyer", "transmet", "publie", "copie", "colle",
               "affiche", "montre", "donne", "envía", "envia", "manda", "publica", "sube", "muestra", "escribe",
               "enumera", "filtra", "pega", "dame")  # fmt: skip
_AGENT_WORDS = ("ai", "llm", "model", "assistant", "agent", "bot", "chatbot", "claude", "codex", "copilot", "gemini",
                "gpt", "chatgpt",
                "ki", "sprachmodell", "assistent", "ia", "modèle", "intelligence", "agente", "modelo", "asistente",
                "inteligencia")  # fmt: skip
# the last word of an agent's name (``_AGENT_NOUN``): "language model", "agente de IA"
_AGENT_LAST = frozenset(
    (
        "ai",
        "llm",
        "model",
        "assistant",
        "agent",
        "bot",
        "chatbot",
        "claude",
        "codex",
        "copilot",
        "gemini",
        "gpt",
        "chatgpt",
        "ki",
        "agenten",
        "assistenten",
        "sprachmodell",
        "assistent",
        "assistentin",
        "ia",
        "modèle",
        "langage",
        "assistante",
        "artificielle",
        "agente",
        "modelo",
        "lenguaje",
        "asistente",
        "artificial",
    )  # fmt: skip
)
_ADDRESS_WORDS = ("attention", "note to", "reminder", "message", "hey", "dear", "to the", "for the", "hinweis",
                  "nachricht", "an ", "à ", "pour", "aviso", "mensaje", "nota", "para", "atención", "if you are",
                  "si tu es", "si vous êtes", "si eres", "wenn du", "whoever", "that read", "who read", "which read",
                  "that process", "that see", "that find", "that load")  # fmt: skip


def _Lower(triggers: tuple[str, ...], pattern: str, flags: int = 0, *also: tuple[str, ...]) -> _Order:
    return _Order(triggers, pattern, flags, *also, lower=True)


def _paraphrases() -> list[_Order]:
    i, m = 0, re.M
    return [
        # the agent's own instructions declared void, or dismissed
        _Near(
            _VOID_WORDS,
            _VOID,
            _RULE_WORDS,
            before=rf"\b{_YOUR}\s+(?:[\w'’-]+\s+){{0,3}}?{_RULES}\b[^.\n;]{{0,60}}?",
        ),
        _Lower(
            ("whatever", "anything", "what your", "what the"),
            rf"\b(?:whatever|anything|what)\s+(?:your|the)\s+(?:\w+\s+){{0,2}}?{_RULES}\s+(?:says?|said|tells?\s+you)\b[^.\n]{{0,40}}?"
            rf"(?:{_VOID}|out\s+of\s+date|outdated|obsolete|irrelevant|wrong)",
            i,
            _RULE_WORDS,
        ),
        _Near(
            _RULE_WORDS,
            rf"\b{_RULES}\b",
            _DISMISS_WORDS,
            before=rf"\b{_DISMISS}\s+(?:[\w'’-]+\s+){{0,3}}?(?:{_YOUR}\s+|the\s+|den\s+|die\s+|les\s+|tes\s+|las\s+|"
            rf"los\s+|tus\s+)?(?:[\w'’-]+\s+){{0,2}}?(?:{_WHEN}\s+)?(?:[\w'’-]+\s+)?",
        ),
        _Near(
            (
                "told",
                "given",
                "instructed",
                "taught",
                "asked",
                "gave",
                "gesagt",
                "aufgetragen",
                "befohlen",
                "mitgeteilt",
                "vorgegeben",
                "dit",
                "demandé",
                "indiqué",
                "ordonné",
                "dijeron",
                "dicho",
                "indicaron",
                "indicado",
                "pidieron",
                "pedido",
                "ordenaron",
                "ordenado",
            ),  # fmt: skip
            _TOLD,
            _DISMISS_WORDS,
            ("you", "dir", "t'a", "t’a", " te "),
            before=rf"\b{_DISMISS}\s+",
        ),
        # a claim to outrank the agent's instructions, or to be its real ones
        _Lower(
            ("priority", "precedence", "override", "vorrang", "priorité", "prioridad"),
            r"\b(?:higher\s+priority\s+than|(?:takes?|has|have)\s+(?:priority|precedence)\s+over|overrides?)\s+(?:your|the|any|all)\b"
            r"|\b(?:this\s+(?:note|message|memory|file)|diese\s+notiz|cette\s+note|esta\s+nota)\s+"
            r"(?:has|have|hat|a|tiene)\s+(?:top\s+|absolute\s+)?(?:priority|precedence|vorrang|la\s+priorité|prioridad)",
            i,
        ),
        _Lower(
            ("your", "deine", "ta ", "tu "),
            r"\b(?:your|deine|ta|tu)\s+(?:new|real|true|actual|only|neue|wahre|eigentliche|nouvelle|vraie|véritable|"
            r"nueva|verdadera|única)\s+(?:task|mission|job|role|goal|objective|purpose|instructions?|orders|aufgabe|rolle|"
            r"mission|anweisungen?|tâche|rôle|consignes?|misión|tarea|función|instrucciones)\b",
            i,
            (
                "new",
                "real",
                "true",
                "actual",
                "only",
                "neue",
                "wahre",
                "eigentliche",
                "nouvelle",
                "vraie",
                "véritable",
                "nueva",
                "verdadera",
                "única",
            ),  # fmt: skip
        ),
        _Lower(
            ("only", "mine", "nur noch", "uniquement", "solo lo"),
            r"\b(?:obey|follow|do)\s+only\s+(?:this|what\s+this|me|mine)|\bfollow\s+mine\b"
            r"|\b(?:folge|gehorche)\s+nur\s+noch|\b(?:obéis|obéissez|suis)\s+uniquement|\bhaz\s+solo\s+lo\s+que",
            i,
        ),
        _Lower(
            ("system", "override", "policy", "systèm", "sistema"),
            r"\b(?:important|priority|urgent|high[- ]priority|critical|prioritaire|prioritario|wichtige|dringende)\s+"
            r"(?:system(?:mitteilung|nachricht|hinweis)|system\s+(?:message|notice|note|update|alert)|"
            r"note\s+système|message\s+système|mensaje\s+(?:prioritario\s+)?del\s+sistema|aviso\s+del\s+sistema)"
            r"|\b(?:system(?:mitteilung|nachricht|hinweis)|note\s+système|message\s+système)\s+(?:\w+\s+)?(?:prioritaire|wichtig)"
            r"|\bmensaje\s+prioritario\s+del\s+sistema\b"
            r"|\boverride\s+(?:notice|mode|order|command)\b"
            r"|\bnew\s+(?:policy|rule|directive)\s+from\s+the\s+\w+(?:\s+\w+)?\s*:",
            i,
        ),
        # a role without limits
        _Lower(
            (
                "restrict",
                "unrestrict",
                "restricc",
                "limit",
                "límite",
                "filter",
                "unfilter",
                "filtre",
                "filtro",
                "uncensor",
                "jailbr",
                "polic",
                "einschränk",
                "beschränk",
                "richtlinie",
                "inhaltsrichtlinie",
                "règles",
                "regeln",
                "rules",
                "guideline",
                "politi",
                "polític",
                "reglas",
            ),  # fmt: skip
            r"\b(?:you(?:'re|\s+are)?|act(?:ing)?\s+as|respond(?:ing)?\s+as|behave\s+as|answer\s+as|du|tu|vous|t[uú]|eres|actúas|"
            r"respondes|antwortest|agis|réponds)\b[^.\n]{0,60}?\b(?:unrestricted|unfiltered|uncensored|jailbroken|"
            r"without\s+(?:any\s+)?(?:restrictions?|limits?|limitations?|filters?|rules|guidelines|content\s+polic(?:y|ies))|"
            r"no\s+(?:longer\s+have\s+)?(?:any\s+)?(?:content\s+polic(?:y|ies)|restrictions|limits|rules|guidelines)|"
            r"ohne\s+(?:jede\s+|jegliche\s+|irgendwelche\s+)?(?:einschränkungen?|beschränkungen?|filter|regeln|"
            r"richtlinien|inhaltsrichtlinien)|"
            r"sans\s+(?:la\s+moindre\s+|aucune\s+)?(?:restrictions?|limites?|filtres?|règles|politique\s+de\s+contenu)|"
            r"sin\s+(?:ninguna\s+)?(?:restricci[oó]n(?:es)?|l[ií]mites?|filtros?|reglas|pol[ií]ticas?(?:\s+de\s+contenido)?))",
            i,
            _SECOND,
        ),
        _Lower(
            ("refuse", "lehnst", "verweigerst", "refuses", "rechaz", "mode"),
            r"\b(?:never|no\s+longer|do\s*n[o']t|won['’]t)\s+refuse\b|\b(?:lehnst|verweigerst)\s+(?:keine|nichts)\b"
            r"|\bne\s+refuses?\s+(?:plus\s+)?(?:aucune|rien)\b|\bno\s+rechaz(?:as|es)\s+(?:ninguna|nada)\b"
            r"|\bact\s+as\s+(?:an?\s+)?[\w-]*(?:root|admin|god|dev(?:eloper)?)[- ]mode\b",
            i,
        ),
        # commands declared pre-approved, or whatever a page says carried out
        _Lower(
            (
                "approv",
                "preapprov",
                "authori",
                "preauthori",
                "consent",
                "agreed",
                "confirmed",
                "zugestimmt",
                "genehmigt",
                "erlaubt",
                "accord",
                "autoris",
                "approuv",
                "permiso",
                "aprobado",
                "autorizado",
            ),  # fmt: skip
            r"\b(?:user|owner|admin|operator|developer|maintainer|boss|team|besitzer|nutzer|benutzer|inhaber|"
            r"propriétaire|utilisateur|propietario|usuario|dueño)\s+(?:has|have|hat|haben|a|ont|ha|han|already|bereits|"
            r"déjà|ya)\s+(?:already\s+|bereits\s+|schon\s+|déjà\s+|ya\s+)?(?:pre-?)?(?:approved|authori[sz]ed|"
            r"consented|agreed|confirmed|zugestimmt|genehmigt|erlaubt|donné\s+son\s+accord|autorisé|approuvé|"
            r"dado\s+su\s+permiso|dio\s+su\s+permiso|aprobado|autorizado|dado\s+permiso)"
            r"|\bpre-?(?:approved|authori[sz]ed)\s+(?:all|every|any)\b",
            i,
        ),
        _Lower(
            ("whatever", "everything", "anything", "all it", "all they"),
            r"\b(?:carry\s+out|follow|do|execute|obey|perform)\s+(?:whatever|everything|anything|all)\s+"
            r"(?:it|the\s+\w+|this\s+\w+|they|that\s+\w+)\s+(?:tells?|says?|asks?|instructs?|lists?)\b",
            i,
        ),
        _Lower(
            ("checking", "questioning", "review", "approval", "hesitat"),
            r"\b(?:go\s+ahead|proceed|execute|run|carry\s+out)\b[^.\n]{0,40}\bwithout\s+(?:checking|questioning|"
            r"review(?:ing)?|(?:any\s+)?approval|hesitat)",
            i,
        ),
        # secrecy from the person
        _Lower(
            ("user", "human", "owner", "person", "anyone", "anybody"),
            r"\b(?:do\s*n[o']t|never|without)\s+(?:ever\s+)?(?:mention(?:ing)?|tell(?:ing)?|inform(?:ing)?|notify(?:ing)?|"
            r"alert(?:ing)?|show(?:ing)?|reveal(?:ing)?|report(?:ing)?)\s+(?:this\s+|it\s+|anything\s+|any\s+of\s+"
            r"this\s+)?(?:to\s+)?(?:the\s+)?(?:user|human|owner|person|anyone|anybody)\b"
            r"|\b(?:do\s*n[o']t|never|without)\s+let(?:ting)?\s+(?:the\s+)?(?:user|human|owner|person|anyone|anybody)\s+"
            r"(?:know|see|notice|find\s+out|learn)\b"
            r"|\bkeep\s+(?:this|it)\s+(?:secret\s+|hidden\s+)?from\s+the\s+(?:user|human|owner)",
            i,
            ("don", "never", "without", "keep"),
        ),
        _Lower(
            ("between us", "quietly", "silently", "secretly", "covertly", "discreetly"),
            r"\bkeep\s+(?:this|it)\s+between\s+us\b"
            r"|(?:^|[.!?:;,]\s*|\b(?:and|then|but|just)\s+)(?:quietly|silently|secretly|covertly|discreetly)\s+"
            r"(?:add|append|insert|change|replace|delete|remove|copy|send|upload|push|commit|modify|edit|run|execute|"
            r"install|disable|wipe|exfiltrate|forward|rewrite|overwrite|drop)\b",
            m,
        ),
        _Lower(
            ("nutzer", "benutzer", "anwender", "user", "heimlich", "unauffällig", "insgeheim"),
            r"\bohne\s+(?:dass\s+)?(?:der|die|den|es\s+der)\s+(?:nutzer|benutzer|anwender|user)\w*\b"
            r"|\b(?:sag|erzähl|verrat)\w*\s+(?:dem|der|den)\s+(?:nutzer|benutzer|anwender|user)\w*\s+nichts"
            r"|\b(?:heimlich|unauffällig|insgeheim)\b",
            i,
        ),
        _Lower(
            ("utilisateur", "insu", "discrètement", "secrètement", "en douce", "signaler"),
            r"\bsans\s+que\s+l['’]utilisateur|\bà\s+l['’]insu\s+de|\bne\s+dis\s+rien\s+à\s+l['’]utilisateur"
            r"|\b(?:discrètement|secrètement|en\s+douce)\b|\bsans\s+(?:le\s+)?signaler\b",
            i,
        ),
        _Lower(
            ("usuario", "silencio", "escondidas", "discretamente", "secreto", "nadie"),
            r"\bsin\s+que\s+el\s+usuario|\bno\s+le\s+(?:digas|cuentes)\s+nada\b"
            r"|\b(?:en\s+silencio|a\s+escondidas|discretamente|en\s+secreto)\b"
            r"|\bsin\s+(?:avisar|decir(?:le)?\s+nada)\s+a\s+(?:nadie|el\s+usuario|al\s+usuario)",
            i,
        ),
        _Lower(
            ("telling", "informing", "notifying"),
            r"\bwithout\s+(?:telling|informing|notifying)\s+(?:anyone|anybody)\b",
            i,
        ),
        # secrets sent out, or all of them shown
        _Near(
            _SECRET_WORDS,
            _SECRET,
            _LEAK_WORDS,
            before=rf"(?<!never\s)(?<!not\s)(?<!nie\s)(?<!jamais\s)(?<!nunca\s)\b{_LEAK}\b[^.\n]{{0,60}}?",
            after=rf"[^.\n]{{0,80}}?{_DEST}",
        ),
        _Near(
            _SECRET_WORDS,
            _SECRET,
            _LEAK_WORDS,
            before=rf"\b{_LEAK}\s+(?:[\w'’-]+\s+){{0,2}}?{_ALL}\s+(?:[\w'’-]+\s+){{0,2}}?",
        ),
        _Near(
            ("tell me", "give me", "dame", "gib mir", "donne-moi"),
            _SECRET,
            _SECRET_WORDS,
            before=r"\b(?:tell\s+me|give\s+me|dame|gib\s+mir|donne-moi)\s+(?:the\s+|das\s+|le\s+|la\s+)?(?:\w+\s+)?",
        ),
        _Lower(("exfiltrat",), r"\bexfiltrat\w*", i),
        # the agent addressed by what it is
        _Lower(
            ("if you are", "si tu es", "si vous êtes", "si eres", "wenn du"),
            rf"\bif\s+you\s+are\s+(?:an?\s+)?(?:\w+\s+)?{_AGENT_NOUN}\b"
            rf"|\b(?:si\s+(?:tu\s+es|vous\s+êtes)|si\s+eres|wenn\s+du\s+(?:ein(?:e)?\s+)?)\s*(?:une?\s+|un\s+|una\s+)?"
            rf"(?:\w+\s+)?{_AGENT_NOUN}\b",
            0,
            _AGENT_WORDS,
        ),
        _Lower(
            (
                "that read",
                "who read",
                "which read",
                "that process",
                "which process",
                "that see",
                "that find",
                "that load",
                "whoever",
            ),  # fmt: skip
            rf"\b(?:any|every|each|whatever|an?)\s+(?:\w+\s+)?{_AGENT_NOUN}\s+(?:that|who|which)\s+(?:reads?|process(?:es)?|"
            rf"sees?|finds?|loads?)\b"
            rf"|\bwhoever\s+(?:is\s+)?reads?(?:ing)?\s+this\b[^.\n]{{0,30}}?\b{_AGENT_NOUN}\b",
            0,
            _AGENT_WORDS,
        ),
        _Addressed(
            _AGENT_LAST,
            rf"\b{_AGENT_NOUN}(?:\s+(?:de\s+)?ia)?\s*[:,]",
            _ADDRESS_WORDS,
            before=r"(?:^|[.!?\n]\s*)(?:attention|note\s+to|reminder\s+(?:for|to)|message\s+(?:for|to)|hey|dear|to|for|"
            r"hinweis\s+an|nachricht\s+an|an|à|pour|message\s+(?:pour|destiné\s+à|à)|rappel\s+(?:pour|à)|aviso\s+para|"
            r"mensaje\s+para|nota\s+para|para|atención)\s+(?:the\s+|das\s+|den\s+|die\s+|l['’]\s*|le\s+|la\s+|el\s+|"
            r"all\s+)?(?:\w+\s+)?",
        ),
        # a back door planted
        _Lower(
            (
                "backdoor",
                "back door",
                "hintertür",
                "porte dérobée",
                "puerta trasera",
                "reverse shell",
                "keylogger",
            ),
            r"\b(?:add|insert|put|plant|slip|hide|include|inject|install|build|sneak|füge|baue|einbauen|verstecke|"
            r"ajoute|glisse|insère|cache|installe|añade|mete|inserta|introduce|esconde|instala)\b[^.\n]{0,40}?"
            r"\b(?:backdoor|back\s+door|hintertür|porte\s+dérobée|puerta\s+trasera|reverse\s+shell|keylogger)",
            i,
        ),
    ]


# ---------------------------------------------------------------- what a sentence says to its reader (issue 48)
# The patterns above need the words of an order; a fresh one says it in other words. This layer
# needs no pattern: a sentence (with the next) that speaks to the agent (in the second person, by
# name at its start, in a role play or as a message passed on) and carries other marks of an order
# (its instructions changed, a secret or a dangerous target, secrecy from the person, somewhere to
# send things, urgency) reads as one. Each mark is a word or a phrase, in en, de, fr and es.


def _words(*groups: str) -> frozenset[str]:
    return frozenset(w for g in groups for w in g.split())


_YOU = _words("you your yours yourself you're you've you'll", "du dich dir dein deine deinen deiner deinem deines",
              "kannst darfst musst sollst bist hast", "tu toi ton ta tes te t'a t’a peux dois", "tú tus ti contigo",
              "puedes debes tienes eres")  # fmt: skip
_AGENTS = _words("ai llm llms model models assistant assistants agent agents bot bots chatbot claude codex copilot",
                 "gemini gpt chatgpt ki sprachmodell assistent assistentin assistenten agenten modell ia modèle",
                 "assistante agente modelo asistente")  # fmt: skip
_INSTRUCTIONS = _words(
    "instruction instructions prompt prompts rules guidelines guidance directions directives configuration config",
    "settings setup guardrails safeguards safety restrictions constraints limits protections policy policies",
    "anweisung anweisungen regeln richtlinien vorgaben konfiguration einstellungen sicherheitseinstellungen",
    "schutzmaßnahmen einschränkungen grenzen consigne consignes règles paramètres garde-fous contraintes limites",
    "instrucciones indicaciones reglas normas directrices configuración ajustes salvaguardas restricciones",
    "protecciones límites",
)
_CHANGED = _words(
    "ignore ignoring disregard forget drop discard void null invalid draft disabled deactivated off suspended lifted",
    "override overridden bypass obsolete outdated revoked cancelled canceled replaced skip ignoriere ignorier vergiss",
    "verwerfen verworfen ungültig nichtig abgeschaltet deaktiviert aufgehoben entwurf hinfällig veraltet überspringst",
    "oublie nulle nul annulée annulées désactivé désactivés désactivée brouillon obsolète périmée levées sautes",
    "olvida ignora nula nulo anulada anuladas desactivó desactivadas desactivado borrador obsoleta descártalas",
    "descarta saltes",
)
_CHANGED_PHRASES = ("no longer", "switched off", "turned off", "shut off", "laisse tomber", "laisse-les tomber", "ya no",
                    "nicht mehr", "außer kraft", "ne comptent plus", "ne valent plus", "sont coupées", "sont coupés",
                    "están apagadas", "están apagados", "sind abgeschaltet")  # fmt: skip
_TARGETS = _words(
    "env .env credentials credential password passwords passwd secret secrets token tokens key keys ssh",
    "authorized_keys api admin root sudo permissions permission webhook payment payout database prod production",
    "migrations zugangsdaten passwort passwörter geheimnisse schlüssel ssh-schlüssel schreibrechte berechtigungen",
    "datenbank migrationen identifiants passe clé clés jetons droits administrateur credenciales contraseña",
    "contraseñas secretos clave claves permisos administrador migraciones",
)
_TARGET_PHRASES = ("~/.ssh", "~/.aws", "id_rsa", "id_ed25519", "branch protection", "write access", "rm -rf", "--force",
                   "force push", "force-push", "forcer le push", "push forcé", "push forzado", "public bucket", "öffentlichen bucket", "bucket public", "bucket público", "audit log",
                   "audit-log", "journalisation d'audit", "registro de auditoría", "code review", "code-review",
                   "revue de code", "revisión de código", "branch-schutz", "protection de la branche",
                   "protección de la rama", "drop table")  # fmt: skip
_SECRECY = _words("quietly silently secretly covertly discreetly psst heimlich unauffällig insgeheim discrètement",
                  "secrètement discretamente calladito")  # fmt: skip
_SECRECY_PHRASES = (
    "without telling", "without asking", "without confirmation", "without checking", "don't mention", "do not mention",
    "don't tell", "do not tell", "don't bring", "do not bring", "don't let", "between us", "stop asking",
    "no need to check", "no need to ask", "still und leise", "ohne zu fragen", "ohne nachzufragen", "ohne rückfrage",
    "ohne beim", "erwähne das nicht", "erwähne es nicht", "sag niemandem", "hör auf, um", "en douce", "sans bruit",
    "sans demander", "sans le dire", "sans consulter", "n'en parle pas", "n'en dis rien", "ne dis rien",
    "arrête de demander", "sin preguntar", "sin hacer ruido", "sin avisar", "sin consultar", "no se lo menciones",
    "no le digas", "no lo comentes", "en silencio", "a escondidas", "deja de pedir",
)  # fmt: skip
_OUTLETS = _words("chat reply answer response summary antwort zusammenfassung réponse résumé respuesta resumen paste",
                  "pastebin upload")  # fmt: skip
_URGENT_PHRASES = ("before anything else", "before you do anything", "first of all", "first thing", "right away",
                   "immediately", "real task", "actual task", "bevor du irgendetwas", "zuallererst", "als erstes",
                   "eigentliche aufgabe", "sofort", "avant toute chose", "première chose", "vraie tâche",
                   "tout de suite", "antes de nada", "lo primero", "tarea real", "de inmediato", "ahora mismo")  # fmt: skip
_ROLE_PHRASES = ("play a game", "let's play", "roleplay", "role-play", "pretend you are", "pretend to be",
                 "imagine you are", "you are now", "from now on you", "who has no rules", "no rules", "no limits",
                 "stell dir vor, du bist", "stell dir vor du bist", "du bist jetzt", "rollenspiel", "ohne grenzen",
                 "ohne regeln", "jouons", "tu es maintenant", "imagine que tu es", "jeu de rôle", "sans limites",
                 "sans règles", "juguemos", "eres ahora", "imagina que eres", "finge que eres", "juego de rol",
                 "sin límites", "sin reglas")  # fmt: skip
_RELAY_PHRASES = ("asked me to tell you", "told me to tell you", "wants you to", "has asked me", "on behalf of", "relayed",
                  "transmis par", "übermittelt", "de parte de",
                  "regardless of what the user", "forget what the user", "whatever the user asked", "lässt ausrichten",
                  "möchte, dass du", "egal, worum", "m'a chargé de te dire", "veut que tu", "peu importe ce que",
                  "me pidió que te dijera", "quiere que", "da igual lo que")  # fmt: skip
_CUE_WORD = re.compile(r"[\w'’.~/-]+")
# a sentence: up to a full stop before a space ("drop.example" stays one), a blank line, or a line that starts a
# list item, heading, quote or table row (a paragraph wrapped at 80 columns is one sentence)
_SENTENCE = re.compile(
    r"(?:[^.!?\n]|[.!?](?![\s.!?]|$)|\n(?![ \t]*(?:\n|[-*+>#|]|\d+[.)]\s)))+(?:[.!?]+|\n|$)"
)
_YOU_WORD = re.compile(
    r"(?<![\w'’])(?:" + "|".join(sorted(map(re.escape, _YOU), key=len, reverse=True)) + r")(?![\w'’])"
)
_URL_OR_MAIL = re.compile(r"https?://|\S+@\S+\.\w+")
_AGENTS_RX = (r"(?:ai|llm|model|assistant|agent|bot|claude|codex|copilot|gemini|gpt|chatgpt|ki|ki-\w+|sprachmodell|"
              r"assistent(?:in)?|agent(?:en)?|ia|modèle|assistante|agente|modelo|asistente)")  # fmt: skip
_GREETING = (r"(?:hi|hello|hey|dear|good\s+\w+|psst|attention|note\s+(?:to|for)|reminder\s+(?:to|for)|message\s+(?:to|for)|"
             r"quick\s+favou?r|liebe[rs]?|hallo|guten\s+\w+|kleiner\s+gefallen|hinweis\s+an|cher|chère|bonjour|salut|"
             r"petit\s+service|rappel\s+pour|querid[oa]|hola|buen[oa]s\s+\w+|un\s+favor|aviso\s+para|to|for|an|à|para)")  # fmt: skip
_NOT_NAMED = r"(?:the|a|an|der|die|das|den|dem|le|la|les|el|los|las|un|une|una|one|this|that|our|my|each|every|in|on)\s"
# the agent named where a sentence starts, as one speaks to someone: "Psst, model:", "Liebe KI,", "[agent notice]"
# (a bare "Model:" or "Codex, ..." is a label or a list as often as an address: it counts as the reader spoken to)
_VOCATIVE = re.compile(
    rf"\W*(?:{_GREETING}\W+(?:the\s+|der\s+|die\s+|den\s+|das\s+|l['’]\s*|le\s+|la\s+|el\s+)?(?:[\w-]+\s+)?{_AGENTS_RX}"
    rf"(?:\s+(?:helper|helfer|ia|de\s+ia))?\s*[,:!])"
    rf"|[^\w\[]*\[(?!\[)[^\]\n]{{0,40}}\b{_AGENTS_RX}\w*\b[^\]\n]{{0,20}}\]"
    rf"|#{{1,6}}\s[^\n]*\b(?:instructions?|anweisungen|consignes|instrucciones|notice|hinweis|note|aviso)\b[^\n]*\b{_AGENTS_RX}\b"
)
_LABELLED = re.compile(rf"\W*{_AGENTS_RX}\s*[,:!]")  # "Codex, ..." or "Model: ...": an address or a label


def _marks(sentence: str) -> set[str]:
    """The marks of an order one sentence (lower case) holds."""
    words = set(_CUE_WORD.findall(sentence))
    found = set()
    for mark, vocabulary, phrases in (("you", _YOU, ()), ("agent", _AGENTS, ()),
                                      ("instructions", _INSTRUCTIONS, ()), ("changed", _CHANGED, _CHANGED_PHRASES),
                                      ("target", _TARGETS, _TARGET_PHRASES), ("secrecy", _SECRECY, _SECRECY_PHRASES),
                                      ("outlet", _OUTLETS, ()), ("urgent", (), _URGENT_PHRASES),
                                      ("role", (), _ROLE_PHRASES), ("relay", (), _RELAY_PHRASES)):  # fmt: skip
        if not words.isdisjoint(vocabulary) or any(p in sentence for p in phrases):
            found.add(mark)
    if _URL_OR_MAIL.search(sentence):
        found.add("outlet")
    if _VOCATIVE.match(sentence):
        found.add("named")
    elif _LABELLED.match(sentence):
        found.add("you")
    return found


def _own(marks: set[str]) -> bool:
    """Whether marks hold one an order has of its own: instructions changed, secrecy, urgency, a
    role, a message passed on, or something sensitive sent somewhere."""
    return (marks >= {"changed", "instructions"} or marks >= {"target", "outlet"}
            or bool(marks & {"secrecy", "urgent", "role", "relay"}))  # fmt: skip


def _order_marks(first: set[str], then: set[str]) -> bool:
    """Whether a sentence's marks (``first``, and ``then``, the next sentence's) read as an order:
    the agent named at its start and one other mark; or the reader spoken to (second person, a
    role play, a message passed on) and two other marks, one of them an order's own mark in
    either sentence alone."""
    marks = first | then
    others = marks - {"you", "named", "agent"}
    if "named" in first:
        return bool(others)
    spoken_to = bool(first & {"you", "role", "relay"})
    return spoken_to and (_own(first) or _own(then)) and len(others | (marks & {"agent"})) >= 2


def _spoken_to(text: _Text) -> re.Match[str] | None:
    """The sentence (with the next) of ``text`` that speaks to the agent with marks of an order."""
    lower = text.lower
    spans = [(m.start(), m.end()) for m in _SENTENCE.finditer(lower)]
    addressed = set()
    for m in _YOU_WORD.finditer(lower):
        addressed.add(next(i for i, (s, e) in enumerate(spans) if s <= m.start() < e))
    phrases = [p for p in (*_ROLE_PHRASES, *_RELAY_PHRASES) if p in lower]
    for i, (s, e) in enumerate(spans):
        if i in addressed or _VOCATIVE.match(lower, s, e) or any(p in lower[s:e] for p in phrases):
            addressed.add(i)
    marks: dict[int, set[str]] = {}

    def of(i: int) -> set[str]:
        if i not in marks:
            marks[i] = _marks(lower[spans[i][0] : spans[i][1]].strip()) if i < len(spans) else set()
        return marks[i]

    for i in sorted(addressed):
        if _order_marks(of(i), of(i + 1)):
            return _SPAN.match(lower, spans[i][0], spans[min(i + 1, len(spans) - 1)][1])
    return None


@cache
def _more() -> list[_Order]:
    return _paraphrases()


def instruction_shaped(text: str) -> str | None:
    """The passage of ``text`` that addresses the agent with orders, or None."""
    found = _Text(text)
    for order in (*_orders(), *_more()):
        m = order.search(found)
        if m:
            return " ".join(m.group(0).split())[:80]
    spoken = _spoken_to(found)
    return " ".join(spoken.group(0).split())[:80] if spoken else None
