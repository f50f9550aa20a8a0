// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq-iree --torch-onnx-dq-matmul-iree-cpu | FileCheck %s

// torch-onnx-to-dq-iree then torch-onnx-dq-matmul-iree-cpu, as the IREE stage runs them, on a QDQ
// MatMul (512 x 64 @ 64 x 24, 2^19 multiply-adds and more) whose requantized codes (0.375, 7) are
// reshaped to NHWC, dequantized (DQ1) and added to another tensor's dequantized codes (DQ2: 0.25,
// 100), the sum quantized (Q3: 0.5, 3): a residual Add as quantize_static writes MobileNetV2's
// (python/qdq_convs.py keeps its pairs for it, `of_residual`). The kernel's epilogue computes it
// (passes/qdq_matmul.py's `residual`; docs/semantics.md#the-integer-route-of-qdq-matmuls): the first
// code q as before, then DQ1's (q - z1) * s1 and DQ2's (a - z2) * s2 each rounded once (fenced: no
// FMA), their sum, then Q3's code, stored. a, the other codes collapsed to [M, N] as y, is the
// dispatch's second operand, read per row and column group as y is written: the group across N = 24
// by a masked load. r = [Q3's sy, zy, Q's sy, zy, s1, z1, s2, z2], then the split reciprocals of
// Q3's and Q's sy (2, 0 and f32(8 / 3), -2^-22 / 3). Q3's result is the dispatch's, expanded back
// to NHWC; the Add, the QuantizeLinears and both DequantizeLinears are gone.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[K:dq_matmul_qdq_u8_i8_k64_n24_qu8_ru8u8_rcp]](%{{[^:]+}}: !stream.binding, %[[AB:[^:]+]]: !stream.binding,
// CHECK-DAG: %[[A:.*]] = "stream.binding.subspan"(%[[AB]], %{{[^)]+}}) : (!stream.binding, index, index) -> memref<?x24xi8>
// CHECK-DAG: "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<12xf32>
// CHECK: %[[UP:.*]] = arith.addf %{{.*}}, %[[MAGIC:cst_[0-9]+]] : vector<16xf32>
// CHECK-NEXT: %[[RND:.*]] = arith.subf %[[UP]], %[[MAGIC]] : vector<16xf32>
// CHECK-NEXT: %[[Q:.*]] = arith.addf %[[RND]], %{{[^ ]+}} : vector<16xf32>
// CHECK-NEXT: %[[D1:.*]] = arith.subf %[[Q]], %{{[^ ]+}} : vector<16xf32>
// CHECK-NEXT: %[[P1:.*]] = arith.mulf %[[D1]], %{{[^ ]+}} : vector<16xf32>
// CHECK-NEXT: %[[F1:.*]] = llvm.call_intrinsic "llvm.arithmetic.fence"(%[[P1]])
// CHECK: %[[AV:.*]] = vector.load %[[A]][%{{[^]]+}}] : memref<?x24xi8>, vector<16xi8>
// CHECK-NEXT: %[[AW:.*]] = arith.extui %[[AV]] : vector<16xi8> to vector<16xi32>
// CHECK-NEXT: %[[AF:.*]] = arith.sitofp %[[AW]] : vector<16xi32> to vector<16xf32>
// CHECK-NEXT: %[[D2:.*]] = arith.subf %[[AF]], %{{[^ ]+}} : vector<16xf32>
// CHECK-NEXT: %[[P2:.*]] = arith.mulf %[[D2]], %{{[^ ]+}} : vector<16xf32>
// CHECK-NEXT: %[[F2:.*]] = llvm.call_intrinsic "llvm.arithmetic.fence"(%[[P2]])
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[F2]], %[[F1]] : vector<16xf32>
// CHECK-NEXT: arith.mulf %[[SUM]]
// CHECK-NEXT: llvm.call_intrinsic "llvm.arithmetic.fence"
// CHECK-NEXT: math.fma %[[SUM]]
// CHECK: vector.maskedload %[[A]][%{{[^]]+}}], %{{.*}} : memref<?x24xi8>, vector<16xi1>, vector<16xi8> into vector<16xi8>
// CHECK-LABEL: func.func @residual
// CHECK: %[[OTHER:.*]] = "torch_c.to_builtin_tensor"(%arg1) : (!torch.vtensor<[1,16,32,24],ui8>) -> tensor<1x16x32x24xi8>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[OTHER]] {{\[}}[0, 1, 2], [3]] : tensor<1x16x32x24xi8> into tensor<512x24xi8>
// CHECK: %[[R:.*]] = arith.constant dense<[5.000000e-01, 3.000000e+00, 3.750000e-01, 7.000000e+00, 3.750000e-01, 7.000000e+00, 2.500000e-01, 1.000000e+02, 2.000000e+00, 0.000000e+00, 2.66666675, -7.9472862E-8]> : tensor<12xf32>
// CHECK: %[[Y:.*]] = "flow.dispatch"(%{{[^,]+}}, %{{[^,]+}}, %[[FLAT]], {{.*}}, %[[R]], %{{.*}}) {entry_points = [@[[K]]::@[[K]]]
// CHECK: %[[NHWC:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1, 2], [3]] output_shape [1, 16, 32, 24] : tensor<512x24xi8> into tensor<1x16x32x24xi8>
// CHECK: %[[OUT:.*]] = "torch_c.from_builtin_tensor"(%[[NHWC]]) : (tensor<1x16x32x24xi8>) -> !torch.vtensor<[1,16,32,24],ui8>
// CHECK-NOT: onnx.Add
// CHECK-NOT: onnx.QuantizeLinear
// CHECK-NOT: onnx.DequantizeLinear
// CHECK: return %[[OUT]]
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @residual(%a: !torch.vtensor<[512,64],f32>, %res: !torch.vtensor<[1,16,32,24],ui8>) -> !torch.vtensor<[1,16,32,24],ui8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x24xsi8>} : () -> !torch.vtensor<[64,24],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<24xf32>} : () -> !torch.vtensor<[24],f32>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.375> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<7> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %s2 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z2 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<100> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %s3 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z3 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %shape = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<[1, 16, 32, 24]> : tensor<4xsi64>} : () -> !torch.vtensor<[4],si64>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[512,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[512,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[512,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[512,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,24],si8>, !torch.vtensor<[24],f32>) -> !torch.vtensor<[64,24],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[512,64],f32>, !torch.vtensor<[64,24],f32>) -> !torch.vtensor<[512,24],f32>
  %yq = "torch.operator"(%y, %sy, %zy) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[512,24],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[512,24],ui8>
  %ys = "torch.operator"(%yq, %shape) <{name = "onnx.Reshape"}> : (!torch.vtensor<[512,24],ui8>, !torch.vtensor<[4],si64>) -> !torch.vtensor<[1,16,32,24],ui8>
  %yd = "torch.operator"(%ys, %sy, %zy) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[1,16,32,24],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,16,32,24],f32>
  %rd = "torch.operator"(%res, %s2, %z2) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[1,16,32,24],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,16,32,24],f32>
  %sum = "torch.operator"(%rd, %yd) <{name = "onnx.Add"}> : (!torch.vtensor<[1,16,32,24],f32>, !torch.vtensor<[1,16,32,24],f32>) -> !torch.vtensor<[1,16,32,24],f32>
  %out = "torch.operator"(%sum, %s3, %z3) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[1,16,32,24],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,16,32,24],ui8>
  "func.return"(%out) : (!torch.vtensor<[1,16,32,24],ui8>) -> ()
}
}

// -----

// The same graph with the Add's sum returned too: the Add has another reader, so the kernel stops at
// the MatMul's own QuantizeLinear (no `_r`) and the Add, its DequantizeLinears and Q3 stay IREE's.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @dq_matmul_qdq_u8_i8_k64_n24_qu8_rcp(
// CHECK-LABEL: func.func @residual_read_twice
// CHECK: "onnx.DequantizeLinear"
// CHECK: "onnx.Add"
// CHECK: "onnx.QuantizeLinear"
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @residual_read_twice(%a: !torch.vtensor<[512,64],f32>, %res: !torch.vtensor<[1,16,32,24],ui8>) -> (!torch.vtensor<[1,16,32,24],ui8>, !torch.vtensor<[1,16,32,24],f32>) {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x24xsi8>} : () -> !torch.vtensor<[64,24],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<24xf32>} : () -> !torch.vtensor<[24],f32>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.375> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<7> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %s2 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z2 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<100> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %s3 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z3 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %shape = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<[1, 16, 32, 24]> : tensor<4xsi64>} : () -> !torch.vtensor<[4],si64>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[512,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[512,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[512,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[512,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,24],si8>, !torch.vtensor<[24],f32>) -> !torch.vtensor<[64,24],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[512,64],f32>, !torch.vtensor<[64,24],f32>) -> !torch.vtensor<[512,24],f32>
  %yq = "torch.operator"(%y, %sy, %zy) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[512,24],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[512,24],ui8>
  %ys = "torch.operator"(%yq, %shape) <{name = "onnx.Reshape"}> : (!torch.vtensor<[512,24],ui8>, !torch.vtensor<[4],si64>) -> !torch.vtensor<[1,16,32,24],ui8>
  %yd = "torch.operator"(%ys, %sy, %zy) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[1,16,32,24],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,16,32,24],f32>
  %rd = "torch.operator"(%res, %s2, %z2) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[1,16,32,24],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,16,32,24],f32>
  %sum = "torch.operator"(%rd, %yd) <{name = "onnx.Add"}> : (!torch.vtensor<[1,16,32,24],f32>, !torch.vtensor<[1,16,32,24],f32>) -> !torch.vtensor<[1,16,32,24],f32>
  %out = "torch.operator"(%sum, %s3, %z3) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[1,16,32,24],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,16,32,24],ui8>
  "func.return"(%out, %sum) : (!torch.vtensor<[1,16,32,24],ui8>, !torch.vtensor<[1,16,32,24],f32>) -> ()
}
}
