"""The CPU a module is compiled for, as its tags say (`Target.of`): the one reader of
dq-target-features' tags, for the kernels' routes and dq-vectorize's x86 rewrites alike. A
module's tags, never the host running the stage: a module for another CPU is tagged for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..target_features import TAGS


@dataclass(frozen=True)
class Target:
    """The x86 features tagged on a module (none: AVX2 for the f32 kernel's vector ops, or
    another target; `x86_avx2`: x86 with AVX2 known, for the kernels calling its intrinsics)."""

    avx512bw: bool = False
    avx512bf16: bool = False
    avx512vbmi: bool = False
    avx512vnni: bool = False
    avx2: bool = False
    amx_int8: bool = False
    avxvnni: bool = False

    @classmethod
    def of(cls, module) -> Target:
        """The features tagged on `module` (a builtin.module operation, or None: none)."""
        return cls.tagged(module.attributes if module is not None else ())

    @classmethod
    def tagged(cls, tags) -> Target:
        """The features of dq-target-features `tags` (anything `in` asks of); the fields are its
        TAGS in order."""
        return cls(*(tag in tags for tag in TAGS))

    @property
    def x86_avx2(self) -> bool:
        """Whether the module is for an x86 CPU with AVX2 (tagged so, or with AVX-512): the AVX2
        kernels' `llvm.x86.avx2.*` calls would not compile for another target."""
        return self.avx2 or self.avx512bw

    @property
    def lanes(self) -> int:
        """f32 lanes of the widest vector the kernels use: 16 with AVX-512, else 8 (AVX2)."""
        return 16 if self.avx512bw else 8
