// --version prints the package's version and the MLIR/LLVM versions it runs with.
// RUN: dequant-opt --version | FileCheck %s
// CHECK: dequant-opt {{[0-9]+\.[0-9]+}}
// CHECK-NEXT: MLIR 22.{{.*}} (Python bindings), LLVM 22.
