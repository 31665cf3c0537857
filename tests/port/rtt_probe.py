# rtt_probe.py - gdb reads a firmware's RTT ring while it runs, as a debug
# probe does (OpenOCD's src/target/rtt.c): it searches RAM for the control
# block's ID, "SEGGER RTT", with `find`; checks the up-buffer's name; then,
# while the firmware runs, reads WrOff and RdOff, appends the bytes between
# them to the capture (`dump binary memory`) and writes RdOff back, until
# the firmware ends. gdb-multiarch, attached to QEMU's gdbstub. A probe
# reads memory while the core runs; gdb stops it for a moment instead
# (SIGINT, as ^C does) every NP_RTT_POLL_MS.
#
#   NP_RTT_REMOTE=gdb.sock NP_RTT_RAM_END=0x20001000 NP_RTT_CAPTURE=capture.bin \
#   NP_RTT_POLL_MS=20 gdb-multiarch -nx -batch -x rtt_probe.py
#
# Searches RAM from 0x20000000 to NP_RTT_RAM_END (the end of the firmware's
# .bss, where a probe user would point OpenOCD's `rtt setup`). gdb has no
# symbols: it reads memory as a probe does.
# Prints "rtt: control block at ADDR", "rtt: read N bytes in M polls" and
# "rtt: ended, exit code CODE" (QEMU's microbit closes the connection
# without sending it); anything else is "rtt: error: ..." and exit status 1.
import os
import signal
import threading
import time

import gdb

RAM = 0x20000000
remote = os.environ["NP_RTT_REMOTE"]
capture = os.environ["NP_RTT_CAPTURE"]
poll = int(os.environ.get("NP_RTT_POLL_MS", "20")) / 1000.0
running = 0  # the number of the run under way, 0 while the core is stopped


def interrupter():
    """Stops the core POLL after each run starts, as ^C would: once per run,
    for a second ^C while gdb reads the stopped core would make it give up
    the connection."""
    stopped = 0
    while True:
        time.sleep(poll)
        run_now = running
        if run_now and run_now != stopped:
            stopped = run_now
            os.kill(os.getpid(), signal.SIGINT)


runs = 0


def run():
    """Lets the firmware run until the next stop; False when it ended: QEMU
    exited (the exit code in $_exitcode) or closed the connection."""
    global running, runs
    runs += 1
    running = runs
    try:
        gdb.execute("continue", to_string=True)
    except (gdb.error, KeyboardInterrupt):
        pass  # a ^C before the core resumed: it is stopped, read again
    finally:
        running = 0
    return gdb.selected_inferior().pid != 0


def u32(addr):
    return int.from_bytes(bytes(gdb.selected_inferior().read_memory(addr, 4)), "little")


def retrying(fn):
    """FN again when a ^C meant for the running core came late."""
    while True:
        try:
            return fn()
        except KeyboardInterrupt:
            continue


def find_block(end):
    # the ID's bytes (a quoted string would be put in the target's memory)
    pattern = ", ".join("0x%02x" % ord(c) for c in "SEGGER RTT")
    out = gdb.execute("find /b 0x%x, 0x%x, %s" % (RAM, end, pattern), to_string=True)
    if "Pattern not found" in out:
        return None
    return int(out.split()[0], 16)


def drain(up, buf, size):
    """The bytes between RdOff and WrOff to the capture; RdOff moved. Each
    step may be done again (a late ^C): the bytes go to a file of their own,
    RdOff is written, then the file joins the capture."""
    wr, rd = u32(up + 12), u32(up + 16)
    if wr >= size or rd >= size:
        raise gdb.GdbError("WrOff %d, RdOff %d, size %d" % (wr, rd, size))
    if wr == rd:
        return 0
    pieces = [(rd, wr)] if wr > rd else [(rd, size), (0, wr)] if wr else [(rd, size)]
    for i, (a, b) in enumerate(pieces):
        gdb.execute("dump binary memory %s.%d 0x%x 0x%x" % (capture, i, buf + a, buf + b))
    retrying(lambda: gdb.selected_inferior().write_memory(up + 16, wr.to_bytes(4, "little")))
    with open(capture, "ab") as out:
        for i in range(len(pieces)):
            with open("%s.%d" % (capture, i), "rb") as f:
                out.write(f.read())
            os.unlink("%s.%d" % (capture, i))
    return (wr - rd) % size


def main():
    open(capture, "wb").close()
    gdb.execute("set confirm off")
    gdb.execute("target remote " + remote)
    threading.Thread(target=interrupter, daemon=True).start()
    end = int(os.environ["NP_RTT_RAM_END"], 0)
    cb = None
    while cb is None:
        if not run():
            raise gdb.GdbError("the firmware ended before its control block was found")
        cb = retrying(lambda: find_block(end))
    print("rtt: control block at 0x%x" % cb)
    nup = u32(cb + 16)
    if nup < 1:
        raise gdb.GdbError("MaxNumUpBuffers %d" % nup)
    up = cb + 24  # up-buffer 0: sName, pBuffer, SizeOfBuffer, WrOff, RdOff, Flags
    name = bytes(gdb.selected_inferior().read_memory(u32(up), 9))
    name = name.split(b"\0")[0].decode("ascii", "replace")
    if name != "nanoprof":
        raise gdb.GdbError('up-buffer 0 is named "%s"' % name)
    buf, size = u32(up + 4), u32(up + 8)
    total = polls = 0
    while True:
        polls += 1
        total += retrying(lambda: drain(up, buf, size))
        if not run():
            break
    code = gdb.parse_and_eval("$_exitcode")
    print("rtt: read %d bytes in %d polls" % (total, polls))
    print("rtt: ended, exit code %s" % ("not sent" if code.type.code == gdb.TYPE_CODE_VOID else code))


try:
    main()
except Exception as e:  # noqa: BLE001 - any failure is the test's
    print("rtt: error: %s" % e)
    os._exit(1)
