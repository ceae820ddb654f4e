#!/usr/bin/env python3
"""Samples one thread of a running process with ptrace, for scripts/device-loop-profile.

Each sample stops the thread for a moment (PTRACE_ATTACH, which stops only that thread),
reads its state before the stop, its registers, and the words of its stack that point
into executable mappings: return addresses, innermost first, mixed with stale words a
frame left behind (a stack scan, not an unwinder: the runtimes have no frame pointers).
Writes JSON: the executable mappings and the samples. scripts/loop-profile-report reads
it. Usage: loop_sampler.py TID SECONDS RATE_HZ OUT.json
"""
import ctypes
import json
import os
import struct
import sys
import time

PTRACE_GETREGS, PTRACE_ATTACH, PTRACE_DETACH = 12, 16, 17
WALL = 0x40000000  # __WALL: wait for a thread that is not the process's leader too


class Regs(ctypes.Structure):  # struct user_regs_struct, x86-64
    _fields_ = [(name, ctypes.c_ulonglong) for name in (
        "r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags "
        "rsp ss fs_base gs_base ds es fs gs").split()]


def executable_mappings(tid):
    mappings = []
    for line in open(f"/proc/{tid}/maps"):
        fields = line.split()
        low, high = (int(x, 16) for x in fields[0].split("-"))
        if "x" in fields[1]:
            mappings.append((low, high, int(fields[2], 16), fields[5] if len(fields) > 5 else ""))
    return mappings


def main():
    tid, seconds, rate, out = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.restype = ctypes.c_long
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    mappings = executable_mappings(tid)
    in_code = lambda word: any(low <= word < high for low, high, _, _ in mappings)
    memory = open(f"/proc/{tid}/mem", "rb", buffering=0)
    samples = []
    end = time.time() + seconds
    while time.time() < end:
        state = open(f"/proc/{tid}/stat").read().rsplit(")", 1)[1].split()[0]
        if libc.ptrace(PTRACE_ATTACH, tid, None, None) != 0:
            break  # the thread is gone
        os.waitpid(tid, WALL)
        regs = Regs()
        libc.ptrace(PTRACE_GETREGS, tid, None, ctypes.byref(regs))
        try:
            memory.seek(regs.rsp)
            stack = memory.read(32768)
        except OSError:
            stack = b""
        libc.ptrace(PTRACE_DETACH, tid, None, None)
        words = struct.unpack(f"<{len(stack) // 8}Q", stack[: len(stack) // 8 * 8])
        samples.append({"state": state, "pc": regs.rip, "stack": [w for w in words if in_code(w)][:60]})
        time.sleep(1.0 / rate)
    json.dump({"mappings": mappings, "samples": samples}, open(out, "w"))
    print(f"{len(samples)} samples of thread {tid}")


if __name__ == "__main__":
    main()
