"""onnxruntime-genai's int4 models end to end: the committed builder models (test/models/genai/,
made by test/models/make_genai_models.py) through `dequant-iree`, decoded greedily with the KV
cache by IREE's runtime, against onnxruntime computing the graph as written (every MatMulNBits at
accuracy_level 0, graph optimizations off): the same tokens, logits within RTOL.

Needs the `iree` extra; onnxruntime-genai for its generator's test only (skipped without it).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from requires import needs_iree

pytestmark = needs_iree

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import run_once  # noqa: E402

from dequant import check, generate  # noqa: E402

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "genai")
NAMES = ["llama", "qwen2", "phi3", "phi4mini"]
STEPS = 8  # greedy tokens per model: the prompt's call, then 7 with the KV cache
PROMPT = "the quick brown fox jumps over the lazy dog"
RTOL = 1e-4  # max |logits - exact| / max |exact|: f32 sums in another order


class Compiled:
    """A committed model compiled once per run (for every xdist worker: run_once.py) by
    `dequant-iree --check -o`: the module, what --check printed, the module after IREE's flow
    phase (iree-compile's phase dump of the same run), and onnxruntime's exact decode (made on
    first use), which several tests read."""

    def __init__(self, name: str, tmp_path_factory):
        self.folder = os.path.join(MODELS, name)
        self.model = generate.GenaiModel.load(self.folder)
        self.tmp = tmp_path_factory.mktemp(name)
        built = run_once.folder(tmp_path_factory, f"genai-{name}", self._build)
        self.vmfb_path = str(built / "model.vmfb")
        with open(self.vmfb_path, "rb") as f:
            self.vmfb = f.read()
        self.stdout = (built / "stdout.txt").read_text()
        (flow,) = (built / "phases").glob("*.flow.mlir")
        self.flow = flow.read_text()
        self._exact = None

    def _build(self, out) -> None:
        run = subprocess.run([sys.executable, "-c", "import sys; from dequant import iree; sys.exit(iree.main())", "--check",
                              self.model.path, "-o", str(out / "model.vmfb"), "--", f"--dump-compilation-phases-to={out / 'phases'}"],
                             capture_output=True, text=True)  # fmt: skip
        assert run.returncode == 0, run.stderr
        (out / "stdout.txt").write_text(run.stdout)

    def exact(self) -> generate.Decoded:
        if self._exact is None:
            self._exact = exact_decode(self.model, prompt_ids(self.folder), self.tmp)
        return self._exact


@pytest.fixture(scope="module", params=NAMES)
def compiled(request, tmp_path_factory):
    return Compiled(request.param, tmp_path_factory)


def prompt_ids(folder: str) -> list:
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.Tokenizer.from_file(os.path.join(folder, "tokenizer.json")).encode(PROMPT).ids


def exact_decode(model: generate.GenaiModel, prompt: list, tmp_path) -> generate.Decoded:
    """Greedy decoding by onnxruntime on the graph as written: every MatMulNBits at
    accuracy_level 0 (float activations; its CPU default quantizes them to int8), no graph
    optimizations."""
    session = check.onnxruntime_session(check.exact_model(model.path, str(tmp_path)))
    return generate.greedy(model, generate.ort_step(model, session), prompt, STEPS, stop_at_eos=False)


def test_greedy_tokens_equal_exact_onnxruntime(compiled):
    model = compiled.model
    want = compiled.exact()
    got = generate.greedy(model, generate.iree_step(model, compiled.vmfb), prompt_ids(compiled.folder), STEPS, stop_at_eos=False)
    assert got.tokens == want.tokens
    for i, (g, w) in enumerate(zip(got.logits, want.logits)):
        err = np.abs(g - w).max() / np.abs(w).max()
        assert err <= RTOL, f"step {i}: logits off by {err:.2e} relative"


def test_check_prints_each_output(compiled):
    """`dequant-iree --check`: a line per output, the module exact, onnxruntime's default session
    (int8 activations) visibly not."""
    proto = onnx.load(compiled.model.path, load_external_data=False)
    rows = {}
    for line in compiled.stdout.splitlines():
        m = re.fullmatch(r"check: (\S+)\s+(\S+)\s+(\S+)\s+(\S+)", line)
        if m and m.group(1) != "output":
            rows[m.group(1)] = [float(v) for v in m.groups()[1:]]
    assert list(rows) == [o.name for o in proto.graph.output]
    assert "onnxruntime, accuracy_level 0" in compiled.stdout
    for name, (iree_exact, iree_ort, ort_exact) in rows.items():
        assert iree_exact <= RTOL, name
    assert rows["logits"][2] > 1e-3  # MatMulNBits at accuracy_level 4 quantizes the activations


def test_example_prints_tokens_per_second(compiled):
    """`python -m dequant.generate`: the text of the exact run's tokens, and tokens/s."""
    tokenizers = pytest.importorskip("tokenizers")
    want = compiled.exact()
    run = subprocess.run([sys.executable, "-m", "dequant.generate", compiled.folder, "--prompt", PROMPT, "--max-new-tokens",
                          str(STEPS), "--ignore-eos", "--vmfb", compiled.vmfb_path], capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 0, run.stderr
    text = tokenizers.Tokenizer.from_file(os.path.join(compiled.folder, "tokenizer.json")).decode(want.tokens)
    lines = run.stdout.splitlines()
    assert lines[0] == f"{PROMPT} {text}"
    assert re.search(rf"{STEPS - 1} tokens decoded at \d+\.\d tokens/s", lines[-1]), lines[-1]


def test_onnxruntime_genai_generator_agrees(compiled, tmp_path):
    """onnxruntime-genai's own generator, greedy on the exact copy of the model (same folder
    layout, genai_config.json and tokenizer), gives the tokens IREE gives."""
    og = pytest.importorskip("onnxruntime_genai", reason="onnxruntime-genai is not installed (optional: pip install onnxruntime-genai)")
    import shutil

    model = compiled.model
    for f in os.listdir(compiled.folder):
        if f != os.path.basename(model.path):
            shutil.copy(os.path.join(compiled.folder, f), tmp_path / f)
    check.exact_model(model.path, str(tmp_path))
    prompt = prompt_ids(compiled.folder)
    gen_model = og.Model(str(tmp_path))
    params = og.GeneratorParams(gen_model)
    params.set_search_options(do_sample=False, max_length=len(prompt) + STEPS)
    generator = og.Generator(gen_model, params)
    generator.append_tokens(prompt)
    tokens = []
    while not generator.is_done() and len(tokens) < STEPS:
        generator.generate_next_token()
        tokens.append(int(generator.get_next_tokens()[0]))
    got = generate.greedy(model, generate.iree_step(model, compiled.vmfb), prompt, STEPS, stop_at_eos=False)
    assert tokens and got.tokens[: len(tokens)] == tokens  # the generator stops at EOS


def test_check_standard_ops_against_onnx_reference():
    """--check on a model of standard ops (the shipped int4 MatMul): exact is onnx.reference; dq's
    module equals it, onnxruntime's default session (which fuses the QDQ MatMul) does not quite."""
    example = subprocess.run([sys.executable, "-m", "dequant.example", "--path", "int4_matmul.onnx"], capture_output=True, text=True)
    run = subprocess.run([sys.executable, "-c", "import sys; from dequant import iree; sys.exit(iree.main())", "--check", "-q",
                          example.stdout.strip()], capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "exact = onnx.reference" in run.stdout
    m = re.search(r"^check: y\s+(\S+)\s+(\S+)\s+(\S+)$", run.stdout, re.M)
    assert m and float(m.group(1)) <= 1e-6, run.stdout


def test_decode_step_reads_nothing_back(compiled):
    """A decode step runs on the device from start to end: no value of the model is read back to
    the host to size a buffer (each layer's present once waited for a Max computed on the device;
    docs/iree.md#a-decode-step). The module after IREE's flow phase, from the fixture's compile."""
    assert "flow.dispatch" in compiled.flow
    assert "flow.tensor.load" not in compiled.flow, "a device value read back by the host"
