// RUN: dequant-opt %s --dq-to-linalg --split-input-file | FileCheck %s
// Dynamic dims are checked at run time against the dims they are read along (passes/checks.py):
// the generic runs only if every check holds; each failed check calls the caller-provided
// @dequant_report_error with a code (kind << 40 | operand dim << 20 | output dim) and the code's
// words in a `dq.error` attribute, and the result is then the unwritten output. Dims the verifier saw statically are not checked again.

// Per-axis on a dynamic dim: the scale's and the zero point's dim 0 against output dim 1 (equal,
// or one entry for an empty output dim, which reads nothing: canonical.check_reads).
// CHECK-LABEL: func.func private @dequant_report_error(i64)
// CHECK-LABEL: func.func @per_axis_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x?xi8>, %[[S:[^:]+]]: tensor<?xf32>, %[[Z:[^:]+]]: tensor<?xi8>)
// CHECK-DAG: %[[D:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<4x?xi8>
// CHECK-DAG: %[[SD:.*]] = tensor.dim %[[S]], %{{.*}} : tensor<?xf32>
// CHECK-DAG: %[[ZD:.*]] = tensor.dim %[[Z]], %{{.*}} : tensor<?xi8>
// CHECK-DAG: %[[SEQ:.*]] = arith.cmpi eq, %[[SD]], %[[D]] : index
// CHECK-DAG: %[[SEMPTY:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-DAG: %[[SOK:.*]] = arith.ori %[[SEQ]], %[[SEMPTY]] : i1
// CHECK-DAG: %[[ZEQ:.*]] = arith.cmpi eq, %[[ZD]], %[[D]] : index
// CHECK-DAG: %[[ZOK:.*]] = arith.ori %[[ZEQ]], %{{.*}} : i1
// CHECK-DAG: %[[INIT:.*]] = tensor.empty(%[[D]]) : tensor<4x?xf32>
// CHECK: %[[OK:.*]] = arith.andi %[[SOK]], %[[ZOK]] : i1
// CHECK: %[[SBAD:.*]] = arith.xori %[[SOK]], %{{.*}} : i1
// CHECK-NEXT: scf.if %[[SBAD]] {
// scale (kind 1), its dim 0, output dim 1: 1 << 40 | 0 << 20 | 1
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1099511627777 : i64
// CHECK-NEXT: func.call @dequant_report_error(%[[C1]]) {dq.error = "dim 0 of the scale does not match output dim 1, which it is read along"} : (i64) -> ()
// CHECK: %[[ZBAD:.*]] = arith.xori %[[ZOK]], %{{.*}} : i1
// CHECK-NEXT: scf.if %[[ZBAD]] {
// zero point (kind 2): 2 << 40 | 0 << 20 | 1
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2199023255553 : i64
// CHECK-NEXT: func.call @dequant_report_error(%[[C2]]) {dq.error = "dim 0 of the zero point does not match output dim 1, which it is read along"} : (i64) -> ()
// CHECK: %[[Y:.*]] = scf.if %[[OK]] -> (tensor<4x?xf32>) {
// CHECK-NEXT: %[[G:.*]] = linalg.generic
// CHECK: scf.yield %[[G]] : tensor<4x?xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[INIT]] : tensor<4x?xf32>
// CHECK: return %[[Y]]
func.func @per_axis_dynamic(%x: tensor<4x?xi8>, %s: tensor<?xf32>, %z: tensor<?xi8>) -> tensor<4x?xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64} : (tensor<4x?xi8>, tensor<?xf32>, tensor<?xi8>) -> tensor<4x?xf32>
  return %y : tensor<4x?xf32>
}

// -----

// Blocks of 32: the scale's dim 1 against ceil(output dim 1 / 32).
// CHECK-LABEL: func.func @blocked_dynamic
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[D:.*]] = tensor.dim %arg0, %{{.*}} : tensor<8x?xi4>
// CHECK-DAG: %[[S:.*]] = tensor.dim %arg1, %{{.*}} : tensor<8x?xf16>
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[D]], %[[C32]] : index
// CHECK: arith.cmpi eq, %[[S]], %[[BLOCKS]] : index
// scale, dim 1, output dim 1: 1 << 40 | 1 << 20 | 1
// CHECK: %[[C:.*]] = arith.constant 1099512676353 : i64
// CHECK-NEXT: func.call @dequant_report_error(%[[C]]) {dq.error = "dim 1 of the scale does not match output dim 1, which it is read along"}
func.func @blocked_dynamic(%x: tensor<8x?xi4>, %s: tensor<8x?xf16>) -> tensor<8x?xf16> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 32 : i64} : (tensor<8x?xi4>, tensor<8x?xf16>) -> tensor<8x?xf16>
  return %y : tensor<8x?xf16>
}

// -----

// A dynamic x with a static result: x's dim against the result's (kind 3, dims 0 and 0).
// CHECK-LABEL: func.func @dynamic_x_static_result
// CHECK: %[[D:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?xi8>
// CHECK: arith.cmpi eq, %[[D]], %{{.*}} : index
// CHECK: %[[C:.*]] = arith.constant 3298534883328 : i64
// CHECK-NEXT: func.call @dequant_report_error(%[[C]]) {dq.error = "dim 0 of x does not match output dim 0, which it is read along"}
func.func @dynamic_x_static_result(%x: tensor<?xi8>, %s: tensor<f32>) -> tensor<16xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<?xi8>, tensor<f32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// Static shapes: nothing to check at run time, no report function.
// CHECK-LABEL: func.func @static
// CHECK-NOT: scf.if
// CHECK-NOT: dequant_report_error
// CHECK: linalg.generic
func.func @static(%x: tensor<4x6xi8>, %s: tensor<6xf32>) -> tensor<4x6xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x6xi8>, tensor<6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}
