// Modules the ExecutionEngine would abort on are error lines, and no object is written (found by
// fuzzing: LLVM/MLIR assertions killed the process).
// RUN: rm -rf %t && mkdir -p %t
// RUN: not dequant-opt %S/Inputs/no-function.mlir --emit=object -o %t/a.o 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not ls %t/a.o
// RUN: not dequant-opt %S/Inputs/internal-function.mlir --emit=object -o %t/b.o 2>&1 | FileCheck %s --check-prefix=INTERNAL
// RUN: not ls %t/b.o
// A comment-only input is an empty module:
// RUN: not dequant-opt %s --emit=object -o %t/c.o 2>&1 | FileCheck %s --check-prefix=EMPTY

// EMPTY: error: the module defines no function: there is nothing to compile into an object
// INTERNAL: error: function 'helper' is defined with #llvm.linkage<internal>: the ExecutionEngine compiles externally linked functions only
