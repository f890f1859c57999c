"""Prompts of an exact token length, for throughput sweeps and the speculative-acceptance workload.

Token counting goes through a ``count(text) -> int`` function: the engine's own tokenizer
(``adapter.tokenize``: llama.cpp and vLLM ``/tokenize``) when it has one, else a word-based estimate fitted
against ``usage.prompt_tokens`` of probe requests (:class:`WordEstimate`). The server usually adds a few
tokens of its own (BOS, the chat template): that ``overhead`` is measured once per engine by a probe and
taken off the target, so the server sees exactly ``depth + pp`` prompt tokens.

Layout of a throughput prompt (``\\n`` separators keep the tokenizer from merging across parts):

- cold: ``NONCE\\n CONTEXT\\n BODY``: a random nonce at the very start, so no two requests share a prefix;
- warm: ``CONTEXT\\n NONCE BODY``: every request shares the same ``depth``-token context (measured on purpose,
  after a priming request), and the part after it is unique, so the ``pp`` tokens are really prefilled.

The nonce is made of common words, so its token count is stable; every prompt is verified with ``count``
and its body trimmed or padded until the count is exact (bounded number of calls).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

CountFn = Callable[[str], int]

# Common short English words: one token each in the usual BPE vocabularies (with the leading space).
VOCAB: tuple[str, ...] = tuple(
    """
    the of and to in is it you that he was for on are with as his they be at one have this from or had by
    word but what some we can out other were all there when up use your how said an each she which do their
    time if will way about many then them write would like so these her long make thing see him two has look
    more day could go come did number sound no most people my over know water than call first who may down
    side been now find any new work part take get place made live where after back little only round man year
    came show every good me give our under name very through just form great think say help low line turn
    cause much mean before move right boy old too same tell does set three want air well also play small end
    put home read hand port large spell add even land here must big high such follow act why ask men change
    went light kind off need house picture try us again animal point mother world near build self earth father
    head stand own page should country found answer school grow study still learn plant cover food sun four
    between state keep eye never last let thought city tree cross farm hard start might story saw far sea draw
    left late run while press close night real life few north open seem together next white children begin
    got walk example ease paper group always music those both mark often letter until mile river car feet care
    second book carry took science eat room friend began idea fish mountain stop once base hear horse cut sure
    watch color face wood main enough plain girl usual young ready above ever red list though feel talk bird
    soon body dog family direct pose leave song measure door product black short numeral class wind question
    happen complete ship area half rock order fire south problem piece told knew pass since top whole king
    space heard best hour better true during hundred five remember step early hold west ground interest reach
    fast verb sing listen six table travel less morning ten simple several vowel toward war lay against
    pattern slow center love person money serve appear road map rain rule govern pull cold notice voice unit
    power town fine certain fly fall lead cry dark machine note wait plan figure star box noun field rest
    correct able pound done beauty drive stood contain front teach week final gave green quick develop ocean
    warm free minute strong special mind behind clear tail produce fact street inch multiply nothing course
    stay wheel full force blue object decide surface deep moon island foot system busy test record boat common
    gold possible plane stead dry wonder laugh thousand ago ran check game shape equate hot miss brought heat
    snow tire bring yes distant fill east paint language among
    """.split()
)
PAD_WORDS: tuple[str, ...] = ("a", "the", "and", "of", "to", "in", "is", "it")
NONCE_WORDS = 8  # 8 words from a ~850-word vocabulary: ~2.7e23 combinations


class PromptLengthError(ValueError):
    """The requested length cannot be built (e.g. a target below the fixed parts)."""


def filler_words(n: int, rng: random.Random) -> list[str]:
    return [rng.choice(VOCAB) for _ in range(n)]


def make_nonce(rng: random.Random, n_words: int = NONCE_WORDS) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(max(1, n_words)))


@dataclass
class Fitted:
    text: str
    tokens: int  # as counted by ``count`` (without the server's overhead)
    exact: bool
    calls: int  # count() calls it took
    words: int  # body words used


def fit(
    head: str,
    words: Sequence[str],
    target: int,
    count: CountFn,
    *,
    k0: int | None = None,
    max_calls: int = 24,
) -> Fitted:
    """``head + body`` with ``count(...) == target``, body = a prefix of ``words`` plus padding words.

    ``k0`` is a first guess of the number of body words (e.g. from a previous fit). When no prefix lands
    exactly (a word worth two tokens straddles the target), the longest prefix below it is padded with
    one-token words. ``exact`` says whether the target was met within ``max_calls``.
    """
    calls = 0

    def build(k: int, pad: Sequence[str] = ()) -> str:
        body = " ".join([*words[:k], *pad])
        return head + body if body else head.rstrip(" ")

    def cnt(text: str) -> int:
        nonlocal calls
        calls += 1
        return count(text)

    if target < 0:
        raise PromptLengthError(f"negative token target {target}")
    n_head = cnt(head.rstrip(" ")) if head.strip() else 0
    if n_head > target:
        raise PromptLengthError(
            f"fixed prompt parts alone are {n_head} tokens, more than the target {target}"
        )
    if n_head == target:
        return Fitted(head.rstrip(" "), n_head, True, calls, 0)
    if len(words) == 0:
        raise PromptLengthError("no filler words")
    seen: dict[int, int] = {0: n_head}
    ratio = 1.0  # tokens per body word, refined as we go
    k = max(1, min(len(words), k0 if k0 is not None else int(round(target - n_head))))
    while calls < max_calls:
        n = cnt(build(k))
        seen[k] = n
        if n == target:
            return Fitted(build(k), n, True, calls, k)
        if k > 0 and n > n_head:
            ratio = max(0.2, (n - n_head) / k)
        step = (target - n) / ratio
        k_new = k + (int(round(step)) or (1 if target > n else -1))
        k_new = max(0, min(len(words), k_new))
        if k_new in seen:
            break
        k = k_new
    below = [kk for kk, nn in seen.items() if nn < target]
    k = max(below) if below else 0
    n = seen[k]
    pad: list[str] = []
    i = 0
    while n < target and calls < max_calls + 2 * (target - n) + 8 and i < 4 * len(PAD_WORDS) * 8:
        trial = [*pad, PAD_WORDS[i % len(PAD_WORDS)]]
        i += 1
        m = cnt(build(k, trial))
        if m <= target:
            pad, n = trial, m
    text = build(k, pad)
    return Fitted(text, n, n == target, calls, k)


class WordEstimate:
    """Token count estimate ``round(tokens_per_word * words)`` when the engine has no tokenizer endpoint.

    Fitted from probes: ``(words, usage.prompt_tokens)`` pairs, least squares for slope and intercept;
    the intercept is the server's overhead (BOS / chat template).
    """

    def __init__(self, tokens_per_word: float = 1.3, overhead: float = 0.0) -> None:
        self.tokens_per_word = tokens_per_word
        self.overhead = overhead

    @classmethod
    def from_probes(cls, probes: Sequence[tuple[int, int]]) -> WordEstimate:
        pts = [(float(w), float(t)) for w, t in probes if w > 0]
        if not pts:
            raise ValueError("no probes")
        if len(pts) == 1 or len({w for w, _ in pts}) == 1:
            w, t = pts[0]
            return cls(max(0.2, t / w), 0.0)
        n = len(pts)
        mw = sum(w for w, _ in pts) / n
        mt = sum(t for _, t in pts) / n
        sxx = sum((w - mw) ** 2 for w, _ in pts)
        sxy = sum((w - mw) * (t - mt) for w, t in pts)
        slope = max(0.2, sxy / sxx)
        return cls(slope, max(0.0, mt - slope * mw))

    def __call__(self, text: str) -> int:
        return int(round(self.tokens_per_word * len(text.split())))


def counter_from_tokenize(tokenize: Callable[[str], list[int] | None]) -> CountFn | None:
    """A count function from ``adapter.tokenize``, or None when the engine has no tokenizer endpoint."""
    try:
        probe = tokenize("hello world")
    except Exception:  # noqa: BLE001 - any failure means "no tokenizer"
        return None
    if probe is None:
        return None

    def count(text: str) -> int:
        toks = tokenize(text)
        if toks is None:
            raise RuntimeError("the engine's tokenizer stopped answering")
        return len(toks)

    return count


@dataclass
class BuiltPrompt:
    text: str
    tokens: int  # expected server-side prompt tokens (count + overhead)
    exact: bool
    shared_prefix: str  # the part every request of the point shares ("" for cold)


class ThroughputPrompts:
    """Prompts of ``depth + pp`` server-side tokens for one sweep point (see the module docstring)."""

    def __init__(
        self,
        count: CountFn,
        *,
        pp: int,
        depth: int = 0,
        cache: str = "cold",
        overhead: int = 0,
        seed: int = 0,
    ) -> None:
        if cache not in ("cold", "warm"):
            raise ValueError(f"cache must be cold or warm, got {cache!r}")
        self.count = count
        self.pp = pp
        self.depth = depth
        self.cache = cache
        self.overhead = overhead
        self.target = depth + pp - overhead  # what count() must say for the whole text
        if self.target < 1:
            raise PromptLengthError(f"pp+depth={pp + depth} is not above the server's overhead {overhead}")
        self.rng = random.Random(f"nonce-{seed}-{random.random()}")  # nonces differ run to run
        body_rng = random.Random(f"body-{seed}-{pp}-{depth}")  # body text is reproducible
        self.nonce_words = max(1, min(NONCE_WORDS, pp // 4))
        self.words = filler_words(pp + depth + 64, body_rng)
        self.context = ""
        if depth > 0:
            ctx_words = filler_words(depth + 64, random.Random(f"ctx-{seed}-{depth}"))
            # in warm mode the shared part is context + the server's own overhead
            ctx_target = depth - overhead if cache == "warm" else depth
            if ctx_target < 1:
                ctx_target = 1
            self.context = fit("", ctx_words, ctx_target, count).text
        self._k: int | None = None
        self.calls = 0

    def _head(self, nonce: str) -> str:
        if self.cache == "cold":
            return nonce + "\n" + (self.context + "\n" if self.context else "")
        return (self.context + "\n" if self.context else "") + nonce + " "

    def build(self) -> BuiltPrompt:
        nonce = make_nonce(self.rng, self.nonce_words)
        f = fit(self._head(nonce), self.words, self.target, self.count, k0=self._k)
        self._k = f.words or self._k
        self.calls += f.calls
        shared = self.context + "\n" if (self.cache == "warm" and self.context) else ""
        return BuiltPrompt(f.text, f.tokens + self.overhead, f.exact, shared)


# ----------------------------------------------------------------------------------- spec acceptance

_CODE_TASKS = (
    "Write a complete Python module that implements a least-recently-used cache class with get, put, "
    "delete and resize methods, type hints, docstrings and a small unittest suite.",
    "Write a Python command-line tool that reads a CSV file, groups rows by a column given as an argument, "
    "and prints count, sum, mean and max of another column, using argparse and the csv module.",
    "Write a JavaScript function library for parsing and formatting ISO 8601 dates and durations, with "
    "JSDoc comments and a few example calls at the end.",
    "Write a Rust struct for a fixed-size ring buffer with push, pop, iter and len, including unit tests.",
)
_JSON_TASKS = (
    "Return only a JSON array of 30 objects describing fictional employees, each with the keys id (int), "
    "name, email, department, salary (int), start_date (YYYY-MM-DD) and skills (list of strings).",
    'Return only a JSON object describing a product catalogue: a key "products" holding 25 objects with '
    "sku, title, price, currency, in_stock (bool), tags (list) and dimensions {w, h, d}.",
    "Return only JSON: an array of 30 log events with timestamp, level, service, message and a nested "
    "context object with request_id and user_id.",
)
_PROSE_TASKS = (
    "Continue this story in plain prose for as long as you can, without lists or headings: ",
    "Write a long, rambling travel diary entry in the same style as this passage: ",
    "Keep writing this essay in the same tone, adding new paragraphs: ",
)


def acceptance_prompt(content: str, run: int, *, context: str = "") -> str:
    """The user message for a speculative-acceptance run: code, structured JSON or filler prose."""
    rng = random.Random(f"accept-{content}-{run}")
    if content == "code":
        task = _CODE_TASKS[run % len(_CODE_TASKS)]
    elif content == "json":
        task = _JSON_TASKS[run % len(_JSON_TASKS)]
    elif content == "prose":
        task = _PROSE_TASKS[run % len(_PROSE_TASKS)] + " ".join(filler_words(60, rng)) + "."
    else:
        raise ValueError(f"unknown content kind {content!r} (code, json, prose)")
    if context:
        return "Background notes (ignore them):\n" + context + "\n\n" + task
    return task


def context_text(count: CountFn | None, tokens: int, *, seed: int = 0) -> str:
    """Filler context of ``tokens`` tokens (exact with a counter, else about 1.3 tokens per word)."""
    if tokens <= 0:
        return ""
    words = filler_words(tokens + 64, random.Random(f"actx-{seed}-{tokens}"))
    if count is None:
        return " ".join(words[: max(1, int(tokens / 1.3))])
    return fit("", words, tokens, count).text
