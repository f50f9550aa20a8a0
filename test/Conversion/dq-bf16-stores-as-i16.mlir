// RUN: dequant-opt --dq-bf16-stores-as-i16 %s | FileCheck %s

// Stores of bf16 vectors become stores of the same bits as i16 vectors, their attributes kept
// (LLVM's x86 backend scalarizes bf16 vector stores and drops their non-temporal hint); stores of
// other vectors and of scalars are left alone.

// CHECK-LABEL: llvm.func @stores
// CHECK-SAME: (%[[V:.*]]: vector<32xbf16>, %[[F:.*]]: vector<16xf32>, %[[S:.*]]: bf16, %[[P:.*]]: !llvm.ptr)
// CHECK-NEXT: %[[NT:.*]] = llvm.bitcast %[[V]] : vector<32xbf16> to vector<32xi16>
// CHECK-NEXT: llvm.store %[[NT]], %[[P]] {alignment = 16 : i64, nontemporal} : vector<32xi16>, !llvm.ptr
// CHECK-NEXT: %[[PLAIN:.*]] = llvm.bitcast %[[V]] : vector<32xbf16> to vector<32xi16>
// CHECK-NEXT: llvm.store %[[PLAIN]], %[[P]] : vector<32xi16>, !llvm.ptr
// CHECK-NEXT: llvm.store %[[F]], %[[P]] {nontemporal} : vector<16xf32>, !llvm.ptr
// CHECK-NEXT: llvm.store %[[S]], %[[P]] : bf16, !llvm.ptr
// CHECK-NEXT: llvm.return
llvm.func @stores(%v: vector<32xbf16>, %f: vector<16xf32>, %s: bf16, %p: !llvm.ptr) {
  llvm.store %v, %p {alignment = 16 : i64, nontemporal} : vector<32xbf16>, !llvm.ptr
  llvm.store %v, %p : vector<32xbf16>, !llvm.ptr
  llvm.store %f, %p {nontemporal} : vector<16xf32>, !llvm.ptr
  llvm.store %s, %p : bf16, !llvm.ptr
  llvm.return
}
