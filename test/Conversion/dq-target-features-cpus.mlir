// RUN: dequant-opt %s --split-input-file --dq-target-features | FileCheck %s

// dq-target-features on modules naming their CPU (dq.target_cpu, and dq.target_cpu_features as
// --iree-llvmcpu-target-cpu-features spells them): the CPU's tags, with the features given on
// top; a feature the string does not name is the CPU's own.

// Skylake-AVX512 with VNNI added: its AVX-512F and BW are its own, so AVX-512 VNNI's tag.
// CHECK: module attributes {dq.avx2, dq.avx512bw, dq.avx512vnni, dq.target_cpu = "skylake-avx512"
module attributes {dq.target_cpu = "skylake-avx512", dq.target_cpu_features = "+avx512vnni"} {}

// -----

// Taken off: without AVX-512BW, no tag that needs it.
// CHECK: module attributes {dq.avx2, dq.target_cpu = "cascadelake"
module attributes {dq.target_cpu = "cascadelake", dq.target_cpu_features = "-avx512bw"} {}

// -----

// Haswell with AVX-512 VNNI alone added: AVX-512F and BW are not haswell's, no AVX-512 tag.
// CHECK: module attributes {dq.avx2, dq.target_cpu = "haswell"
module attributes {dq.target_cpu = "haswell", dq.target_cpu_features = "+avx512vnni"} {}

// -----

// Alder Lake: AVX2 and AVX-VNNI, no AVX-512 (the AVX-VNNI kernel, passes/kernels/qdq_avxvnni.py).
// CHECK: module attributes {dq.avx2, dq.avxvnni, dq.target_cpu = "alderlake"
module attributes {dq.target_cpu = "alderlake"} {}

// -----

// Haswell with AVX-VNNI added: AVX2 and FMA are haswell's own, so AVX-VNNI's tag.
// CHECK: module attributes {dq.avx2, dq.avxvnni, dq.target_cpu = "haswell"
module attributes {dq.target_cpu = "haswell", dq.target_cpu_features = "+avxvnni"} {}

// -----

// Sapphire Rapids without AVX-512 VNNI (and so without AMX's tag, which needs it): AVX-VNNI's stays.
// CHECK: module attributes {dq.avx2, dq.avx512bf16, dq.avx512bw, dq.avx512vbmi, dq.avxvnni, dq.target_cpu = "sapphirerapids"
module attributes {dq.target_cpu = "sapphirerapids", dq.target_cpu_features = "-avx512vnni"} {}
