"""The CPU a module is compiled for, as its tags say (`Target.of`): the one reader of
dq-target-features' tags, for the kernels' routes and dq-vectorize's x86 rewrites alike. A
module's tags, never the host running the stage: a module for another CPU is tagged for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..target_features import AVX512BF16, AVX512BW, AVX512VBMI, AVX512VNNI


@dataclass(frozen=True)
class Target:
    """The x86 features tagged on a module (none: AVX2, or another target)."""

    avx512bw: bool = False
    avx512bf16: bool = False
    avx512vbmi: bool = False
    avx512vnni: bool = False

    @classmethod
    def of(cls, module) -> Target:
        """The features tagged on `module` (a builtin.module operation, or None: none)."""
        tags = module.attributes if module is not None else ()
        return cls(*(tag in tags for tag in (AVX512BW, AVX512BF16, AVX512VBMI, AVX512VNNI)))

    @property
    def lanes(self) -> int:
        """f32 lanes of the widest vector the kernels use: 16 with AVX-512, else 8 (AVX2)."""
        return 16 if self.avx512bw else 8
