/* A process that loads this library (LD_PRELOAD) sees an x86-64 CPU
 * without AVX-512 and AMX: the benchmark's ISA cap for the peers.
 *
 * oneDNN's ONEDNN_MAX_CPU_ISA caps dfg (and oneDNN inside OpenVINO), but
 * ONNX Runtime's MLAS and OpenVINO's MLAS-backed fully connected layers
 * choose their kernels from CPUID alone and have no such cap. So a run
 * capped to AVX2 on an AVX-512 machine compared dfg's AVX2 code with the
 * peers' AVX-512 code. Here, CPUID faulting (arch_prctl ARCH_SET_CPUID,
 * Linux 4.12 and a CPU or hypervisor that offers it) makes every CPUID
 * instruction of the process trap; the SIGSEGV handler runs the
 * instruction itself with faulting briefly off, clears the AVX-512, AMX
 * and AVX-VNNI/AVX-IFMA feature bits of leaf 7 and the AVX-512 state
 * bits of leaf 0xD, writes the answer into the trapped thread's registers
 * and steps over the instruction. The setting is per thread and
 * inherited by threads and children made after it (execve resets it),
 * so the constructor sets it before the process starts its threads.
 *
 * A diagnostic for benchmarks, never needed for speed. Where faulting is
 * not offered the constructor says so on stderr and the process runs
 * unchanged (bench/cpu_speed/run.sh reports the peers as uncapped then).
 * Built by bench/cpu_speed/run.sh with the system's cc. */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

/* Leaf 7, subleaf 0. */
#define EBX7_AVX512 (1u << 16 | 1u << 17 | 1u << 21 | 1u << 26 | 1u << 27 | \
                     1u << 28 | 1u << 30 | 1u << 31)
#define ECX7_AVX512 (1u << 1 | 1u << 6 | 1u << 11 | 1u << 12 | 1u << 14)
#define EDX7_AVX512_AMX (1u << 2 | 1u << 3 | 1u << 8 | 1u << 22 | 1u << 23 | \
                         1u << 24 | 1u << 25)
/* Leaf 7, subleaf 1: AVX-VNNI, AVX512_BF16, AVX-IFMA (AVX2 machines of
 * the kind the cap stands for have none). */
#define EAX7_1_EXTRA (1u << 4 | 1u << 5 | 1u << 23)
/* Leaf 0xD, subleaf 0: the opmask and upper ZMM states, and AMX's. */
#define EAX_D_AVX512_AMX (7u << 5 | 3u << 17)

static long set_cpuid(int enabled)
{
    return syscall(SYS_arch_prctl, ARCH_SET_CPUID, (unsigned long)enabled);
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)info;
    ucontext_t *uc = context;
    greg_t *r = uc->uc_mcontext.gregs;
    const uint8_t *ip = (const uint8_t *)r[REG_RIP];
    if (ip[0] != 0x0f || ip[1] != 0xa2) {
        /* Not a CPUID: the process's own fault, with the default action. */
        signal(SIGSEGV, SIG_DFL);
        return;
    }
    uint32_t leaf = (uint32_t)r[REG_RAX], sub = (uint32_t)r[REG_RCX];
    uint32_t a, b, c, d;
    set_cpuid(1);
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
                     : "a"(leaf), "c"(sub));
    set_cpuid(0);
    if (leaf == 7 && sub == 0) {
        b &= ~EBX7_AVX512;
        c &= ~ECX7_AVX512;
        d &= ~EDX7_AVX512_AMX;
    } else if (leaf == 7 && sub == 1) {
        a &= ~EAX7_1_EXTRA;
    } else if (leaf == 0xd && sub == 0) {
        a &= ~EAX_D_AVX512_AMX;
    }
    r[REG_RAX] = a;
    r[REG_RBX] = b;
    r[REG_RCX] = c;
    r[REG_RDX] = d;
    r[REG_RIP] += 2;
}

__attribute__((constructor)) static void cap_cpuid(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSEGV, &action, NULL) != 0 || set_cpuid(0) != 0) {
        static const char why[] =
            "cpuid_cap: CPUID faulting is not offered here; the process "
            "sees the CPU's own features\n";
        signal(SIGSEGV, SIG_DFL);
        (void)!write(2, why, sizeof why - 1);
    }
}
