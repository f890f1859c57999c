"""Convert the CPU test model's GGUF into a bf16 Hugging Face folder that vLLM (CPU) can serve.

Run with the vLLM environment's python (it needs torch, transformers, gguf, accelerate):
    .venv-vllm/bin/python scripts/gguf_to_hf.py GGUF_FILE OUT_DIR
transformers dequantizes the GGUF on load but marks the model as GGUF-quantized, which it refuses to
save; so the weights are copied into a plain model built from the same config.
"""

import sys
import time
from pathlib import Path


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: gguf_to_hf.py GGUF_FILE OUT_DIR", file=sys.stderr)
        return 2
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = Path(sys.argv[1]).expanduser().resolve()
    out = Path(sys.argv[2]).expanduser()
    tmp = out.with_name(out.name + ".partial")
    t0 = time.monotonic()
    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    quantized = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16)
    config = quantized.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    result = plain.load_state_dict(quantized.state_dict(), strict=True)
    plain.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    tmp.rename(out)
    print(f"converted {gguf.name} -> {out} in {time.monotonic() - t0:.1f} s ({result})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
