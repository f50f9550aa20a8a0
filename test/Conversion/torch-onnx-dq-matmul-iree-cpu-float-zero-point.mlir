// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq --torch-onnx-dq-matmul-iree-cpu 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq --torch-onnx-dq-matmul | FileCheck %s --check-prefix=FUSED

// A fractional float zero point as MatMulNBits' rewrite writes it (python/formats/matmul_nbits.py):
// B = onnx.Sub(DequantizeLinear(w, s), DequantizeLinear(ConstantOfShape(1), zs)), zs = z * s per
// block. dq's f32 kernel reads it (passes/kernels/f32.py): a float zero point buffer zf beside
// the scales, each weight `(u - z') * s - zs`, a multiply then a subtraction (no FMA: q * s is
// rounded as onnxruntime's kernel rounds it), then one FMA with x. The Sub, the ones and their
// dequantize are gone. torch-onnx-dq-matmul (the GPU targets' fused contraction) leaves the form
// to IREE's own lowering.

// uint4 K = 4, N = 32, block 2: every code 3 (bytes 0x33, no bias), every scale 0.5
// (0x3F000000), every zs 1.25 (0x3FA00000).
// CHECK-LABEL: "stream.executable"() ({
// CHECK: }) {function_ref = @[[K:dq_matmul_u4_k4_n32_b2_zf_l8]], sym_name = "[[K]]", sym_visibility = "public"}
// CHECK: func.func @[[K]](%[[XB:[^:]+]]: !stream.binding, %[[WB:[^:]+]]: !stream.binding, %[[SB:[^:]+]]: !stream.binding, %[[ZB:[^:]+]]: !stream.binding, %[[YB:[^:]+]]: !stream.binding, %[[M:[^:]+]]: index)
// CHECK-DAG: %[[SMEM:.*]] = "stream.binding.subspan"(%[[SB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1x2x32xf32>
// CHECK-DAG: %[[ZMEM:.*]] = "stream.binding.subspan"(%[[ZB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1x2x32xf32>
// CHECK: scf.if
// CHECK: %[[SCALE:.*]] = vector.load %[[SMEM]][%{{[^,]+}}, %{{[^,]+}}, %c0] : memref<1x2x32xf32>, vector<8xf32>
// CHECK: %[[ZS:.*]] = vector.load %[[ZMEM]][%{{[^,]+}}, %{{[^,]+}}, %c0] : memref<1x2x32xf32>, vector<8xf32>
// CHECK: %[[QF:.*]] = arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK-NEXT: %[[QS:.*]] = arith.mulf %[[QF]], %[[SCALE]] : vector<8xf32>
// CHECK-NEXT: %[[QSF:.*]] = llvm.call_intrinsic "llvm.arithmetic.fence"(%[[QS]]) : (vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT: %[[W:.*]] = arith.subf %[[QSF]], %[[ZS]] : vector<8xf32>
// CHECK-NEXT: vector.fma %{{.*}}, %[[W]], %{{.*}} : vector<8xf32>
// CHECK: } else {
// CHECK: %[[PS:.*]] = arith.mulf
// CHECK-NEXT: %[[PSF:.*]] = llvm.call_intrinsic "llvm.arithmetic.fence"(%[[PS]])
// CHECK-NEXT: arith.subf %[[PSF]]
// CHECK-NEXT: memref.store
// CHECK-LABEL: func.func @float_zero_point
// CHECK-NOT: onnx.Sub
// CHECK-NOT: onnx.ConstantOfShape
// CHECK-NOT: dq.onnx_dequantize_linear
// CHECK-DAG: %[[W:.*]] = arith.constant dense_resource<[[WBLOB:[^>]+]]> : tensor<1x2x32xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense_resource<[[SBLOB:[^>]+]]> : tensor<1x2x32xf32>
// CHECK-DAG: %[[Z:.*]] = arith.constant dense_resource<[[ZBLOB:[^>]+]]> : tensor<1x2x32xf32>
// CHECK: "flow.dispatch"(%[[ROWS:[^,]+]], %[[A:[^,]+]], %[[W]], %[[S]], %[[Z]], %[[ROWS]], %[[ROWS]], %[[ROWS]]) {entry_points = [@[[K]]::@[[K]]]
// CHECK-NOT: onnx.
// CHECK: return
// CHECK: [[WBLOB]]: "0x{{........}}33333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333"
// CHECK: [[SBLOB]]: "0x{{........}}0000003F0000003F
// CHECK: [[ZBLOB]]: "0x{{........}}0000A03F0000A03F
// FUSED-LABEL: func.func @float_zero_point
// FUSED: "onnx.Sub"
// FUSED: "onnx.MatMul"
func.func @float_zero_point(%a: !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,32],f32> {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<4x32xui4>} : () -> !torch.vtensor<[4,32],ui4>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<2x32xf32>} : () -> !torch.vtensor<[2,32],f32>
  %shape = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<[4, 32]> : tensor<2xsi64>} : () -> !torch.vtensor<[2],si64>
  %zs = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<1.25> : tensor<2x32xf32>} : () -> !torch.vtensor<[2,32],f32>
  %wq = "torch.operator"(%w, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 2 : si64} : (!torch.vtensor<[4,32],ui4>, !torch.vtensor<[2,32],f32>) -> !torch.vtensor<[4,32],f32>
  %ones = "torch.operator"(%shape) <{name = "onnx.ConstantOfShape"}> {torch.onnx.value = dense<1> : tensor<1xsi8>} : (!torch.vtensor<[2],si64>) -> !torch.vtensor<[4,32],si8>
  %zf = "torch.operator"(%ones, %zs) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 2 : si64} : (!torch.vtensor<[4,32],si8>, !torch.vtensor<[2,32],f32>) -> !torch.vtensor<[4,32],f32>
  %wz = "torch.operator"(%wq, %zf) <{name = "onnx.Sub"}> : (!torch.vtensor<[4,32],f32>, !torch.vtensor<[4,32],f32>) -> !torch.vtensor<[4,32],f32>
  %y = "torch.operator"(%a, %wz) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,4],f32>, !torch.vtensor<[4,32],f32>) -> !torch.vtensor<[?,32],f32>
  "func.return"(%y) : (!torch.vtensor<[?,32],f32>) -> ()
}

// -----

// N = 16 columns, fewer than a workgroup's 32: no route takes it; the remark says so and names
// IREE's own lowering, which computes the Sub as written.
// CHECK-LABEL: func.func @too_few_columns
// CHECK: "onnx.Sub"
// CHECK: "onnx.MatMul"
// REMARK: remark: MatMul not given dq's CPU kernel (IREE's own lowering instead): N = 16 is not a multiple of 32 columns
func.func @too_few_columns(%a: !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,16],f32> {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<4x16xui4>} : () -> !torch.vtensor<[4,16],ui4>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<2x16xf32>} : () -> !torch.vtensor<[2,16],f32>
  %shape = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<[4, 16]> : tensor<2xsi64>} : () -> !torch.vtensor<[2],si64>
  %zs = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<1.25> : tensor<2x16xf32>} : () -> !torch.vtensor<[2,16],f32>
  %wq = "torch.operator"(%w, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 2 : si64} : (!torch.vtensor<[4,16],ui4>, !torch.vtensor<[2,16],f32>) -> !torch.vtensor<[4,16],f32>
  %ones = "torch.operator"(%shape) <{name = "onnx.ConstantOfShape"}> {torch.onnx.value = dense<1> : tensor<1xsi8>} : (!torch.vtensor<[2],si64>) -> !torch.vtensor<[4,16],si8>
  %zf = "torch.operator"(%ones, %zs) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 2 : si64} : (!torch.vtensor<[4,16],si8>, !torch.vtensor<[2,16],f32>) -> !torch.vtensor<[4,16],f32>
  %wz = "torch.operator"(%wq, %zf) <{name = "onnx.Sub"}> : (!torch.vtensor<[4,16],f32>, !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32>
  %y = "torch.operator"(%a, %wz) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,4],f32>, !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[?,16],f32>
  "func.return"(%y) : (!torch.vtensor<[?,16],f32>) -> ()
}
