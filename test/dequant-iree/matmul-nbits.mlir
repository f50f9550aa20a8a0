// com.microsoft MatMulNBits through dequant-iree: rewritten into a blocked DequantizeLinear +
// MatMul (dequant.formats), it reaches dq's matmul kernel reading the weights re-laid packed.
// REQUIRES: iree
// RUN: rm -rf %t && mkdir -p %t

// 4-bit, no zero points: int4 weights (q - 8), the kernel's symmetric form.
// RUN: %python %S/Inputs/matmul_nbits.py %t/int4.onnx 4 none
// RUN: %python -m dequant.iree %t/int4.onnx --emit-mlir -o %t/int4.mlir 2>&1 | FileCheck %s --check-prefix=SUMMARY
// RUN: FileCheck %s --check-prefix=INT4 < %t/int4.mlir
// SUMMARY: dequant-iree: dq stage: 1 of 1 DequantizeLinear to dq, 1 MatMul(s) fused
// INT4: func.func @[[KERNEL:dq_matmul_i4_k64_n32_b32_l[0-9]+]](
// INT4-LABEL: func.func @g(
// INT4-NOT: onnx.MatMulNBits
// INT4-NOT: dense_resource<B>
// INT4: %[[W:.*]] = arith.constant dense_resource<dq_kernel_w> : tensor<1x32x32xi8>
// INT4: "flow.dispatch"({{.*}}%[[W]]{{.*}}entry_points = [@[[KERNEL]]::@[[KERNEL]]]

// 4-bit with packed zero points: uint4 weights and zero points.
// RUN: %python %S/Inputs/matmul_nbits.py %t/uint4.onnx 4 packed
// RUN: %python -m dequant.iree %t/uint4.onnx --emit-mlir -q -o %t/uint4.mlir
// RUN: FileCheck %s --check-prefix=UINT4 < %t/uint4.mlir
// UINT4: func.func @[[KERNEL:dq_matmul_u4_k64_n32_b32_z_l[0-9]+]](
// UINT4-LABEL: func.func @g(
// UINT4: "flow.dispatch"({{.*}}entry_points = [@[[KERNEL]]::@[[KERNEL]]]

// 8-bit without zero points: int8 weights (q - 128).
// RUN: %python %S/Inputs/matmul_nbits.py %t/int8.onnx 8 none
// RUN: %python -m dequant.iree %t/int8.onnx --emit-mlir -q -o %t/int8.mlir
// RUN: FileCheck %s --check-prefix=INT8 < %t/int8.mlir
// INT8: func.func @[[KERNEL:dq_matmul_i8_k64_n32_b32_l[0-9]+]](
// INT8-LABEL: func.func @g(
// INT8: "flow.dispatch"({{.*}}entry_points = [@[[KERNEL]]::@[[KERNEL]]]

// Fractional float zero points: uint4 codes and z * s per block (f32) beside the scales, read by
// the kernel's float zero point form, each weight q * s - z * s; nothing of the Sub form is left.
// RUN: %python %S/Inputs/matmul_nbits.py %t/float.onnx 4 float
// RUN: %python -m dequant.iree %t/float.onnx --emit-mlir -q -o %t/float.mlir
// RUN: FileCheck %s --check-prefix=FLOAT < %t/float.mlir
// FLOAT: func.func @[[KERNEL:dq_matmul_u4_k64_n32_b32_zf_l[0-9]+]](
// FLOAT-LABEL: func.func @g(
// FLOAT-NOT: onnx.
// FLOAT: %[[ZF:.*]] = arith.constant dense_resource<dq_kernel_zf> : tensor<1x2x32xf32>
// FLOAT-NOT: onnx.
// FLOAT: "flow.dispatch"({{.*}}%[[ZF]]{{.*}}entry_points = [@[[KERNEL]]::@[[KERNEL]]]
// FLOAT-NOT: onnx.

// A model of a default opset below 21 is converted first (onnx.version_converter).
// RUN: %python %S/Inputs/matmul_nbits.py %t/old.onnx 4 none 17
// RUN: %python -m dequant.iree %t/old.onnx --emit-mlir -o %t/old.mlir 2>&1 | FileCheck %s --check-prefix=SUMMARY
