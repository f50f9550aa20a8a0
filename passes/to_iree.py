"""torch-onnx-to-iree: the dq stage of IREE's ONNX pipeline, as one named pipeline.

Between `iree-import-onnx` (printed in generic form) and `iree-compile`: every DequantizeLinear
becomes dq (torch-onnx-to-dq), MatMuls of dequantized weights read them quantized
(torch-onnx-dq-matmul), packed integer data becomes IREE's bitcast (dq-unpack-to-iree), and the
dq ops become linalg (dq-to-linalg). The result holds torch ops, torch_c casts and builtin
tensors, which `iree-compile` accepts as ONNX input (docs/iree.md).
"""

from . import Pipeline

PIPELINE = Pipeline(
    "torch-onnx-to-iree",
    "Prepare an ONNX model imported by iree-import-onnx for iree-compile: dq ops, fused MatMuls, linalg",
    "torch-onnx-to-dq,torch-onnx-dq-matmul,dq-unpack-to-iree,dq-to-linalg,linalg-fuse-elementwise-ops,canonicalize,cse",
)
