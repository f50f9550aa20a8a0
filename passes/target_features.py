"""dq-target-features: record on the module what its CPU (the host, or the CPU the module names)
offers that dq-vectorize's schedules and dq's IREE kernels depend on (the ExecutionEngine and
`--emit=object` compile for this host).

`dq.avx512bw` (unit attribute): the host has AVX-512F and AVX-512BW. dq-vectorize then
(passes/vectorize_x86.py, `X86.of(module)`; `Target.of` in passes/kernels/target.py is the one
reader of these tags, for the kernels and dq-vectorize)
- looks up per-tile tables of 16 x 32-bit or 32 x 16-bit values with one variable permute
  (`vpermd`, `vpermw`) per 512 bits (`tables`). On AVX2 (8 x 32-bit permutes, no 16-bit one) a
  16-entry lookup becomes a sequence through the stack, slower than computing the values;
- narrows f32 -> bf16 roundings with one two-source word permute (`vpermt2w`, `bf16_rounding`).

`dq.avx512bf16` (unit attribute): the host also has AVX-512DQ and AVX512_BF16. dq-vectorize then
rounds f32 -> bf16 with `vcvtne2ps2bf16` in every tile whose values are neither NaN nor subnormal
(`vfpclassps` tests them; such a tile takes the exact rounding above).
`dq.avx512vbmi` (unit attribute): the host has AVX-512F, BW and VBMI. dq-vectorize then cuts
packed 4-bit and 2-bit fields widened to i32 with one `vpmultishiftqb` per 16 lanes
(`fold_nibbles.fields_in_bytes`).
`dq.avx512vnni` (unit attribute): the host has AVX-512F, BW and VNNI (`vpdpbusd`), which the
int8-activation matmul kernel needs (passes/kernels/int8.py; numpy calls it `AVX512VNNI`).
`dq.amxint8` (unit attribute): the host has AVX-512 VNNI and AMX's tiles and int8 products
(`tdpbusd`), and runs Linux (the kernel asks it for AMX's state: passes/kernels/qdq_amx.py):
QDQ MatMuls of the direct form take their whole tiles of rows with AMX. A named CPU gives the tag
only where the stage runs on Linux (IREE's target triple is the host's unless told otherwise).
`dq.avx2` (unit attribute): the host has AVX2 and FMA, every x86 target dq's kernels are built
for; alone on a module it says the module is for an AVX2 host without AVX-512 (`haswell`,
`znver2`): torch-onnx-to-dq-iree then sends QDQ MatMuls to dq's AVX2 integer kernel
(passes/kernels/qdq_avx2.py) as it does on AVX-512 VNNI hosts.
`dq.avxvnni` (unit attribute): the host has AVX2, FMA and AVX-VNNI (`vpdpbusd` on 256-bit
vectors; Linux's `avx_vnni` flag, as numpy's table does not name it): without `dq.avx512vnni`
(`alderlake`, `sierraforest`), QDQ MatMuls take the VNNI kernel's 8-lane form
(passes/kernels/qdq_avxvnni.py) in place of the AVX2 one.

The host's features are read from numpy's CPU dispatch table, which the running numpy detected
on this machine. A module compiled for another CPU says so: `dq.target_cpu` (a string attribute,
an LLVM CPU name as `--iree-llvmcpu-target-cpu` takes it; dequant-iree sets it from that flag)
and optionally `dq.target_cpu_features` (`+avx512vnni,...`, as `--iree-llvmcpu-target-cpu-features`
spells them); the tags are then that CPU's (`CPUS`), never the host's. A CPU name the table does
not know gets no tag (every route that needs none; dequant-iree's summary line says so).

A module holding any of these attributes already (set by hand, e.g. in a test) is left as it is.
"""

from __future__ import annotations

import sys

from mlir import ir

from . import Pass

AVX512BW = "dq.avx512bw"
AVX512BF16 = "dq.avx512bf16"
AVX512VBMI = "dq.avx512vbmi"
AVX512VNNI = "dq.avx512vnni"
AVX2 = "dq.avx2"
AMX_INT8 = "dq.amxint8"
AVXVNNI = "dq.avxvnni"
TAGS = (AVX512BW, AVX512BF16, AVX512VBMI, AVX512VNNI, AVX2, AMX_INT8, AVXVNNI)


def _features() -> dict:
    """numpy's table of this host's CPU features ({} where numpy does not say)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy < 2
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as features
        except ImportError:
            return {}
    return features


def host_has_avx512bw() -> bool:
    """AVX-512F and AVX-512BW on this host (False where numpy does not say)."""
    f = _features()
    return bool(f.get("AVX512F") and f.get("AVX512BW"))


def host_has_avx512bf16() -> bool:
    """AVX-512F, BW, DQ and AVX512_BF16 on this host (False where numpy does not say)."""
    f = _features()
    return host_has_avx512bw() and bool(f.get("AVX512DQ") and f.get("AVX512BF16"))


def host_has_avx512vbmi() -> bool:
    """AVX-512F, BW and VBMI on this host (False where numpy does not say)."""
    return host_has_avx512bw() and bool(_features().get("AVX512VBMI"))


def host_has_avx2() -> bool:
    """AVX2 and FMA on this host (False where numpy does not say)."""
    f = _features()
    return bool(f.get("AVX2") and f.get("FMA3"))


def host_has_avx512vnni() -> bool:
    """AVX-512F, BW and VNNI on this host (False where numpy does not say)."""
    return host_has_avx512bw() and bool(_features().get("AVX512VNNI"))


def linux_cpu_flags() -> set:
    """The CPU flags Linux lists in /proc/cpuinfo (what the CPU has and the kernel supports;
    none elsewhere): the features numpy's table does not name, as AMX's."""
    try:
        with open("/proc/cpuinfo") as f:
            return set(next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), []))
    except OSError:
        return set()


def host_has_amx_int8() -> bool:
    """AVX-512 VNNI, AMX-TILE and AMX-INT8 on this host, a Linux one (`linux_cpu_flags`)."""
    return host_has_avx512vnni() and {"amx_tile", "amx_int8"} <= linux_cpu_flags()


def host_has_avxvnni() -> bool:
    """AVX2, FMA and AVX-VNNI on this host (Linux's `avx_vnni` flag: numpy's table does not
    name AVX-VNNI, so no tag elsewhere)."""
    return host_has_avx2() and "avx_vnni" in linux_cpu_flags()


# Each tag -> whether this host has its features.
_HOST = {AVX512BW: host_has_avx512bw, AVX512BF16: host_has_avx512bf16, AVX512VBMI: host_has_avx512vbmi, AVX512VNNI: host_has_avx512vnni,
         AVX2: host_has_avx2, AMX_INT8: host_has_amx_int8, AVXVNNI: host_has_avxvnni}  # fmt: skip

TARGET_CPU = "dq.target_cpu"
TARGET_CPU_FEATURES = "dq.target_cpu_features"

# LLVM's x86 CPU names (llvm/lib/Target/X86/X86.td) -> the tags their features give: every CPU
# with AVX-512BW has AVX2 and FMA too; AVX2 without AVX-512BW: haswell ... skylake, znver1-3,
# x86-64-v3, Xeon Phi; with AVX-VNNI too (alderlake and its successors, the E-core Xeons); older ones none.
# AVX-VNNI: those, sapphirerapids and its successors, znver5 (LLVM's X86.td feature lists).
_BW, _BF16, _VBMI, _VNNI = (AVX2, AVX512BW), (AVX2, AVX512BW, AVX512BF16), (AVX2, AVX512BW, AVX512VBMI), (AVX2, AVX512BW, AVX512VNNI)
_ALL = (AVX2, AVX512BW, AVX512BF16, AVX512VBMI, AVX512VNNI)
_AMX = _ALL + (AMX_INT8, AVXVNNI)
CPUS = {
    "skylake-avx512": _BW, "skx": _BW, "x86-64-v4": _BW,
    "cascadelake": _VNNI, "cooperlake": (AVX2, AVX512BW, AVX512BF16, AVX512VNNI), "cannonlake": _VBMI,
    **{c: (AVX2, AVX512BW, AVX512VBMI, AVX512VNNI) for c in ("icelake-client", "icelake-server", "tigerlake", "rocketlake")},
    "sapphirerapids": _AMX, "emeraldrapids": _AMX, "graniterapids": _AMX, "graniterapids-d": _AMX, "diamondrapids": _AMX,
    "znver4": _ALL, "znver5": _ALL + (AVXVNNI,),
    **{c: (AVX2,) for c in ("x86-64-v3", "haswell", "broadwell", "skylake", "knl", "knm", "bdver4", "znver1", "znver2", "znver3")},
    **{c: (AVX2, AVXVNNI) for c in ("alderlake", "raptorlake", "meteorlake", "arrowlake", "arrowlake-s", "lunarlake", "gracemont",
                                    "sierraforest", "grandridge", "clearwaterforest", "pantherlake")},
    **{c: () for c in ("generic", "x86-64", "x86-64-v2", "nehalem", "westmere", "sandybridge", "ivybridge", "btver2")},
}  # fmt: skip
# `-mattr`-style features -> the tag they give (all of a tag's features needed, AVX-512F too).
_FEATURES = {AVX2: ("avx2", "fma"), AVX512BW: ("avx512f", "avx512bw"), AVX512BF16: ("avx512f", "avx512bw", "avx512dq", "avx512bf16"),
             AVX512VBMI: ("avx512f", "avx512bw", "avx512vbmi"), AVX512VNNI: ("avx512f", "avx512bw", "avx512vnni"),
             AMX_INT8: ("avx512f", "avx512bw", "avx512vnni", "amx-tile", "amx-int8"), AVXVNNI: ("avx2", "fma", "avxvnni")}  # fmt: skip


def cpu_tags(cpu: str, features: str = "") -> tuple[tuple, str | None]:
    """(the tags of LLVM CPU `cpu` with `features` (`+f,-g`) on top, why not known or None)."""
    if cpu == "host":
        tags = {t for t, has in _HOST.items() if has()}
        why = None
    else:
        why = None if cpu in CPUS else f"CPU '{cpu}' is not in dq's table: no AVX2 or AVX-512 route is taken"
        tags = set(CPUS.get(cpu, ()))
    if features:
        given = {f[1:]: f[0] == "+" for f in features.split(",") if f[:1] in "+-" and len(f) > 1}
        had = set(tags)  # a feature not given is the CPU's if one of its tags needs it
        for tag, needs in _FEATURES.items():
            if all(given.get(f, any(f in _FEATURES[t] for t in had)) for f in needs):
                tags.add(tag)
            if any(given.get(f) is False for f in needs):
                tags.discard(tag)
    if sys.platform != "linux":
        tags.discard(AMX_INT8)  # the AMX kernel's request for its state is Linux's syscall
    return tuple(t for t in TAGS if t in tags), why


def run(op) -> bool:
    if op.name != "builtin.module" or any(tag in op.attributes for tag in TAGS):
        return True  # tagged by hand (a test) or already
    cpu = ir.StringAttr(op.attributes[TARGET_CPU]).value if TARGET_CPU in op.attributes else "host"
    features = ir.StringAttr(op.attributes[TARGET_CPU_FEATURES]).value if TARGET_CPU_FEATURES in op.attributes else ""
    tags, _ = cpu_tags(cpu, features)  # an unknown CPU: no tag (dequant-iree's summary says so)
    for tag in tags:
        op.attributes[tag] = ir.UnitAttr.get()
    return True


PASS = Pass("dq-target-features", f"Record on the module the CPU features (the host's, or those of the CPU its dq.target_cpu names) dq's schedules and kernels use ({', '.join(TAGS)})", run)
