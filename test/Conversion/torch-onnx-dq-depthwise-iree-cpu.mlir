// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-dq-depthwise-iree-cpu | FileCheck %s

// torch-onnx-dq-depthwise-iree-cpu: the stage's dequant.QLinearDepthwiseConv node (python/qdq_depthwise.py
// writes it; IREE's importer names it onnx.QLinearDepthwiseConv) becomes one dispatch of dq's depthwise
// kernel (passes/kernels/depthwise.py) on the NHWC codes.

// uint8 x [1, 6, 6, 8] (no pads), sx = 0.5, zx = 130; int8 weights 3 everywhere, zw = 1 per channel,
// sw = 0.25, stride 2: y [1, 2, 2, 8], sy = 0.1, zy = 120, bias 2.0. The constants, by hand: wc = 3 - 1 =
// 2.0 (0x40000000) [9, 8]; c = -zx * sum of wc over the 9 taps = -130 * 18 = -2340.0 (0xC5124000);
// s = sx * sw = 0.125 (0x3E000000); b = 2.0; r = [sy, zy, zh, zl], sy's split reciprocal zh =
// f32(1 / sy) = 10 and zl = f32(1 / sy - zh) = -1.49011612e-7 (passes/kernels/reciprocal.py).
// Two output rows: two workgroups, each its own rows.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: "stream.return"(%[[TWO:.*]], %[[ONE:.*]], %[[ONE]])
// CHECK: func.func @[[K:dq_depthwise_u8_qu8_n1_h6_w6_c8_k3x3_s2x2_b_rcp_bd]](
// CHECK-DAG: %[[X:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<1x6x6x8xi8>
// CHECK-DAG: %[[W:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<9x8xf32>
// CHECK-DAG: %[[Y:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<1x2x2x8xi8>
// CHECK: %[[WG:.*]] = "stream.dispatch.workgroup.id"() {dimension = 0 : index} : () -> index
// Each tap: 8 channels' codes zero-extended and converted (exact), one FMA onto c.
// CHECK: %[[C:.*]] = vector.load %{{.*}} : memref<8xf32>, vector<8xf32>
// CHECK: %[[T0:.*]] = vector.load %[[W]][%{{[^]]+}}] : memref<9x8xf32>, vector<8xf32>
// CHECK: %[[XB:.*]] = vector.load %[[X]][%{{[^]]+}}] : memref<1x6x6x8xi8>, vector<8xi8>
// CHECK: %[[XI:.*]] = arith.extui %[[XB]] : vector<8xi8> to vector<8xi32>
// CHECK: %[[XF:.*]] = arith.sitofp %[[XI]] : vector<8xi32> to vector<8xf32>
// CHECK: math.fma %[[XF]], %[[T0]], %[[C]] : vector<8xf32>
// CHECK-COUNT-8: math.fma
// The QDQ kernels' epilogue: s * d rounded (a fence: no FMA), + b, y / sy as fma(y, zh, y * zl)
// (the product fenced); then, as the AVX2 QDQ kernel packs its codes (qdq_avx2.py's
// `packed_codes`), vcvtps2dq with no cap (|d| <= (130 + 255) * 18, so |y / sy| <= 8,680: `_bd`),
// packed to i16 with saturation, zy added with saturation, packed to bytes with saturation, the
// dwords put in order, and the column's 8 bytes stored (a one-column tile: its vector as all four).
// CHECK: %[[SD:.*]] = arith.mulf
// CHECK-NEXT: %[[SDF:.*]] = llvm.call_intrinsic "llvm.arithmetic.fence"(%[[SD]]) : (vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT: %[[YB:.*]] = arith.addf %[[SDF]]
// CHECK-NEXT: %[[YL:.*]] = arith.mulf %[[YB]], %{{.*}} : vector<8xf32>
// CHECK-NEXT: %[[YLF:.*]] = llvm.call_intrinsic "llvm.arithmetic.fence"(%[[YL]])
// CHECK-NEXT: %[[QF:.*]] = math.fma %[[YB]], %{{.*}}, %[[YLF]] : vector<8xf32>
// CHECK-NEXT: %[[QI:.*]] = llvm.call_intrinsic "llvm.x86.avx.cvt.ps2dq.256"(%[[QF]]) : (vector<8xf32>) -> vector<8xi32>
// CHECK-NEXT: %[[P:.*]] = llvm.call_intrinsic "llvm.x86.avx2.packssdw"(%[[QI]], %[[QI]]) : (vector<8xi32>, vector<8xi32>) -> vector<16xi16>
// CHECK: %[[PZ:.*]] = llvm.call_intrinsic "llvm.sadd.sat.v16i16"(%[[P]], %{{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<16xi16>
// CHECK: %[[B:.*]] = llvm.call_intrinsic "llvm.x86.avx2.packuswb"(%[[PZ]], %{{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<32xi8>
// CHECK-NEXT: %[[BD:.*]] = vector.bitcast %[[B]] : vector<32xi8> to vector<8xi32>
// CHECK-NEXT: %[[O:.*]] = vector.shuffle %[[BD]], %[[BD]] [0, 4, 1, 5, 2, 6, 3, 7] : vector<8xi32>, vector<8xi32>
// CHECK-NEXT: %[[OB:.*]] = vector.bitcast %[[O]] : vector<8xi32> to vector<32xi8>
// CHECK-NEXT: %[[Q:.*]] = vector.shuffle %[[OB]], %[[OB]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<32xi8>, vector<32xi8>
// CHECK-NEXT: vector.store %[[Q]], %[[Y]][%{{[^]]+}}] : memref<1x2x2x8xi8>, vector<8xi8>
// CHECK-LABEL: func.func @depthwise
// CHECK: %[[XQ:.*]] = "torch_c.to_builtin_tensor"(%{{.*}}) : (!torch.vtensor<[1,6,6,8],ui8>) -> tensor<1x6x6x8xi8>
// CHECK: %[[R:.*]] = arith.constant dense<[1.000000e-01, 1.200000e+02, 1.000000e+01, -1.49011612E-7]> : tensor<4xf32>
// CHECK: %[[ROWS:.*]] = arith.constant 2 : index
// CHECK: %[[D:.*]] = "flow.dispatch"(%[[ROWS]], %[[XQ]], {{.*}}, %[[R]], %[[ROWS]]) {entry_points = [@[[K]]::@[[K]]]
// CHECK-SAME: (index, tensor<1x6x6x8xi8>, tensor<9x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, index) -> tensor<1x2x2x8xi8>
// CHECK: %[[OUT:.*]] = "torch_c.from_builtin_tensor"(%[[D]]) : (tensor<1x2x2x8xi8>) -> !torch.vtensor<[1,2,2,8],ui8>
// CHECK: return %[[OUT]]
// CHECK-NOT: onnx.QLinearDepthwiseConv
// CHECK-DAG: "0x{{........}}{{(00000040)+}}"
// CHECK-DAG: "0x{{........}}{{(004012C5)+}}"
// CHECK-DAG: "0x{{........}}{{(0000003E)+}}"
module attributes {dq.avx2} {
func.func @depthwise(%x: !torch.vtensor<[1,6,6,8],ui8>) -> !torch.vtensor<[1,2,2,8],ui8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<3x3x8xsi8>} : () -> !torch.vtensor<[3,3,8],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<8xf32>} : () -> !torch.vtensor<[8],f32>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<1> : tensor<8xsi8>} : () -> !torch.vtensor<[8],si8>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.1> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<120> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %b = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<2.0> : tensor<8xf32>} : () -> !torch.vtensor<[8],f32>
  %y = "torch.operator"(%x, %sx, %zx, %w, %sw, %zw, %sy, %zy, %b) <{name = "onnx.QLinearDepthwiseConv"}> {torch.onnx.strides = [2 : si64, 2 : si64]} : (!torch.vtensor<[1,6,6,8],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>, !torch.vtensor<[3,3,8],si8>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[1,2,2,8],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,2,2,8],ui8>) -> ()
}
}

// -----

// 16 channels on a module tagged AVX-512BW: AVX-512's 16 lanes (the name says `_l16`).
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[K:dq_depthwise_u8_qu8_n1_h6_w6_c16_k3x3_s2x2_b_l16_rcp]](
// CHECK: %[[XB:.*]] = vector.load %{{.*}} : memref<1x6x6x16xi8>, vector<16xi8>
// CHECK: %[[XI:.*]] = arith.extui %[[XB]] : vector<16xi8> to vector<16xi32>
// CHECK: arith.sitofp %[[XI]] : vector<16xi32> to vector<16xf32>
// CHECK: math.fma %{{.*}} : vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<1x2x2x16xi8>, vector<16xi8>
// CHECK-LABEL: func.func @depthwise_wide
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@[[K]]::@[[K]]]
module attributes {dq.avx512bw} {
func.func @depthwise_wide(%x: !torch.vtensor<[1,6,6,16],ui8>) -> !torch.vtensor<[1,2,2,16],ui8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<3x3x16xsi8>} : () -> !torch.vtensor<[3,3,16],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<16xf32>} : () -> !torch.vtensor<[16],f32>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<1> : tensor<16xsi8>} : () -> !torch.vtensor<[16],si8>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.1> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<120> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %b = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<2.0> : tensor<16xf32>} : () -> !torch.vtensor<[16],f32>
  %y = "torch.operator"(%x, %sx, %zx, %w, %sw, %zw, %sy, %zy, %b) <{name = "onnx.QLinearDepthwiseConv"}> {torch.onnx.strides = [2 : si64, 2 : si64]} : (!torch.vtensor<[1,6,6,16],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>, !torch.vtensor<[3,3,16],si8>, !torch.vtensor<[16],f32>, !torch.vtensor<[16],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>, !torch.vtensor<[16],f32>) -> !torch.vtensor<[1,2,2,16],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,2,2,16],ui8>) -> ()
}
}

// -----

// The same convolution on the unpadded x [1, 4, 4, 8] with pads [1, 1, 1, 1] (the node's own, as
// python/qdq_depthwise.py writes it; no padded copy): r = [sy, zy, zx]. A tile whose inputs all
// lie in x (rows top to top + 3, columns left to left + 3 within 0 ... 4) reads them as they are;
// any other reads each at its row and column clamped into x, zx's value (r[2]) where either was
// outside.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[K:dq_depthwise_u8_qu8_n1_h4_w4_c8_k3x3_s2x2_p1x1x1x1_b_rcp_bd]](
// CHECK-DAG: %[[X:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<1x4x4x8xi8>
// CHECK-DAG: %[[R:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<5xf32>
// CHECK: %[[ZX:.*]] = memref.load %[[R]][%c2] : memref<5xf32>
// CHECK-NEXT: %[[ZXV:.*]] = vector.broadcast %[[ZX]] : f32 to vector<8xf32>
// CHECK: %[[TOP:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK: %[[LEFT:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK-NEXT: %[[A:.*]] = arith.cmpi sge, %[[TOP]], %c0 : index
// CHECK-NEXT: %[[TOP3:.*]] = arith.addi %[[TOP]], %c3 : index
// CHECK-NEXT: %[[B:.*]] = arith.cmpi sle, %[[TOP3]], %c4 : index
// CHECK-NEXT: %[[C:.*]] = arith.cmpi sge, %[[LEFT]], %c0 : index
// CHECK-NEXT: %[[LEFT3:.*]] = arith.addi %[[LEFT]], %c3 : index
// CHECK-NEXT: %[[D:.*]] = arith.cmpi sle, %[[LEFT3]], %c4 : index
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: vector.load %[[X]][%{{.*}}, %[[TOP]], %[[LEFT]], %{{.*}}] : memref<1x4x4x8xi8>, vector<8xi8>
// CHECK: } else {
// CHECK-NEXT: %[[RIN0:.*]] = arith.cmpi sge, %[[TOP]], %c0 : index
// CHECK-NEXT: %[[RIN1:.*]] = arith.cmpi slt, %[[TOP]], %c4 : index
// CHECK-NEXT: %[[RIN:.*]] = arith.andi %[[RIN0]], %[[RIN1]] : i1
// CHECK-NEXT: %[[RLO:.*]] = arith.maxsi %[[TOP]], %c0 : index
// CHECK-NEXT: %[[ROW:.*]] = arith.minsi %[[RLO]], %c3 : index
// CHECK-NEXT: %[[CIN0:.*]] = arith.cmpi sge, %[[LEFT]], %c0 : index
// CHECK-NEXT: %[[CIN1:.*]] = arith.cmpi slt, %[[LEFT]], %c4 : index
// CHECK-NEXT: %[[CIN:.*]] = arith.andi %[[CIN0]], %[[CIN1]] : i1
// CHECK-NEXT: %[[CLO:.*]] = arith.maxsi %[[LEFT]], %c0 : index
// CHECK-NEXT: %[[COL:.*]] = arith.minsi %[[CLO]], %c3 : index
// CHECK-NEXT: %[[IN:.*]] = arith.andi %[[RIN]], %[[CIN]] : i1
// CHECK-NEXT: %[[XB:.*]] = vector.load %[[X]][%{{.*}}, %[[ROW]], %[[COL]], %{{.*}}] : memref<1x4x4x8xi8>, vector<8xi8>
// CHECK-NEXT: %[[XI:.*]] = arith.extui %[[XB]]
// CHECK-NEXT: %[[XF:.*]] = arith.sitofp %[[XI]]
// CHECK-NEXT: arith.select %[[IN]], %[[XF]], %[[ZXV]] : vector<8xf32>
// CHECK-LABEL: func.func @depthwise_padded
// CHECK: arith.constant dense<[1.000000e-01, 1.200000e+02, 1.300000e+02, 1.000000e+01, -1.49011612E-7]> : tensor<5xf32>
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@[[K]]::@[[K]]]
// CHECK-SAME: (index, tensor<1x4x4x8xi8>,
module attributes {dq.avx2} {
func.func @depthwise_padded(%x: !torch.vtensor<[1,4,4,8],ui8>) -> !torch.vtensor<[1,2,2,8],ui8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<3x3x8xsi8>} : () -> !torch.vtensor<[3,3,8],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<8xf32>} : () -> !torch.vtensor<[8],f32>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<1> : tensor<8xsi8>} : () -> !torch.vtensor<[8],si8>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.1> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<120> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %b = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<2.0> : tensor<8xf32>} : () -> !torch.vtensor<[8],f32>
  %y = "torch.operator"(%x, %sx, %zx, %w, %sw, %zw, %sy, %zy, %b) <{name = "onnx.QLinearDepthwiseConv"}> {torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64], torch.onnx.strides = [2 : si64, 2 : si64]} : (!torch.vtensor<[1,4,4,8],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>, !torch.vtensor<[3,3,8],si8>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[1,2,2,8],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,2,2,8],ui8>) -> ()
}
}

