// REQUIRES: linux
// RUN: dequant-opt %s --split-input-file --dq-target-features | FileCheck %s

// dq-target-features on modules naming their CPU (dq.target_cpu, dq.target_cpu_features as
// --iree-llvmcpu-target-cpu-features spells them): AMX's tag, dq.amxint8, for the CPUs with
// AMX-INT8 and AVX-512 VNNI (sapphirerapids has AVX-VNNI too), taken off by -amx-int8, added by
// +amx-tile,+amx-int8 to a CPU whose other features give AVX-512 VNNI (a feature not given is the
// CPU's).

// CHECK: module attributes {dq.amxint8, dq.avx2, dq.avx512bf16, dq.avx512bw, dq.avx512vbmi, dq.avx512vnni, dq.avxvnni, dq.target_cpu = "sapphirerapids"
module attributes {dq.target_cpu = "sapphirerapids", dq.target_cpu_features = ""} {}

// -----

// CHECK: module attributes {dq.avx2, dq.avx512bf16, dq.avx512bw, dq.avx512vbmi, dq.avx512vnni, dq.avxvnni, dq.target_cpu = "sapphirerapids"
module attributes {dq.target_cpu = "sapphirerapids", dq.target_cpu_features = "-amx-int8"} {}

// -----

// Zen 4: AVX-512 VNNI, no AMX.
// CHECK: module attributes {dq.avx2, dq.avx512bf16, dq.avx512bw, dq.avx512vbmi, dq.avx512vnni, dq.target_cpu = "znver4"
module attributes {dq.target_cpu = "znver4", dq.target_cpu_features = ""} {}

// -----

// CHECK: module attributes {dq.amxint8, dq.avx2, dq.avx512bw, dq.avx512vbmi, dq.avx512vnni, dq.target_cpu = "icelake-server"
module attributes {dq.target_cpu = "icelake-server", dq.target_cpu_features = "+amx-tile,+amx-int8"} {}

