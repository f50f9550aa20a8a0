"""dq ops whose operands are `arith.constant` tensors compile and compute right: 4-bit constants
(stored one element per byte by dq-byte-storage, small ones printed as lists and large ones as
hex), and unsigned scalar zero points. References are numpy, from the ONNX formula."""

import ml_dtypes
import numpy as np
import pytest

import dequant


def text_of(values: np.ndarray) -> str:
    if values.ndim == 0:
        return str(values.item())
    return "[" + ", ".join(text_of(v) for v in values) + "]"


@pytest.mark.parametrize("rows", [2, 64], ids=["list", "hex"])
@pytest.mark.parametrize("elem,dtype", [("i4", ml_dtypes.int4), ("ui4", ml_dtypes.uint4), ("f4E2M1FN", ml_dtypes.float4_e2m1fn)])
def test_four_bit_constant(elem, dtype, rows):
    rng = np.random.default_rng(rows)
    if elem == "f4E2M1FN":
        x = rng.integers(0, 16, (rows, 32)).astype(np.uint8).view(dtype)
        literal = text_of(x.astype(np.float32))
    else:
        info = ml_dtypes.iinfo(dtype)
        x = rng.integers(info.min, info.max + 1, (rows, 32)).astype(dtype)
        literal = text_of(x.astype(np.int64))
    src = f"""func.func @f(%s: tensor<{rows}x2xf32>) -> tensor<{rows}x32xf32> {{
      %c = arith.constant dense<{literal}> : tensor<{rows}x32x{elem}>
      %y = "dq.onnx_dequantize_linear"(%c, %s) {{axis = 1 : i64, block_size = 16 : i64}} : (tensor<{rows}x32x{elem}>, tensor<{rows}x2xf32>) -> tensor<{rows}x32xf32>
      return %y : tensor<{rows}x32xf32>
    }}"""
    s = rng.uniform(0.5, 2, (rows, 2)).astype(np.float32)
    want = x.astype(np.float32) * np.repeat(s, 16, axis=1)
    np.testing.assert_array_equal(dequant.jit(src, "f")(s), want)


@pytest.mark.parametrize("elem,dtype", [("ui8", np.uint8), ("ui16", np.uint16)])
def test_unsigned_scalar_zero_point_constant(elem, dtype):
    src = f"""func.func @f(%x: tensor<5x{elem}>) -> tensor<5xf32> {{
      %s = arith.constant dense<0.5> : tensor<f32>
      %z = arith.constant dense<139> : tensor<{elem}>
      %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<5x{elem}>, tensor<f32>, tensor<{elem}>) -> tensor<5xf32>
      return %y : tensor<5xf32>
    }}"""
    x = np.array([0, 1, 139, 200, np.iinfo(dtype).max], dtype)
    want = ((x.astype(np.int64) - 139).astype(np.float32) * np.float32(0.5)).astype(np.float32)
    np.testing.assert_array_equal(dequant.jit(src, "f")(x), want)


def test_resource_view_reads_a_blob_in_place():
    """`constants.resource_view`: a dense_resource blob's bytes (after its 4 bytes of alignment
    in the text) as a read-only array over MLIR's memory, the same memory at every call; None
    for an attribute that is no blob."""
    from mlir import ir

    from dequant.dialect import constants

    with ir.Context():
        module = ir.Module.parse(
            "func.func @f() -> (tensor<4xi8>, tensor<2xi8>) {\n"
            "  %a = arith.constant dense_resource<blob> : tensor<4xi8>\n"
            "  %b = arith.constant dense<[5, 6]> : tensor<2xi8>\n"
            "  return %a, %b : tensor<4xi8>, tensor<2xi8>\n}\n"
            '{-#\n  dialect_resources: { builtin: { blob: "0x0100000001020304" } }\n#-}\n'
        )
        ops = module.body.operations[0].regions[0].blocks[0].operations
        blob, dense = (ops[i].attributes["value"] for i in (0, 1))
        view = constants.resource_view(blob)
        assert view.dtype == np.uint8 and view.tolist() == [1, 2, 3, 4]
        assert not view.flags.writeable
        assert constants.resource_view(blob).ctypes.data == view.ctypes.data
        assert constants.resource_view(dense) is None
