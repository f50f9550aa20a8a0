// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq --torch-onnx-dq-matmul-iree-cpu | FileCheck %s

// torch-onnx-dq-matmul-iree-cpu on a module tagged AVX-512 VNNI by hand: a MatMul of one row
// (static) and constant 4-bit weights becomes the exact one-row route (passes/
// kernels/digits.py, DigitKernel): one dispatch writing x's base-256 digits per block of 32,
// then dq's kernel summing each digit against the weights with vpdpbusd.

// int4 blocked 32, K = 64, N = 64, one scale 0.5.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[D:dq_digits_rows_k64_b32]](%[[XB:[^:]+]]: !stream.binding, %[[XQB:[^:]+]]: !stream.binding, %[[XSB:[^:]+]]: !stream.binding, %[[SUMB:[^:]+]]: !stream.binding, %[[DM:[^:]+]]: index)
// CHECK-DAG: "stream.binding.subspan"(%[[XB]], %{{[^,]+}}, %[[DM]]) : (!stream.binding, index, index) -> memref<?x64xf32>
// CHECK-DAG: "stream.binding.subspan"(%[[XQB]], %{{[^,]+}}, %[[DM]]) : (!stream.binding, index, index) -> memref<?x64xi32>
// CHECK-DAG: "stream.binding.subspan"(%[[XSB]], %{{[^,]+}}, %[[DM]]) : (!stream.binding, index, index) -> memref<?x4xf32>
// CHECK-DAG: "stream.binding.subspan"(%[[SUMB]], %{{[^,]+}}, %[[DM]]) : (!stream.binding, index, index) -> memref<?x8xi32>
// CHECK: vector.reduction <maximumf>
// CHECK: math.roundeven
// CHECK-COUNT-3: arith.shrsi %{{.*}} : vector<16xi32>
// CHECK: vector.shuffle
// CHECK: "stream.executable"() ({
// CHECK: func.func @[[K:dq_matmul_digits_i4_k64_n64_b32_l16]](%[[XQ:[^:]+]]: !stream.binding, %[[XS:[^:]+]]: !stream.binding, %[[SUM:[^:]+]]: !stream.binding, %[[WB:[^:]+]]: !stream.binding, %[[SB:[^:]+]]: !stream.binding, %[[YB:[^:]+]]: !stream.binding, %[[M:[^:]+]]: index)
// CHECK-DAG: "stream.binding.subspan"(%[[WB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1x8x256xi8>
// CHECK: %[[LO:.*]] = arith.andi %{{.*}} : vector<64xi8>
// CHECK: %[[HI:.*]] = arith.shrui %{{.*}} : vector<64xi8>
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{[^,]+}}, %[[LO]], %{{[^)]+}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK: arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: vector.fma
// CHECK-LABEL: func.func @int4_one_row
// CHECK-NOT: onnx.MatMul
// CHECK: %[[QX:.*]]:3 = "flow.dispatch"(%{{[^,]+}}, %{{[^,]+}}, %{{[^)]+}}) {entry_points = [@[[D]]::@[[D]]]
// CHECK-SAME: -> (tensor<1x64xi32>, tensor<1x4xf32>, tensor<1x8xi32>)
// CHECK-NEXT: "flow.dispatch"(%{{[^,]+}}, %[[QX]]#0, %[[QX]]#1, %[[QX]]#2, %{{[^,]+}}, %{{[^,]+}}, %{{[^)]+}}) {entry_points = [@[[K]]::@[[K]]]
// CHECK-SAME: -> tensor<1x64xf32>
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @int4_one_row(%a: !torch.vtensor<[1,64],f32>) -> !torch.vtensor<[1,64],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi4>} : () -> !torch.vtensor<[64,64],si4>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<2x64xf32>} : () -> !torch.vtensor<[2,64],f32>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 32 : si64} : (!torch.vtensor<[64,64],si4>, !torch.vtensor<[2,64],f32>) -> !torch.vtensor<[64,64],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[1,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[1,64],f32>
  "func.return"(%2) : (!torch.vtensor<[1,64],f32>) -> ()
}
}

// -----

// A row count known only at run time: x's digits, then the kernel reading x too, which takes one
// row by the digits and more by the f32 kernel's several-rows body (a stack panel of the exact
// dequantized weights, read from the same layout: one vpshufb per byte of each lane).
// CHECK-LABEL: func.func @dq_matmul_digits_i4_k64_n64_b32_l16_anyrows
// CHECK-SAME: (%[[X:[^:]+]]: !stream.binding, %{{[^:]+}}: !stream.binding, %{{[^:]+}}: !stream.binding, %{{[^:]+}}: !stream.binding, %[[W:[^:]+]]: !stream.binding,
// CHECK: "stream.binding.subspan"(%[[X]], %{{[^,]+}}, %{{[^)]+}}) : (!stream.binding, index, index) -> memref<?x64xf32>
// CHECK: scf.if
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: } else {
// CHECK: memref.alloca() : memref<64x4xvector<16xf32>>
// CHECK: vector.shuffle %{{[^,]+}}, %{{[^ ]+}} [0, 64, 64, 64, 4, 64, 64, 64,
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: %[[QX:.*]]:3 = "flow.dispatch"(%{{[^)]+}}) {entry_points = [@dq_digits_rows_k64_b32::@dq_digits_rows_k64_b32]
// CHECK-NEXT: "flow.dispatch"(%{{[^,]+}}, %[[A:[^,]+]], %[[QX]]#0, %[[QX]]#1, %[[QX]]#2,
// CHECK-SAME: entry_points = [@dq_matmul_digits_i4_k64_n64_b32_l16_anyrows::@dq_matmul_digits_i4_k64_n64_b32_l16_anyrows]
// CHECK-SAME: (index, tensor<?x64xf32>, tensor<?x64xi32>
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @dynamic_rows(%a: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,64],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi4>} : () -> !torch.vtensor<[64,64],si4>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<2x64xf32>} : () -> !torch.vtensor<[2,64],f32>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 32 : si64} : (!torch.vtensor<[64,64],si4>, !torch.vtensor<[2,64],f32>) -> !torch.vtensor<[64,64],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%2) : (!torch.vtensor<[?,64],f32>) -> ()
}
}

// -----

// Two rows (static) or 8-bit weights: dq's f32 kernel, one dispatch.
// CHECK-LABEL: func.func @two_rows
// CHECK: "flow.dispatch"
// CHECK-SAME: entry_points = [@dq_matmul_i4_k64_n64_b32_l16::@dq_matmul_i4_k64_n64_b32_l16]
// CHECK-NOT: "flow.dispatch"
// CHECK-LABEL: func.func @int8_one_row
// CHECK: "flow.dispatch"
// CHECK-SAME: entry_points = [@dq_matmul_i8_k64_n64_b32_l16::@dq_matmul_i8_k64_n64_b32_l16]
// CHECK-NOT: "flow.dispatch"
// CHECK-NOT: dq_digits_rows
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @two_rows(%a: !torch.vtensor<[2,64],f32>) -> !torch.vtensor<[2,64],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi4>} : () -> !torch.vtensor<[64,64],si4>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<2x64xf32>} : () -> !torch.vtensor<[2,64],f32>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 32 : si64} : (!torch.vtensor<[64,64],si4>, !torch.vtensor<[2,64],f32>) -> !torch.vtensor<[64,64],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[2,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[2,64],f32>
  "func.return"(%2) : (!torch.vtensor<[2,64],f32>) -> ()
}
func.func @int8_one_row(%a: !torch.vtensor<[1,64],f32>) -> !torch.vtensor<[1,64],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<2x64xf32>} : () -> !torch.vtensor<[2,64],f32>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 32 : si64} : (!torch.vtensor<[64,64],si8>, !torch.vtensor<[2,64],f32>) -> !torch.vtensor<[64,64],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[1,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[1,64],f32>
  "func.return"(%2) : (!torch.vtensor<[1,64],f32>) -> ()
}
}

// -----

// Without VNNI (AVX-512 alone): the f32 kernel, whatever the row count.
// CHECK-LABEL: func.func @no_vnni
// CHECK: "flow.dispatch"
// CHECK-SAME: entry_points = [@dq_matmul_i4_k64_n64_b32_l16::@dq_matmul_i4_k64_n64_b32_l16]
// CHECK-NOT: dq_digits_rows
module attributes {dq.avx512bw} {
func.func @no_vnni(%a: !torch.vtensor<[1,64],f32>) -> !torch.vtensor<[1,64],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi4>} : () -> !torch.vtensor<[64,64],si4>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<2x64xf32>} : () -> !torch.vtensor<[2,64],f32>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 32 : si64} : (!torch.vtensor<[64,64],si4>, !torch.vtensor<[2,64],f32>) -> !torch.vtensor<[64,64],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[1,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[1,64],f32>
  "func.return"(%2) : (!torch.vtensor<[1,64],f32>) -> ()
}
}
