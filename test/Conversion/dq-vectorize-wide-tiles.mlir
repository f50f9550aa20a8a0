// RUN: dequant-opt %s --dq-vectorize --split-input-file | FileCheck %s

// Tiles whose vector count is not a power of two (issue 36.3): a tile is a divisor of the block,
// so blocks of 48 or 80 bf16 values are tiles of 3 or 5 16-lane vectors, and a group of 160 f16
// values 5 32-lane permutes. The pieces are joined in pairs, each shuffle's mask as long as its
// two operands together: a 32-lane piece with a 16-lane one gives 48 lanes (a mask of twice the
// first operand's length, 64, was out of range). The block is wider than any short row; a row
// shorter than one tile only runs the partial tile.

// A block of 48 on an AVX512_BF16 host: one vcvtne2ps2bf16 (32 lanes) and one vcvtneps2bf16
// (16 lanes) for the tile's 3 vectors, joined into the 48 lanes stored.
#x = affine_map<(d0, d1) -> (d0, d1)>
#b = affine_map<(d0, d1) -> (d0, d1 floordiv 48)>

// CHECK-LABEL: func.func @bf16_block_of_48
// CHECK:       } else {
// CHECK:         %[[LO:.*]] = vector.extract_strided_slice %[[V:.*]] {offsets = [0], sizes = [16], strides = [1]} : vector<48xf32> to vector<16xf32>
// CHECK:         %[[MID:.*]] = vector.extract_strided_slice %[[V]] {offsets = [16], sizes = [16], strides = [1]} : vector<48xf32> to vector<16xf32>
// CHECK:         %[[HI:.*]] = vector.extract_strided_slice %[[V]] {offsets = [32], sizes = [16], strides = [1]} : vector<48xf32> to vector<16xf32>
// CHECK:         %[[PAIR:.*]] = llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"(%[[MID]], %[[LO]]) : (vector<16xf32>, vector<16xf32>) -> vector<32xbf16>
// CHECK:         %[[LAST:.*]] = llvm.call_intrinsic "llvm.x86.avx512bf16.cvtneps2bf16.512"(%[[HI]]) : (vector<16xf32>) -> vector<16xbf16>
// CHECK:         %[[ALL:.*]] = vector.shuffle %[[PAIR]], %[[LAST]] [0, 1, {{.*}}, 46, 47] : vector<32xbf16>, vector<16xbf16>
// CHECK:         %[[WORDS:.*]] = arith.bitcast %[[ALL]] : vector<48xbf16> to vector<48xi16>
// CHECK:         scf.yield %[[WORDS]] : vector<48xi16>
// CHECK:       }
// CHECK:       vector.store %{{.*}} : memref<48xbf16, {{.*}}>, vector<48xbf16>
module attributes {dq.avx512bw, dq.avx512bf16} {
  func.func @bf16_block_of_48(%x: memref<?x?xi8>, %s: memref<?x?xf32>, %y: memref<?x?xbf16>) {
    linalg.generic {indexing_maps = [#x, #b, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?x?xf32>) outs(%y : memref<?x?xbf16>) {
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

// A block of 80, its scale bf16: 5 vectors, two pairs and one, joined as (32 + 32) + 16.
#x = affine_map<(d0, d1) -> (d0, d1)>
#b = affine_map<(d0, d1) -> (d0, d1 floordiv 80)>

// CHECK-LABEL: func.func @bf16_block_of_80
// CHECK:       } else {
// CHECK:         %[[P0:.*]] = llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"({{.*}}) : (vector<16xf32>, vector<16xf32>) -> vector<32xbf16>
// CHECK:         %[[P1:.*]] = llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"({{.*}}) : (vector<16xf32>, vector<16xf32>) -> vector<32xbf16>
// CHECK:         %[[LAST:.*]] = llvm.call_intrinsic "llvm.x86.avx512bf16.cvtneps2bf16.512"({{.*}}) : (vector<16xf32>) -> vector<16xbf16>
// CHECK:         %[[PAIRS:.*]] = vector.shuffle %[[P0]], %[[P1]] [0, 1, {{.*}}, 62, 63] : vector<32xbf16>, vector<32xbf16>
// CHECK:         %[[ALL:.*]] = vector.shuffle %[[PAIRS]], %[[LAST]] [0, 1, {{.*}}, 78, 79] : vector<64xbf16>, vector<16xbf16>
// CHECK:         arith.bitcast %[[ALL]] : vector<80xbf16> to vector<80xi16>
// CHECK:       vector.store %{{.*}} : memref<80xbf16, {{.*}}>, vector<80xbf16>
module attributes {dq.avx512bw, dq.avx512bf16} {
  func.func @bf16_block_of_80(%x: memref<?x?xi8>, %s: memref<?x?xbf16>, %y: memref<?x?xbf16>) {
    linalg.generic {indexing_maps = [#x, #b, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?x?xbf16>) outs(%y : memref<?x?xbf16>) {
    ^bb0(%a: i8, %b: bf16, %o: bf16):
      %v = arith.sitofp %a : i8 to f32
      %w = arith.extf %b : bf16 to f32
      %r = arith.mulf %v, %w : f32
      %h = arith.truncf %r : f32 to bf16
      linalg.yield %h : bf16
    }
    return
  }
}

// -----

// A per-tile table (AVX-512BW) for a group of 160 f16 values: 5 vpermw of 32 lanes, joined as
// ((32 + 32) + (32 + 32)) + 32.
#x = affine_map<(d0, d1) -> (d0, d1)>
#g = affine_map<(d0, d1) -> (d0, d1 floordiv 160)>

// CHECK-LABEL: func.func @f16_table_of_160
// CHECK:       %[[P0:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.hi.512"({{.*}}) : (vector<32xi16>, vector<32xi16>) -> vector<32xi16>
// CHECK:       %[[P1:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.hi.512"({{.*}}) : (vector<32xi16>, vector<32xi16>) -> vector<32xi16>
// CHECK:       %[[P2:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.hi.512"({{.*}}) : (vector<32xi16>, vector<32xi16>) -> vector<32xi16>
// CHECK:       %[[P3:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.hi.512"({{.*}}) : (vector<32xi16>, vector<32xi16>) -> vector<32xi16>
// CHECK:       %[[P4:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.hi.512"({{.*}}) : (vector<32xi16>, vector<32xi16>) -> vector<32xi16>
// CHECK:       %[[J01:.*]] = vector.shuffle %[[P0]], %[[P1]] [0, 1, {{.*}}, 62, 63] : vector<32xi16>, vector<32xi16>
// CHECK:       %[[J23:.*]] = vector.shuffle %[[P2]], %[[P3]] [0, 1, {{.*}}, 62, 63] : vector<32xi16>, vector<32xi16>
// CHECK:       %[[J03:.*]] = vector.shuffle %[[J01]], %[[J23]] [0, 1, {{.*}}, 126, 127] : vector<64xi16>, vector<64xi16>
// CHECK:       %[[ALL:.*]] = vector.shuffle %[[J03]], %[[P4]] [0, 1, {{.*}}, 158, 159] : vector<128xi16>, vector<32xi16>
// CHECK:       %[[Y:.*]] = arith.bitcast %[[ALL]] : vector<160xi16> to vector<160xf16>
// CHECK:       vector.store %[[Y]], %{{.*}} : memref<160xf16, {{.*}}>, vector<160xf16>
module attributes {dq.avx512bw} {
  func.func @f16_table_of_160(%x: memref<?x?xi16>, %s: memref<?x?xf16>, %y: memref<?x?xf16>) {
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
