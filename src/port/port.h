/* port.h - what the runtime's core asks of the platform, and nothing more:
 * a counter (64-bit ticks), the current thread, a critical section, the
 * default output, memory and settings where there are any, symbol names
 * where there are any, a periodic tick. As FreeRTOS does it, one folder
 * per port provides all of it (posix/, cortex_m/): port.c for the
 * functions below, and port_hot.h for what sits on the hooks' path,
 * inline, found through the include directory the build sets for NP_PORT
 * (src/CMakeLists.txt). docs/porting.md says how to write one.
 *
 * The port never calls into the runtime: what it must tell the runtime
 * (a thread ends) goes through callbacks the runtime hands it. */
#ifndef NP_PORT_H
#define NP_PORT_H

#include <stddef.h>
#include <stdint.h>
#include "../runtime/np_config.h"
#include "../common/report_format.h" /* NP_MSG: the reasons below are its values */

/* ---- clock -----------------------------------------------------------------
 * Ticks are the port's unit of time (a CPU's cycle counter, or ns), 64
 * bits, never wrapping in practice. np_port_counter(), np_port_ticks()
 * and np_port_wall_ticks() are inline, in port_hot.h. */

/* Chooses the clock, once per process (cheap after the first call). */
void np_port_clock_init(void);
/* np_port_clock_init, and switch detection for the calling OS thread
 * (once per thread): function cost calls it before measuring. */
void np_port_clock_thread(void);
/* Re-arms switch detection (np_port_switched); *SWITCHED gets the ticks
 * this OS thread spent switched out since the last resync (0 where the
 * port cannot tell). Returns the raw time now (np_port_ticks). */
uint64_t np_port_resync(uint64_t *switched);
/* Nanoseconds per tick of the chosen clock (1.0 for clocks in ns). */
double np_port_ns_per_tick(void);
/* The same, or a coarser figure at once where the exact one would make
 * the caller wait (the POSIX port measures its counter's rate). */
double np_port_ns_per_tick_soon(void);
/* np_port_ns_per_tick in 32.32 fixed point: what the core converts with
 * (ns.h), so that a target without a double-precision FPU links no
 * floating-point library. */
uint64_t np_port_ns_per_tick_q32(void);
/* The clock's name as dumps and traces give it ("tsc", "cycles", ...),
 * and the name of the one np_port_wall_ticks reads. */
const char *np_port_clock_name(void);
const char *np_port_wall_clock_name(void);

/* ---- threads --------------------------------------------------------------- */

/* The OS thread's id, as dumps print it (0 where there are no threads). */
long np_port_tid(void);
/* Lets another thread run while waiting for a lock (NP_PORT_CAN_SPIN). */
void np_port_relax(void);
/* Called once per OS thread before its first hook: ON_EXIT is called on
 * that thread when it ends (never, where threads do not end). */
void np_port_thread_start(void (*on_exit)(void));
/* FN is called on the calling OS thread when it ends (sections' state
 * goes back to their pool then); 0 when it cannot be. One FN per thread.
 * Only where NP_PORT_OS_THREADS: with one OS thread, its state is in the
 * runtime's tables. */
int np_port_at_thread_end(void (*fn)(void));

/* ---- memory and settings ------------------------------------------------------
 * For what is not on a hook's path. Where the platform has none of these,
 * they say so (NULL) and the runtime goes without. */

/* SIZE bytes of zeroed memory that is never given back, taken without a
 * lock (a signal handler may ask); NULL when there is none. */
void *np_port_map(size_t size);
/* Memory from the heap for a short while (a dump's sorted copy); NULL
 * when there is none. np_port_free(NULL) does nothing. */
void *np_port_alloc(size_t size);
void np_port_free(void *p);
/* The setting NAME (the environment on a host), or NULL. */
const char *np_port_getenv(const char *name);
/* FN runs in the child after each fork (nothing where there is none). */
void np_port_atfork_child(void (*fn)(void));

/* ---- output and names --------------------------------------------------------- */

/* Where dumps and error lines go when the program set no writer
 * (np_output_set): stderr on a host, semihosting on a target. */
void np_port_write_default(const char *bytes, size_t len);
/* Writes the name of the function containing ADDR into BUF; returns 1 when
 * a name was found, 0 when there is none (no symbols: the caller prints
 * the address). */
int np_port_symbolize(const void *addr, char *buf, size_t len);
/* The same, and *OFFSET (when found and OFFSET is not NULL) gets ADDR's
 * distance from the function's start. */
int np_port_symbolize_at(const void *addr, char *buf, size_t len, uint64_t *offset);
/* NAME (LEN bytes: a name np_port_symbolize wrote) made the name views
 * show, in place: a C++ name's short demangled form (common/demangle.h)
 * where the port can demangle; otherwise left as it is. Allocates: never
 * in a signal handler (nor is symbolizing). */
void np_port_display_name(char *name, size_t len);

/* ---- hardware event counters (sections) ---------------------------------------
 * Two counters per OS thread (Linux: user-space instructions and cache
 * misses through perf_event_open). */
#define NP_HW_EVENTS 2
/* Opens the calling thread's counters (once; they are closed when the
 * thread ends). Returns 1 when they count, 0 when refused, with *REASON
 * (if REASON is not NULL) saying why. */
int np_port_hw_open(const char **reason);
/* The calling thread's counts since np_port_hw_open; 0 when unreadable. */
int np_port_hw_read(uint64_t v[NP_HW_EVENTS]);
/* What counter I counts, as dumps print it ("instructions", ...): an NP_MSG value. */
const char *np_port_hw_name(int i);

/* ---- periodic tick (bins) -------------------------------------------------------
 * Calls FN HZ times a second until np_port_tick_stop: from a signal handler
 * on hosts, from a timer interrupt on targets. FN receives the ticks that
 * came due since the previous call without a call of their own (signal
 * blocked, process not running: timer overruns). FN must be
 * async-signal-safe. Returns the signal used (> 0; 1 where there is none),
 * or 0 with *REASON saying why the timer could not be set up. */
int np_port_tick_start(unsigned hz, void (*fn)(uint32_t late), const char **reason);
void np_port_tick_stop(void);
/* Waits US microseconds (resuming after signals). */
void np_port_delay_us(uint32_t us);
/* Calls FN every SECONDS seconds from its own thread until
 * np_port_periodic_stop; 0 when there is no such thread. */
int np_port_periodic_start(unsigned seconds, void (*fn)(void));
void np_port_periodic_stop(void);

/* -pg's entry hook calls FN(SELF, REGS) before each entry event, where it
 * sees the function's first four integer arguments (REGS: r0-r3 on ARM,
 * rdi, rsi, rdx, rcx on x86-64), SELF the function as the entry event
 * will give it, or on a 32-bit target an address at most
 * NP_CT_ARGS_REACH bytes into it (Thumb bit clear): the call trace's
 * records with arguments (NP_CALLTRACE_ARGS). A port whose hooks see no
 * arguments does nothing. */
void np_port_args_start(void (*fn)(uintptr_t self, const uintptr_t *regs));

/* ---- on a target only (NP_PORT_HOSTED 0): the GNU profiler ---------------------
 * gprof.c's needs (gprof.h). A host samples and writes gmon.out with the
 * recorder and the analysis instead, so a hosted port has none of these. */

/* -pg's entry hook, where no exit hook goes with it (NP_PG_EXITS):
 * ENTER(FN, SLOT, HOW, IRQ) for each call, FN as for the arguments
 * above, SLOT where the function keeps its return address (NULL when the
 * port cannot tell), HOW's NP_PG_TAIL when that holds the port's
 * trampoline already (a tail call) and NP_PG_LEAF when it is the copy the
 * function returns from through its link register (it saved none: it
 * makes no call), IRQ when an interrupt handler makes the call; when it
 * returns 1 the port puts its trampoline's address in the slot. The
 * trampoline calls EXIT(SP, IRQ), SP the stack pointer as the function's
 * return left it, and returns where it says. CYG: the address of
 * -finstrument-functions' entry hook: code that calls it as well gets
 * its calls from there, and ENTER is not called. */
enum { NP_PG_TAIL = 1, NP_PG_LEAF = 2 };
void np_port_calls_start(int (*enter)(uintptr_t fn, uintptr_t *slot, int how, int irq),
                         uintptr_t (*exit)(const uintptr_t *sp, int irq), uintptr_t cyg);
/* The address ENTER above gives as FN for the function at FN_START (its
 * hook's return address, past the prologue), 0 if it has no -pg hook. */
uintptr_t np_port_pg_self(const void *fn_start);

/* -pg's mcount calls FN(FROM, SELF) on each call of an instrumented
 * function: FROM an address in its caller (the return address), SELF one
 * in itself, as gmon.out's arcs want them (Thumb bit clear). NULL stops. */
void np_port_arcs_start(void (*fn)(uintptr_t from, uintptr_t self));
/* Calls FN HZ times a second from a timer interrupt with the PC it
 * interrupted. 1, or 0 with *REASON saying why not (the timer cannot tick
 * at HZ, or ticks at another rate for np_port_tick_start). */
int np_port_pc_sample_start(unsigned hz, void (*fn)(uintptr_t pc), const char **reason);
void np_port_pc_sample_stop(void);
/* The firmware's code as its link script marks it: 1 and [*START, *END),
 * or 0 where it marks none. */
int np_port_text(uintptr_t *start, uintptr_t *end);
/* FN runs once when the program ends (main returned), before it leaves.
 * One function: a later call replaces it. */
void np_port_at_exit(void (*fn)(void));
/* A file on the host (a debugger's, QEMU's): open PATH for writing,
 * binary, truncated: a handle >= 0, or < 0. Write: 0 when all of it was
 * written. */
long np_port_host_open(const char *path);
int np_port_host_write(long handle, const void *bytes, size_t len);
void np_port_host_close(long handle);

/* ---- the hot part: port_hot.h, inline ---------------------------------------------
 * Each port's port_hot.h defines:
 *   NP_PORT_TLS             the storage class of a per-OS-thread variable
 *                           (the current thread, np_cur in thread.h)
 *   NP_PORT_ADDR_BITS       bits of a code address the records keep (at
 *                           most 48: the record format's field)
 *   NP_PORT_CODE_ADDR_FITS  1 when code addresses never have bits above
 *                           those (the hooks then skip the mask)
 *   NP_PORT_CAN_SPIN        1 when a lock's holder runs while another
 *                           thread waits for it; 0 on one core, where the
 *                           holder may be the code an interrupt interrupted
 *   NP_PORT_CAN_ALLOC       1 when np_port_alloc may give memory; 0 where
 *                           it never does (a dump's sorted copy is then
 *                           not even linked)
 *   NP_PORT_HOSTED          1 where the hosted parts build (the recorder:
 *                           the hooks call it by default), else 0
 *   NP_PORT_HOOKS_MASK      1 where the hooks' leaf path for function cost
 *                           may run with interrupts masked (np_port_crit)
 *                           instead of marking the thread busy: no signal
 *                           handler and no other core share its state
 *   NP_PORT_OS_THREADS      1 where the OS runs threads the runtime does not
 *                           switch itself (the hooks then also read a
 *                           process-wide flag word); 0 where every change
 *                           of thread is an np_thread_switch
 *   NP_PORT_AT_START        the attribute of a function to run at start-up
 *                           (a constructor), or nothing where none runs
 *   uint64_t np_port_counter(void)      the raw counter
 *   int np_port_counter_is_clock(void)  np_port_ticks() reads np_port_counter()
 *                           and np_port_switched() detects switches: the
 *                           hooks' leaf paths may read the counter directly
 *   uint64_t np_port_ticks(void)        raw time for function cost, before
 *                           the thread's switched-out time is taken off
 *   uint64_t np_port_wall_ticks(void)   wall time in the same ticks:
 *                           sections and the recorder's clock
 *   uint64_t np_port_ticks_less(const volatile uint64_t *off)  (only where
 *                           NP_PORT_OS_THREADS is 0) np_port_ticks() less
 *                           *OFF, both read so that an interrupt switching
 *                           threads comes before or after both
 *   uint64_t np_port_ticks_less_masked(const volatile uint64_t *off)  (only
 *                           where NP_PORT_HOOKS_MASK is 1) the same inside
 *                           the caller's critical section
 *   int np_port_switched(void)          the OS may have switched this thread
 *                           out since its last np_port_resync
 *   np_port_crit                        what a critical section saves
 *   np_port_crit np_port_crit_enter(int *lock), np_port_crit_exit(int *lock, s)
 *                           a critical section over LOCK (a word the caller
 *                           keeps, 0 when free): safe against other threads
 *                           and against an interrupt that enters it while
 *                           the code it interrupted holds it (targets mask
 *                           interrupts; hosts spin, no signal handler takes
 *                           it: the busy flag keeps them out) */
#include "port_hot.h"

#endif
