"""parse_prometheus: flat keys with sorted labels, histograms, specials, escapes, timestamps, junk lines."""

from __future__ import annotations

import math

from bench_tui.engine_adapters.prometheus import metric_key, parse_prometheus

VLLM_PAGE = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="qwen"} 2.0
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{model_name="qwen",engine="0"} 1234.0
vllm:prompt_tokens_created{engine="0",model_name="qwen"} 1.7962e+09
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="qwen"} 0.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="qwen"} 7.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="qwen"} 3.5
vllm:time_to_first_token_seconds_count{engine="0",model_name="qwen"} 7.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{position="1",model_name="qwen",engine="0"} 40
"""


def test_sorted_labels_and_histograms() -> None:
    m = parse_prometheus(VLLM_PAGE)
    assert m['vllm:num_requests_running{engine="0",model_name="qwen"}'] == 2.0
    # labels are sorted by key whatever their order on the page
    assert m['vllm:prompt_tokens_total{engine="0",model_name="qwen"}'] == 1234.0
    assert m['vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="qwen"}'] == 0.0
    assert m['vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="qwen"}'] == 7.0
    assert m['vllm:time_to_first_token_seconds_count{engine="0",model_name="qwen"}'] == 7.0
    assert (
        m['vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="qwen",position="1"}']
        == 40
    )
    assert m['vllm:prompt_tokens_created{engine="0",model_name="qwen"}'] == 1.7962e09
    assert not any(k.startswith("#") for k in m) and len(m) == 8


def test_llamacpp_names_without_labels() -> None:
    page = (
        "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.\n"
        "# TYPE llamacpp:prompt_tokens_total counter\n"
        "llamacpp:prompt_tokens_total 33\n"
        "llamacpp:prompt_seconds_total 0.393968\n"
        "llamacpp:requests_processing 0\n"
    )
    assert parse_prometheus(page) == {
        "llamacpp:prompt_tokens_total": 33.0,
        "llamacpp:prompt_seconds_total": 0.393968,
        "llamacpp:requests_processing": 0.0,
    }


def test_special_values_timestamps_and_escapes() -> None:
    page = "\n".join(
        [
            "a_nan NaN",
            "b_inf +Inf",
            "c_ninf -Inf 1700000000000",
            "d_ts 5 1700000000000",
            'e{path="C:\\\\dir",quote="say \\"hi\\"",nl="a\\nb"} 1',
            'f{z="1", a="2",} 3',  # spaces and a trailing comma are allowed
            "g{} 4",
            'h{a="x"} 1.5e3 # {trace_id="abc"} 1.0',  # OpenMetrics exemplar
            "   ",
            "# EOF",
        ]
    )
    m = parse_prometheus(page)
    assert math.isnan(m["a_nan"]) and m["b_inf"] == math.inf and m["c_ninf"] == -math.inf
    assert m["d_ts"] == 5.0
    # label values come back escaped exactly once, labels sorted
    assert m['e{nl="a\\nb",path="C:\\\\dir",quote="say \\"hi\\""}'] == 1.0
    assert m['f{a="2",z="1"}'] == 3.0
    assert m["g"] == 4.0
    assert m['h{a="x"}'] == 1500.0
    assert len(m) == 8


def test_malformed_lines_are_skipped_not_fatal() -> None:
    page = "\n".join(
        [
            "ok 1",
            "no_value",
            'bad{a="unterminated} 2',
            "bad2{a=noquotes} 3",
            "text_value abc",
            "ok2 2",
        ]
    )
    assert parse_prometheus(page) == {"ok": 1.0, "ok2": 2.0}


def test_quoted_metric_names_and_key_helper() -> None:
    m = parse_prometheus('{"my.metric", "label.x"="1", b="2"} 7\n')
    assert m == {'my.metric{b="2",label.x="1"}': 7.0}
    assert metric_key("n", {"b": "2", "a": 'q"'}) == 'n{a="q\\"",b="2"}'
    assert metric_key("n", {}) == "n"


def test_last_duplicate_wins() -> None:
    assert parse_prometheus('x{a="1"} 1\nx{a="1"} 2\n') == {'x{a="1"}': 2.0}
