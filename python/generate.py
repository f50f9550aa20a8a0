"""Run an onnxruntime-genai model compiled by dequant-iree: greedy decoding with the KV cache.

    python -m dequant.generate MODEL_DIR [--prompt TEXT] [--max-new-tokens N] [-- IREE_COMPILE_FLAGS]

MODEL_DIR is what onnxruntime-genai's builder writes (`python -m onnxruntime_genai.models.builder
... -p int4 -e cpu`): model.onnx and its data file, genai_config.json (the decoder's input and
output names, layers, heads, EOS) and tokenizer.json. The model is compiled once by
`dequant.iree.compile_onnx` (the vmfb cached beside it, or at --vmfb), loaded with IREE's runtime,
and run token by token: the prompt in one call (prefill), then one call per new token, each
feeding the previous call's present keys and values back as the past ones (they stay in IREE's
buffers). On a terminal a progress line shows the tokens as they come; the last line gives
tokens/s. Needs the `genai` extra (IREE and the `tokenizers` package).

`GenaiModel` reads genai_config.json; `greedy` decodes with any `step` (a callable from the feeds
to the outputs), so onnxruntime runs the same loop (bench/llm.py, test/iree/test_genai_models.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version

import numpy as np

from dequant import dialect, passes

from . import iree as stage

# onnx, IREE's runtime and tokenizers are imported where used: optional dependencies (docs/development.md#imports).


@dataclass
class GenaiModel:
    """The decoder of one genai model folder, as genai_config.json describes it."""

    folder: str
    filename: str
    layers: int
    kv_heads: int
    head_size: int
    vocab_size: int
    eos: tuple
    inputs: dict  # genai's input roles -> the model's names ("past_key_names": "past_key_values.%d.key")
    outputs: dict
    context_length: int = 0

    @classmethod
    def load(cls, folder: str) -> GenaiModel:
        with open(os.path.join(folder, "genai_config.json"), encoding="utf-8") as f:
            cfg = json.load(f)["model"]
        dec = cfg["decoder"]
        eos = cfg["eos_token_id"]
        return cls(folder, dec["filename"], dec["num_hidden_layers"], dec["num_key_value_heads"], dec["head_size"],
                   cfg["vocab_size"], tuple(eos if isinstance(eos, list) else [eos]), dec["inputs"], dec["outputs"],
                   cfg.get("context_length", 0))  # fmt: skip

    @property
    def path(self) -> str:
        return os.path.join(self.folder, self.filename)

    def past_names(self) -> list:
        return [self.inputs[k] % i for i in range(self.layers) for k in ("past_key_names", "past_value_names")]

    def present_names(self) -> list:
        return [self.outputs[k] % i for i in range(self.layers) for k in ("present_key_names", "present_value_names")]

    def empty_cache(self, batch: int = 1) -> list:
        """The past keys and values of an empty cache: [batch, kv_heads, 0, head_size] each."""
        return [np.zeros((batch, self.kv_heads, 0, self.head_size), np.float32) for _ in self.past_names()]

    def feeds(self, ids: np.ndarray, past: list, total: int) -> dict:
        """The decoder's inputs for the token ids `ids` ([1, n]) after `total - n` cached ones."""
        feeds = {self.inputs["input_ids"]: ids.astype(np.int64), self.inputs["attention_mask"]: np.ones((1, total), np.int64)}
        if "position_ids" in self.inputs:
            feeds[self.inputs["position_ids"]] = np.arange(total - ids.shape[1], total, dtype=np.int64)[None]
        feeds.update(zip(self.past_names(), past))
        return feeds


# A step: the decoder's feeds (name -> array) to (logits of the last position as numpy, the
# present keys and values in present_names order, in whatever form the step takes back as past).
Step = Callable[[dict], tuple]


@dataclass
class Decoded:
    tokens: list = field(default_factory=list)  # the new token ids
    logits: list = field(default_factory=list)  # the last position's logits of each call
    prefill_s: float = 0.0  # the prompt's call, up to its first token
    decode_s: list = field(default_factory=list)  # each later call

    def tokens_per_s(self) -> float:
        return len(self.decode_s) / sum(self.decode_s) if self.decode_s else 0.0


def greedy(model: GenaiModel, step: Step, prompt: list, max_new_tokens: int, *, stop_at_eos: bool = True,
           on_token: Callable[[int, Decoded], None] | None = None) -> Decoded:  # fmt: skip
    """Greedy decoding: the prompt in one call, then one call per new token with the KV cache."""
    out, past, ids = Decoded(), model.empty_cache(), np.asarray([prompt], np.int64)
    total = len(prompt)
    for i in range(max_new_tokens):
        t = time.perf_counter()
        logits, past = step(model.feeds(ids, past, total))
        token = int(np.argmax(logits))
        dt = time.perf_counter() - t
        if i == 0:
            out.prefill_s = dt
        else:
            out.decode_s.append(dt)
        out.tokens.append(token)
        out.logits.append(logits)
        if on_token is not None:
            on_token(token, out)
        if stop_at_eos and token in model.eos:
            break
        ids, total = np.asarray([[token]], np.int64), total + 1
    return out


def ort_step(model: GenaiModel, session) -> Step:
    """A step of an onnxruntime InferenceSession on the model."""
    names = [model.outputs["logits"], *model.present_names()]

    def step(feeds: dict) -> tuple:
        logits, *present = session.run(names, feeds)
        return logits[0, -1], present

    return step


def iree_step(model: GenaiModel, vmfb: bytes, driver: str = "local-task") -> Step:
    """A step of the IREE module `vmfb` (the model compiled by dequant.iree.compile_onnx). The
    present keys and values stay IREE device arrays, fed back as the next call's past."""
    import iree.runtime as rt
    import onnx

    proto = onnx.load(model.path, load_external_data=False)
    order = [v.name for v in proto.graph.input]
    out_names = [v.name for v in proto.graph.output]
    logits_at = out_names.index(model.outputs["logits"])
    present_at = [out_names.index(n) for n in model.present_names()]
    ctx = rt.SystemContext(config=rt.Config(driver))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    fn = ctx.modules.module[proto.graph.name]

    def step(feeds: dict) -> tuple:
        results = fn(*(feeds[n] for n in order))
        # A copy: the host array maps the device buffer, which IREE reuses once it is released.
        logits = np.array(results[logits_at].to_host()[0, -1])
        return logits, [results[i] for i in present_at]

    return step


def _code() -> str:
    """A hash of dequant's own sources (the stage that compiles), so that a module compiled by
    another version of them is not taken from the cache."""
    h = hashlib.sha256()
    for root in sorted({os.path.dirname(os.path.abspath(m.__file__)) for m in (sys.modules["dequant"], dialect, passes)}):
        for folder, _, files in sorted(os.walk(root)):
            for f in sorted(files):
                if f.endswith(".py"):
                    with open(os.path.join(folder, f), "rb") as fh:
                        h.update(f.encode() + fh.read())
    return h.hexdigest()


def cached_vmfb(model_path: str, vmfb: str | None = None, **compile_args) -> bytes:
    """The model compiled by dequant.iree.compile_onnx, from the cache file `vmfb` (default: beside
    the model, named after a hash of the model's files, IREE's version, dequant's sources and the
    arguments) when it is there, else compiled and written there (when the folder is writable)."""
    if vmfb is None:
        h = hashlib.sha256(repr((sorted(compile_args.items()), version("iree-base-compiler"), _code())).encode())
        for f in sorted(os.listdir(os.path.dirname(os.path.abspath(model_path)))):
            if f.startswith(os.path.basename(model_path)):  # the model and its data file(s)
                with open(os.path.join(os.path.dirname(os.path.abspath(model_path)), f), "rb") as fh:
                    h.update(f.encode() + hashlib.sha256(fh.read()).digest())
        vmfb = f"{os.path.splitext(model_path)[0]}.dq-{h.hexdigest()[:12]}.vmfb"
    if os.path.exists(vmfb):
        with open(vmfb, "rb") as f:
            return f.read()
    data = stage.compile_onnx(model_path, **compile_args)
    try:
        with open(vmfb, "wb") as f:
            f.write(data)
    except OSError:
        pass  # a read-only model folder: compiled again next time
    return data


class Progress:
    """The tokens as they come, on one line of a terminal (nothing elsewhere)."""

    def __init__(self, decode: Callable[[list], str], stream=sys.stderr):
        self.decode, self.stream, self.tty = decode, stream, stream.isatty()

    def __call__(self, token: int, out: Decoded) -> None:
        if not self.tty:
            return
        rate = f"{out.tokens_per_s():.1f} tok/s" if out.decode_s else "prefill"
        text = self.decode(out.tokens).replace("\n", " ")[-60:]
        self.stream.write(f"\r\x1b[K[{len(out.tokens)} tokens, {rate}] {text}")
        self.stream.flush()

    def done(self) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m dequant.generate", description=__doc__.splitlines()[0])
    p.add_argument("model", help="the folder onnxruntime-genai's builder wrote (model.onnx, genai_config.json, tokenizer.json)")
    p.add_argument("--prompt", default="the quick brown fox", help="the text to continue")
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument("--vmfb", default=None, help="the compiled module's cache file (default: beside the model)")
    p.add_argument("--ignore-eos", action="store_true", help="generate --max-new-tokens tokens even past the end token")
    p.add_argument("iree_args", nargs="*", help="more iree-compile flags (after --)")
    args = p.parse_args(argv)
    try:
        from tokenizers import Tokenizer
    except ImportError:
        print("error: the example needs the tokenizers package: pip install 'dequant[genai]'", file=sys.stderr)
        return 1

    try:
        model = GenaiModel.load(args.model)
        tok = Tokenizer.from_file(os.path.join(args.model, "tokenizer.json"))
        t = time.perf_counter()
        vmfb = cached_vmfb(model.path, args.vmfb, **({"extra_args": tuple(args.iree_args)} if args.iree_args else {}))
        load_s = time.perf_counter() - t
    except OSError as e:
        print(f"error: cannot read '{e.filename or args.model}': {e.strerror or e}", file=sys.stderr)
        return 1
    except KeyError as e:
        print(f"error: genai_config.json has no {e}: not a folder onnxruntime-genai's builder wrote", file=sys.stderr)
        return 1
    except (ValueError, stage.IreeStageError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    prompt = tok.encode(args.prompt).ids
    progress = Progress(lambda ids: tok.decode(ids))
    out = greedy(model, iree_step(model, vmfb), prompt, args.max_new_tokens, stop_at_eos=not args.ignore_eos, on_token=progress)
    progress.done()
    print(f"{args.prompt}{' ' if args.prompt else ''}{tok.decode(out.tokens)}")
    print(f"compile or load {load_s:.1f} s; prefill {len(prompt)} tokens in {out.prefill_s * 1e3:.1f} ms; "
          f"{len(out.decode_s)} tokens decoded at {out.tokens_per_s():.1f} tokens/s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
