// A process that sees this CPU without some of its instruction sets, for bench/models.py --isa:
// LD_PRELOAD'ed with DQ_CPUID_MASK = avx512vnni (no AMX), avxvnni (no AVX-512 either) or avx2 (no
// AVX-VNNI either). Linux's CPUID faulting (arch_prctl ARCH_SET_CPUID; /proc/cpuinfo's
// `cpuid_fault`) makes each CPUID instruction of the process trap; the handler runs it, clears the
// masked feature bits and the XSAVE state they need, and steps over it. onnxruntime's MLAS, IREE's
// runtime and numpy pick their kernels from CPUID, so each runs its code for that CPU (the core's
// speed stays this CPU's). Set at load, before any library of the process reads CPUID; threads
// inherit it, child processes do not (LD_PRELOAD is taken out of the environment: a compiler such
// as iree-compile installs its own SIGSEGV handler, and compiles for the CPU it is told).
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include <cpuid.h>

#define ARCH_SET_CPUID 0x1012
static int level;  // 1 avx512vnni (no AMX), 2 avxvnni (no AVX-512), 3 avx2 (neither)

static void on_segv(int sig, siginfo_t *info, void *ctx) {
  ucontext_t *uc = ctx;
  greg_t *g = uc->uc_mcontext.gregs;
  const uint8_t *ip = (const uint8_t *)g[REG_RIP];
  if (ip[0] != 0x0F || ip[1] != 0xA2) { signal(SIGSEGV, SIG_DFL); return; }
  unsigned leaf = (unsigned)g[REG_RAX], sub = (unsigned)g[REG_RCX], a, b, c, d;
  syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
  __cpuid_count(leaf, sub, a, b, c, d);
  syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
  if (leaf == 7 && sub == 0) {
    d &= ~((1u << 22) | (1u << 24) | (1u << 25));                         // AMX-BF16, -TILE, -INT8
    if (level >= 2) {
      b &= ~((1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) | (1u << 28) | (1u << 30) | (1u << 31));
      c &= ~((1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) | (1u << 14));
      d &= ~((1u << 2) | (1u << 3) | (1u << 8) | (1u << 23));
    }
  }
  if (leaf == 7 && sub == 1) {
    a &= ~(1u << 21);                                                      // AMX-FP16
    if (level >= 2) a &= ~(1u << 5);                                       // AVX512_BF16
    if (level >= 3) a &= ~((1u << 4) | (1u << 23));                        // AVX-VNNI, AVX-IFMA
    if (level >= 3) d &= ~((1u << 4) | (1u << 5) | (1u << 10));            // AVX-VNNI-INT8, -NE-CONVERT, -VNNI-INT16
  }
  if (leaf == 0xD && sub == 0 && level >= 2) a &= ~(0xE0u | (3u << 17));  // XCR0 state: no ZMM, no tiles
  if (leaf == 0xD && sub == 0 && level == 1) a &= ~(3u << 17);
  g[REG_RAX] = a; g[REG_RBX] = b; g[REG_RCX] = c; g[REG_RDX] = d;
  g[REG_RIP] += 2;
}

__attribute__((constructor)) static void start(void) {
  const char *m = getenv("DQ_CPUID_MASK");
  if (!m) return;
  level = !strcmp(m, "avx512vnni") ? 1 : !strcmp(m, "avxvnni") ? 2 : !strcmp(m, "avx2") ? 3 : 0;
  if (!level) return;
  unsetenv("LD_PRELOAD");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigaction(SIGSEGV, &sa, 0);
  if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0) {
    static const char why[] = "error: cpuid_mask: this CPU or kernel has no CPUID faulting\n";
    write(2, why, sizeof why - 1);
    _exit(2);
  }
}
