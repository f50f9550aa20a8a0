// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq --torch-onnx-dq-matmul-iree-cpu | FileCheck %s

// torch-onnx-dq-matmul-iree-cpu on QDQ MatMuls for an AVX2 host (a module tagged dq.avx2 alone,
// as dq-target-features tags one on haswell or znver2, or AVX-512 without VNNI): one dispatch
// of the exact integer kernel, no vpdpbusd: for int8 weights without a zero point its
// vpmaddubsw forms (passes/kernels/qdq_avxvnni.py), for the others vpmaddwd
// (passes/kernels/qdq_avx2.py, QdqAvx2Kernel).

// uint8 x, sx = 0.5, zx = 130; int8 weights w = 100 everywhere (each pair of rows of K adds to
// 200 in magnitude: vpmaddubsw of x as it is could saturate, so not QdqAvx2BytesKernel below but
// the sign-split form, QdqAvx2SignKernel), K = N = 64, sw = 0.25 per column: two workgroups of
// 32 columns. The constants, by hand: u = w = 0x64 in every byte, laid out as the VNNI kernel's
// [N / 32, K / 4, 128]; s = sx * sw = 0.125 (0x3E000000); c[n] = -(zx - 128) * sum_k w = -2 *
// 6400 = -12800 (0xFFFFCE00). Per tile of 4 rows, each row's v = xq ^ 0x80 staged 32 bytes at a
// time as |v| (`math.absi`: vpabsb) and its sign mask (the extended compare) into two stack
// buffers, and the row's sum of |v| where v < 0 (vpmaddubsw and vpmaddwd against ones); then per
// step (4 rows of K) each row's |v| and mask broadcast from them, the weights xor the mask,
// vpmaddubsw, vpmaddwd against ones.
// The rows across workgroups (passes/iree_dispatch.py): two column workgroups, so up to 8 / 2 = 4
// row groups of 32 rows or more, first in the grid (workgroup id 0); this one's rows from its
// first, at 64 bytes a row of x and 256 of y.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: %[[MOST:.*]] = arith.constant 4 : index
// CHECK: %[[CAP:.*]] = arith.minui %{{.*}}, %[[MOST]] : index
// CHECK: %[[GROUPS:.*]] = arith.maxui %[[CAP]], %{{.*}} : index
// CHECK: "stream.return"(%[[GROUPS]], %[[TWO]], %{{[^)]+}})
// CHECK: func.func @[[K:dq_matmul_qdq_avx2s_u8_i8_k64_n64]](%[[XB:[^:]+]]: !stream.binding, %[[WB:[^:]+]]: !stream.binding, %[[SB:[^:]+]]: !stream.binding, %[[CB:[^:]+]]: !stream.binding, %[[YB:[^:]+]]: !stream.binding, %[[M:[^:]+]]: index)
// CHECK: %[[MAGS:.*]] = memref.alloca() : memref<4x256xi32>
// CHECK: %[[SIGNS:.*]] = memref.alloca() : memref<4x256xi32>
// CHECK: %[[GROUP:.*]] = "stream.dispatch.workgroup.id"() {dimension = 0 : index} : () -> index
// CHECK: %[[R0:.*]] = arith.minui %{{.*}}, %[[M]] : index
// CHECK: %[[ROWS:.*]] = arith.subi %{{.*}}, %[[R0]] : index
// CHECK: %[[XAT:.*]] = arith.muli %[[R0]], %{{.*}} : index
// CHECK: %[[X:.*]] = "stream.binding.subspan"(%[[XB]], %[[XAT]], %[[ROWS]]) : (!stream.binding, index, index) -> memref<?x64xi8>
// CHECK-DAG: %[[W:.*]] = "stream.binding.subspan"(%[[WB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<2x16x128xi8>
// CHECK-DAG: "stream.binding.subspan"(%[[SB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<2x1x32xf32>
// CHECK-DAG: "stream.binding.subspan"(%[[CB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<2x1x32xi32>
// CHECK-DAG: "stream.binding.subspan"(%[[YB]], %{{[^,]+}}, %[[ROWS]]) : (!stream.binding, index, index) -> memref<?x64xf32>
// CHECK: %[[ROW:.*]] = vector.load %[[X]][%{{[^]]+}}] : memref<?x64xi8>, vector<32xi8>
// CHECK: %[[V:.*]] = arith.xori %[[ROW]], %{{.*}} : vector<32xi8>
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[V]], %{{.*}} : vector<32xi8>
// CHECK: %[[A:.*]] = math.absi %[[V]] : vector<32xi8>
// CHECK: %[[MASK:.*]] = arith.extsi %[[NEG]] : vector<32xi1> to vector<32xi8>
// CHECK: %[[AW:.*]] = vector.bitcast %[[A]] : vector<32xi8> to vector<8xi32>
// CHECK: vector.store %[[AW]], %[[MAGS]][%{{[^]]+}}] : memref<4x256xi32>, vector<8xi32>
// CHECK: %[[MW:.*]] = vector.bitcast %[[MASK]] : vector<32xi8> to vector<8xi32>
// CHECK: vector.store %[[MW]], %[[SIGNS]][%{{[^]]+}}] : memref<4x256xi32>, vector<8xi32>
// CHECK: %[[NA:.*]] = arith.andi %[[A]], %[[MASK]] : vector<32xi8>
// CHECK: %[[NP:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%[[NA]], %{{.*}})
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[NP]], %{{.*}})
// CHECK: %[[WV:.*]] = vector.load %[[W]][%{{[^]]+}}] : memref<2x16x128xi8>, vector<32xi8>
// CHECK: %[[AWORD:.*]] = memref.load %[[MAGS]][%{{[^]]+}}] : memref<4x256xi32>
// CHECK: %[[AB:.*]] = vector.broadcast %[[AWORD]] : i32 to vector<8xi32>
// CHECK: %[[AX:.*]] = vector.bitcast %[[AB]] : vector<8xi32> to vector<32xi8>
// CHECK: %[[MWORD:.*]] = memref.load %[[SIGNS]][%{{[^]]+}}] : memref<4x256xi32>
// CHECK: %[[MB:.*]] = vector.broadcast %[[MWORD]] : i32 to vector<8xi32>
// CHECK: %[[MX:.*]] = vector.bitcast %[[MB]] : vector<8xi32> to vector<32xi8>
// CHECK: %[[U:.*]] = arith.xori %[[WV]], %[[MX]] : vector<32xi8>
// CHECK: %[[P:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%[[AX]], %[[U]])
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[P]], %{{.*}})
// CHECK-NOT: vpdpbusd
// CHECK: %[[F:.*]] = arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK-NEXT: arith.mulf %{{.*}}, %[[F]] : vector<8xf32>
// CHECK-LABEL: func.func @uint8_activation
// CHECK-NOT: dq.onnx_dequantize_linear
// CHECK: %[[XQ:.*]] = "torch_c.to_builtin_tensor"(%{{.*}}) : (!torch.vtensor<[?,64],ui8>) -> tensor<?x64xi8>
// CHECK: "flow.dispatch"(%{{[^,]+}}, %[[XQ]], {{.*}}) {entry_points = [@[[K]]::@[[K]]]
// CHECK-SAME: (index, tensor<?x64xi8>, tensor<2x16x128xi8>, tensor<2x1x32xf32>, tensor<2x1x32xi32>, index, index, index) -> tensor<?x64xf32>
// CHECK-NOT: onnx.DequantizeLinear
// CHECK-NOT: onnx.MatMul
// CHECK-DAG: "0x{{........}}{{(64)+}}"
// CHECK-DAG: "0x{{........}}{{(0000003E)+}}"
// CHECK-DAG: "0x{{........}}{{(00CEFFFF)+}}"
module attributes {dq.avx2} {
func.func @uint8_activation(%a: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,64],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<100> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<64xf32>} : () -> !torch.vtensor<[64],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,64],si8>, !torch.vtensor<[64],f32>) -> !torch.vtensor<[64,64],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%y) : (!torch.vtensor<[?,64],f32>) -> ()
}
}

// -----

// N = 256: eight column workgroups, so no row groups by WORKGROUP_TARGET, but two where M >= 256
// (QdqKernel.APART_ROWS: the workgroups running at once write different rows). K = 48: the sign
// form stages 32 bytes of a row, then its last 16 in one step.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK: %[[APART:.*]] = arith.constant 256 : index
// CHECK: %[[BIG:.*]] = arith.cmpi uge, %{{.*}}, %[[APART]] : index
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: %[[LONE:.*]] = arith.constant 1 : index
// CHECK: %[[MOST:.*]] = arith.select %[[BIG]], %[[TWO]], %[[LONE]] : index
// CHECK: %[[CAP:.*]] = arith.minui %{{.*}}, %[[MOST]] : index
// CHECK: %[[GROUPS:.*]] = arith.maxui %[[CAP]], %{{.*}} : index
// CHECK: "stream.return"(%[[GROUPS]], %[[EIGHT]], %[[ONE]])
// CHECK: func.func @dq_matmul_qdq_avx2s_u8_i8_k48_n256(
// CHECK: vector.load %{{.*}} : memref<?x48xi8>, vector<32xi8>
// CHECK: math.absi %{{.*}} : vector<32xi8>
// CHECK: %[[HALF:.*]] = vector.load %{{.*}} : memref<?x48xi8>, vector<16xi8>
// CHECK: %[[HV:.*]] = arith.xori %[[HALF]], %{{.*}} : vector<16xi8>
// CHECK: %[[HA:.*]] = math.absi %[[HV]] : vector<16xi8>
// CHECK: %[[HW:.*]] = vector.bitcast %[[HA]] : vector<16xi8> to vector<4xi32>
// CHECK: vector.store %[[HW]], %{{.*}} : memref<4x256xi32>, vector<4xi32>
// CHECK-LABEL: func.func @k48_n256
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_matmul_qdq_avx2s_u8_i8_k48_n256::@dq_matmul_qdq_avx2s_u8_i8_k48_n256]
module attributes {dq.avx2} {
func.func @k48_n256(%a: !torch.vtensor<[?,48],f32>) -> !torch.vtensor<[?,256],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<100> : tensor<48x256xsi8>} : () -> !torch.vtensor<[48,256],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<256xf32>} : () -> !torch.vtensor<[256],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,48],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,48],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,48],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,48],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[48,256],si8>, !torch.vtensor<[256],f32>) -> !torch.vtensor<[48,256],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,48],f32>, !torch.vtensor<[48,256],f32>) -> !torch.vtensor<[?,256],f32>
  "func.return"(%y) : (!torch.vtensor<[?,256],f32>) -> ()
}
}

// -----

// N = 768: 24 column workgroups, which IREE's runtime would hand two workers 8 at a time as 16
// and 8 (QdqKernel.RESERVATION): two row groups make 48, six eights (docs/iree.md#workgroups-in-eights).
// CHECK-LABEL: "stream.executable"() ({
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[COLUMNS:.*]] = arith.constant 24 : index
// CHECK: %[[MOST:.*]] = arith.constant 2 : index
// CHECK: %[[CAP:.*]] = arith.minui %{{.*}}, %[[MOST]] : index
// CHECK: %[[GROUPS:.*]] = arith.maxui %[[CAP]], %{{.*}} : index
// CHECK: "stream.return"(%[[GROUPS]], %[[COLUMNS]], %[[ONE]])
// CHECK: func.func @dq_matmul_qdq_avx2s_u8_i8_k16_n768(
module attributes {dq.avx2} {
func.func @k16_n768(%a: !torch.vtensor<[?,16],f32>) -> !torch.vtensor<[?,768],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<100> : tensor<16x768xsi8>} : () -> !torch.vtensor<[16,768],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<768xf32>} : () -> !torch.vtensor<[768],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,16],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,16],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,16],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,16],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[16,768],si8>, !torch.vtensor<[768],f32>) -> !torch.vtensor<[16,768],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,16],f32>, !torch.vtensor<[16,768],f32>) -> !torch.vtensor<[?,768],f32>
  "func.return"(%y) : (!torch.vtensor<[?,768],f32>) -> ()
}
}

// -----

// N = 384: 12 column workgroups, one row group below QdqKernel.APART_ROWS rows and from there
// four, not two (24 workgroups would run as 16 and 8 on two workers; 48 as 24 and 24).
// CHECK-LABEL: "stream.executable"() ({
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[COLUMNS:.*]] = arith.constant 12 : index
// CHECK: %[[APART:.*]] = arith.constant 256 : index
// CHECK: %[[BIG:.*]] = arith.cmpi uge, %{{.*}}, %[[APART]] : index
// CHECK: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK: %[[LONE:.*]] = arith.constant 1 : index
// CHECK: %[[MOST:.*]] = arith.select %[[BIG]], %[[FOUR]], %[[LONE]] : index
// CHECK: %[[CAP:.*]] = arith.minui %{{.*}}, %[[MOST]] : index
// CHECK: "stream.return"(%{{.*}}, %[[COLUMNS]], %[[ONE]])
// CHECK: func.func @dq_matmul_qdq_avx2s_u8_i8_k16_n384(
module attributes {dq.avx2} {
func.func @k16_n384(%a: !torch.vtensor<[?,16],f32>) -> !torch.vtensor<[?,384],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<100> : tensor<16x384xsi8>} : () -> !torch.vtensor<[16,384],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<384xf32>} : () -> !torch.vtensor<[384],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,16],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,16],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,16],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,16],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[16,384],si8>, !torch.vtensor<[384],f32>) -> !torch.vtensor<[16,384],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,16],f32>, !torch.vtensor<[16,384],f32>) -> !torch.vtensor<[?,384],f32>
  "func.return"(%y) : (!torch.vtensor<[?,384],f32>) -> ()
}
}

// -----

// int8 x (zx = -3: no flip), int8 weights per tensor with a zero point 5 (z + 128 = 133 bytes): the
// zero point's share of d, -(zw + bias) * sum_k v, from the row sums (vpmaddwd of x against
// ones), the weights zero-extended (w + 128). A module tagged AVX-512 without VNNI takes the same
// kernel.
// CHECK-LABEL: func.func @dq_matmul_qdq_avx2_i8_i8_k32_n32_z
// CHECK-NOT: arith.xori
// CHECK: %[[V16:.*]] = arith.extsi %{{.*}} : vector<16xi8> to vector<16xi16>
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[V16]], %{{[^)]+}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK: %[[ZB:.*]] = arith.extui %{{.*}} : vector<8xi8> to vector<8xi32>
// CHECK: arith.muli %[[ZB]], %{{.*}} : vector<8xi32>
// CHECK: arith.extui %{{.*}} : vector<16xi8> to vector<16xi16>
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK-LABEL: func.func @int8_activation_zero_point
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_matmul_qdq_avx2_i8_i8_k32_n32_z::@dq_matmul_qdq_avx2_i8_i8_k32_n32_z]
// CHECK-SAME: (index, tensor<?x32xi8>, tensor<1x16x64xi8>, tensor<1x1x32xf32>, tensor<1x1x32xi8>, tensor<1x1x32xi32>, index, index, index)
module attributes {dq.avx512bw} {
func.func @int8_activation_zero_point(%a: !torch.vtensor<[?,32],f32>) -> !torch.vtensor<[?,32],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<-3> : tensor<si8>} : () -> !torch.vtensor<[],si8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<7> : tensor<32x32xsi8>} : () -> !torch.vtensor<[32,32],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<5> : tensor<si8>} : () -> !torch.vtensor<[],si8>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,32],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[?,32],si8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,32],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[?,32],f32>
  %wf = "torch.operator"(%w, %sw, %zw) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[32,32],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[32,32],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,32],f32>, !torch.vtensor<[32,32],f32>) -> !torch.vtensor<[?,32],f32>
  "func.return"(%y) : (!torch.vtensor<[?,32],f32>) -> ()
}
}

// -----

// An untagged module (no x86 CPU known: dq-target-features tags every x86 host with AVX2) keeps
// the float route, with no remark: the kernel's llvm.x86.avx2 calls would compile nowhere else.
// CHECK-LABEL: func.func @untagged
// CHECK: "dq.onnx_dequantize_linear"
// CHECK-NOT: dq_matmul_qdq_
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_matmul_i8_k64_n64_b64_l8::@dq_matmul_i8_k64_n64_b64_l8]
func.func @untagged(%a: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,64],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<64xf32>} : () -> !torch.vtensor<[64],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,64],si8>, !torch.vtensor<[64],f32>) -> !torch.vtensor<[64,64],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%y) : (!torch.vtensor<[?,64],f32>) -> ()
}

// -----

// The requantize's codes (uint8, sy = 0.0625, zy = 3; weights 100: the sign-split form, whose
// epilogue is the vpmaddwd kernel's) of N = 20 columns: one workgroup of three
// groups, the last one's 4 columns live. Each group's y / sy (a product and an FMA by the split
// reciprocal) is converted by vcvtps2dq (rounding ties to even) with no cap: |d| <= 130 * 64 *
// 100, so |y / sy| <= 832,000 * 0.125 / 0.0625, below 2^30 (`_bd`); a row's three packed at
// once (the last again as the fourth): vpackssdw twice, zy (3, as i16) added to each half with
// saturation, vpackuswb, the dwords put in order; then the row's 24 bytes in one store masked
// to 8 + 8 + 4 = 20 columns.
// CHECK-LABEL: func.func @dq_matmul_qdq_avx2s_u8_i8_k64_n20_qu8_rcp_bd(
// CHECK-NOT: arith.minimumf
// CHECK: %[[ZYI:.*]] = arith.fptosi %{{.*}} : f32 to i32
// CHECK: %[[ZY16:.*]] = arith.trunci %[[ZYI]] : i32 to i16
// CHECK: %[[ZY:.*]] = vector.broadcast %[[ZY16]] : i16 to vector<16xi16>
// CHECK: %[[Q:.*]] = math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-NEXT: llvm.call_intrinsic "llvm.x86.avx.cvt.ps2dq.256"(%[[Q]]) : (vector<8xf32>) -> vector<8xi32>
// CHECK: %[[A0:.*]] = llvm.call_intrinsic "llvm.x86.avx2.packssdw"(%[[C0:[^,]+]], %[[C1:[^)]+]]) : (vector<8xi32>, vector<8xi32>) -> vector<16xi16>
// CHECK: %[[B0:.*]] = llvm.call_intrinsic "llvm.x86.avx2.packssdw"(%[[C2:[^,]+]], %[[C2]]) : (vector<8xi32>, vector<8xi32>) -> vector<16xi16>
// CHECK: %[[A:.*]] = llvm.call_intrinsic "llvm.sadd.sat.v16i16"(%[[A0]], %[[ZY]]) : (vector<16xi16>, vector<16xi16>) -> vector<16xi16>
// CHECK: %[[B:.*]] = llvm.call_intrinsic "llvm.sadd.sat.v16i16"(%[[B0]], %[[ZY]]) : (vector<16xi16>, vector<16xi16>) -> vector<16xi16>
// CHECK: %[[P:.*]] = llvm.call_intrinsic "llvm.x86.avx2.packuswb"(%[[A]], %[[B]]) : (vector<16xi16>, vector<16xi16>) -> vector<32xi8>
// CHECK: %[[D:.*]] = vector.bitcast %[[P]] : vector<32xi8> to vector<8xi32>
// CHECK: %[[O:.*]] = vector.shuffle %[[D]], %[[D]] [0, 4, 1, 5, 2, 6, 3, 7] : vector<8xi32>, vector<8xi32>
// CHECK: %[[R:.*]] = vector.bitcast %[[O]] : vector<8xi32> to vector<32xi8>
// CHECK: %[[LIVE:.*]] = vector.shuffle %[[R]], %[[R]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23] : vector<32xi8>, vector<32xi8>
// CHECK: %[[MASK:.*]] = vector.constant_mask [20] : vector<24xi1>
// CHECK: vector.maskedstore %{{[^[]+}}[%{{[^]]+}}], %[[MASK]], %[[LIVE]] : memref<?x20xi8>, vector<24xi1>, vector<24xi8>
module attributes {dq.avx2} {
func.func @requantized(%a: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,20],ui8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<100> : tensor<64x20xsi8>} : () -> !torch.vtensor<[64,20],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<20xf32>} : () -> !torch.vtensor<[20],f32>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.0625> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,20],si8>, !torch.vtensor<[20],f32>) -> !torch.vtensor<[64,20],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[64,20],f32>) -> !torch.vtensor<[?,20],f32>
  %q = "torch.operator"(%y, %sy, %zy) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,20],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,20],ui8>
  "func.return"(%q) : (!torch.vtensor<[?,20],ui8>) -> ()
}
}

// -----

// The same MatMul requantized with sy = 2^-20: |y / sy| can reach 104,000 * 2^20, past 2^31,
// so the quotient is capped at 65536 before vcvtps2dq (no `_bd`): above it the packs saturate
// to 255 all the same, and INT_MIN, the conversion's overflow, would have been 0.
// CHECK-LABEL: func.func @dq_matmul_qdq_avx2s_u8_i8_k64_n20_qu8_rcp(
// CHECK: %[[BOUND:.*]] = arith.constant dense<6.553600e+04> : vector<8xf32>
// CHECK: %[[Q:.*]] = math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-NEXT: %[[CAPPED:.*]] = arith.minimumf %[[Q]], %[[BOUND]] fastmath<nnan,nsz> : vector<8xf32>
// CHECK-NEXT: llvm.call_intrinsic "llvm.x86.avx.cvt.ps2dq.256"(%[[CAPPED]]) : (vector<8xf32>) -> vector<8xi32>
module attributes {dq.avx2} {
func.func @capped(%a: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,20],ui8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<100> : tensor<64x20xsi8>} : () -> !torch.vtensor<[64,20],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<20xf32>} : () -> !torch.vtensor<[20],f32>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<9.5367431640625E-7> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,20],si8>, !torch.vtensor<[20],f32>) -> !torch.vtensor<[64,20],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[64,20],f32>) -> !torch.vtensor<[?,20],f32>
  %q = "torch.operator"(%y, %sy, %zy) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,20],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,20],ui8>
  "func.return"(%q) : (!torch.vtensor<[?,20],ui8>) -> ()
}
}

// -----

// The direct form (uint8 x, int8 weights without a zero point) whose weights vpmaddubsw takes
// exactly (passes/kernels/qdq_avxvnni.py, QdqAvx2BytesKernel): w = 3, each pair of rows of K within
// 128, but rows 0 and 1 of column 0 127 + 127. Those are split, ws = 64 + 64 in the main K / 4 = 4
// steps (the VNNI layout, 4 rows of K a column's dword) and wf = 63 + 63 in one fix step (`_f1`)
// after them, then its step index (0) as i32: weights [1, 4 + 1 + 1, 128]. vpmaddubsw of x's 4
// bytes broadcast, then vpmaddwd against ones; c[n] = -zx * sum_k w (x read as it is): column 0
// -130 * (14 * 3 + 254) = -38480 (0xFFFF69B0), the others -130 * 48 = -6240 (0xFFFFE7A0).
// CHECK-LABEL: func.func @dq_matmul_qdq_avx2b_u8_i8_k16_n8_f1
// CHECK: "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<1x6x128xi8>
// CHECK: %[[PAIRS:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%{{[^,]+}}, %{{[^)]+}}) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[PAIRS]], %{{[^)]+}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK-NOT: vpdpbusd
// CHECK-LABEL: func.func @safe_weights
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_matmul_qdq_avx2b_u8_i8_k16_n8_f1::@dq_matmul_qdq_avx2b_u8_i8_k16_n8_f1]
// CHECK-DAG: "0x{{........}}B069FFFF{{(A0E7FFFF){7}(00000000)+}}"
module attributes {dq.avx2} {
func.func @safe_weights(%a: !torch.vtensor<[?,16],f32>) -> !torch.vtensor<[?,8],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<[[127, 3, 3, 3, 3, 3, 3, 3], [127, 3, 3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<16x8xsi8>} : () -> !torch.vtensor<[16,8],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<8xf32>} : () -> !torch.vtensor<[8],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,16],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,16],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,16],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,16],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[16,8],si8>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[16,8],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,16],f32>, !torch.vtensor<[16,8],f32>) -> !torch.vtensor<[?,8],f32>
  "func.return"(%y) : (!torch.vtensor<[?,8],f32>) -> ()
}
}
