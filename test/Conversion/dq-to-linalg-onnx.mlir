// RUN: dequant-opt %s --dq-to-linalg --split-input-file | FileCheck %s

// Each dq op becomes one linalg.generic on tensors: x read through the identity map, the scale
// and zero point through the canonical maps (per-tensor: `-> ()` or `-> (0)`; per-axis:
// `-> (d_axis)`; blocked: `d_axis floordiv block_size`), all loops parallel, arith in the body
// (docs/semantics.md#arithmetic: exact integer subtraction, one conversion to f32, one multiplication,
// one rounding to the output type).

// Per-tensor, scalar scale and zero point, i8: sign-extended to i32, subtracted exactly.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[SCALAR:map[0-9]*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @per_tensor_i8
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xi8>, %[[S:[^:]+]]: tensor<f32>, %[[Z:[^:]+]]: tensor<i8>)
// CHECK-NOT: dq.
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[SCALAR]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[S]], %[[Z]] : tensor<4x8xi8>, tensor<f32>, tensor<i8>) outs(%[[INIT]] : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[XV:[^:]+]]: i8, %[[SV:[^:]+]]: f32, %[[ZV:[^:]+]]: i8, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[XW:.*]] = arith.extsi %[[XV]] : i8 to i32
// CHECK-NEXT: %[[ZW:.*]] = arith.extsi %[[ZV]] : i8 to i32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[XW]], %[[ZW]] : i32
// CHECK-NEXT: %[[DF:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[DF]], %[[SV]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NEXT: } -> tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]] : tensor<4x8xf32>
func.func @per_tensor_i8(%x: tensor<4x8xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Per-tensor with a one-element 1-D scale (read at index 0) and a scalar zero point, ui8: cast
// to signless storage before the generic (as LowerQuantOps does), zero-extended in it.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ZERO:map[0-9]*]] = affine_map<(d0, d1) -> (0)>
// CHECK-DAG: #[[SCALAR:map[0-9]*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @per_tensor_one_element_ui8
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xui8>, %[[S:[^:]+]]: tensor<1xf32>, %[[Z:[^:]+]]: tensor<ui8>)
// CHECK-DAG: %[[XS:.*]] = tensor.bitcast %[[X]] : tensor<4x8xui8> to tensor<4x8xi8>
// CHECK-DAG: %[[ZS:.*]] = tensor.bitcast %[[Z]] : tensor<ui8> to tensor<i8>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ZERO]], #[[SCALAR]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[XS]], %[[S]], %[[ZS]] : tensor<4x8xi8>, tensor<1xf32>, tensor<i8>)
// CHECK-NEXT: ^bb0(%[[XV:[^:]+]]: i8, %[[SV:[^:]+]]: f32, %[[ZV:[^:]+]]: i8, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[XW:.*]] = arith.extui %[[XV]] : i8 to i32
// CHECK-NEXT: %[[ZW:.*]] = arith.extui %[[ZV]] : i8 to i32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[XW]], %[[ZW]] : i32
// CHECK-NEXT: %[[DF:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[DF]], %[[SV]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @per_tensor_one_element_ui8(%x: tensor<4x8xui8>, %s: tensor<1xf32>, %z: tensor<ui8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xui8>, tensor<1xf32>, tensor<ui8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Per-axis along the default axis 1: scale and zero point are read at d1.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[AXIS:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @per_axis_default
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[AXIS]], #[[AXIS]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>)
func.func @per_axis_default(%x: tensor<4x8xi8>, %s: tensor<8xf32>, %z: tensor<8xi8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Per-axis with a negative axis: -2 of a rank-2 x is dim 0.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[AXIS:map[0-9]*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @per_axis_negative
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[AXIS]], #[[AXIS]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xi8>, tensor<4xf32>, tensor<4xi8>)
func.func @per_axis_negative(%x: tensor<4x8xi8>, %s: tensor<4xf32>, %z: tensor<4xi8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = -2 : i64} : (tensor<4x8xi8>, tensor<4xf32>, tensor<4xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Per-axis on the middle dim of a rank-3 x, no zero point: three maps only.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[AXIS:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @per_axis_rank3
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[AXIS]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[XV:[^:]+]]: i8, %[[SV:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[XW:.*]] = arith.extsi %[[XV]] : i8 to i32
// CHECK-NEXT: %[[DF:.*]] = arith.sitofp %[[XW]] : i32 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[DF]], %[[SV]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @per_axis_rank3(%x: tensor<2x3x5xi8>, %s: tensor<3xf32>) -> tensor<2x3x5xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64} : (tensor<2x3x5xi8>, tensor<3xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// Per-axis ui4 on dim 0 of x with a dynamic dim 1: tensor.empty takes x's dim 1.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[AXIS:map[0-9]*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @per_axis_ui4_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<8x?xui4>
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[DIM:.*]] = tensor.dim %[[X]], %[[C1]] : tensor<8x?xui4>
// CHECK-DAG: %[[XS:.*]] = tensor.bitcast %[[X]] : tensor<8x?xui4> to tensor<8x?xi4>
// CHECK-DAG: %[[INIT:.*]] = tensor.empty(%[[DIM]]) : tensor<8x?xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[AXIS]], #[[AXIS]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[XS]], %{{.*}}, %{{.*}} : tensor<8x?xi4>, tensor<8xf32>, tensor<8xi4>) outs(%[[INIT]] : tensor<8x?xf32>)
// CHECK-NEXT: ^bb0(%[[XV:[^:]+]]: i4, %{{[^:]+}}: f32, %[[ZV:[^:]+]]: i4, %{{[^:]+}}: f32):
// CHECK-NEXT: arith.extui %[[XV]] : i4 to i32
// CHECK-NEXT: arith.extui %[[ZV]] : i4 to i32
// CHECK-NEXT: arith.subi
// CHECK-NEXT: arith.sitofp %{{.*}} : i32 to f32
func.func @per_axis_ui4_dynamic(%x: tensor<8x?xui4>, %s: tensor<8xf32>, %z: tensor<8xui4>) -> tensor<8x?xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 0 : i64} : (tensor<8x?xui4>, tensor<8xf32>, tensor<8xui4>) -> tensor<8x?xf32>
  return %y : tensor<8x?xf32>
}

// -----

// Blocked along axis 1 (block 32), i4 with an f16 scale and a dynamic dim 0: the scale is
// widened to f32, the product rounded once to f16.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[BLOCK:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>
// CHECK-LABEL: func.func @blocked_i4_f16
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x64xi4>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[DIM:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x64xi4>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[DIM]]) : tensor<?x64xf16>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[BLOCK]], #[[BLOCK]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %{{.*}}, %{{.*}} : tensor<?x64xi4>, tensor<?x2xf16>, tensor<?x2xi4>) outs(%[[INIT]] : tensor<?x64xf16>)
// CHECK-NEXT: ^bb0(%[[XV:[^:]+]]: i4, %[[SV:[^:]+]]: f16, %[[ZV:[^:]+]]: i4, %{{[^:]+}}: f16):
// CHECK-NEXT: %[[XW:.*]] = arith.extsi %[[XV]] : i4 to i32
// CHECK-NEXT: %[[ZW:.*]] = arith.extsi %[[ZV]] : i4 to i32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[XW]], %[[ZW]] : i32
// CHECK-NEXT: %[[DF:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK-NEXT: %[[SF:.*]] = arith.extf %[[SV]] : f16 to f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[DF]], %[[SF]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[P]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[R]] : f16
// CHECK-NEXT: } -> tensor<?x64xf16>
func.func @blocked_i4_f16(%x: tensor<?x64xi4>, %s: tensor<?x2xf16>, %z: tensor<?x2xi4>) -> tensor<?x64xf16> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64, block_size = 32 : i64} : (tensor<?x64xi4>, tensor<?x2xf16>, tensor<?x2xi4>) -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}

// -----

// Blocked along axis 0 of a rank-3 x (block 16), i16.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[BLOCK:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0 floordiv 16, d1, d2)>
// CHECK-LABEL: func.func @blocked_axis0_rank3
// CHECK: tensor.empty() : tensor<64x3x5xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[BLOCK]], #[[BLOCK]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[XV:[^:]+]]: i16, %{{[^:]+}}: f32, %[[ZV:[^:]+]]: i16, %{{[^:]+}}: f32):
// CHECK-NEXT: arith.extsi %[[XV]] : i16 to i32
// CHECK-NEXT: arith.extsi %[[ZV]] : i16 to i32
func.func @blocked_axis0_rank3(%x: tensor<64x3x5xi16>, %s: tensor<4x3x5xf32>, %z: tensor<4x3x5xi16>) -> tensor<64x3x5xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 0 : i64, block_size = 16 : i64} : (tensor<64x3x5xi16>, tensor<4x3x5xf32>, tensor<4x3x5xi16>) -> tensor<64x3x5xf32>
  return %y : tensor<64x3x5xf32>
}

// -----

// Ragged blocks: Di = 70, block 24 (scale dim 3); the map is the same floordiv.
// CHECK-DAG: #[[BLOCK:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 24)>
// CHECK-LABEL: func.func @blocked_ragged
// CHECK: linalg.generic {indexing_maps = [#{{map[0-9]*}}, #[[BLOCK]], #{{map[0-9]*}}]
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<2x70xi8>, tensor<2x3xbf16>)
func.func @blocked_ragged(%x: tensor<2x70xui8>, %s: tensor<2x3xbf16>) -> tensor<2x70xbf16> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = -1 : i64, block_size = 24 : i64} : (tensor<2x70xui8>, tensor<2x3xbf16>) -> tensor<2x70xbf16>
  return %y : tensor<2x70xbf16>
}

// -----

// int32 storage is widened to i64 (exact for every zero point), converted once to f32; a bf16
// scale is widened to f32. Both dims dynamic.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[SCALAR:map[0-9]*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @i32_bf16_scale
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?xi32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[D0:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x?xi32>
// CHECK-DAG: %[[D1:.*]] = tensor.dim %[[X]], %[[C1]] : tensor<?x?xi32>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[XV:[^:]+]]: i32, %[[SV:[^:]+]]: bf16, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[DF:.*]] = arith.sitofp %[[XV]] : i32 to f32
// CHECK-NEXT: %[[SF:.*]] = arith.extf %[[SV]] : bf16 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[DF]], %[[SF]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @i32_bf16_scale(%x: tensor<?x?xi32>, %s: tensor<bf16>) -> tensor<?x?xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {output_dtype = f32} : (tensor<?x?xi32>, tensor<bf16>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// int32 with a zero point: x - z may overflow i32, so it is taken in 16-bit halves, each exact
// (dialect/decode.py, exact_difference): (hi(x) - hi(z)) in f32 plus (lo(x) - lo(z)) in i32.
// CHECK-LABEL: func.func @i32_zero_point
// CHECK-DAG: %[[LOW:.*]] = arith.constant 65535 : i32
// CHECK-DAG: %[[HIGH:.*]] = arith.constant -65536 : i32
// CHECK: ^bb0(%[[XV:[^:]+]]: i32, %{{[^:]+}}: f32, %[[ZV:[^:]+]]: i32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[ZL:.*]] = arith.andi %[[ZV]], %[[LOW]] : i32
// CHECK-NEXT: %[[ZH:.*]] = arith.andi %[[ZV]], %[[HIGH]] : i32
// CHECK-NEXT: %[[ZHF:.*]] = arith.sitofp %[[ZH]] : i32 to f32
// CHECK-NEXT: %[[XL:.*]] = arith.andi %[[XV]], %[[LOW]] : i32
// CHECK-NEXT: %[[XH:.*]] = arith.andi %[[XV]], %[[HIGH]] : i32
// CHECK-NEXT: %[[XHF:.*]] = arith.sitofp %[[XH]] : i32 to f32
// CHECK-NEXT: %[[H:.*]] = arith.subf %[[XHF]], %[[ZHF]] : f32
// CHECK-NEXT: %[[L:.*]] = arith.subi %[[XL]], %[[ZL]] : i32
// CHECK-NEXT: %[[LF:.*]] = arith.sitofp %[[L]] : i32 to f32
// CHECK-NEXT: arith.addf %[[H]], %[[LF]] : f32
func.func @i32_zero_point(%x: tensor<16xi32>, %s: tensor<f32>, %z: tensor<i32>) -> tensor<16xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<16xi32>, tensor<f32>, tensor<i32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// float8e4m3fn decoded through f16 (its 4 exponent bits are the low bits of f16's 5, bias 15
// against 7): the magnitude bits shifted by 10 - 3 = 7 and the sign to bit 15 give the value
// times 2^-8 as an f16, widened and scaled by 256; S.1111.111 is NaN. Then the product rounded
// to the bf16 output_dtype.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SCALAR:map[0-9]*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @f8E4M3FN_bf16
// CHECK-DAG: %[[C127H:.*]] = arith.constant 127 : i16
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : i16
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : i16
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : i16
// CHECK-DAG: %[[C256:.*]] = arith.constant 2.560000e+02 : f32
// CHECK-DAG: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK-DAG: %[[C127:.*]] = arith.constant 127 : i32
// CHECK: tensor.empty() : tensor<16xbf16>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[ID]]], iterator_types = ["parallel"]}
// CHECK-NEXT: ^bb0(%[[XV:[^:]+]]: f8E4M3FN, %[[SV:[^:]+]]: f32, %{{[^:]+}}: bf16):
// CHECK-NEXT: %[[BITS:.*]] = arith.bitcast %[[XV]] : f8E4M3FN to i8
// CHECK-NEXT: %[[B:.*]] = arith.extui %[[BITS]] : i8 to i32
// CHECK-NEXT: %[[H:.*]] = arith.trunci %[[B]] : i32 to i16
// CHECK-NEXT: %[[EM:.*]] = arith.andi %[[H]], %[[C127H]] : i16
// CHECK-NEXT: %[[EMS:.*]] = arith.shli %[[EM]], %[[C7]] : i16
// CHECK-NEXT: %[[S:.*]] = arith.andi %[[H]], %[[C128]] : i16
// CHECK-NEXT: %[[SS:.*]] = arith.shli %[[S]], %[[C8]] : i16
// CHECK-NEXT: %[[HB:.*]] = arith.ori %[[EMS]], %[[SS]] : i16
// CHECK-NEXT: %[[HF:.*]] = arith.bitcast %[[HB]] : i16 to f16
// CHECK-NEXT: %[[F:.*]] = arith.extf %[[HF]] : f16 to f32
// CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %[[F]], %[[C256]] : f32
// CHECK-NEXT: %[[LOW7:.*]] = arith.andi %[[B]], %[[C127]] : i32
// CHECK-NEXT: %[[ISNAN:.*]] = arith.cmpi eq, %[[LOW7]], %[[C127]] : i32
// CHECK-NEXT: %[[V:.*]] = arith.select %[[ISNAN]], %[[NAN]], %[[SCALED]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[V]], %[[SV]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[R]] : bf16
func.func @f8E4M3FN_bf16(%x: tensor<16xf8E4M3FN>, %s: tensor<f32>) -> tensor<16xbf16> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {output_dtype = bf16} : (tensor<16xf8E4M3FN>, tensor<f32>) -> tensor<16xbf16>
  return %y : tensor<16xbf16>
}

// -----

// float8 with a zero point: zero by ONNX's rules, and not read (the ONNX reference never
// subtracts it; -0.0 - -0.0 would be +0.0): x decoded and scaled.
// CHECK-LABEL: func.func @f8E4M3FN_zero_point
// CHECK-DAG: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{[^,]+}}, %{{[^ ]+}} : tensor<16xf8E4M3FN>, tensor<f32>)
// CHECK: ^bb0(%[[XV:[^:]+]]: f8E4M3FN, %[[SV:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: arith.bitcast %[[XV]] : f8E4M3FN to i8
// CHECK:      %[[XF:.*]] = arith.select %{{.*}}, %[[NAN]], %{{.*}} : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[XF]], %[[SV]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @f8E4M3FN_zero_point(%x: tensor<16xf8E4M3FN>, %s: tensor<f32>, %z: tensor<f8E4M3FN>) -> tensor<16xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<16xf8E4M3FN>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// float8e5m2 is the top byte of an f16 (bias 15 both, infinities and NaNs at exponent 31
// both): the bits shifted left by 8, widened from f16, with an f16 scale and output.
// CHECK-LABEL: func.func @f8E5M2_f16
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : i16
// CHECK: ^bb0(%[[XV:[^:]+]]: f8E5M2, %[[SV:[^:]+]]: f16, %{{[^:]+}}: f16):
// CHECK-NEXT: %[[BITS:.*]] = arith.bitcast %[[XV]] : f8E5M2 to i8
// CHECK-NEXT: %[[B:.*]] = arith.extui %[[BITS]] : i8 to i32
// CHECK-NEXT: %[[H:.*]] = arith.trunci %[[B]] : i32 to i16
// CHECK-NEXT: %[[HB:.*]] = arith.shli %[[H]], %[[C8]] : i16
// CHECK-NEXT: %[[HF:.*]] = arith.bitcast %[[HB]] : i16 to f16
// CHECK-NEXT: %[[V:.*]] = arith.extf %[[HF]] : f16 to f32
// CHECK-NEXT: %[[SF:.*]] = arith.extf %[[SV]] : f16 to f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[V]], %[[SF]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[P]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[R]] : f16
func.func @f8E5M2_f16(%x: tensor<16xf8E5M2>, %s: tensor<f16>) -> tensor<16xf16> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<16xf8E5M2>, tensor<f16>) -> tensor<16xf16>
  return %y : tensor<16xf16>
}

// -----

// float8e5m2fnuz: bias 16 (rebias 111), the only NaN is 0x80.
// CHECK-LABEL: func.func @f8E5M2FNUZ
// CHECK-DAG: %[[C111:.*]] = arith.constant 111 : i32
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : i32
// CHECK-DAG: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK: ^bb0(%[[XV:[^:]+]]: f8E5M2FNUZ, %[[SV:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[BITS:.*]] = arith.bitcast %[[XV]] : f8E5M2FNUZ to i8
// CHECK-NEXT: %[[B:.*]] = arith.extui %[[BITS]] : i8 to i32
// CHECK: arith.addi %{{.*}}, %[[C111]] : i32
// CHECK: %[[ISNAN:.*]] = arith.cmpi eq, %[[B]], %[[C128]] : i32
// CHECK-NEXT: %[[V:.*]] = arith.select %[[ISNAN]], %[[NAN]], %{{.*}} : f32
// CHECK-NEXT: arith.mulf %[[V]], %[[SV]] : f32
func.func @f8E5M2FNUZ(%x: tensor<16xf8E5M2FNUZ>, %s: tensor<f32>) -> tensor<16xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<16xf8E5M2FNUZ>, tensor<f32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// MX: float4e2m1 blocked by 32 with float8e8m0 scales (2^(e-127), e = 0 is 2^-127, 255 NaN).
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[BLOCK:map[0-9]*]] = affine_map<(d0) -> (d0 floordiv 32)>
// CHECK-LABEL: func.func @mxfp4
// CHECK-DAG: %[[C126:.*]] = arith.constant 126 : i32
// CHECK-DAG: %[[C22:.*]] = arith.constant 22 : i32
// CHECK-DAG: %[[C23:.*]] = arith.constant 23 : i32
// CHECK-DAG: %[[C255:.*]] = arith.constant 255 : i32
// CHECK-DAG: %[[TINY:.*]] = arith.constant 5.87747175E-39 : f32
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[BLOCK]], #[[ID]]], iterator_types = ["parallel"]}
// CHECK-NEXT: ^bb0(%[[XV:[^:]+]]: f4E2M1FN, %[[SV:[^:]+]]: f8E8M0FNU, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[XB:.*]] = arith.bitcast %[[XV]] : f4E2M1FN to i4
// CHECK-NEXT: arith.extui %[[XB]] {dq.lookup_code} : i4 to i32
// CHECK: arith.addi %{{.*}}, %[[C126]] : i32
// CHECK: arith.shli %{{.*}}, %[[C22]] : i32
// CHECK: %[[NEG:.*]] = arith.negf
// CHECK-NEXT: %[[XF:.*]] = arith.select %{{.*}}, %[[NEG]], %{{.*}} : f32
// CHECK-NEXT: %[[SB:.*]] = arith.bitcast %[[SV]] : f8E8M0FNU to i8
// CHECK-NEXT: %[[SW:.*]] = arith.extui %[[SB]] : i8 to i32
// CHECK-NEXT: %[[E:.*]] = arith.andi %[[SW]], %[[C255]] : i32
// CHECK-NEXT: %[[EB:.*]] = arith.shli %[[E]], %[[C23]] : i32
// CHECK-NEXT: %[[POW:.*]] = arith.bitcast %[[EB]] : i32 to f32
// CHECK-NEXT: %[[IS0:.*]] = arith.cmpi eq, %[[E]], %{{.*}} : i32
// CHECK-NEXT: %[[S1:.*]] = arith.select %[[IS0]], %[[TINY]], %[[POW]] : f32
// CHECK-NEXT: %[[IS255:.*]] = arith.cmpi eq, %[[E]], %[[C255]] : i32
// CHECK-NEXT: %[[SF:.*]] = arith.select %[[IS255]], %{{.*}}, %[[S1]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[XF]], %[[SF]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @mxfp4(%x: tensor<64xf4E2M1FN>, %s: tensor<2xf8E8M0FNU>) -> tensor<64xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 0 : i64, block_size = 32 : i64, output_dtype = f32} : (tensor<64xf4E2M1FN>, tensor<2xf8E8M0FNU>) -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

// The canonical op lowers the same way; an added float zero point, f64 arithmetic.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[SCALAR:map[0-9]*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[ZERO:map[0-9]*]] = affine_map<(d0, d1) -> (0)>
// CHECK-LABEL: func.func @canonical_add_f64
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[ZERO]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[XV:[^:]+]]: i8, %[[SV:[^:]+]]: f64, %[[ZV:[^:]+]]: f64, %{{[^:]+}}: f64):
// CHECK-NEXT: %[[XW:.*]] = arith.extui %[[XV]] : i8 to i32
// CHECK-NEXT: %[[DF:.*]] = arith.sitofp %[[XW]] : i32 to f64
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[DF]], %[[SV]] : f64
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[P]], %[[ZV]] : f64
// CHECK-NEXT: linalg.yield %[[R]] : f64
func.func @canonical_add_f64(%x: tensor<?x8xui8>, %s: tensor<f64>, %z: tensor<1xf64>) -> tensor<?x8xf64> {
  %y = "dq.dequantize"(%x, %s, %z) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> (0)>, zero_point_mode = "add"} : (tensor<?x8xui8>, tensor<f64>, tensor<1xf64>) -> tensor<?x8xf64>
  return %y : tensor<?x8xf64>
}

// -----

// int4x4: the output is iterated as [x rows, 4, cols] (an expanded view of it): nibble k is the
// size-4 dim, unsigned, minus (zp & 0xF); output row 4*d0 + d1 reads scale row d0 (blocks of 4
// rows); the output's dynamic dim 0 is 4 times x's.
// CHECK-DAG: #[[ROW:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @canonical_int4x4
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x8xi16>
// CHECK-DAG: %[[C15:.*]] = arith.constant 15 : i32
// CHECK-DAG: %[[C4I:.*]] = arith.constant 4 : i32
// CHECK-DAG: %[[DIM:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8xi16>
// CHECK-DAG: %[[ROWS:.*]] = arith.muli %[[DIM]], %{{.*}} : index
// CHECK: %[[INIT:.*]] = tensor.empty(%[[ROWS]]) : tensor<?x8xf16>
// The run-time checks of the dynamic dims (dq-to-linalg-guards.mlir) hold the generic.
// CHECK: %[[CHECKED:.*]] = scf.if %{{.*}} -> (tensor<?x8xf16>) {
// CHECK-NEXT: %[[VIEW:.*]] = tensor.expand_shape %[[INIT]] {{\[}}[0, 1], [2]] output_shape [%[[DIM]], 4, 8] : tensor<?x8xf16> into tensor<?x4x8xf16>
// CHECK-NEXT: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ROW]], #[[ROW]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: outs(%[[VIEW]] : tensor<?x4x8xf16>)
// CHECK-NEXT: ^bb0(%[[XV:[^:]+]]: i16, %[[SV:[^:]+]]: f16, %[[ZV:[^:]+]]: i8, %{{[^:]+}}: f16):
// CHECK-NEXT: %[[K:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[KI:.*]] = arith.index_cast %[[K]] : index to i32
// CHECK-NEXT: %[[SH:.*]] = arith.muli %[[KI]], %[[C4I]] : i32
// CHECK-NEXT: %[[XW:.*]] = arith.extui %[[XV]] : i16 to i32
// CHECK-NEXT: %[[XS:.*]] = arith.shrui %[[XW]], %[[SH]] : i32
// CHECK-NEXT: %[[Q:.*]] = arith.andi %[[XS]], %[[C15]] {dq.field_code = 4 : i32} : i32
// CHECK-NEXT: %[[ZW:.*]] = arith.extsi %[[ZV]] : i8 to i32
// CHECK-NEXT: %[[ZN:.*]] = arith.andi %[[ZW]], %[[C15]] : i32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[Q]], %[[ZN]] : i32
// CHECK-NEXT: %[[DF:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK-NEXT: %[[SF:.*]] = arith.extf %[[SV]] : f16 to f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[DF]], %[[SF]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[P]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[R]] : f16
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[Y]] {{\[}}[0, 1], [2]] : tensor<?x4x8xf16> into tensor<?x8xf16>
// CHECK-NEXT: scf.yield %[[FLAT]] : tensor<?x8xf16>
// CHECK: return %[[CHECKED]]
func.func @canonical_int4x4(%x: tensor<?x8xi16>, %s: tensor<?x8xf16>, %z: tensor<?x8xi8>) -> tensor<?x8xf16> {
  %y = "dq.dequantize"(%x, %s, %z) {scale_map = affine_map<(d0, d1) -> (d0 floordiv 4, d1)>, zero_point_map = affine_map<(d0, d1) -> (d0 floordiv 4, d1)>, unpack = "int4x4"} : (tensor<?x8xi16>, tensor<?x8xf16>, tensor<?x8xi8>) -> tensor<?x8xf16>
  return %y : tensor<?x8xf16>
}
