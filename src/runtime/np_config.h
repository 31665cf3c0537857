/* np_config.h - the runtime's limits and build choices, in one place: each
 * has a default and the reason for it, and each can be changed with
 * -DNAME=VALUE when the runtime is built (the CMake cache sets the first
 * three). A value changes what the runtime can hold, never the format of
 * what it writes: dumps and traces read the same whatever was chosen.
 * Ports read their own choices here too (NP_POSIX_*, NP_CM_*). */
#ifndef NP_CONFIG_H
#define NP_CONFIG_H

/* A microcontroller (an M-profile CPU) has kilobytes of RAM, not
 * gigabytes: its defaults below are smaller. */
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define NP_CONFIG_SMALL 1
#else
#define NP_CONFIG_SMALL 0
#endif

/* ---- chosen with CMake (src/CMakeLists.txt) ---------------------------- */

/* Slots of the static basic-block table: 1 MiB of counts, the blocks of a
 * mid-sized program; a power of two (the hash masks it). 0 on a
 * microcontroller: no RAM taken unasked, the firmware gives the table
 * (np_blocks_init_buf). */
#ifndef NP_BLOCKS_SLOTS
#define NP_BLOCKS_SLOTS (NP_CONFIG_SMALL ? 0 : 65536)
#endif
/* Alignment of counters that threads add to at once: a cache line on
 * hosts (no two threads' sections share one); 8 on a microcontroller,
 * which has one core and no line to share. */
#ifndef NP_SHARED_ALIGN
#define NP_SHARED_ALIGN (NP_CONFIG_SMALL ? 8 : 64)
#endif
/* Sections in the built-in table, ids 0 to N-1: enough for the global
 * section and a program's phases (16 on a microcontroller, 1 KiB with
 * the core's open state); every thread keeps 32 bytes per section. */
#ifndef NP_SECTIONS_MAX
#define NP_SECTIONS_MAX (NP_CONFIG_SMALL ? 16 : 64)
#endif
/* Width of a bins counter, 16 or 32: 32 never saturates at 100 kHz for
 * half a day; 16 halves the RAM of a small target's table. */
#ifndef NP_BIN_COUNTER_BITS
#define NP_BIN_COUNTER_BITS 32
#endif

/* ---- the core -------------------------------------------------------------- */

/* Reports (dumps, notes, error lines) as records that the host formats
 * with the firmware's ELF (1: a microcontroller's default: no text, no
 * formatting code, no names in its ROM), or as text made here (0: a
 * host's runtime, and a target's libnanoprof-text). */
#ifndef NP_REPORT_RECORDS
#define NP_REPORT_RECORDS NP_CONFIG_SMALL
#endif

/* Bytes of one report line (dumps, errors: report_text.c makes them on a
 * host, in import and in libnanoprof-text): a symbol name and its figures;
 * the line lives on the stack of whoever dumps. */
#ifndef NP_LINE_MAX
#define NP_LINE_MAX 512
#endif
/* Bytes of a flight recorder's room for the trace's chunks in RAM
 * (np_trace_init_flight): the opening (header, INFO, MODULE: about 100)
 * and a THREAD chunk for each thread (18 and its name); a chunk beyond
 * it is dropped, and counted. */
#ifndef NP_TRACE_FLIGHT_META
#define NP_TRACE_FLIGHT_META 512
#endif
/* Bytes of a thread's name (np_thread_name) kept, less the NUL: Linux's
 * thread names hold 15, and FreeRTOS's task names as configured by
 * default (configMAX_TASK_NAME_LEN 16) as many. */
#ifndef NP_THREAD_NAME_MAX
#define NP_THREAD_NAME_MAX 15
#endif

/* setjmp calls remembered per thread, the most recent ones: a longjmp to
 * an older one cuts nothing (a program rarely keeps more jump targets
 * alive at once). */
#ifndef NP_JMP_MARKS
#define NP_JMP_MARKS 8
#endif
/* -pg's return stack (port/posix/mcount.c): entries mapped for a thread
 * at its first call (24 bytes each, pages touched as the depth reaches
 * them), doubled when full; and the modules whose choice between -pg's
 * hooks and -finstrument-functions' is remembered (one more is looked up
 * at each call). */
#ifndef NP_MCOUNT_RSTACK
#define NP_MCOUNT_RSTACK 16384
#endif
#ifndef NP_MCOUNT_MODULES
#define NP_MCOUNT_MODULES 256
#endif
/* x86-64 -mfentry's thunks (port/posix/thunks.c): the areas of them, one
 * per module whose calls of __fentry__ become jumps (and one per switch of
 * patchable entries); a module beyond keeps its calls. */
#ifndef NP_THUNK_AREAS
#define NP_THUNK_AREAS 256
#endif
/* -pg's thunks: the prologue before mcount's call that a thunk undoes and
 * repeats, at most (instructions; registers pushed after %rbp: the five
 * callee-saved ones); a longer one keeps its call. */
#ifndef NP_PG_PROLOGUE_INSNS
#define NP_PG_PROLOGUE_INSNS 24
#endif
#ifndef NP_PG_PROLOGUE_PUSHES
#define NP_PG_PROLOGUE_PUSHES 5
#endif
/* 32-bit ARM Linux -pg: how far above the return address the hook is
 * given it looks for the copy a function saved in its prologue (mcount.c),
 * in words: the largest frame (locals and saved registers) it finds it in. */
#ifndef NP_ARM_SCAN_WORDS
#define NP_ARM_SCAN_WORDS 16384
#endif
/* -pg alone on a target (port/cortex_m/mcount.c, runtime/pg_exits.c):
 * the return addresses each thread keeps for the exits of its calls (16
 * bytes each, inside its np_thread, and as many for interrupt handlers).
 * 0: -pg's hook gives call arcs and r0-r3 only, exits come from
 * -finstrument-functions (a firmware that does not use it carries
 * nothing); at most 20 (NP_THREAD_SIZE). Calls deeper are not hooked,
 * and said. */
#ifndef NP_PG_EXITS
#define NP_PG_EXITS 0
#endif
/* How far it reads a function's prologue back (instructions: GCC's are a
 * few pushes and subtractions), and the largest frame it follows (words);
 * a larger one is not hooked. */
#ifndef NP_CM_PG_PROLOGUE_INSNS
#define NP_CM_PG_PROLOGUE_INSNS 12
#endif
#ifndef NP_CM_PG_FRAME_WORDS
#define NP_CM_PG_FRAME_WORDS 4096
#endif
/* AArch64 -pg: how many instructions before its _mcount call a function's
 * prologue may have, read back for a PACIASP (mcount.c): GCC's and
 * Clang's are a few stores and moves. */
#ifndef NP_A64_PROLOGUE_INSNS
#define NP_A64_PROLOGUE_INSNS 32
#endif
/* NP_CALLTRACE_ARGS (default 0): call trace records that keep four
 * arguments. Defined in nanoprof/calltrace.h, not here: the program's
 * code depends on it (the record's size), so the build passes it to both
 * (CMake -DNP_CALLTRACE_ARGS=ON, pkg-config). */
/* Patchable entries (port/posix/patch.c): the modules whose places are
 * read (more are not switched); the pages of jumps, each to the
 * hook within 2 GiB of a module's code (one serves every module near it);
 * the threads a switch can take through its round (GCC's five NOPs). */
#ifndef NP_PATCH_MODULES
#define NP_PATCH_MODULES 256
#endif
#ifndef NP_PATCH_JUMPS
#define NP_PATCH_JUMPS 64
#endif
#ifndef NP_PATCH_THREADS
#define NP_PATCH_THREADS 4096
#endif
/* How long a switch waits for a thread to answer its round (or, blocking
 * the signal, to sleep in a system call): on a busy machine a thread may
 * wait long for a CPU. */
#ifndef NP_PATCH_ANSWER_MS
#define NP_PATCH_ANSWER_MS 10000
#endif
/* Frames of the stack an exception is thrown from that are kept (the
 * innermost ones): a catch further out than that leaves the calls between
 * open (catch.c). */
#ifndef NP_THROW_FRAMES
#define NP_THROW_FRAMES 128
#endif
/* Sets of user hooks kept alive after np_hooks_set replaced them: a hook
 * still running on another thread reads a whole set unless the hooks are
 * replaced this many times meanwhile. */
#ifndef NP_USER_HOOK_SLOTS
#define NP_USER_HOOK_SLOTS 16
#endif
/* Bins: most bins (the SDK's 8-bit bin number), and the fastest tick
 * (a tick costs a signal on a host, an interrupt on a target); plain
 * numbers: messages quote them. */
#ifndef NP_BINS_MAX
#define NP_BINS_MAX 256
#endif
#ifndef NP_BINS_HZ_MAX
#define NP_BINS_HZ_MAX 100000
#endif
/* Basic-block table: slots probed before a block is counted lost (bounds
 * the cost of a full table), and the largest table or ring asked for at
 * run time (NANOPROF_BLOCKS, np_blocks_log): 256M entries (a plain
 * number: messages quote it). */
#ifndef NP_BLOCKS_PROBE_MAX
#define NP_BLOCKS_PROBE_MAX 64
#endif
#ifndef NP_BLOCKS_RUNTIME_MAX
#define NP_BLOCKS_RUNTIME_MAX 268435456
#endif

/* gprof on a target (gprof.c, gprof.h). The widest histogram bin, in
 * bytes of code: gprof shares a bin's samples among the functions in it,
 * so wider bins blur small functions together. */
#ifndef NP_GPROF_BUCKET_MAX
#define NP_GPROF_BUCKET_MAX 64
#endif
/* Arc slots a call looks at before it is counted lost: bounds the time a
 * call spends in a nearly full table. */
#define NP_GPROF_PROBE_MAX 16
/* Most arc slots used: a slot's index is 16 bits of the hash times the
 * slots, a 32-bit product (ARMv6-M has no division). */
#define NP_GPROF_ARCS_MAX 65535u
/* Fastest sampling, as bins' tick: the interrupt's own time stays small. */
#define NP_GPROF_HZ_MAX 100000
/* Arcs packed per write to the host: 13 bytes each on the stack. */
#define NP_GPROF_WRITE_ARCS 8

/* ---- the recorder (hosted only: record.c, record_write.c, sample.c) ---- */

/* Default per-thread buffer (NANOPROF_BUFFER): 65,536 raw records, handed
 * to the writer once per buffer, never per event. */
#ifndef NP_REC_BUF_BYTES
#define NP_REC_BUF_BYTES (1u << 20)
#endif
/* Buffers and threads the recorder tracks at once (static tables). */
#ifndef NP_REC_MAX_BUFS
#define NP_REC_MAX_BUFS 4096
#endif
#ifndef NP_REC_MAX_STREAMS
#define NP_REC_MAX_STREAMS 4096
#endif
/* What the writer's queue may hold: 64 buffers of the default size. */
#ifndef NP_REC_QUEUE_BYTES
#define NP_REC_QUEUE_BYTES (64u << 20)
#endif
/* What the live threads' buffers may take together before new buffers get
 * smaller, and the smallest they get: memory does not grow with threads
 * times the buffer size. */
#ifndef NP_REC_LIVE_BYTES
#define NP_REC_LIVE_BYTES (64u << 20)
#endif
#ifndef NP_REC_MIN_BUF_BYTES
#define NP_REC_MIN_BUF_BYTES (64u << 10)
#endif
/* A thread waiting for the writer looks again this often, and takes a
 * buffer past the queue's limit after the writer made no progress this
 * long (it may wait on a lock the waiting thread holds). */
#ifndef NP_REC_WAIT_SLICE_MS
#define NP_REC_WAIT_SLICE_MS 10
#endif
#ifndef NP_REC_STALL_MS
#define NP_REC_STALL_MS 200
#endif
/* The signal stack given to a recorded thread that has none: a stack
 * overflow's SIGSEGV still ends the trace. */
#ifndef NP_REC_ALTSTACK_BYTES
#define NP_REC_ALTSTACK_BYTES (128u << 10)
#endif
/* Frames of a sample that waits for a hook to end, and of any sample
 * (deeper stacks keep their innermost frames; at most 255). */
#ifndef NP_REC_PEND_FRAMES
#define NP_REC_PEND_FRAMES 128
#endif
#ifndef NP_SAMPLE_FRAMES
#define NP_SAMPLE_FRAMES 128
#endif
/* Modules and NP_ENTER names a trace file lists without looking again. */
#ifndef NP_REC_MAX_MODULES
#define NP_REC_MAX_MODULES 1024
#endif
#ifndef NP_REC_MAX_NAMES
#define NP_REC_MAX_NAMES 1024
#endif
/* Encoded bytes per EVENTS chunk: the writer's (compressed well at 1 MiB)
 * and a fatal signal handler's (static, uncompressed). */
#ifndef NP_REC_CHUNK_BYTES
#define NP_REC_CHUNK_BYTES (1u << 20)
#endif
#ifndef NP_REC_FATAL_CHUNK_BYTES
#define NP_REC_FATAL_CHUNK_BYTES (64u << 10)
#endif
/* zstd's fastest level: the writer keeps up with the hooks. */
#ifndef NP_REC_ZSTD_LEVEL
#define NP_REC_ZSTD_LEVEL 1
#endif
/* Basic blocks per BLOCKS chunk (a static buffer of 64 KiB). */
#ifndef NP_REC_BLOCKS_PER_CHUNK
#define NP_REC_BLOCKS_PER_CHUNK 4096u
#endif
/* log2 of the function-filter cache's slots (-F, -N): names are looked up
 * once per address. */
#ifndef NP_REC_FILTER_CACHE_BITS
#define NP_REC_FILTER_CACHE_BITS 13
#endif

/* ---- the trace on a target (trace_target.c) -------------------------------
 * No table, no limit of its own: its one buffer is the firmware's
 * (NP_TRACE_BUFFER_MIN in nanoprof/trace.h: one chunk's header and the
 * encoder's longest records), and each np_thread keeps its few fields. */

/* ---- the POSIX port ---------------------------------------------------------- */

/* Modules whose symbols the runtime keeps loaded for dumps. */
#ifndef NP_POSIX_SYM_MODULES
#define NP_POSIX_SYM_MODULES 128
#endif

/* ---- the Cortex-M port --------------------------------------------------------- */

/* The core clock in Hz, for bins' tick rate (SysTick) and for times in ns
 * (np_port_ns_per_tick); the firmware may set it at run time too
 * (np_cm_set_cpu_hz). 25 MHz: QEMU's mps2 boards. */
#ifndef NP_CM_CPU_HZ
#define NP_CM_CPU_HZ 25000000u
#endif
/* 1: the port defines SysTick_Handler (the clock's wraps, bins' tick)
 * and keeps SysTick running; 0: the board's handler calls
 * np_cm_systick_isr() itself each period (an RTOS's tick: CMake passes
 * -DNP_CM_SYSTICK_HANDLER=0 on to a target's library, docs/porting.md). */
#ifndef NP_CM_SYSTICK_HANDLER
#define NP_CM_SYSTICK_HANDLER 1
#endif

#endif
