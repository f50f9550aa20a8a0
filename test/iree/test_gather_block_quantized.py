"""com.microsoft GatherBlockQuantized through the IREE stage (dequant.formats: a Gather of the
packed table's rows, then the dequantize of those rows only): every form against onnxruntime's
kernel (graph optimizations off), bit for bit; bad input is one `error:` line.
"""

from __future__ import annotations


import numpy as np
import pytest
from requires import needs_iree

pytestmark = needs_iree

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnxruntime_reference  # noqa: E402

from dequant import iree as stage  # noqa: E402

import iree_models as models  # noqa: E402
from stage_cli import dequant_iree, one_error_line  # noqa: E402


def run_vmfb(vmfb: bytes, x: np.ndarray) -> np.ndarray:
    import iree.runtime as rt

    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    return np.asarray(ctx.modules.module["g"](x))


def onnxruntime_kernel(path: str, x: np.ndarray) -> np.ndarray:
    return onnxruntime_reference.session(path).run(None, {"x": x})[0]


FORMS = {
    "uint8-4bit": dict(shape=(100, 64)),
    "uint8-4bit-zero-points": dict(shape=(100, 64), zero_point=True),
    "uint8-8bit-zero-points": dict(shape=(100, 64), bits=8, zero_point=True),
    "uint8-8bit": dict(shape=(100, 128), bits=8, block=128),
    "uint8-2bit-zero-points-odd-blocks": dict(shape=(100, 96), bits=2, zero_point=True),
    "int4-zero-points": dict(shape=(100, 64), storage="int4", zero_point=True),
    "int4-partial-block-odd-row": dict(shape=(100, 40), storage="int4", block=16),
    "uint4-block16": dict(shape=(64, 100), storage="uint4", block=16, zero_point=True),
    "int4-gather-axis-1-quantize-axis-0": dict(shape=(2, 50, 64), storage="int4", gather_axis=1, quantize_axis=0, block=16),
    "f16-scales": dict(shape=(100, 64), scale_type=np.float16, zero_point=True),
}


@pytest.mark.parametrize("name", FORMS)
def test_gather_block_quantized_form_against_onnxruntime_kernel(tmp_path, name):
    """Indices [2, 3] (negative ones included): the module's rows equal onnxruntime's bit for bit
    (both compute float(q - zp) * scale in f32, rounded once to f16 for f16 scales)."""
    form = FORMS[name]
    path = models.gather_block_quantized(tmp_path / "m.onnx", **form)
    rows = form["shape"][form.get("gather_axis", 0)]
    x = np.random.default_rng(1).integers(-rows, rows, size=(2, 3)).astype(np.int64)
    got, want = run_vmfb(stage.compile_onnx(path), x), onnxruntime_kernel(path, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_table_stays_packed(tmp_path):
    """A 4-bit table of 4096 x 512 (1 MiB packed, f16 scales): the rewritten model holds it as
    bytes gathered before anything is unpacked, and the module is no larger than 1.2x the model."""
    import os

    path = models.gather_block_quantized(tmp_path / "m.onnx", (4096, 512), zero_point=True, scale_type=np.float16)
    text = stage.import_onnx(path)
    assert "tensor<4096x256xui8>" in text and "4096x512" not in text
    assert len(stage.compile_onnx(path)) < 1.2 * os.path.getsize(path)



def _edit(path: str, attrs: dict) -> str:
    m = onnx.load(path)
    for a in m.graph.node[0].attribute:
        if a.name in attrs:
            a.i = attrs.pop(a.name)
    m.graph.node[0].attribute.extend(onnx.helper.make_attribute(k, v) for k, v in attrs.items())
    onnx.save(m, path)
    return path


BAD = {
    "bits-3": ({"bits": 3}, ["bits 3", "bits 2, 4 or 8"]),
    "block-24": ({"block_size": 24}, ["block_size 24", "power of two"]),
    "same-axes": ({"quantize_axis": 0}, ["gather_axis and quantize_axis are both 0"]),
    "uint8-gather-axis-1": ({"gather_axis": 1, "quantize_axis": 0}, ["gather_axis 1", "uint8 data"]),
    "scales-disagree": ({"block_size": 16}, ["its scales are [100, 2]", "needs [100, 4]"]),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_gather_block_quantized_is_one_error_line(tmp_path, name):
    attrs, words = BAD[name]
    path = _edit(models.gather_block_quantized(tmp_path / "m.onnx", (100, 64)), dict(attrs))
    one_error_line(dequant_iree(path, "-o", str(tmp_path / "x.vmfb")), "error: GatherBlockQuantized node 'y': ", *words)


def test_table_read_through_a_reshape(tmp_path):
    """The genai builder's tied embedding: the table is lm_head's MatMulNBits blob [N, blocks,
    bytes] through a Reshape to [N, K / 2]. The rewrite reads the constant through it, and the
    Reshape and the blob, unread after, leave the model; the rows equal onnxruntime's kernel on
    the model as written."""
    from onnx import helper, numpy_helper

    from dequant import formats

    path = models.gather_block_quantized(tmp_path / "plain.onnx", (100, 64), zero_point=True)
    m = onnx.load(path)
    data = next(t for t in m.graph.initializer if t.name == "data")
    blob = numpy_helper.to_array(data).reshape(100, 2, 16)  # [N, blocks of 32, 16 bytes]
    data.CopyFrom(numpy_helper.from_array(blob, "blob"))
    m.graph.initializer.append(numpy_helper.from_array(np.array([100, 32], np.int64), "table_shape"))
    m.graph.node.insert(0, helper.make_node("Reshape", ["blob", "table_shape"], ["data"], name="embed_reshape"))
    onnx.save(m, str(tmp_path / "reshaped.onnx"))
    x = np.array([[3, 99, 0], [-1, 42, 7]], np.int64)
    expected = onnxruntime_kernel(tmp_path / "reshaped.onnx", x)
    rewritten, counts = formats.normalise(onnx.load(str(tmp_path / "reshaped.onnx")))
    assert counts == {("com.microsoft", "GatherBlockQuantized"): 1}
    assert "embed_reshape" not in {n.name for n in rewritten.graph.node}
    assert "blob" not in {t.name for t in rewritten.graph.initializer}
    onnx.save(rewritten, str(tmp_path / "rewritten.onnx"))
    np.testing.assert_array_equal(onnxruntime_kernel(tmp_path / "rewritten.onnx", x), expected)
