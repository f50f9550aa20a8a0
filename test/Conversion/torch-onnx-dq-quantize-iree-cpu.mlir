// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-dq-quantize-iree-cpu | FileCheck %s

// torch-onnx-dq-quantize-iree-cpu: the stage's dequant.NhwcQuantizeLinear node
// (python/qdq_conv_matmuls.py) as one dispatch of dq's NHWC quantize kernel
// (passes/kernels/nhwc_quantize.py). A [1, 3, 4, 10] f32 image, scale 0.25 (its split reciprocal:
// `_rcp`), uint8 zero point 128: one workgroup per image row (4), x read as the planes' rows
// [12, 10], y written as [4, 30] bytes. Per 8 pixels each channel's row: x * zh + x * zl (the
// product fenced), clamped to [0 - zy, 255 - zy], rounded by adding 1.5 * 2^23, its low byte plus
// zy's; the three channels' bytes interleaved pixel by pixel and stored at once; the last 2 pixels
// the same, masked.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: "stream.return"(%[[C4]], %{{.*}}, %{{.*}}) : (index, index, index) -> ()
// CHECK: func.func @[[K:dq_quantize_nhwc_u8_n1_c3_h4_w10_rcp]](
// CHECK-DAG: %[[X:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<12x10xf32>
// CHECK-DAG: %[[Y:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<4x30xi8>
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[V:.*]] = vector.load %[[X]][%{{.*}}, %[[J]]] : memref<12x10xf32>, vector<8xf32>
// CHECK-NEXT: %[[LO:.*]] = arith.mulf %[[V]], %{{.*}} : vector<8xf32>
// CHECK-NEXT: %[[F:.*]] = llvm.call_intrinsic "llvm.arithmetic.fence"(%[[LO]])
// CHECK-NEXT: %{{.*}} = math.fma %[[V]], %{{.*}}, %[[F]] : vector<8xf32>
// CHECK: arith.maximumf
// CHECK-NEXT: arith.minimumf
// CHECK-NEXT: arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-NEXT: vector.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK-NEXT: arith.trunci %{{.*}} : vector<8xi32> to vector<8xi8>
// CHECK-COUNT-2: vector.load %[[X]]
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 8, 16, 1, 9, 17, 2, 10, 18, 3, 11, 19, 4, 12, 20, 5, 13, 21, 6, 14, 22, 7, 15, 23] : vector<24xi8>, vector<24xi8>
// CHECK: vector.store %{{.*}}, %[[Y]][%[[ROW]], %{{.*}}] : memref<4x30xi8>, vector<24xi8>
// CHECK: %[[M:.*]] = vector.constant_mask [2] : vector<8xi1>
// CHECK-NEXT: vector.maskedload %[[X]][%{{.*}}, %{{.*}}], %[[M]], %{{.*}} : memref<12x10xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: %[[M6:.*]] = vector.constant_mask [6] : vector<24xi1>
// CHECK-NEXT: vector.maskedstore %[[Y]][%[[ROW]], %{{.*}}], %[[M6]], %{{.*}} : memref<4x30xi8>, vector<24xi1>, vector<24xi8>
// CHECK-LABEL: func.func @image
// CHECK: %[[IMAGE:.*]] = "torch_c.to_builtin_tensor"(%{{.*}}) : (!torch.vtensor<[1,3,4,10],f32>) -> tensor<1x3x4x10xf32>
// CHECK: %[[PLANES:.*]] = tensor.collapse_shape %[[IMAGE]] {{\[\[}}0, 1, 2], [3]] : tensor<1x3x4x10xf32> into tensor<12x10xf32>
// CHECK: %[[R:.*]] = arith.constant dense<[2.500000e-01, 1.280000e+02, 4.000000e+00, 0.000000e+00]> : tensor<4xf32>
// CHECK: %[[Q:.*]] = "flow.dispatch"(%{{[^,]+}}, %[[PLANES]], %[[R]], %{{[^)]+}}) {entry_points = [@[[K]]::@[[K]]]{{.*}} -> tensor<4x30xi8>
// CHECK: %[[CODES:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0, 1], [2, 3]] output_shape [1, 4, 10, 3] : tensor<4x30xi8> into tensor<1x4x10x3xi8>
// CHECK: "torch_c.from_builtin_tensor"(%[[CODES]]) : (tensor<1x4x10x3xi8>) -> !torch.vtensor<[1,4,10,3],ui8>
// CHECK-NOT: onnx.NhwcQuantizeLinear
func.func @image(%x: !torch.vtensor<[1,3,4,10],f32>) -> !torch.vtensor<[1,4,10,3],ui8> {
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<2.500000e-01> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<128> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %y = "torch.operator"(%x, %s, %z) <{name = "onnx.NhwcQuantizeLinear"}> : (!torch.vtensor<[1,3,4,10],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,4,10,3],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,4,10,3],ui8>) -> ()
}

// -----

// int8 codes of one channel, clamped to [-128 - zy, 127 - zy], no shuffle; a scale of 1e-35 is
// divided (below kernels/reciprocal.py's range: no `_rcp`), 16 pixels a row: no masked step.
// CHECK-LABEL: func.func @dq_quantize_nhwc_i8_n1_c1_h2_w16(
// CHECK: arith.divf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-NOT: vector.shuffle
// CHECK-NOT: vector.maskedstore
// CHECK: vector.store %{{.*}} : memref<2x16xi8>, vector<8xi8>
func.func @gray(%x: !torch.vtensor<[1,1,2,16],f32>) -> !torch.vtensor<[1,2,16,1],si8> {
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<1.000000e-35> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<-3> : tensor<si8>} : () -> !torch.vtensor<[],si8>
  %y = "torch.operator"(%x, %s, %z) <{name = "onnx.NhwcQuantizeLinear"}> : (!torch.vtensor<[1,1,2,16],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[1,2,16,1],si8>
  "func.return"(%y) : (!torch.vtensor<[1,2,16,1],si8>) -> ()
}
