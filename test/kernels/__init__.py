"""Body-level tests of dq's CPU matmul kernels (passes/kernels/), one file per kernel; harness.py is what they share."""
