// RUN: dequant-opt --dq-nontemporal-bf16-as-i16 %s | FileCheck %s

// Non-temporal stores of bf16 vectors become stores of the same bits as i16 vectors (LLVM's x86
// backend drops the hint on bf16 vectors); other stores are left alone.

// CHECK-LABEL: llvm.func @stores
// CHECK-SAME: (%[[V:.*]]: vector<32xbf16>, %[[F:.*]]: vector<16xf32>, %[[P:.*]]: !llvm.ptr)
// CHECK-NEXT: %[[B:.*]] = llvm.bitcast %[[V]] : vector<32xbf16> to vector<32xi16>
// CHECK-NEXT: llvm.store %[[B]], %[[P]] {alignment = 64 : i64, nontemporal} : vector<32xi16>, !llvm.ptr
// CHECK-NEXT: llvm.store %[[V]], %[[P]] : vector<32xbf16>, !llvm.ptr
// CHECK-NEXT: llvm.store %[[F]], %[[P]] {nontemporal} : vector<16xf32>, !llvm.ptr
// CHECK-NEXT: llvm.return
llvm.func @stores(%v: vector<32xbf16>, %f: vector<16xf32>, %p: !llvm.ptr) {
  llvm.store %v, %p {alignment = 64 : i64, nontemporal} : vector<32xbf16>, !llvm.ptr
  llvm.store %v, %p : vector<32xbf16>, !llvm.ptr
  llvm.store %f, %p {nontemporal} : vector<16xf32>, !llvm.ptr
  llvm.return
}
