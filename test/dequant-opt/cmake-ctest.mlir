// The CMake project builds the C program of test/c/ against kernels dequant-opt compiles,
// and ctest runs it.
// RUN: rm -rf %t && cmake -S %S/../.. -B %t > %t.log 2>&1
// RUN: cmake --build %t --target dequant_c_test >> %t.log 2>&1
// RUN: ctest --test-dir %t --output-on-failure | FileCheck %s

// CHECK: c-kernels {{.*}}Passed
// CHECK: 100% tests passed
