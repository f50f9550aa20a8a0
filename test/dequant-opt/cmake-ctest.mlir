// The CMake project builds the C program of test/c/ against kernels dequant-opt compiles,
// and ctest runs it (building it first: ctest alone never reports it "Not Run").
// REQUIRES: cmake, cc
// RUN: rm -rf %t && cmake -S %S/../.. -B %t > %t.log 2>&1
// RUN: ctest --test-dir %t --output-on-failure | FileCheck %s
// CHECK: c-kernels-build {{.*}}Passed
// CHECK: c-kernels {{.*}}Passed
// CHECK: 100% tests passed

// A Python without lit and dequant-opt beside it: configuring fails with what to do.
// RUN: rm -rf %t.bad %t.py && mkdir -p %t.py/bin && ln -s %python %t.py/bin/python3
// RUN: not cmake -S %S/../.. -B %t.bad -DPython3_EXECUTABLE=%t.py/bin/python3 2>&1 | FileCheck %s --check-prefix=NOLIT
// NOLIT: lit or dequant-opt not found beside
// NOLIT: -DPython3_EXECUTABLE=/path/to/venv/bin/python
