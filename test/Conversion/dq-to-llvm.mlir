// RUN: dequant-opt %s --dq-to-llvm | FileCheck %s \
// RUN:   --implicit-check-not=dq. --implicit-check-not=linalg. --implicit-check-not=tensor. \
// RUN:   --implicit-check-not=memref. --implicit-check-not=bufferization. --implicit-check-not=arith. \
// RUN:   --implicit-check-not=scf. --implicit-check-not=affine. --implicit-check-not=func.func \
// RUN:   --implicit-check-not=unrealized_conversion_cast

// The dq-to-llvm pipeline leaves only the LLVM dialect: each public function (and its `_nt` copy,
// dq-nontemporal-entries) becomes an
// llvm.func taking memref descriptors (marked llvm.emit_c_interface, and noinline so that LLVM
// compiles its loops once, not again in each wrapper) plus its _mlir_ciface_ wrapper taking
// descriptor pointers, which calls it. Nothing of dq, linalg, tensor, memref, arith, scf is left
// (the implicit-check-not flags above).

// CHECK-NOT: dq.
// CHECK-NOT: linalg.

// Per-axis i8 (axis 1): the loop nest is rows x columns, and scale and zero point are indexed
// by the inner (column) induction variable.
// CHECK-LABEL: llvm.func @per_axis_i8(
// CHECK-SAME: attributes {llvm.emit_c_interface, passthrough = ["noinline"]}
// CHECK: ^bb1(%[[I:.*]]: i64):
// CHECK: ^bb3(%[[J:.*]]: i64):
// CHECK: %[[XV:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i8
// CHECK: %[[SP:.*]] = llvm.getelementptr inbounds|nuw %{{.*}}[%[[J]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: %[[SV:.*]] = llvm.load %[[SP]] : !llvm.ptr -> f32
// CHECK: %[[ZP:.*]] = llvm.getelementptr inbounds|nuw %{{.*}}[%[[J]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT: %[[ZV:.*]] = llvm.load %[[ZP]] : !llvm.ptr -> i8
// CHECK-NEXT: %[[XW:.*]] = llvm.sext %[[XV]] : i8 to i32
// CHECK-NEXT: %[[ZW:.*]] = llvm.sext %[[ZV]] : i8 to i32
// CHECK-NEXT: %[[D:.*]] = llvm.sub %[[XW]], %[[ZW]] : i32
// CHECK-NEXT: %[[DF:.*]] = llvm.sitofp %[[D]] : i32 to f32
// CHECK-NEXT: %[[Y:.*]] = llvm.fmul %[[DF]], %[[SV]] : f32
// CHECK: llvm.store %[[Y]], %{{.*}} : f32, !llvm.ptr
// CHECK-LABEL: llvm.func @_mlir_ciface_per_axis_i8(%{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr)
// CHECK-SAME: attributes {llvm.emit_c_interface, passthrough = ["noinline"]}
// CHECK: %[[R:.*]] = llvm.call @per_axis_i8(
// CHECK-NEXT: llvm.store %[[R]], %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, !llvm.ptr
// CHECK-NEXT: llvm.return
func.func @per_axis_i8(%x: tensor<4x8xi8>, %s: tensor<8xf32>, %z: tensor<8xi8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// Blocked ui4 (block 32 along axis 1) with an f16 scale and output: the 4-bit data and zero point
// cross the boundary one element per byte (i8 loads, the low nibble kept), never as i4. A 16-bit
// float output is vectorized by dq-vectorize (tiles of 32, one block each): the block's scale and
// zero point are loaded once and broadcast.
// CHECK-LABEL: llvm.func @blocked_ui4(
// CHECK-SAME: attributes {llvm.emit_c_interface, passthrough = ["noinline"]}
// CHECK-DAG: %[[C15:.*]] = llvm.mlir.constant(dense<15> : vector<32xi32>) : vector<32xi32>
// CHECK-NOT: i4
// CHECK: %[[XB:.*]] = llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> vector<32xi8>
// CHECK: %[[SV:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f16
// CHECK: %[[SI:.*]] = llvm.insertelement %[[SV]]
// CHECK-NEXT: %[[SB:.*]] = llvm.shufflevector %[[SI]], %{{.*}} [0, 0, {{.*}}] : vector<32xf16>
// CHECK: %[[ZB:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i8
// CHECK: %[[ZI:.*]] = llvm.insertelement %[[ZB]]
// CHECK-NEXT: %[[ZV:.*]] = llvm.shufflevector %[[ZI]], %{{.*}} [0, 0, {{.*}}] : vector<32xi8>
// CHECK-NEXT: %[[XW:.*]] = llvm.zext %[[XB]] : vector<32xi8> to vector<32xi32>
// CHECK-NEXT: %[[XN:.*]] = llvm.and %[[XW]], %[[C15]] : vector<32xi32>
// CHECK-NEXT: %[[ZW:.*]] = llvm.zext %[[ZV]] : vector<32xi8> to vector<32xi32>
// CHECK-NEXT: %[[ZN:.*]] = llvm.and %[[ZW]], %[[C15]] : vector<32xi32>
// CHECK-NEXT: %[[D:.*]] = llvm.sub %[[XN]], %[[ZN]] : vector<32xi32>
// CHECK-NEXT: %[[DF:.*]] = llvm.sitofp %[[D]] : vector<32xi32> to vector<32xf32>
// CHECK-NEXT: %[[SF:.*]] = llvm.fpext %[[SB]] : vector<32xf16> to vector<32xf32>
// CHECK-NEXT: %[[P:.*]] = llvm.fmul %[[DF]], %[[SF]] : vector<32xf32>
// CHECK-NEXT: %[[Y:.*]] = llvm.fptrunc %[[P]] : vector<32xf32> to vector<32xf16>
// CHECK: llvm.store %[[Y]], %{{.*}} {alignment = 2 : i64} : vector<32xf16>, !llvm.ptr
// CHECK-NOT: i4
// CHECK-LABEL: llvm.func @_mlir_ciface_blocked_ui4(%{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr)
// CHECK: llvm.call @blocked_ui4(
// CHECK: llvm.return
func.func @blocked_ui4(%x: tensor<4x64xui4>, %s: tensor<4x2xf16>, %z: tensor<4x2xui4>) -> tensor<4x64xf16> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {block_size = 32 : i64} : (tensor<4x64xui4>, tensor<4x2xf16>, tensor<4x2xui4>) -> tensor<4x64xf16>
  return %y : tensor<4x64xf16>
}

// float8e4m3fn, per-tensor: the byte is loaded as i8 and decoded through f16 (the exponent and
// mantissa bits shifted by 7 and the sign to bit 15, widened with fpext, times 256), S.1111.111
// NaN.
// CHECK-LABEL: llvm.func @f8E4M3FN(
// CHECK-SAME: attributes {llvm.emit_c_interface, passthrough = ["noinline"]}
// CHECK-DAG: %[[C7:.*]] = llvm.mlir.constant(7 : i16) : i16
// CHECK-DAG: %[[C256:.*]] = llvm.mlir.constant(2.560000e+02 : f32) : f32
// CHECK-DAG: %[[C127:.*]] = llvm.mlir.constant(127 : i32) : i32
// CHECK-DAG: %[[NAN:.*]] = llvm.mlir.constant(0x7FC00000 : f32) : f32
// CHECK: %[[XB:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i8
// CHECK: %[[SV:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK-NEXT: %[[B:.*]] = llvm.zext %[[XB]] : i8 to i32
// CHECK: llvm.shl %{{.*}}, %[[C7]] : i16
// CHECK: %[[H:.*]] = llvm.bitcast %{{.*}} : i16 to f16
// CHECK-NEXT: %[[F:.*]] = llvm.fpext %[[H]] : f16 to f32
// CHECK-NEXT: %[[SCALED:.*]] = llvm.fmul %[[F]], %[[C256]] : f32
// CHECK-NEXT: %[[LOW:.*]] = llvm.and %[[B]], %[[C127]] : i32
// CHECK-NEXT: %[[ISNAN:.*]] = llvm.icmp "eq" %[[LOW]], %[[C127]] : i32
// CHECK-NEXT: %[[V:.*]] = llvm.select %[[ISNAN]], %[[NAN]], %[[SCALED]] : i1, f32
// CHECK-NEXT: %[[Y:.*]] = llvm.fmul %[[V]], %[[SV]] : f32
// CHECK: llvm.store %[[Y]], %{{.*}} : f32, !llvm.ptr
// CHECK-LABEL: llvm.func @_mlir_ciface_f8E4M3FN(%{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr)
// CHECK: llvm.call @f8E4M3FN(
// CHECK: llvm.return
func.func @f8E4M3FN(%x: tensor<16xf8E4M3FN>, %s: tensor<f32>) -> tensor<16xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<16xf8E4M3FN>, tensor<f32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// Each function also has an `_nt` entry point (dq-nontemporal-entries), same arguments: columns
// fewer than one tile (per_axis_i8's 8) stay LLVM's loops; blocked_ui4 and f8E4M3FN store whole
// tiles non-temporally, declared 16-byte aligned where the output rows are, with the element's
// alignment otherwise.
// CHECK-LABEL: llvm.func @per_axis_i8_nt(
// CHECK-NOT: nontemporal
// CHECK-LABEL: llvm.func @_mlir_ciface_per_axis_i8_nt(
// CHECK: llvm.call @per_axis_i8_nt(
// CHECK-LABEL: llvm.func @blocked_ui4_nt(
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64, nontemporal} : vector<32xf16>, !llvm.ptr
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 2 : i64, nontemporal} : vector<32xf16>, !llvm.ptr
// CHECK-LABEL: llvm.func @_mlir_ciface_blocked_ui4_nt(
// CHECK: llvm.call @blocked_ui4_nt(
// CHECK-LABEL: llvm.func @f8E4M3FN_nt(
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64, nontemporal} : vector<16xf32>, !llvm.ptr
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64, nontemporal} : vector<16xf32>, !llvm.ptr
// CHECK-LABEL: llvm.func @_mlir_ciface_f8E4M3FN_nt(
// CHECK: llvm.call @f8E4M3FN_nt(
