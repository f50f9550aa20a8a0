// RUN: dequant-opt %s --dq-vectorize --split-input-file | FileCheck %s

// Per-tile tables (module tagged dq.avx512bw by dq-target-features on an AVX-512BW host):
// a tile whose stored value depends on a packed 4-bit field (tagged dq.field_code by the scalar
// semantics) and otherwise only on values equal in every lane (the group's scale) computes its
// 16 values once, with its own ops on containers holding code i in every field of lane i
// (0x1111 * (i % 16), as i16), and takes each lane's value from them with one vpermw per 32 lanes.
// (0x000000C1 is -8.0 and 0x0000E0C0 -7.0 as little-endian f32: codes 0 and 1 minus 8.)
// The module's tag is consumed.

#x = affine_map<(d0, d1) -> (d0, d1)>
#g = affine_map<(d0, d1) -> (d0, d1 floordiv 128)>

// CHECK-LABEL: func.func @group_of_128
// The 16 values of the group, computed by the tile's ops on the codes (here folded to constants:
// code - 8 as f32, lanes 0..15 repeated), times the group's scale:
// CHECK:     %[[X:.*]] = vector.load %{{.*}} : memref<128xi16, {{.*}}>, vector<128xi16>
// CHECK:     %[[SCALE:.*]] = vector.broadcast %{{.*}} : f16 to vector<128xf16>
// CHECK:     %[[Q:.*]] = arith.constant dense<"0x000000C10000E0C0{{.*}}"> : vector<128xf32>
// CHECK:     %[[WIDE:.*]] = arith.extf %[[SCALE]] : vector<128xf16> to vector<128xf32>
// CHECK:     %[[V:.*]] = arith.mulf %[[WIDE]], %[[Q]] : vector<128xf32>
// CHECK:     %[[TABLE:.*]] = arith.truncf %[[V]] : vector<128xf32> to vector<128xf16>
// CHECK:     %[[BITS:.*]] = arith.bitcast %[[TABLE]] : vector<128xf16> to vector<128xi16>
// CHECK:     %[[T32:.*]] = vector.shuffle %[[BITS]], %[[BITS]] [0, 1, 2, {{.*}}, 15, 0, 1, {{.*}}, 14, 15] : vector<128xi16>, vector<128xi16>
// The codes computed in the container's width (the field lies within its int16):
// CHECK:     %[[SHIFT:.*]] = arith.constant dense<4> : vector<128xi16>
// CHECK:     %[[FIELD:.*]] = arith.shrui %[[X]], %[[SHIFT]] : vector<128xi16>
// CHECK:     %[[MASK:.*]] = arith.constant dense<15> : vector<128xi16>
// CHECK:     %[[LANES:.*]] = arith.andi %[[FIELD]], %[[MASK]] : vector<128xi16>
// CHECK:     %[[I0:.*]] = vector.extract_strided_slice %[[LANES]] {offsets = [0], sizes = [32], strides = [1]} : vector<128xi16> to vector<32xi16>
// CHECK:     %[[P0:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.hi.512"(%[[T32]], %[[I0]]) : (vector<32xi16>, vector<32xi16>) -> vector<32xi16>
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.x86.avx512.permvar.hi.512"
// CHECK:     %[[Y:.*]] = arith.bitcast %{{.*}} : vector<128xi16> to vector<128xf16>
// CHECK:     vector.store %[[Y]], %{{.*}} : memref<128xf16, {{.*}}>, vector<128xf16>
// CHECK-NOT: dq.avx512bw
module attributes {dq.avx512bw} {
  func.func @group_of_128(%x: memref<?x?xi16>, %s: memref<?x?xf16>, %y: memref<?x?xf16>) {
    %c4 = arith.constant 4 : i32
    %c8 = arith.constant 8 : i32
    %c15 = arith.constant 15 : i32
    linalg.generic {indexing_maps = [#x, #g, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi16>, memref<?x?xf16>) outs(%y : memref<?x?xf16>) {
    ^bb0(%a: i16, %b: f16, %o: f16):
      %w = arith.extui %a : i16 to i32
      %f = arith.shrui %w, %c4 : i32
      %n = arith.andi %f, %c15 {dq.field_code = 4 : i32} : i32
      %q = arith.subi %n, %c8 : i32
      %v = arith.sitofp %q : i32 to f32
      %sf = arith.extf %b : f16 to f32
      %r = arith.mulf %v, %sf : f32
      %h = arith.truncf %r : f32 to f16
      linalg.yield %h : f16
    }
    return
  }
}

// -----

// The same kernel without the module's tag (a host without AVX-512BW): computed in every lane.
// CHECK-LABEL: func.func @no_tag
// CHECK-NOT: llvm.call_intrinsic
// CHECK:     vector.store %{{.*}} : memref<128xf16, {{.*}}>, vector<128xf16>
#x = affine_map<(d0, d1) -> (d0, d1)>
#g = affine_map<(d0, d1) -> (d0, d1 floordiv 128)>
func.func @no_tag(%x: memref<?x?xi16>, %s: memref<?x?xf16>, %y: memref<?x?xf16>) {
  %c4 = arith.constant 4 : i32
  %c15 = arith.constant 15 : i32
  linalg.generic {indexing_maps = [#x, #g, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi16>, memref<?x?xf16>) outs(%y : memref<?x?xf16>) {
  ^bb0(%a: i16, %b: f16, %o: f16):
    %w = arith.extui %a : i16 to i32
    %f = arith.shrui %w, %c4 : i32
    %n = arith.andi %f, %c15 {dq.field_code = 4 : i32} : i32
    %v = arith.uitofp %n : i32 to f16
    %r = arith.mulf %v, %b : f16
    linalg.yield %r : f16
  }
  return
}

// -----

// A scale per column varies along the tile: no table (its values would differ per lane).
// CHECK-LABEL: func.func @scale_per_column
// CHECK-NOT: llvm.call_intrinsic
// CHECK:     vector.store
#x = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
module attributes {dq.avx512bw} {
  func.func @scale_per_column(%x: memref<?x128xi16>, %s: memref<128xf16>, %y: memref<?x128xf16>) {
    %c4 = arith.constant 4 : i32
    %c15 = arith.constant 15 : i32
    linalg.generic {indexing_maps = [#x, #c, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x128xi16>, memref<128xf16>) outs(%y : memref<?x128xf16>) {
    ^bb0(%a: i16, %b: f16, %o: f16):
      %w = arith.extui %a : i16 to i32
      %f = arith.shrui %w, %c4 : i32
      %n = arith.andi %f, %c15 {dq.field_code = 4 : i32} : i32
      %v = arith.uitofp %n : i32 to f16
      %r = arith.mulf %v, %b : f16
      linalg.yield %r : f16
    }
    return
  }
}

// -----

// A lane-varying value other than a field's shift (here the column index, a vector.step) would
// differ between two lanes of the same code: no table.
// CHECK-LABEL: func.func @column_index
// CHECK-NOT: llvm.call_intrinsic
// CHECK:     vector.store
#x = affine_map<(d0, d1) -> (d0, d1)>
#g = affine_map<(d0, d1) -> (d0, d1 floordiv 128)>
module attributes {dq.avx512bw} {
  func.func @column_index(%x: memref<?x?xi16>, %s: memref<?x?xf16>, %y: memref<?x?xf16>) {
    %c4 = arith.constant 4 : i32
    %c15 = arith.constant 15 : i32
    linalg.generic {indexing_maps = [#x, #g, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi16>, memref<?x?xf16>) outs(%y : memref<?x?xf16>) {
    ^bb0(%a: i16, %b: f16, %o: f16):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i32
      %w = arith.extui %a : i16 to i32
      %f = arith.shrui %w, %c4 : i32
      %n = arith.andi %f, %c15 {dq.field_code = 4 : i32} : i32
      %m = arith.addi %n, %ji : i32
      %v = arith.uitofp %m : i32 to f16
      %r = arith.mulf %v, %b : f16
      linalg.yield %r : f16
    }
    return
  }
}

// -----

// bf16 outputs on an AVX-512BW host: the rounding to nearest even written on the bits, the
// high halves taken as the odd 16-bit lanes (one word shuffle), NaN as 0x7FC0 (32704).
// CHECK-LABEL: func.func @bf16_output
// CHECK:     %[[BITS:.*]] = arith.bitcast %[[V:.*]] : vector<32xf32> to vector<32xi32>
// CHECK:     %[[LOW:.*]] = arith.shrui %[[BITS]], %{{.*}} : vector<32xi32>
// CHECK:     %[[ODD:.*]] = arith.andi %[[LOW]], %{{.*}} : vector<32xi32>
// CHECK:     %[[BIASED:.*]] = arith.addi %[[BITS]], %{{.*}} : vector<32xi32>
// CHECK:     %[[SUM:.*]] = arith.addi %[[BIASED]], %[[ODD]] : vector<32xi32>
// CHECK:     %[[PAIRS:.*]] = vector.bitcast %[[SUM]] : vector<32xi32> to vector<64xi16>
// CHECK:     %[[HIGH:.*]] = vector.shuffle %[[PAIRS]], %[[PAIRS]] [1, 3, 5, {{.*}}, 61, 63] : vector<64xi16>, vector<64xi16>
// CHECK:     %[[NAN:.*]] = arith.cmpf uno, %[[V]], %[[V]] : vector<32xf32>
// CHECK:     %[[R:.*]] = arith.select %[[NAN]], %{{.*}}, %[[HIGH]] : vector<32xi1>, vector<32xi16>
// CHECK:     %[[Y:.*]] = arith.bitcast %[[R]] : vector<32xi16> to vector<32xbf16>
// CHECK:     vector.store %[[Y]], %{{.*}} : memref<32xbf16, {{.*}}>, vector<32xbf16>
#x = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
module attributes {dq.avx512bw} {
  func.func @bf16_output(%x: memref<?x?xi8>, %s: memref<?xf32>, %y: memref<?x?xbf16>) {
    linalg.generic {indexing_maps = [#x, #c, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?xf32>) outs(%y : memref<?x?xbf16>) {
    ^bb0(%a: i8, %b: f32, %o: bf16):
      %v = arith.sitofp %a : i8 to f32
      %r = arith.mulf %v, %b : f32
      %h = arith.truncf %r : f32 to bf16
      linalg.yield %h : bf16
    }
    return
  }
}

// -----

// bf16 outputs on an AVX512_BF16 host (module also tagged dq.avx512bf16): a tile none of whose
// f32 values is a NaN or a subnormal (vfpclassps classes 0xA1 = 161, per 16 lanes, or-reduced)
// is rounded by vcvtne2ps2bf16 (the second operand gives the low 16 lanes); any other tile by the
// bit rounding above. The branches yield i16 lanes (a bf16 vector merged at the join lost the
// non-temporal hint of the store after it).
// CHECK-LABEL: func.func @bf16_convert
// CHECK:     %[[V:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<32xf32>
// CHECK:     %[[CLASSES:.*]] = arith.constant 161 : i32
// CHECK:     %[[LO:.*]] = vector.extract_strided_slice %[[V]] {offsets = [0], sizes = [16], strides = [1]}
// CHECK:     %[[HI:.*]] = vector.extract_strided_slice %[[V]] {offsets = [16], sizes = [16], strides = [1]}
// CHECK:     %[[BADLO:.*]] = llvm.call_intrinsic "llvm.x86.avx512.fpclass.ps.512"(%[[LO]], %[[CLASSES]])
// CHECK:     %[[BADHI:.*]] = llvm.call_intrinsic "llvm.x86.avx512.fpclass.ps.512"(%[[HI]], %[[CLASSES]])
// CHECK:     %[[BAD:.*]] = arith.ori %[[BADLO]], %[[BADHI]] : vector<16xi1>
// CHECK:     %[[ANY:.*]] = vector.reduction <or>, %[[BAD]] : vector<16xi1> into i1
// CHECK:     %[[R:.*]] = scf.if %[[ANY]] -> (vector<32xi16>) {
// CHECK:       arith.addi
// CHECK:       vector.shuffle
// CHECK:       arith.cmpf uno
// CHECK:     } else {
// CHECK:       %[[L:.*]] = vector.extract_strided_slice %[[V]] {offsets = [0], sizes = [16], strides = [1]}
// CHECK:       %[[H:.*]] = vector.extract_strided_slice %[[V]] {offsets = [16], sizes = [16], strides = [1]}
// CHECK:       %[[C:.*]] = llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"(%[[H]], %[[L]]) : (vector<16xf32>, vector<16xf32>) -> vector<32xbf16>
// CHECK:       %[[CW:.*]] = arith.bitcast %[[C]] : vector<32xbf16> to vector<32xi16>
// CHECK:       scf.yield %[[CW]] : vector<32xi16>
// CHECK:     }
// CHECK:     %[[Y:.*]] = arith.bitcast %[[R]] : vector<32xi16> to vector<32xbf16>
// CHECK:     vector.store %[[Y]], %{{.*}} : memref<32xbf16, {{.*}}>, vector<32xbf16>
// CHECK-NOT: dq.avx512bf16
#x = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
module attributes {dq.avx512bw, dq.avx512bf16} {
  func.func @bf16_convert(%x: memref<?x?xi8>, %s: memref<?xf32>, %y: memref<?x?xbf16>) {
    linalg.generic {indexing_maps = [#x, #c, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?xf32>) outs(%y : memref<?x?xbf16>) {
    ^bb0(%a: i8, %b: f32, %o: bf16):
      %v = arith.sitofp %a : i8 to f32
      %r = arith.mulf %v, %b : f32
      %h = arith.truncf %r : f32 to bf16
      linalg.yield %h : bf16
    }
    return
  }
}

// -----

// In a non-temporal entry the same group's tiles are 4 lines (128 f16, NT_TABLE_TILE_BYTES), so
// the table still serves 4 permutes; without a table (f32 outputs, or no dq.field_code) every
// non-temporal tile is one line.
// CHECK-LABEL: func.func @group_of_128_nt
// CHECK:     vector.load %{{.*}} : memref<128xi16, {{.*}}>, vector<128xi16>
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.permvar.hi.512"
// CHECK:     vector.store %{{.*}} {alignment = 16 : i64, nontemporal = true} : memref<128xf16, {{.*}}>, vector<128xf16>
// CHECK-LABEL: func.func @group_of_128_f32_nt
// CHECK-NOT: llvm.call_intrinsic
// CHECK:     vector.store %{{.*}} {alignment = 16 : i64, nontemporal = true} : memref<16xf32, {{.*}}>, vector<16xf32>
#x = affine_map<(d0, d1) -> (d0, d1)>
#g = affine_map<(d0, d1) -> (d0, d1 floordiv 128)>
module attributes {dq.avx512bw} {
  func.func @group_of_128_nt(%x: memref<?x?xi16>, %s: memref<?x?xf16>, %y: memref<?x?xf16>) attributes {dq.nontemporal} {
    %c4 = arith.constant 4 : i32
    %c8 = arith.constant 8 : i32
    %c15 = arith.constant 15 : i32
    linalg.generic {indexing_maps = [#x, #g, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi16>, memref<?x?xf16>) outs(%y : memref<?x?xf16>) {
    ^bb0(%a: i16, %b: f16, %o: f16):
      %w = arith.extui %a : i16 to i32
      %f = arith.shrui %w, %c4 : i32
      %n = arith.andi %f, %c15 {dq.field_code = 4 : i32} : i32
      %q = arith.subi %n, %c8 : i32
      %v = arith.sitofp %q : i32 to f32
      %sf = arith.extf %b : f16 to f32
      %r = arith.mulf %v, %sf : f32
      %h = arith.truncf %r : f32 to f16
      linalg.yield %h : f16
    }
    return
  }
  func.func @group_of_128_f32_nt(%x: memref<?x?xi16>, %s: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {dq.nontemporal} {
    %c4 = arith.constant 4 : i32
    %c8 = arith.constant 8 : i32
    %c15 = arith.constant 15 : i32
    linalg.generic {indexing_maps = [#x, #g, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi16>, memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
    ^bb0(%a: i16, %b: f32, %o: f32):
      %w = arith.extui %a : i16 to i32
      %f = arith.shrui %w, %c4 : i32
      %n = arith.andi %f, %c15 {dq.field_code = 4 : i32} : i32
      %q = arith.subi %n, %c8 : i32
      %v = arith.sitofp %q : i32 to f32
      %r = arith.mulf %v, %b : f32
      linalg.yield %r : f32
    }
    return
  }
}
