// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq | FileCheck %s
// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq --verify-diagnostics

// torch-onnx-to-dq (passes/torch_onnx_to_dq.py): each `torch.operator "onnx.DequantizeLinear"` of
// IREE's / torch-mlir's ONNX import (generic form, torch types opaque) becomes
// torch_c.to_builtin_tensor of each operand, dq.onnx_dequantize_linear with axis, block_size and
// output_dtype read from torch.onnx.*, and torch_c.from_builtin_tensor of the result. Unsigned
// storage is tensor.bitcast from torch_c's signless tensor; a sub-byte onnx.Constant is kept
// packed (an i8 arith.constant of its ONNX bytes read through dq.unpack); a !torch.none zero
// point is absent. Everything else is untouched. A DequantizeLinear dq cannot express stays, with
// a remark (second RUN line; the chunks at the end).

// Per-tensor: a scalar scale, no zero point, signed storage (no bitcast), default attributes.
// CHECK-LABEL: func.func @per_tensor
// CHECK-SAME: (%[[X:[^:]+]]: !torch.vtensor<[4,8],si8>, %[[S:[^:]+]]: !torch.vtensor<[],f32>)
// CHECK-NOT: onnx.DequantizeLinear
// CHECK-DAG: %[[XB:.*]] = "torch_c.to_builtin_tensor"(%[[X]]) : (!torch.vtensor<[4,8],si8>) -> tensor<4x8xi8>
// CHECK-DAG: %[[SB:.*]] = "torch_c.to_builtin_tensor"(%[[S]]) : (!torch.vtensor<[],f32>) -> tensor<f32>
// CHECK-NOT: tensor.bitcast
// CHECK: %[[Y:.*]] = "dq.onnx_dequantize_linear"(%[[XB]], %[[SB]]) : (tensor<4x8xi8>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[YT:.*]] = "torch_c.from_builtin_tensor"(%[[Y]]) : (tensor<4x8xf32>) -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT: return %[[YT]] : !torch.vtensor<[4,8],f32>
func.func @per_tensor(%x: !torch.vtensor<[4,8],si8>, %s: !torch.vtensor<[],f32>) -> !torch.vtensor<[4,8],f32> attributes {torch.onnx_meta.opset_version = 21 : si64} {
  %0 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4,8],si8>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4,8],f32>
  "func.return"(%0) : (!torch.vtensor<[4,8],f32>) -> ()
}

// -----

// Per-axis along dim 0 with a ui8 zero point: x and the zero point are unsigned, so each
// signless builtin tensor is bitcast to ui8 before the dq op; axis is carried as i64.
// CHECK-LABEL: func.func @per_axis_ui8
// CHECK-SAME: (%[[X:[^:]+]]: !torch.vtensor<[4,8],ui8>, %[[S:[^:]+]]: !torch.vtensor<[4],f32>, %[[Z:[^:]+]]: !torch.vtensor<[4],ui8>)
// CHECK-DAG: %[[XB:.*]] = "torch_c.to_builtin_tensor"(%[[X]]) : (!torch.vtensor<[4,8],ui8>) -> tensor<4x8xi8>
// CHECK-DAG: %[[XU:.*]] = tensor.bitcast %[[XB]] : tensor<4x8xi8> to tensor<4x8xui8>
// CHECK-DAG: %[[SB:.*]] = "torch_c.to_builtin_tensor"(%[[S]]) : (!torch.vtensor<[4],f32>) -> tensor<4xf32>
// CHECK-DAG: %[[ZB:.*]] = "torch_c.to_builtin_tensor"(%[[Z]]) : (!torch.vtensor<[4],ui8>) -> tensor<4xi8>
// CHECK-DAG: %[[ZU:.*]] = tensor.bitcast %[[ZB]] : tensor<4xi8> to tensor<4xui8>
// CHECK: %[[Y:.*]] = "dq.onnx_dequantize_linear"(%[[XU]], %[[SB]], %[[ZU]]) {axis = 0 : i64} : (tensor<4x8xui8>, tensor<4xf32>, tensor<4xui8>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[YT:.*]] = "torch_c.from_builtin_tensor"(%[[Y]]) : (tensor<4x8xf32>) -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT: return %[[YT]]
func.func @per_axis_ui8(%x: !torch.vtensor<[4,8],ui8>, %s: !torch.vtensor<[4],f32>, %z: !torch.vtensor<[4],ui8>) -> !torch.vtensor<[4,8],f32> {
  %0 = "torch.operator"(%x, %s, %z) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[4,8],ui8>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],ui8>) -> !torch.vtensor<[4,8],f32>
  "func.return"(%0) : (!torch.vtensor<[4,8],f32>) -> ()
}

// -----

// Blocked int4 initializer (a dense_resource of the ONNX bytes): kept packed. 4x8 int4 is 16
// bytes; the new i8 constant holds the same bytes (after the 4-byte alignment word) and dq.unpack
// reads it as tensor<4x8xi4>. The onnx.Constant, now unused, is erased.
// CHECK-LABEL: func.func @blocked_int4_resource
// CHECK-SAME: (%[[S:[^:]+]]: !torch.vtensor<[2,8],f32>)
// CHECK-NOT: onnx.Constant
// CHECK-DAG: %[[BYTES:.*]] = arith.constant dense_resource<[[BLOB:[^>]+]]> : tensor<16xi8>
// CHECK-DAG: %[[XP:.*]] = "dq.unpack"(%[[BYTES]]) : (tensor<16xi8>) -> tensor<4x8xi4>
// CHECK-DAG: %[[SB:.*]] = "torch_c.to_builtin_tensor"(%[[S]]) : (!torch.vtensor<[2,8],f32>) -> tensor<2x8xf32>
// CHECK-NOT: onnx.Constant
// CHECK: %[[Y:.*]] = "dq.onnx_dequantize_linear"(%[[XP]], %[[SB]]) {axis = 0 : i64, block_size = 2 : i64} : (tensor<4x8xi4>, tensor<2x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: "torch_c.from_builtin_tensor"(%[[Y]]) : (tensor<4x8xf32>) -> !torch.vtensor<[4,8],f32>
// CHECK: dialect_resources
// CHECK: [[BLOB]]: "0x{{........}}1032547698BADCFE0123456789ABCDEF"
func.func @blocked_int4_resource(%s: !torch.vtensor<[2,8],f32>) -> !torch.vtensor<[4,8],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<w> : tensor<4x8xsi4>} : () -> !torch.vtensor<[4,8],si4>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 2 : si64} : (!torch.vtensor<[4,8],si4>, !torch.vtensor<[2,8],f32>) -> !torch.vtensor<[4,8],f32>
  "func.return"(%1) : (!torch.vtensor<[4,8],f32>) -> ()
}
{-#
  dialect_resources: { builtin: { w: "0x080000001032547698badcfe0123456789abcdef" } }
#-}

// -----

// Per-axis int4 with `dense<...>` initializers for x and the zero point: both packed to ONNX
// bytes, low nibble first: x = [1,-2, 3,-4, 5,6, 7,-8] -> E1 C3 65 87, z = [1,2,3,4] -> 21 43.
// CHECK-LABEL: func.func @per_axis_int4_dense
// CHECK-SAME: (%[[S:[^:]+]]: !torch.vtensor<[4],f32>)
// CHECK-NOT: onnx.Constant
// CHECK-DAG: %[[XC:.*]] = arith.constant dense_resource<[[XBLOB:[^>]+]]> : tensor<4xi8>
// CHECK-DAG: %[[XP:.*]] = "dq.unpack"(%[[XC]]) : (tensor<4xi8>) -> tensor<4x2xi4>
// CHECK-DAG: %[[ZC:.*]] = arith.constant dense_resource<[[ZBLOB:[^>]+]]> : tensor<2xi8>
// CHECK-DAG: %[[ZP:.*]] = "dq.unpack"(%[[ZC]]) : (tensor<2xi8>) -> tensor<4xi4>
// CHECK-DAG: %[[SB:.*]] = "torch_c.to_builtin_tensor"(%[[S]]) : (!torch.vtensor<[4],f32>) -> tensor<4xf32>
// CHECK: "dq.onnx_dequantize_linear"(%[[XP]], %[[SB]], %[[ZP]]) {axis = 0 : i64} : (tensor<4x2xi4>, tensor<4xf32>, tensor<4xi4>) -> tensor<4x2xf32>
// CHECK: dialect_resources
// CHECK-DAG: [[XBLOB]]: "0x{{........}}E1C36587"
// CHECK-DAG: [[ZBLOB]]: "0x{{........}}2143"
func.func @per_axis_int4_dense(%s: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4,2],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<[[1, -2], [3, -4], [5, 6], [7, -8]]> : tensor<4x2xsi4>} : () -> !torch.vtensor<[4,2],si4>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<[1, 2, 3, 4]> : tensor<4xsi4>} : () -> !torch.vtensor<[4],si4>
  %1 = "torch.operator"(%0, %s, %z) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[4,2],si4>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],si4>) -> !torch.vtensor<[4,2],f32>
  "func.return"(%1) : (!torch.vtensor<[4,2],f32>) -> ()
}

// -----

// uint4 initializers (an odd element count in x: 2x3 = 3 bytes; a scalar zero point: 1 byte) are
// unpacked straight to ui4, with no bitcast.
// CHECK-LABEL: func.func @per_tensor_uint4_resource
// CHECK-NOT: onnx.Constant
// CHECK-DAG: %[[XC:.*]] = arith.constant dense_resource<[[XBLOB:[^>]+]]> : tensor<3xi8>
// CHECK-DAG: %[[XP:.*]] = "dq.unpack"(%[[XC]]) : (tensor<3xi8>) -> tensor<2x3xui4>
// CHECK-DAG: %[[ZC:.*]] = arith.constant dense_resource<[[ZBLOB:[^>]+]]> : tensor<1xi8>
// CHECK-DAG: %[[ZP:.*]] = "dq.unpack"(%[[ZC]]) : (tensor<1xi8>) -> tensor<ui4>
// CHECK-NOT: tensor.bitcast
// CHECK: "dq.onnx_dequantize_linear"(%[[XP]], %{{.*}}, %[[ZP]]) : (tensor<2x3xui4>, tensor<f32>, tensor<ui4>) -> tensor<2x3xf32>
// CHECK: dialect_resources
// CHECK-DAG: [[XBLOB]]: "0x{{........}}102132"
// CHECK-DAG: [[ZBLOB]]: "0x{{........}}08"
func.func @per_tensor_uint4_resource(%s: !torch.vtensor<[],f32>) -> !torch.vtensor<[2,3],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<w> : tensor<2x3xui4>} : () -> !torch.vtensor<[2,3],ui4>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<8> : tensor<ui4>} : () -> !torch.vtensor<[],ui4>
  %1 = "torch.operator"(%0, %s, %z) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[2,3],ui4>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui4>) -> !torch.vtensor<[2,3],f32>
  "func.return"(%1) : (!torch.vtensor<[2,3],f32>) -> ()
}
{-#
  dialect_resources: { builtin: { w: "0x08000000102132" } }
#-}

// -----

// float4e2m1 initializer: kept packed too.
// CHECK-LABEL: func.func @float4_resource
// CHECK-NOT: onnx.Constant
// CHECK-DAG: %[[XC:.*]] = arith.constant dense_resource<[[XBLOB:[^>]+]]> : tensor<2xi8>
// CHECK-DAG: %[[XP:.*]] = "dq.unpack"(%[[XC]]) : (tensor<2xi8>) -> tensor<4xf4E2M1FN>
// CHECK: "dq.onnx_dequantize_linear"(%[[XP]], %{{.*}}) : (tensor<4xf4E2M1FN>, tensor<f32>) -> tensor<4xf32>
// CHECK: [[XBLOB]]: "0x{{........}}2143"
func.func @float4_resource(%s: !torch.vtensor<[],f32>) -> !torch.vtensor<[4],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<w> : tensor<4xf4E2M1FN>} : () -> !torch.vtensor<[4],f4E2M1FN>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4],f4E2M1FN>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4],f32>
  "func.return"(%1) : (!torch.vtensor<[4],f32>) -> ()
}
{-#
  dialect_resources: { builtin: { w: "0x080000002143" } }
#-}

// -----

// A whole-byte initializer (si8) is not sub-byte: the onnx.Constant stays and is read through
// torch_c.to_builtin_tensor like any other value.
// CHECK-LABEL: func.func @int8_constant
// CHECK: %[[C:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<[1, 2, 3, 4]> : tensor<4xsi8>}
// CHECK-NOT: dq.unpack
// CHECK: %[[CB:.*]] = "torch_c.to_builtin_tensor"(%[[C]]) : (!torch.vtensor<[4],si8>) -> tensor<4xi8>
// CHECK: "dq.onnx_dequantize_linear"(%[[CB]], %{{.*}}) : (tensor<4xi8>, tensor<f32>) -> tensor<4xf32>
func.func @int8_constant(%s: !torch.vtensor<[],f32>) -> !torch.vtensor<[4],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<[1, 2, 3, 4]> : tensor<4xsi8>} : () -> !torch.vtensor<[4],si8>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4],si8>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4],f32>
  "func.return"(%1) : (!torch.vtensor<[4],f32>) -> ()
}

// -----

// A sub-byte initializer another op also reads: the dq op reads it packed, the onnx.Constant
// stays for its other user.
// CHECK-LABEL: func.func @int4_constant_shared
// CHECK: %[[C:.*]] = "torch.operator"() <{name = "onnx.Constant"}>
// CHECK-DAG: %[[XC:.*]] = arith.constant dense_resource<{{[^>]+}}> : tensor<2xi8>
// CHECK-DAG: %[[XP:.*]] = "dq.unpack"(%[[XC]]) : (tensor<2xi8>) -> tensor<4xi4>
// CHECK: %[[Y:.*]] = "dq.onnx_dequantize_linear"(%[[XP]], %{{.*}}) : (tensor<4xi4>, tensor<f32>) -> tensor<4xf32>
// CHECK: %[[YT:.*]] = "torch_c.from_builtin_tensor"(%[[Y]])
// CHECK: return %[[YT]], %[[C]]
func.func @int4_constant_shared(%s: !torch.vtensor<[],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],si4>) {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<[1, 2, 3, 4]> : tensor<4xsi4>} : () -> !torch.vtensor<[4],si4>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4],si4>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4],f32>
  "func.return"(%1, %0) : (!torch.vtensor<[4],f32>, !torch.vtensor<[4],si4>) -> ()
}

// -----

// Blocked ui4 function arguments (not initializers) along the last axis, given as -1, with a
// dynamic dim: read through torch_c (signless i4) and bitcast to ui4; axis stays -1.
// CHECK-LABEL: func.func @blocked_uint4_arguments
// CHECK-SAME: (%[[X:[^:]+]]: !torch.vtensor<[?,8],ui4>, %[[S:[^:]+]]: !torch.vtensor<[?,4],f16>, %[[Z:[^:]+]]: !torch.vtensor<[?,4],ui4>)
// CHECK-NOT: dq.unpack
// CHECK-DAG: %[[XB:.*]] = "torch_c.to_builtin_tensor"(%[[X]]) : (!torch.vtensor<[?,8],ui4>) -> tensor<?x8xi4>
// CHECK-DAG: %[[XU:.*]] = tensor.bitcast %[[XB]] : tensor<?x8xi4> to tensor<?x8xui4>
// CHECK-DAG: %[[SB:.*]] = "torch_c.to_builtin_tensor"(%[[S]]) : (!torch.vtensor<[?,4],f16>) -> tensor<?x4xf16>
// CHECK-DAG: %[[ZB:.*]] = "torch_c.to_builtin_tensor"(%[[Z]]) : (!torch.vtensor<[?,4],ui4>) -> tensor<?x4xi4>
// CHECK-DAG: %[[ZU:.*]] = tensor.bitcast %[[ZB]] : tensor<?x4xi4> to tensor<?x4xui4>
// CHECK: %[[Y:.*]] = "dq.onnx_dequantize_linear"(%[[XU]], %[[SB]], %[[ZU]]) {axis = -1 : i64, block_size = 2 : i64} : (tensor<?x8xui4>, tensor<?x4xf16>, tensor<?x4xui4>) -> tensor<?x8xf16>
// CHECK-NEXT: "torch_c.from_builtin_tensor"(%[[Y]]) : (tensor<?x8xf16>) -> !torch.vtensor<[?,8],f16>
func.func @blocked_uint4_arguments(%x: !torch.vtensor<[?,8],ui4>, %s: !torch.vtensor<[?,4],f16>, %z: !torch.vtensor<[?,4],ui4>) -> !torch.vtensor<[?,8],f16> {
  %0 = "torch.operator"(%x, %s, %z) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = -1 : si64, torch.onnx.block_size = 2 : si64} : (!torch.vtensor<[?,8],ui4>, !torch.vtensor<[?,4],f16>, !torch.vtensor<[?,4],ui4>) -> !torch.vtensor<[?,8],f16>
  "func.return"(%0) : (!torch.vtensor<[?,8],f16>) -> ()
}

// -----

// output_dtype is an ONNX TensorProto.DataType number: 16 is BFLOAT16.
// CHECK-LABEL: func.func @output_dtype_bfloat16
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}) {output_dtype = bf16} : (tensor<4x8xi8>, tensor<bf16>) -> tensor<4x8xbf16>
// CHECK-NEXT: "torch_c.from_builtin_tensor"(%{{.*}}) : (tensor<4x8xbf16>) -> !torch.vtensor<[4,8],bf16>
func.func @output_dtype_bfloat16(%x: !torch.vtensor<[4,8],si8>, %s: !torch.vtensor<[],bf16>) -> !torch.vtensor<[4,8],bf16> {
  %0 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.output_dtype = 16 : si64} : (!torch.vtensor<[4,8],si8>, !torch.vtensor<[],bf16>) -> !torch.vtensor<[4,8],bf16>
  "func.return"(%0) : (!torch.vtensor<[4,8],bf16>) -> ()
}

// -----

// output_dtype 1 is FLOAT: an f16 scale with an f32 result.
// CHECK-LABEL: func.func @output_dtype_float
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}) {output_dtype = f32} : (tensor<4x8xi8>, tensor<f16>) -> tensor<4x8xf32>
func.func @output_dtype_float(%x: !torch.vtensor<[4,8],si8>, %s: !torch.vtensor<[],f16>) -> !torch.vtensor<[4,8],f32> {
  %0 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.output_dtype = 1 : si64} : (!torch.vtensor<[4,8],si8>, !torch.vtensor<[],f16>) -> !torch.vtensor<[4,8],f32>
  "func.return"(%0) : (!torch.vtensor<[4,8],f32>) -> ()
}

// -----

// output_dtype 10 is FLOAT16.
// CHECK-LABEL: func.func @output_dtype_float16
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}) {output_dtype = f16} : (tensor<4x8xi8>, tensor<f16>) -> tensor<4x8xf16>
func.func @output_dtype_float16(%x: !torch.vtensor<[4,8],si8>, %s: !torch.vtensor<[],f16>) -> !torch.vtensor<[4,8],f16> {
  %0 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.output_dtype = 10 : si64} : (!torch.vtensor<[4,8],si8>, !torch.vtensor<[],f16>) -> !torch.vtensor<[4,8],f16>
  "func.return"(%0) : (!torch.vtensor<[4,8],f16>) -> ()
}

// -----

// A !torch.none zero point (torch.constant.none) is absent: the dq op has two operands. The
// onnx.Relu reading the result is untouched and reads the from_builtin_tensor.
// CHECK-LABEL: func.func @none_zero_point_and_relu
// CHECK-SAME: (%[[X:[^:]+]]: !torch.vtensor<[4,8],si8>, %[[S:[^:]+]]: !torch.vtensor<[],f32>)
// CHECK-DAG: %[[XB:.*]] = "torch_c.to_builtin_tensor"(%[[X]])
// CHECK-DAG: %[[SB:.*]] = "torch_c.to_builtin_tensor"(%[[S]])
// CHECK: %[[Y:.*]] = "dq.onnx_dequantize_linear"(%[[XB]], %[[SB]]) : (tensor<4x8xi8>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[YT:.*]] = "torch_c.from_builtin_tensor"(%[[Y]]) : (tensor<4x8xf32>) -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT: %[[R:.*]] = "torch.operator"(%[[YT]]) <{name = "onnx.Relu"}> : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32>
// CHECK-NEXT: return %[[R]]
func.func @none_zero_point_and_relu(%x: !torch.vtensor<[4,8],si8>, %s: !torch.vtensor<[],f32>) -> !torch.vtensor<[4,8],f32> {
  %n = "torch.constant.none"() : () -> !torch.none
  %0 = "torch.operator"(%x, %s, %n) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4,8],si8>, !torch.vtensor<[],f32>, !torch.none) -> !torch.vtensor<[4,8],f32>
  %1 = "torch.operator"(%0) <{name = "onnx.Relu"}> : (!torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32>
  "func.return"(%1) : (!torch.vtensor<[4,8],f32>) -> ()
}

// -----

// Other ONNX ops, including QuantizeLinear, are untouched.
// CHECK-LABEL: func.func @no_dequantize
// CHECK-NOT: torch_c.
// CHECK-NOT: dq.
// CHECK: "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.QuantizeLinear"}>
// CHECK-NEXT: "torch.operator"(%{{.*}}) <{name = "onnx.Relu"}>
func.func @no_dequantize(%x: !torch.vtensor<[4],f32>, %s: !torch.vtensor<[],f32>) -> !torch.vtensor<[4],si8> {
  %0 = "torch.operator"(%x, %s) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[4],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4],si8>
  %1 = "torch.operator"(%0) <{name = "onnx.Relu"}> : (!torch.vtensor<[4],si8>) -> !torch.vtensor<[4],si8>
  "func.return"(%1) : (!torch.vtensor<[4],si8>) -> ()
}

// -----

// Not converted: an attribute DequantizeLinear does not have.
// CHECK-LABEL: func.func @unknown_attribute
// CHECK-NOT: dq.
// CHECK: "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.DequantizeLinear"}> {torch.onnx.foo = 1 : si64}
func.func @unknown_attribute(%x: !torch.vtensor<[4,8],si8>, %s: !torch.vtensor<[],f32>) -> !torch.vtensor<[4,8],f32> {
  // expected-remark @+1 {{DequantizeLinear not converted to dq: attribute 'foo' is not an attribute of DequantizeLinear}}
  %0 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.foo = 1 : si64} : (!torch.vtensor<[4,8],si8>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4,8],f32>
  "func.return"(%0) : (!torch.vtensor<[4,8],f32>) -> ()
}

// -----

// Not converted: x of a dtype dq does not read (si64).
// CHECK-LABEL: func.func @int64_x
// CHECK-NOT: dq.
// CHECK: <{name = "onnx.DequantizeLinear"}>
func.func @int64_x(%x: !torch.vtensor<[4,8],si64>, %s: !torch.vtensor<[],f32>) -> !torch.vtensor<[4,8],f32> {
  // expected-remark @+1 {{DequantizeLinear not converted to dq: !torch.vtensor<[4,8],si64>: dtype si64 is not a dq element type}}
  %0 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4,8],si64>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4,8],f32>
  "func.return"(%0) : (!torch.vtensor<[4,8],f32>) -> ()
}

// -----

// Not converted: a rule of the spec broken (a per-axis scale of 3 elements for dim 0 of size 4).
// CHECK-LABEL: func.func @per_axis_scale_wrong_length
// CHECK-NOT: dq.
// CHECK: <{name = "onnx.DequantizeLinear"}>
func.func @per_axis_scale_wrong_length(%x: !torch.vtensor<[4,8],si8>, %s: !torch.vtensor<[3],f32>) -> !torch.vtensor<[4,8],f32> {
  // expected-remark @+1 {{DequantizeLinear not converted to dq: per-axis x_scale must have dim(axis) = 4 elements, got 3}}
  %0 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[4,8],si8>, !torch.vtensor<[3],f32>) -> !torch.vtensor<[4,8],f32>
  "func.return"(%0) : (!torch.vtensor<[4,8],f32>) -> ()
}

// -----

// Not converted: a zero point of another type than x.
// CHECK-LABEL: func.func @zero_point_type_mismatch
// CHECK-NOT: dq.
// CHECK: <{name = "onnx.DequantizeLinear"}>
func.func @zero_point_type_mismatch(%x: !torch.vtensor<[4,8],ui8>, %s: !torch.vtensor<[],f32>, %z: !torch.vtensor<[],si8>) -> !torch.vtensor<[4,8],f32> {
  // expected-remark @+1 {{DequantizeLinear not converted to dq: x_zero_point and x must have the same type}}
  %0 = "torch.operator"(%x, %s, %z) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4,8],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[4,8],f32>
  "func.return"(%0) : (!torch.vtensor<[4,8],f32>) -> ()
}

// -----

// Not converted: a result element type other than the spec's (the scale's f32, no output_dtype).
// CHECK-LABEL: func.func @output_type_mismatch
// CHECK-NOT: dq.
// CHECK: <{name = "onnx.DequantizeLinear"}>
func.func @output_type_mismatch(%x: !torch.vtensor<[4,8],si8>, %s: !torch.vtensor<[],f32>) -> !torch.vtensor<[4,8],f16> {
  // expected-remark @+1 {{DequantizeLinear not converted to dq: the output type is output_dtype or, in its absence, the type of x_scale: expected f32, got f16}}
  %0 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4,8],si8>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4,8],f16>
  "func.return"(%0) : (!torch.vtensor<[4,8],f16>) -> ()
}

// -----

// Not converted: a result shape other than x's.
// CHECK-LABEL: func.func @output_shape_mismatch
// CHECK-NOT: dq.
// CHECK: <{name = "onnx.DequantizeLinear"}>
func.func @output_shape_mismatch(%x: !torch.vtensor<[4,8],si8>, %s: !torch.vtensor<[],f32>) -> !torch.vtensor<[8,4],f32> {
  // expected-remark @+1 {{DequantizeLinear not converted to dq: x and y must have the same shape: expected [4, 8], got [8, 4]}}
  %0 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4,8],si8>, !torch.vtensor<[],f32>) -> !torch.vtensor<[8,4],f32>
  "func.return"(%0) : (!torch.vtensor<[8,4],f32>) -> ()
}

// -----

// Not converted: an output_dtype number that is no ONNX data type dq knows (7 is INT64).
// CHECK-LABEL: func.func @output_dtype_int64
// CHECK-NOT: dq.
// CHECK: <{name = "onnx.DequantizeLinear"}>
func.func @output_dtype_int64(%x: !torch.vtensor<[4,8],si8>, %s: !torch.vtensor<[],f32>) -> !torch.vtensor<[4,8],f32> {
  // expected-remark @+1 {{DequantizeLinear not converted to dq: output_dtype 7 is not an ONNX data type dq knows}}
  %0 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.output_dtype = 7 : si64} : (!torch.vtensor<[4,8],si8>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4,8],f32>
  "func.return"(%0) : (!torch.vtensor<[4,8],f32>) -> ()
}

// -----

// Whole blocks of 48 (not a power of two, which IREE's tiles neither divide nor are divisible
// by once the dequantize is fused into its consumer: fuzz case stage:88:498): read through the
// [2, 48, N] view, the scale at the block's index, and collapsed; no `floordiv`, no tail.
// CHECK-DAG: #[[BLOCKS48:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @whole_blocks_of_48
// CHECK-NOT: floordiv
// CHECK: %[[V:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 48, 4] : tensor<96x4xi8> into tensor<2x48x4xi8>
// CHECK: %[[W:.*]] = "dq.dequantize"(%[[V]], %{{.*}}) {scale_map = #[[BLOCKS48]], {{.*}}} : (tensor<2x48x4xi8>, tensor<2x4xf32>) -> tensor<2x48x4xf32>
// CHECK: tensor.collapse_shape %[[W]] {{\[\[}}0, 1], [2]] : tensor<2x48x4xf32> into tensor<96x4xf32>
// CHECK-NOT: tensor.concat
func.func @whole_blocks_of_48(%x: !torch.vtensor<[96,4],si8>, %s: !torch.vtensor<[2,4],f32>) -> !torch.vtensor<[96,4],f32> {
  %y = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 48 : si64} : (!torch.vtensor<[96,4],si8>, !torch.vtensor<[2,4],f32>) -> !torch.vtensor<[96,4],f32>
  return %y : !torch.vtensor<[96,4],f32>
}

// -----

// The same weights read only as a MatMul's B stay one blocked dequantize: dq's MatMul rewrites
// read them block by block themselves (the kernel, or one contraction).
// CHECK-LABEL: func.func @whole_blocks_of_48_as_matmul_weights
// CHECK-NOT: tensor.expand_shape
// CHECK: dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}) {axis = 0 : i64, block_size = 48 : i64} : (tensor<96x4xi8>, tensor<2x4xf32>) -> tensor<96x4xf32>
func.func @whole_blocks_of_48_as_matmul_weights(%a: !torch.vtensor<[3,96],f32>, %x: !torch.vtensor<[96,4],si8>, %s: !torch.vtensor<[2,4],f32>) -> !torch.vtensor<[3,4],f32> {
  %w = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 48 : si64} : (!torch.vtensor<[96,4],si8>, !torch.vtensor<[2,4],f32>) -> !torch.vtensor<[96,4],f32>
  %y = "torch.operator"(%a, %w) <{name = "onnx.MatMul"}> : (!torch.vtensor<[3,96],f32>, !torch.vtensor<[96,4],f32>) -> !torch.vtensor<[3,4],f32>
  return %y : !torch.vtensor<[3,4],f32>
}

// -----

// A partial last block along a static x (K = 33, block 16): the whole blocks [32, N], viewed as
// [2, 16, N], and the tail [1, N] are two dq.dequantize on slices of x and the scale, joined by
// tensor.concat. No read is a `floordiv` (IREE cannot tile one inside a fused contraction unless
// its tiles divide the block): the whole blocks read the scale at the block's index, the tail at 0.
// CHECK-DAG: #[[BLOCKS:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[TAIL:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @partial_last_block
// CHECK-DAG: %[[XB:.*]] = "torch_c.to_builtin_tensor"(%{{.*}}) : (!torch.vtensor<[33,4],si8>) -> tensor<33x4xi8>
// CHECK-DAG: %[[SB:.*]] = "torch_c.to_builtin_tensor"(%{{.*}}) : (!torch.vtensor<[3,4],f32>) -> tensor<3x4xf32>
// CHECK-DAG: %[[X0:.*]] = tensor.extract_slice %[[XB]][0, 0] [32, 4] [1, 1] : tensor<33x4xi8> to tensor<32x4xi8>
// CHECK-DAG: %[[V0:.*]] = tensor.expand_shape %[[X0]] {{\[\[}}0, 1], [2]] output_shape [2, 16, 4] : tensor<32x4xi8> into tensor<2x16x4xi8>
// CHECK-DAG: %[[S0:.*]] = tensor.extract_slice %[[SB]][0, 0] [2, 4] [1, 1] : tensor<3x4xf32> to tensor<2x4xf32>
// CHECK-DAG: %[[X1:.*]] = tensor.extract_slice %{{.*}}[32, 0] [1, 4] [1, 1] : tensor<33x4xi8> to tensor<1x4xi8>
// CHECK-DAG: %[[S1:.*]] = tensor.extract_slice %{{.*}}[2, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<1x4xf32>
// CHECK-DAG: %[[W0:.*]] = "dq.dequantize"(%[[V0]], %[[S0]]) {scale_map = #[[BLOCKS]], {{.*}}} : (tensor<2x16x4xi8>, tensor<2x4xf32>) -> tensor<2x16x4xf32>
// CHECK-DAG: %[[Y0:.*]] = tensor.collapse_shape %[[W0]] {{\[\[}}0, 1], [2]] : tensor<2x16x4xf32> into tensor<32x4xf32>
// CHECK-DAG: %[[Y1:.*]] = "dq.dequantize"(%[[X1]], %[[S1]]) {scale_map = #[[TAIL]], {{.*}}} : (tensor<1x4xi8>, tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK: %[[Y:.*]] = tensor.concat dim(0) %[[Y0]], %[[Y1]] : (tensor<32x4xf32>, tensor<1x4xf32>) -> tensor<33x4xf32>
// CHECK: "torch_c.from_builtin_tensor"(%[[Y]])
func.func @partial_last_block(%x: !torch.vtensor<[33,4],si8>, %s: !torch.vtensor<[3,4],f32>) -> !torch.vtensor<[33,4],f32> {
  %y = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 16 : si64} : (!torch.vtensor<[33,4],si8>, !torch.vtensor<[3,4],f32>) -> !torch.vtensor<[33,4],f32>
  return %y : !torch.vtensor<[33,4],f32>
}

// -----

// The same with the scale's other dim unknown ([3, ?]): its slices keep that dim whole, its size
// read at run time (the stage fuzzer's case, where building the slice was an internal error).
// CHECK-LABEL: func.func @partial_last_block_dynamic_scale
// CHECK-DAG: %[[SB:.*]] = "torch_c.to_builtin_tensor"(%{{.*}}) : (!torch.vtensor<[3,?],f32>) -> tensor<3x?xf32>
// CHECK-DAG: %[[N0:.*]] = tensor.dim %[[SB]], %{{.*}} : tensor<3x?xf32>
// CHECK-DAG: %[[S0:.*]] = tensor.extract_slice %[[SB]][0, 0] [2, %[[N0]]] [1, 1] : tensor<3x?xf32> to tensor<2x?xf32>
// CHECK-DAG: %[[S1:.*]] = tensor.extract_slice %{{.*}}[2, 0] [1, %{{.*}}] [1, 1] : tensor<3x?xf32> to tensor<1x?xf32>
// CHECK-DAG: "dq.dequantize"(%{{.*}}, %[[S0]]) {{.*}} : (tensor<2x16x4xi8>, tensor<2x?xf32>) -> tensor<2x16x4xf32>
// CHECK-DAG: "dq.dequantize"(%{{.*}}, %[[S1]]) {{.*}} : (tensor<1x4xi8>, tensor<1x?xf32>) -> tensor<1x4xf32>
// CHECK: tensor.concat dim(0)
func.func @partial_last_block_dynamic_scale(%x: !torch.vtensor<[33,4],si8>, %s: !torch.vtensor<[3,?],f32>) -> !torch.vtensor<[33,4],f32> {
  %y = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 16 : si64} : (!torch.vtensor<[33,4],si8>, !torch.vtensor<[3,?],f32>) -> !torch.vtensor<[33,4],f32>
  return %y : !torch.vtensor<[33,4],f32>
}

// -----

// Blocks along axis 1 (x [N, K] as Gemm transB=1 reads it; K = 40, block 32), packed uint4 with a
// zero point: the whole block's bytes repacked as [4, 1, 32], the tail's as [4, 8]; scale and zero
// point read at (d0, d1) over [4, 1, 32] and at (d0, 0) over [4, 8].
// CHECK-DAG: #[[BLOCKS1:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[TAIL1:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @partial_last_block_axis_1
// CHECK-DAG: %[[W0:.*]] = "dq.unpack"(%{{.*}}) : (tensor<64xi8>) -> tensor<4x1x32xui4>
// CHECK-DAG: %[[W1:.*]] = "dq.unpack"(%{{.*}}) : (tensor<16xi8>) -> tensor<4x8xui4>
// CHECK-DAG: %[[Y0:.*]] = "dq.dequantize"(%[[W0]], %{{.*}}, %{{.*}}) {scale_map = #[[BLOCKS1]], {{.*}}} : (tensor<4x1x32xui4>, tensor<4x1xf32>, tensor<4x1xui4>) -> tensor<4x1x32xf32>
// CHECK-DAG: %[[C0:.*]] = tensor.collapse_shape %[[Y0]] {{\[\[}}0], [1, 2]] : tensor<4x1x32xf32> into tensor<4x32xf32>
// CHECK-DAG: %[[Y1:.*]] = "dq.dequantize"(%[[W1]], %{{.*}}, %{{.*}}) {scale_map = #[[TAIL1]], {{.*}}} : (tensor<4x8xui4>, tensor<4x1xf32>, tensor<4x1xui4>) -> tensor<4x8xf32>
// CHECK: tensor.concat dim(1) %[[C0]], %[[Y1]] : (tensor<4x32xf32>, tensor<4x8xf32>) -> tensor<4x40xf32>
func.func @partial_last_block_axis_1(%s: !torch.vtensor<[4,2],f32>) -> !torch.vtensor<[4,40],f32> {
  %x = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<4x40xui4>} : () -> !torch.vtensor<[4,40],ui4>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<7> : tensor<4x2xui4>} : () -> !torch.vtensor<[4,2],ui4>
  %y = "torch.operator"(%x, %s, %z) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64, torch.onnx.block_size = 32 : si64} : (!torch.vtensor<[4,40],ui4>, !torch.vtensor<[4,2],f32>, !torch.vtensor<[4,2],ui4>) -> !torch.vtensor<[4,40],f32>
  return %y : !torch.vtensor<[4,40],f32>
}

// -----

// The only block partial (K = 72, block 128): one dq.dequantize reading the scale at index 0
// along K, no concat.
// CHECK-DAG: #[[ONE:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @only_block_partial
// CHECK-NOT: tensor.concat
// CHECK: "dq.dequantize"(%{{.*}}, %{{.*}}) {scale_map = #[[ONE]], {{.*}}} : (tensor<72x4xi8>, tensor<1x4xf32>) -> tensor<72x4xf32>
// CHECK-NOT: tensor.concat
func.func @only_block_partial(%x: !torch.vtensor<[72,4],si8>, %s: !torch.vtensor<[1,4],f32>) -> !torch.vtensor<[72,4],f32> {
  %y = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 128 : si64} : (!torch.vtensor<[72,4],si8>, !torch.vtensor<[1,4],f32>) -> !torch.vtensor<[72,4],f32>
  return %y : !torch.vtensor<[72,4],f32>
}

// -----

// An operator name that is not UTF-8 names no ONNX op: left as it is (found by the opt fuzzer,
// where reading it was an internal error), the DequantizeLinear beside it converted.
// CHECK-LABEL: func.func @name_not_utf8
// CHECK: "torch.operator"(%{{.*}}, %{{.*}}) <{name = "\FF"}>
// CHECK: "dq.onnx_dequantize_linear"
func.func @name_not_utf8(%x: !torch.vtensor<[4],si8>, %s: !torch.vtensor<[],f32>) -> !torch.vtensor<[4],f32> {
  %0 = "torch.operator"(%x, %s) <{name = "\ff"}> : (!torch.vtensor<[4],si8>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4],f32>
  %y = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4],si8>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4],f32>
  return %y : !torch.vtensor<[4],f32>
}
