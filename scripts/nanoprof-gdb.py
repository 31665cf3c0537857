# nanoprof-gdb.py - gdb's backtraces through the -pg and -mfentry hooks'
# exits (docs/instrumenting.md): `source` it in gdb (or from ~/.gdbinit).
#
# With nanoprof's hooks in a program built with -pg or -pg -mfentry
# (x86-64), each instrumented call's return address is replaced, in its
# stack slot, by a thunk's return point or by the trampoline
# (np_mcount_return), and kept on the thread's return stack. gdb's own
# unwinding stops there, or goes on into `??` frames. This unwinder finds
# the frame whose return address is in a slot the return stack holds and
# gives it its caller: the address the stack keeps, the registers as they
# are (the function has returned: it restored them). The frames of the
# thunks and the trampoline are left out of `bt` (a frame filter).
#
# The return stack: libnanoprof's np_mcount_rs_offset is its offset from
# the thread pointer (fs_base); there, a pointer to the entries and their
# count (u32 at 8); an entry is 24 bytes: the slot, then the return
# address (mcount.c asserts this layout).

import struct

import gdb
from gdb.unwinder import Unwinder

ENTRY = 24
# as they are: the callee-saved ones, and the thread pointer (the frames
# above read it)
SAVED = ("rbx", "rbp", "r12", "r13", "r14", "r15", "fs_base")


class _State:
    offset_at = None  # the address of np_mcount_rs_offset, once found
    returns = set()  # return points seen in place of a caller


def _find_offset():
    """The address of np_mcount_rs_offset, looked up outside unwinding
    (an expression may need frames)."""
    try:
        _State.offset_at = int(gdb.parse_and_eval("(unsigned long)&np_mcount_rs_offset"))
    except gdb.error:
        _State.offset_at = None


def _read(addr, size):
    return bytes(gdb.selected_inferior().read_memory(addr, size))


def _u64(addr):
    return struct.unpack("<Q", _read(addr, 8))[0]


class _FrameId:
    def __init__(self, sp, pc):  # (gdb takes gdb.Value attributes only)
        self.sp = sp
        self.pc = pc


class NanoprofUnwinder(Unwinder):
    def __init__(self):
        super().__init__("nanoprof")

    def __call__(self, pending_frame):
        if pending_frame.level() < 1 or _State.offset_at is None:
            return None
        if pending_frame.architecture().name() != "i386:x86-64":
            return None
        try:
            pc = int(pending_frame.read_register("rip"))
            sp = int(pending_frame.read_register("rsp"))
            offset = struct.unpack("<q", _read(_State.offset_at, 8))[0]
            if not offset:
                return None
            rs = (int(pending_frame.read_register("fs_base")) + offset) & 0xFFFFFFFFFFFFFFFF
            v = _u64(rs)
            n = struct.unpack("<I", _read(rs + 8, 4))[0]
            slot = sp - 8
            # newest first: a tail call's entry shares its caller's slot,
            # its return the address that stood in the slot before it
            want = _u64(slot)
            ret = None
            for i in range(n - 1, -1, -1):
                e_slot, e_ret = struct.unpack("<QQ", _read(v + i * ENTRY, 16))
                if e_slot != slot:
                    continue
                if want == pc:
                    ret = e_ret
                    break
                want = e_ret
        except (gdb.error, gdb.MemoryError, ValueError, OverflowError):
            return None
        if ret is None:
            return None
        _State.returns.add(pc)
        rip, rsp = pending_frame.read_register("rip"), pending_frame.read_register("rsp")
        info = pending_frame.create_unwind_info(_FrameId(rsp, rip))
        info.add_saved_register("rip", gdb.Value(ret).cast(rip.type))
        info.add_saved_register("rsp", rsp)
        for r in SAVED:
            info.add_saved_register(r, pending_frame.read_register(r))
        return info


class NanoprofFrameFilter:
    """Leaves the thunks' and the trampoline's frames out of `bt`."""

    def __init__(self):
        self.name = "nanoprof"
        self.priority = 100
        self.enabled = True
        gdb.frame_filters[self.name] = self

    def filter(self, frames):
        return (f for f in frames if f.inferior_frame().pc() not in _State.returns)


def _on_stop(_event):
    _find_offset()


gdb.unwinder.register_unwinder(None, NanoprofUnwinder(), replace=True)
NanoprofFrameFilter()
gdb.events.stop.connect(_on_stop)
_find_offset()
