// RUN: dequant-opt --dq-bf16-vectors-as-i16 %s | FileCheck %s

// Stores of bf16 vectors become stores of the same bits as i16 vectors, their attributes kept
// (LLVM's x86 backend scalarizes bf16 vector stores and drops their non-temporal hint); stores of
// other vectors and of scalars are left alone. Inserts and shuffles into bf16 vectors move i16
// lanes (LLVM promoted 7-lane bf16 shuffles through f32 and called __truncsfbf2; found by fuzzing).

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

// CHECK-LABEL: llvm.func @moves
// CHECK-SAME: (%[[A:.*]]: vector<7xbf16>, %[[B:.*]]: vector<7xbf16>, %[[S:.*]]: bf16, %[[I:.*]]: i32)
// CHECK-DAG: %[[AI:.*]] = llvm.bitcast %[[A]] : vector<7xbf16> to vector<7xi16>
// CHECK-DAG: %[[SI:.*]] = llvm.bitcast %[[S]] : bf16 to i16
// CHECK: %[[INS:.*]] = llvm.insertelement %[[SI]], %[[AI]][%[[I]] : i32] : vector<7xi16>
// CHECK: %[[INSB:.*]] = llvm.bitcast %[[INS]] : vector<7xi16> to vector<7xbf16>
// CHECK-DAG: %[[X:.*]] = llvm.bitcast %[[INSB]] : vector<7xbf16> to vector<7xi16>
// CHECK-DAG: %[[Y:.*]] = llvm.bitcast %[[B]] : vector<7xbf16> to vector<7xi16>
// CHECK: %[[SH:.*]] = llvm.shufflevector %[[X]], %[[Y]] [0, 7, 1, 8, 2, 9, 3, 10, 4, 11, 5, 12, 6, 13] : vector<7xi16>
// CHECK: %[[R:.*]] = llvm.bitcast %[[SH]] : vector<14xi16> to vector<14xbf16>
// CHECK: llvm.return %[[R]] : vector<14xbf16>
llvm.func @moves(%a: vector<7xbf16>, %b: vector<7xbf16>, %s: bf16, %i: i32) -> vector<14xbf16> {
  %0 = llvm.insertelement %s, %a[%i : i32] : vector<7xbf16>
  %1 = llvm.shufflevector %0, %b [0, 7, 1, 8, 2, 9, 3, 10, 4, 11, 5, 12, 6, 13] : vector<7xbf16>
  llvm.return %1 : vector<14xbf16>
}
