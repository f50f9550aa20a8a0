"""dq-target-features: record on the module what the host CPU offers that dq-vectorize's
schedules depend on (the ExecutionEngine and `--emit=object` compile for this host).

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
`dq.avx2` (unit attribute): the host has AVX2 and FMA, every x86 target dq's kernels are built
for; alone on a module it says the module is for an AVX2 host without AVX-512 (`haswell`,
`znver2`): torch-onnx-to-dq-iree then sends QDQ MatMuls to dq's AVX2 integer kernel
(passes/kernels/qdq_avx2.py) as it does on AVX-512 VNNI hosts.

The host's features are read from numpy's CPU dispatch table, which the running numpy detected
on this machine.

A module holding any of these attributes already (set by hand, e.g. in a test) is left as it is.
"""

from __future__ import annotations

from mlir import ir

from . import Pass

AVX512BW = "dq.avx512bw"
AVX512BF16 = "dq.avx512bf16"
AVX512VBMI = "dq.avx512vbmi"
AVX512VNNI = "dq.avx512vnni"
AVX2 = "dq.avx2"
TAGS = (AVX512BW, AVX512BF16, AVX512VBMI, AVX512VNNI, AVX2)


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


def run(op) -> bool:
    if op.name != "builtin.module" or any(tag in op.attributes for tag in TAGS):
        return True  # tagged by hand (a test) or already
    for tag, present in zip(TAGS, (host_has_avx512bw(), host_has_avx512bf16(), host_has_avx512vbmi(), host_has_avx512vnni(), host_has_avx2())):
        if present:
            op.attributes[tag] = ir.UnitAttr.get()
    return True


PASS = Pass("dq-target-features", "Record on the module the host CPU features dq-vectorize's schedules use (dq.avx512bw, dq.avx512bf16, dq.avx512vbmi, dq.avx512vnni, dq.avx2)", run)
