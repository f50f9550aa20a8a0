// RUN: dequant-opt %s --allow-unregistered-dialect --torch-onnx-to-dq-iree --torch-onnx-dq-matmul-iree-cpu | FileCheck %s

// torch-onnx-to-dq-iree then torch-onnx-dq-matmul-iree-cpu, as the IREE stage runs them, on a
// QDQ MatMul whose bias is written as quantize_static writes it: y's own QuantizeLinear (0.25,
// 128) and DequantizeLinear, + DQ(bq = 110, 0.5, 100) = 5.0 (0x40A00000), then the
// QuantizeLinear to int8 (0.375, -7). The kernel's epilogue computes all of it (r = [sy, zy,
// sy', zy', s'', z'', zh, zl, zh', zl'], each division by a split reciprocal: f32(8 / 3) and
// -2^-22 / 3 for sy, 4 and 0 for sy'); the four nodes and the bias's DequantizeLinear are gone. 32 x 64 @ 64 x
// 256 is 2^19 multiply-adds, the least the stage gives the integer kernel.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[K:dq_matmul_qdq_u8_i8_k64_n256_qi8_mu8_b_rcp]]
// CHECK: "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<4x1x64xf32>
// CHECK: "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<10xf32>
// CHECK: %[[Q1:.*]] = math.fma
// CHECK: %[[A1:.*]] = arith.maximumf %[[Q1]]
// CHECK-NEXT: %[[B1:.*]] = arith.minimumf %[[A1]]
// CHECK-NEXT: %[[U1:.*]] = arith.addf %[[B1]], %[[MAGIC:[^ ]*]] :
// CHECK-NEXT: %[[E1:.*]] = arith.subf %[[U1]], %[[MAGIC]] :
// CHECK-NEXT: %[[P1:.*]] = arith.addf %[[E1]]
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[P1]]
// CHECK-NEXT: %[[F:.*]] = arith.mulf %[[D]]
// CHECK-NEXT: %[[FF:.*]] = llvm.call_intrinsic "llvm.arithmetic.fence"(%[[F]]) : (vector<16xf32>) -> vector<16xf32>
// CHECK: %[[YB:.*]] = arith.addf %[[FF]]
// CHECK-NEXT: arith.mulf %[[YB]]
// CHECK-NEXT: llvm.call_intrinsic "llvm.arithmetic.fence"
// CHECK-NEXT: math.fma %[[YB]]
// CHECK-LABEL: func.func @qdq_bias_requantize
// CHECK-NOT: onnx.DequantizeLinear
// CHECK: %[[BC:.*]] = arith.constant dense_resource<[[BBLOB:dq_kernel_b[^>]*]]> : tensor<4x1x64xf32>
// CHECK-NEXT: %[[RC:.*]] = arith.constant dense<[3.750000e-01, -7.000000e+00, 2.500000e-01, 1.280000e+02, 2.500000e-01, 1.280000e+02, 2.66666675, -7.9472862E-8, 4.000000e+00, 0.000000e+00]> : tensor<10xf32>
// CHECK: "flow.dispatch"(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[BC]], %[[RC]], %{{.*}}) {entry_points = [@[[K]]::@[[K]]]
// CHECK-SAME: -> tensor<32x256xi8>
// CHECK-NOT: onnx.Add
// CHECK-NOT: onnx.QuantizeLinear
// CHECK-NOT: onnx.DequantizeLinear
// CHECK: return
// CHECK: [[BBLOB]]: "0x{{........}}{{(0000A040)+}}"
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @qdq_bias_requantize(%a: !torch.vtensor<[32,64],f32>) -> !torch.vtensor<[32,256],si8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x256xsi8>} : () -> !torch.vtensor<[64,256],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<256xf32>} : () -> !torch.vtensor<[256],f32>
  %s0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<128> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %bq = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<110> : tensor<256xui8>} : () -> !torch.vtensor<[256],ui8>
  %sb = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zb = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<100> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.375> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<-7> : tensor<si8>} : () -> !torch.vtensor<[],si8>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[32,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[32,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[32,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[32,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,256],si8>, !torch.vtensor<[256],f32>) -> !torch.vtensor<[64,256],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[32,64],f32>, !torch.vtensor<[64,256],f32>) -> !torch.vtensor<[32,256],f32>
  %y0q = "torch.operator"(%y, %s0, %z0) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[32,256],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[32,256],ui8>
  %y0f = "torch.operator"(%y0q, %s0, %z0) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[32,256],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[32,256],f32>
  %bf = "torch.operator"(%bq, %sb, %zb) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[256],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[256],f32>
  %yb = "torch.operator"(%y0f, %bf) <{name = "onnx.Add"}> : (!torch.vtensor<[32,256],f32>, !torch.vtensor<[256],f32>) -> !torch.vtensor<[32,256],f32>
  %yq = "torch.operator"(%yb, %sy, %zy) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[32,256],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[32,256],si8>
  "func.return"(%yq) : (!torch.vtensor<[32,256],si8>) -> ()
}
}
