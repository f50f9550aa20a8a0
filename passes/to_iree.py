"""torch-onnx-to-iree: the dq stage of IREE's ONNX pipeline, as named pipelines, one per kind of
IREE target.

Between `iree-import-onnx` (printed in generic form) and `iree-compile`: every DequantizeLinear
IREE cannot lower, and the weights of weight-only quantized MatMuls, become dq
(torch-onnx-to-dq-iree; IREE keeps the rest, e.g. QDQ pairs it turns into integer arithmetic); on
CPU targets a MatMul of constant 4- or 8-bit weights becomes a
dispatch of dq's matmul kernel (torch-onnx-dq-matmul-iree-cpu), and the stage's own QDQ
depthwise convolution node one of dq's depthwise kernel (torch-onnx-dq-depthwise-iree-cpu), its
im2col node one of dq's im2col kernel (torch-onnx-dq-im2col-iree-cpu), its MaxPool of NHWC codes
one of dq's max pooling kernel (torch-onnx-dq-maxpool-iree-cpu), its QuantizeLinear of an image
into NHWC codes one of dq's quantize kernel (torch-onnx-dq-quantize-iree-cpu), a table lookup of codes no
kernel's epilogue took one of dq's lookup kernel (torch-onnx-dq-lookup-iree-cpu), and its softmax of
codes, and on x86 an ONNX Softmax of f32 over the last axis, one of dq's softmax kernels
(torch-onnx-dq-softmax-iree-cpu), and on x86 an ONNX Gelu of f32 (with the bias Add before it)
one of dq's Gelu kernel (torch-onnx-dq-gelu-iree-cpu); any
other MatMul of dequantized weights becomes one contraction reading them quantized (torch-onnx-dq-matmul); packed integer
data becomes IREE's bitcast (dq-unpack-to-iree; on CPU only where IREE reads the i4 tensor unmasked) where the backend reads i4 tensors; the dq ops
become linalg (dq-to-linalg), their run-time shape checks `cf.assert` (dq-checks-to-assert) and
their bf16 results rounded in integer ops (dq-round-bf16). The result holds torch ops, torch_c casts and builtin tensors (and,
for CPU targets, IREE stream and flow ops), which `iree-compile` accepts as ONNX input
(docs/iree.md, which also says which backend takes which pipeline and why).
"""

from . import Pipeline

# dq-checks-to-assert: IREE has no dequant_report_error; dq-round-bf16: IREE emulates bf16 in f32
# and drops a truncf widened again in the same dispatch (docs/iree.md).
_LINALG = "dq-to-linalg,dq-checks-to-assert,dq-round-bf16,linalg-fuse-elementwise-ops,canonicalize,cse"

PIPELINES = (
    Pipeline(
        "torch-onnx-to-iree",
        "Prepare an ONNX model imported by iree-import-onnx for iree-compile's llvm-cpu backend: dq ops, dq's matmul kernels, linalg",
        "dq-target-features,torch-onnx-to-dq-iree,torch-onnx-dq-matmul-iree-cpu,torch-onnx-dq-depthwise-iree-cpu,torch-onnx-dq-im2col-iree-cpu,torch-onnx-dq-maxpool-iree-cpu,torch-onnx-dq-quantize-iree-cpu,torch-onnx-dq-lookup-iree-cpu,torch-onnx-dq-softmax-iree-cpu,torch-onnx-dq-gelu-iree-cpu,torch-onnx-dq-matmul,dq-unpack-to-iree-cpu," + _LINALG,
    ),
    # IREE's CUDA and ROCm backends read i4 tensors; a dq in-place read of packed bytes inside the
    # fused contraction fails their distribution ("failed to distribute").
    Pipeline(
        "torch-onnx-to-iree-gpu",
        "Prepare an ONNX model imported by iree-import-onnx for iree-compile's cuda and rocm backends: dq ops, fused MatMuls, linalg",
        "torch-onnx-to-dq-iree,torch-onnx-dq-matmul,dq-unpack-to-iree," + _LINALG,
    ),
    # IREE's SPIR-V backend cannot legalize the i8 -> i4 vector.bitcast of an i4 tensor; dq's
    # in-place read of the packed bytes (shifts and masks on i8) compiles.
    Pipeline(
        "torch-onnx-to-iree-spirv",
        "Prepare an ONNX model imported by iree-import-onnx for iree-compile's vulkan-spirv backend: dq ops, fused MatMuls, linalg",
        "torch-onnx-to-dq-iree,torch-onnx-dq-matmul," + _LINALG,
    ),
)
