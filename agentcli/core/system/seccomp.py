"""The seccomp filter under every command of the OS sandbox (``core/system/sandbox.py``, Linux).

bwrap confines the file system, the network and the processes; a few system calls still reach past it:

- ``socket()`` of any family but IP's (``AF_INET``, ``AF_INET6``) and the routing part of netlink
  (``AF_NETLINK`` with ``NETLINK_ROUTE`` or ``NETLINK_SOCK_DIAG``: what glibc's getaddrinfo, ``ip`` and ``ss``
  ask the network namespace's own addresses with): an allow-list, so a family nobody thought of fails too.
  A Unix socket is reached by its path, and the file system's being read-only does not stop a connection,
  so any socket of the user's on the host (a server at ``~/app.sock``, an editor's, a database's) answered
  a command without network; with the network on, the host's abstract sockets (X11, some D-Bus setups)
  too. ``AF_VSOCK`` reaches the host of a virtual machine, which no network namespace covers; the others
  (``AF_PACKET``, ``AF_ALG``, generic netlink, …) are kernel surface no command needs. As Anthropic's
  sandbox runtime for Claude Code refuses Unix sockets on Linux; ``socketpair`` (pipes between a
  program's own processes: asyncio, multiprocessing's fork pool, Node) still works. x86-64's 32-bit
  ``socketcall`` cannot go around it: a 32-bit call kills the process (below).
- ``ptrace``, ``process_vm_readv``/``process_vm_writev`` and ``pidfd_getfd``: stopping, reading or
  steering another process of the sandbox; stopping bwrap's own init (PID 1) held the call until its
  timeout. Debuggers and ``strace`` do not work in the sandbox.
- ``io_uring_*``: its operations (sockets among them) are made by the kernel, past this filter.

Each of these fails with EPERM. A call from another architecture than the filter's (32-bit
``int 0x80`` on x86-64, the x32 ABI) kills the process: the numbers above would not mean the same.

One program (``program()``), installed one of two ways, whichever the start allows:

- bwrap installs it (``descriptor()``: ``--seccomp FD``, the program in a pipe passed down to bwrap) on
  the command and on its own init (PID 1), just before the command runs: the commands agentcli starts
  itself (bash, hooks, the status line), which can pass a descriptor.
- ``LOADER`` installs it inside the sandbox, after bwrap has set it up (a few lines of Python run with
  agentcli's own interpreter, ``-I -S``), and then executes the command: one interpreter start more,
  some tens of milliseconds. For an MCP server, which the SDK's stdio client starts and which cannot be
  given a descriptor, and for the bridge to the allowed hosts, whose relay must create its Unix sockets to
  the proxy before the filter holds (the bridge execs the loader once its relay runs; the relay is
  undumpable). The processes without the filter are then bwrap's init, whose ``/proc/1`` the sandbox
  hides (``HIDE_INIT``) so that nothing writes its memory, and that relay.

Either way every process the command starts inherits it, and nothing can remove it.
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Sequence

# linux/audit.h, linux/seccomp.h, linux/filter.h
_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_SYSCALLS = {  # the system calls that fail, by architecture (asm/unistd_64.h, asm-generic/unistd.h)
    "x86_64": {
        "ptrace": 101,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "pidfd_getfd": 438,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
    },
    "aarch64": {
        "ptrace": 117,
        "process_vm_readv": 270,
        "process_vm_writev": 271,
        "pidfd_getfd": 438,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
    },
}
_SOCKET = {"x86_64": 41, "aarch64": 198}
_X32 = 0x40000000  # x86-64: the x32 ABI's system call numbers have this bit
AF_INET, AF_INET6, AF_NETLINK = 2, 10, 16  # the socket families a command may create, by number (linux/socket.h)
NETLINK_ROUTE, NETLINK_SOCK_DIAG = 0, 4  # the netlink protocols it may use (linux/netlink.h)
EPERM = 1
_LD_W_ABS, _JEQ, _JGE, _RET = (
    0x20,
    0x15,
    0x35,
    0x06,
)  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, …|BPF_JGE, BPF_RET|BPF_K
_NR, _ARCH_AT, _ARG0, _ARG2 = 0, 4, 16, 32  # offsets in struct seccomp_data (the low half of args[0], args[2]
#                                              on little-endian: the kernel reads an int)
KILL_PROCESS, ALLOW, DENY = 0x80000000, 0x7FFF0000, 0x00050000 | EPERM  # SECCOMP_RET_ERRNO | EPERM

# bwrap arguments, after its --proc: bwrap's init, which the filter does not hold, out of the sandbox's sight.
HIDE_INIT = ["--tmpfs", "/proc/1", "--remount-ro", "/proc/1"]


def machine() -> str:
    return os.uname().machine


def unsupported() -> str:
    """Why the filter cannot be made here ("" when it can): the sandbox is then not usable."""
    if machine() not in _ARCH or sys.byteorder != "little":
        return f"agentcli's seccomp filter for the sandbox does not know this machine ({machine()}) yet"
    return ""


def program(arch: str | None = None) -> bytes:
    """The filter, a classic BPF program (``struct sock_filter`` after another), for ``arch`` (default: this one)."""
    arch = arch or machine()
    # (instruction, k, where to go when true, when false): a label, or None for the next instruction.
    code: list[tuple[int, int, str | None, str | None]] = [
        (_LD_W_ABS, _ARCH_AT, None, None),
        (_JEQ, _ARCH[arch], None, "kill"),
        (_LD_W_ABS, _NR, None, None),
        (_JEQ, 0xFFFFFFFF, "allow", None),
    ]  # nr -1: no system call (the kernel says ENOSYS), as libseccomp allows
    if arch == "x86_64":
        code.append((_JGE, _X32, "kill", None))
    code += [(_JEQ, number, "deny", None) for number in _SYSCALLS[arch].values()]
    code += [
        (_JEQ, _SOCKET[arch], None, "allow"),
        (_LD_W_ABS, _ARG0, None, None),  # socket(family, type, protocol)
        (_JEQ, AF_INET, "allow", None),
        (_JEQ, AF_INET6, "allow", None),
        (_JEQ, AF_NETLINK, None, "deny"),
        (_LD_W_ABS, _ARG2, None, None),
        (_JEQ, NETLINK_ROUTE, "allow", None),
        (_JEQ, NETLINK_SOCK_DIAG, "allow", "deny"),
    ]
    at = {"allow": len(code), "deny": len(code) + 1, "kill": len(code) + 2}
    ends = [ALLOW, DENY, KILL_PROCESS]

    def jump(here: int, label: str | None) -> int:
        return 0 if label is None else at[label] - here - 1

    return b"".join(
        [struct.pack("<HBBI", kind, jump(n, jt), jump(n, jf), k) for n, (kind, k, jt, jf) in enumerate(code)]
        + [struct.pack("<HBBI", _RET, 0, 0, k) for k in ends]
    )


# Inside the sandbox, before the command: install the filter (argv[1], hex), then exec the rest of argv.
# It fails closed: a filter that could not be installed runs nothing.
LOADER = r"""import ctypes, os, sys
code, argv = bytes.fromhex(sys.argv[1]), sys.argv[2:]
class Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
libc, zero = ctypes.CDLL(None, use_errno=True), ctypes.c_ulong(0)
if libc.prctl(38, ctypes.c_ulong(1), zero, zero, zero) or \
        libc.prctl(22, ctypes.c_ulong(2), ctypes.byref(Program(len(code) // 8, code)), zero, zero):
    sys.stderr.write("agentcli's OS sandbox could not install its seccomp filter (%s), so the command was not run.\n"
                     % os.strerror(ctypes.get_errno()))
    sys.exit(126)
try:
    os.execvp(argv[0], argv)
except OSError as exc:
    sys.stderr.write("%s: %s\n" % (argv[0], exc.strerror))
    sys.exit(127 if isinstance(exc, FileNotFoundError) else 126)
"""


def explain(output: str) -> str:
    """For a command that failed: what the filter may have refused it, as a line for its result ("" if nothing)."""
    if "operation not permitted" not in output.lower():
        return ""
    return (
        "[If that was a socket other than TCP/UDP (a Unix socket, AF_VSOCK, AF_PACKET, …) or ptrace: agentcli's OS "
        'sandbox refuses them (a debugger, strace too), with "Operation not permitted". Use TCP on localhost '
        "instead (each call has a loopback of its own), or socketpair; do not retry it as it is.]"
    )


def descriptor() -> int:
    """The filter in a pipe, for bwrap's ``--seccomp FD``: its read end, which the caller passes down to bwrap
    (``pass_fds``) and then closes; bwrap reads it to the end and closes its own copy before the command."""
    read, write = os.pipe()  # the program (a few hundred bytes) fits in the pipe's buffer: one write, no reader yet
    try:
        os.write(write, program())
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
    return read


def confine(argv: Sequence[str]) -> list[str]:
    """``argv`` run under the filter where no descriptor can reach bwrap: the loader first (agentcli's own
    interpreter), then the command."""
    return [sys.executable, "-I", "-S", "-c", LOADER, program().hex(), *argv]
