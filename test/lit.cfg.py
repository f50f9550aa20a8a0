"""lit configuration for the dq dialect and the dequant-opt tool (see mlir/examples/standalone)."""

import os
import shutil
import subprocess
import sys

import lit.formats
import lit.llvm
from lit.llvm.subst import ToolSubst

lit.llvm.initialize(lit_config, config)
from lit.llvm import llvm_config  # noqa: E402 (set by initialize)

config.name = "dequant"
config.test_format = lit.formats.ShTest(execute_external=False)  # lit's shell: `not` is a builtin
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.environ.get("DEQUANT_TEST_EXEC_ROOT", os.path.join(config.test_source_root, "Output"))
config.excludes = ["lit.cfg.py", "numeric", "Output", "c", "Inputs"]  # Inputs: files RUN lines read

# The tools run with the caller's PATH and Python environment (the editable install).
for var in ("PATH", "HOME", "VIRTUAL_ENV", "PYTHONPATH", "PYENV_VERSION", "PYENV_ROOT"):
    if var in os.environ:
        config.environment[var] = os.environ[var]


def python_command(*args: str) -> str:
    return " ".join([sys.executable, *args])


def dequant_opt() -> str:
    """The `dequant-opt` console script, or the module run by this Python."""
    found = shutil.which("dequant-opt")
    return found if found else python_command("-m", "dequant.cli")


def file_check() -> str:
    """LLVM's FileCheck from the installed `llvm` package, else the `filecheck` Python port."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", "import llvm, os; print(os.path.dirname(llvm.__file__))"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        binary = os.path.join(out, "bin", "FileCheck")
        if os.access(binary, os.X_OK):
            return binary
    except (subprocess.CalledProcessError, OSError):
        pass
    found = shutil.which("filecheck")
    if found:
        return found
    lit_config.fatal("no FileCheck: install the `llvm` tools package or `pip install filecheck`")


config.dequant_opt = dequant_opt()
config.file_check = file_check()
# lit's own tool substitution: `dequant-opt` and `FileCheck` as command words only, not inside a
# path or a longer name (`%S/Inputs/dequant-opt.mlir`, `--dequant-opt-x`).
llvm_config.add_tool_substitutions(
    [ToolSubst("dequant-opt", command=config.dequant_opt), ToolSubst("FileCheck", command=config.file_check)],
    [os.path.dirname(sys.executable)],  # where lit would look for tools given by name only
)
config.substitutions.append(("%python", sys.executable))

# Tests that build C (`REQUIRES: cc`) or configure the CMake project (`REQUIRES: cmake`) are
# UNSUPPORTED where the host has no such tool, not failures.
for feature, programs in (("cc", ["cc"]), ("cmake", ["cmake", "ctest"])):
    if all(shutil.which(p) for p in programs):
        config.available_features.add(feature)
# dq-target-features gives `dq.amxint8` only where the stage runs on Linux (`REQUIRES: linux`).
if sys.platform == "linux":
    config.available_features.add("linux")
# Tests of dequant-iree (`REQUIRES: iree`) need IREE's compiler, the `iree` extra.
if subprocess.run([sys.executable, "-c", "import iree.compiler.tools"], capture_output=True).returncode == 0:
    config.available_features.add("iree")
lit_config.note(f"dequant-opt: {config.dequant_opt}")
lit_config.note(f"FileCheck: {config.file_check}")
