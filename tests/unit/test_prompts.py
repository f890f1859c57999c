"""Prompt building: exact lengths with a (fake) tokenizer, unique cold prefixes, shared warm prefixes."""

from __future__ import annotations

import re

import pytest

from bench_tui.runner.workloads.prompts import (
    VOCAB,
    PromptLengthError,
    ThroughputPrompts,
    WordEstimate,
    acceptance_prompt,
    context_text,
    counter_from_tokenize,
    fit,
)


def word_tok(text: str) -> int:
    return len(text.split())


def lumpy_tok(text: str) -> int:
    """Long words are several tokens and newlines are tokens: prefixes do not map 1:1 to counts."""
    return sum(1 + len(w) // 5 for w in re.findall(r"\S+", text)) + text.count("\n")


def bytes_tok(text: str) -> int:
    return (len(text.encode()) + 3) // 4


@pytest.mark.parametrize("tok", [word_tok, lumpy_tok, bytes_tok])
@pytest.mark.parametrize("target", [1, 7, 64, 300])
def test_fit_is_exact(tok, target) -> None:
    words = list(VOCAB) * 2
    f = fit("", words, target, tok)
    assert f.exact, (target, f.tokens)
    assert tok(f.text) == target


def test_fit_pads_when_a_two_token_word_straddles_the_target() -> None:
    # every body word is two tokens: no prefix lands on an odd target, padding does
    def tok(text: str) -> int:
        return sum(2 if w.startswith("xx") else 1 for w in text.split())

    f = fit("", ["xxa"] * 50, 9, tok)
    assert f.exact and tok(f.text) == 9
    assert f.text.split()[-1] in ("a", "the", "and", "of", "to", "in", "is", "it")


def test_fit_rejects_heads_longer_than_the_target() -> None:
    with pytest.raises(PromptLengthError):
        fit("one two three four five ", ["x"] * 10, 3, word_tok)


@pytest.mark.parametrize("tok", [word_tok, lumpy_tok])
@pytest.mark.parametrize("cache", ["cold", "warm"])
@pytest.mark.parametrize(("pp", "depth", "overhead"), [(128, 0, 0), (128, 256, 1), (16, 1024, 3)])
def test_throughput_prompts_have_exact_server_length(tok, cache, pp, depth, overhead) -> None:
    tp = ThroughputPrompts(tok, pp=pp, depth=depth, cache=cache, overhead=overhead, seed=3)
    for _ in range(5):
        p = tp.build()
        assert p.exact
        assert tok(p.text) + overhead == depth + pp == p.tokens


def test_cold_prompts_share_no_prefix() -> None:
    tp = ThroughputPrompts(lumpy_tok, pp=64, depth=512, cache="cold", seed=1)
    texts = [tp.build().text for _ in range(40)]
    assert len(set(texts)) == 40
    # the nonce is at the very start: the first few words already differ between any two prompts
    heads = [" ".join(t.split()[:4]) for t in texts]
    assert len(set(heads)) == 40
    assert all(tp.build().shared_prefix == "" for _ in range(3))


def test_warm_prompts_share_the_depth_context_and_differ_after_it() -> None:
    tp = ThroughputPrompts(word_tok, pp=64, depth=300, cache="warm", overhead=2, seed=1)
    prompts = [tp.build() for _ in range(10)]
    shared = prompts[0].shared_prefix
    assert shared and all(p.shared_prefix == shared and p.text.startswith(shared) for p in prompts)
    assert word_tok(shared) + 2 == 300  # the shared part is the depth, counting the server's overhead
    tails = {p.text[len(shared) :] for p in prompts}
    assert len(tails) == 10  # the pp part is unique per request, so it is really prefilled


def test_prompt_target_below_overhead_is_an_error() -> None:
    with pytest.raises(PromptLengthError):
        ThroughputPrompts(word_tok, pp=2, depth=0, overhead=5)


def test_word_estimate_fits_slope_and_intercept() -> None:
    est = WordEstimate.from_probes([(100, 133), (300, 393)])
    assert est.tokens_per_word == pytest.approx(1.3)
    assert est.overhead == pytest.approx(3.0)
    assert est("a b c d e f g h i j") == 13


def test_counter_from_tokenize() -> None:
    assert counter_from_tokenize(lambda text: None) is None

    def broken(text: str) -> list[int]:
        raise OSError("down")

    assert counter_from_tokenize(broken) is None
    c = counter_from_tokenize(lambda text: list(range(word_tok(text))))
    assert c is not None and c("a b c") == 3


@pytest.mark.parametrize("content", ["code", "json", "prose"])
def test_acceptance_prompts(content) -> None:
    a, b = acceptance_prompt(content, 0), acceptance_prompt(content, 1)
    assert a != b
    ctx = context_text(word_tok, 200, seed=0)
    assert word_tok(ctx) == 200
    with_ctx = acceptance_prompt(content, 0, context=ctx)
    assert ctx in with_ctx and with_ctx.endswith(a)
    with pytest.raises(ValueError):
        acceptance_prompt("poetry", 0)


def test_nonces_differ_between_runs() -> None:
    a = ThroughputPrompts(word_tok, pp=32, seed=0).build().text
    b = ThroughputPrompts(word_tok, pp=32, seed=0).build().text
    assert a != b, "two runs of the same point must not share a cold prefix"
