"""Make the int4 genai models of test/models/genai/ as users make theirs: onnxruntime-genai's builder.

    python test/models/make_genai_models.py                      # the committed test models
    python test/models/make_genai_models.py --only llama         # one of them
    python test/models/make_genai_models.py --bench smollm2 -o DIR   # the benchmark's model

Each model is a Hugging Face folder made offline (a transformers config with random weights,
`save_pretrained`, and a word-level tokenizer of the `tokenizers` package), then
`python -m onnxruntime_genai.models.builder -i <folder> -o <out> -p int4 -e cpu`: the model.onnx
(MatMulNBits, GroupQueryAttention, SimplifiedLayerNormalization, ...), its data file,
genai_config.json as the builder writes them, and the HF folder's tokenizer files.

Needs torch, transformers, tokenizers and onnxruntime-genai (not test dependencies: the tests
read the committed models). torch as a CPU build: `pip install torch==2.13.0` alone first (a
CPU wheel), then `pip install transformers tokenizers onnxruntime-genai`; the builder also
imports onnx and onnx-ir, which the test venv has (in a venv of their own: `pip install -c
.ci/constraints.txt onnx onnx-ir`). Seeded: the same package versions make the same weights.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GENAI = os.path.join(HERE, "genai")

# The files of the builder's output a user loads (the builder also writes a copy of the HF
# config and tokenizer extras that neither onnxruntime-genai nor dequant.generate reads).
KEEP = ("model.onnx", "model.onnx.data", "genai_config.json")
# The tokenizer's, from the HF folder: the builder saves the tokenizer through the class
# transformers maps the model type to, and for Qwen2 that rewrites a word-level tokenizer as an
# empty byte-level BPE (every text one token).
TOKENIZER = ("tokenizer.json", "tokenizer_config.json")

# Word-level vocabulary: a few sentences' words, then filler words up to the model's vocabulary.
WORDS = ("the a quick brown fox jumps over lazy dog cat sat on mat and then ran to house of "
         "my friend who is very happy today when sun shines in sky").split()  # fmt: skip
SPECIAL = ("<unk>", "<s>", "</s>")

# name -> (transformers config class, its arguments). Small enough to commit (a few hundred KB
# each) and large enough to hold every op the builder writes: 2 layers, grouped KV heads.
TEST_MODELS = {
    "llama": ("LlamaConfig", dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                  num_key_value_heads=2, vocab_size=256, max_position_embeddings=128)),
    "qwen2": ("Qwen2Config", dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                                  num_key_value_heads=2, vocab_size=320, max_position_embeddings=128, tie_word_embeddings=True)),
    # Phi-3-mini's layout: as many KV heads as heads, fused qkv and gate_up projections, the
    # sliding_window its config states (the builder writes no window into the attention for it).
    "phi3": ("Phi3Config", dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                num_key_value_heads=4, vocab_size=256, max_position_embeddings=128,
                                original_max_position_embeddings=128, sliding_window=2047)),
    # Phi-4-mini's: rotary on 3/4 of each head, grouped KV heads, tied embeddings, LongRoPE
    # (short and long cos/sin caches chosen by an If on the total length). The rotary half-width
    # (24) is a multiple of 8, as onnxruntime's GroupQueryAttention requires; the original context
    # (12) is short enough that the test's decoding crosses it and reads both caches.
    "phi4mini": ("Phi3Config", dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=2,
                                    num_key_value_heads=1, vocab_size=320, max_position_embeddings=128,
                                    original_max_position_embeddings=12, partial_rotary_factor=0.75,
                                    tie_word_embeddings=True, sliding_window=262144,
                                    rope_scaling=dict(type="longrope", rope_type="longrope",
                                                      short_factor=[1.0 + 0.1 * i for i in range(24)],
                                                      long_factor=[1.0 + 2.0 * i for i in range(24)]))),
}  # fmt: skip

# The benchmark's: SmolLM2-135M's dims (a Llama), random weights; generated into a cache dir.
BENCH_MODELS = {
    "smollm2": ("LlamaConfig", dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                                    num_key_value_heads=3, vocab_size=49152, max_position_embeddings=2048,
                                    rope_theta=100000.0, tie_word_embeddings=True)),
}  # fmt: skip

# Random weights at transformers' default scale (0.02) give logits so flat that the greedy token
# is a near-tie; a larger scale gives a distribution with clear winners.
INIT_RANGE = 0.15


def vocabulary(size: int) -> dict:
    words = list(SPECIAL) + WORDS
    words += [f"w{i}" for i in range(size - len(words))]
    return {w: i for i, w in enumerate(words[:size])}


def write_tokenizer(folder: str, size: int) -> None:
    """A word-level tokenizer (split on whitespace) saved as transformers saves a fast one."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(vocabulary(size), unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(cleanup=False)  # words joined by spaces
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>", pad_token="</s>")
    fast.save_pretrained(folder)


def write_hf_folder(folder: str, config_class: str, kwargs: dict, seed: int) -> None:
    import torch
    import transformers

    torch.manual_seed(seed)
    config = getattr(transformers, config_class)(**kwargs, initializer_range=INIT_RANGE, bos_token_id=1, eos_token_id=2,
                                                 pad_token_id=2, torch_dtype="float32")  # fmt: skip
    model = transformers.AutoModelForCausalLM.from_config(config)
    model.save_pretrained(folder)
    write_tokenizer(folder, kwargs["vocab_size"])


def build(name: str, config_class: str, kwargs: dict, out: str, seed: int = 0) -> str:
    """The builder's int4 CPU model of a random-weight HF model, its KEEP files in `out`."""
    with tempfile.TemporaryDirectory() as tmp:
        hf, built = os.path.join(tmp, "hf"), os.path.join(tmp, "out")
        write_hf_folder(hf, config_class, kwargs, seed)
        cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", hf, "-o", built, "-p", "int4", "-e", "cpu",
               "-c", os.path.join(tmp, "cache")]  # fmt: skip
        # No git: the builder stamps producer_version with the commit of the checkout its own
        # files sit in (a venv inside this clone: this clone's HEAD), else its wheel's commit.
        run = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "GIT_DIR": os.path.join(tmp, "no-git")})
        if run.returncode != 0:
            sys.exit(f"{name}: the builder failed:\n{run.stdout[-2000:]}\n{run.stderr[-4000:]}")
        os.makedirs(out, exist_ok=True)
        for folder, files in ((built, KEEP), (hf, TOKENIZER)):
            for f in files:
                shutil.copy(os.path.join(folder, f), os.path.join(out, f))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="*", default=None, choices=list(TEST_MODELS), help="test models to make (default: all)")
    p.add_argument("--bench", choices=list(BENCH_MODELS), help="make the benchmark's model instead, into -o")
    p.add_argument("-o", "--output", default=None, help=f"output directory (default: {os.path.relpath(GENAI)}/<name>)")
    args = p.parse_args(argv)
    if args.bench:
        cls, kw = BENCH_MODELS[args.bench]
        print(build(args.bench, cls, kw, args.output or os.path.join(GENAI, args.bench)))
        return 0
    for name in args.only or TEST_MODELS:
        cls, kw = TEST_MODELS[name]
        out = os.path.join(args.output, name) if args.output else os.path.join(GENAI, name)
        print(build(name, cls, kw, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
