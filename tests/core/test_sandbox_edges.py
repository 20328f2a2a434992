"""The sandbox's seccomp filter (core/system/seccomp.py): Unix sockets, ptrace and the processes it does not
hold. Each attack is made from inside an allowed command, against real bwrap, as in test_sandbox.py."""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.core.errors import ToolError
from agentcli.core.system import seccomp
from agentcli.core.system.host_proxy import BRIDGE
from agentcli.core.system.sandbox import Sandbox, SandboxError
from agentcli.core.tools.shell import Bash
from tests.core.test_sandbox import bash, home, make_ctx, needs_bwrap, sandbox, workspace  # noqa: F401  (fixtures)
from tests.loopback import greet

PY = sys.executable


@pytest.fixture
def unix_server(home: Path):  # noqa: F811
    """A server of the user's on a Unix socket in $HOME, outside the sandbox, that greets whoever connects."""
    path = home / "app.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(8)
    yield path, greet(listener, b"GREETING-FROM-OUTSIDE\n")
    listener.close()


CONNECT_UNIX = "import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(100))"


@needs_bwrap
@pytest.mark.parametrize("network", [False, True], ids=["no network", "sandbox_network"])
async def test_a_unix_socket_of_the_host_cannot_be_reached(home, workspace, unix_server, network):  # noqa: F811
    path, seen = unix_server
    box = Sandbox("on", network=network)
    try:
        ok, out = await bash(make_ctx(workspace, box), f'{PY} -c "{CONNECT_UNIX}" {path}')
    finally:
        box.close()
    assert not ok and "GREETING-FROM-OUTSIDE" not in out
    assert "PermissionError: [Errno 1] Operation not permitted" in out
    assert out.endswith(
        "[If that was a socket other than TCP/UDP (a Unix socket, AF_VSOCK, AF_PACKET, …) or ptrace: "
        'agentcli\'s OS sandbox refuses them (a debugger, strace too), with "Operation not permitted". Use '
        "TCP on localhost instead (each call has a loopback of its own), or socketpair; do not retry it as "
        "it is.]"
    ), out
    assert not seen


# Each family but IP's and netlink's routing fails with EPERM (the filter's, not the kernel's own refusal of
# a family it lacks or a raw socket without the capability); TCP on the sandbox's loopback still works, and so
# do getaddrinfo's and ip's netlink questions about the sandbox's own addresses.
FAMILIES = """import errno, socket
def tried(family, kind, proto=0):
    try:
        socket.socket(family, kind, proto).close()
        return 'made'
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))
print('vsock', tried(40, socket.SOCK_STREAM))
print('packet', tried(17, socket.SOCK_DGRAM))
print('alg', tried(38, socket.SOCK_SEQPACKET))
print('generic netlink', tried(16, socket.SOCK_RAW, 16))
print('route netlink', tried(16, socket.SOCK_RAW, 0))
print('inet6', tried(socket.AF_INET6, socket.SOCK_STREAM))
server = socket.create_server(('127.0.0.1', 0))
client = socket.create_connection(server.getsockname())
conn, _ = server.accept()
client.sendall(b'loopback')
print('tcp', conn.recv(8).decode())
print('getaddrinfo', socket.getaddrinfo('127.0.0.1', 80, flags=socket.AI_ADDRCONFIG)[0][4][0])
"""


@needs_bwrap
@pytest.mark.parametrize("network", [False, True], ids=["no network", "sandbox_network"])
async def test_only_ip_and_routing_sockets_are_made(home, workspace, network):  # noqa: F811
    (workspace / "families.py").write_text(FAMILIES)
    box = Sandbox("on", network=network)
    try:
        ok, out = await bash(make_ctx(workspace, box), f"{PY} families.py")
    finally:
        box.close()
    assert ok, out
    assert out.splitlines() == [
        "vsock EPERM",
        "packet EPERM",
        "alg EPERM",
        "generic netlink EPERM",
        "route netlink made",
        "inet6 made",
        "tcp loopback",
        "getaddrinfo 127.0.0.1",
    ], out


@needs_bwrap
async def test_pipes_between_a_program_s_own_processes_still_work(sandbox, workspace):  # noqa: F811
    script = (
        "import multiprocessing, socket; a, b = socket.socketpair(); a.sendall(b'pair'); print(b.recv(4)); "
        "print(multiprocessing.get_context('fork').Pool(2).map(abs, [-1, -2]))"
    )
    ok, out = await bash(make_ctx(workspace, sandbox), f'{PY} -c "{script}"')
    assert ok and out.splitlines() == ["b'pair'", "[1, 2]"], out


PTRACE_INIT = (
    "import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
    "print('ptrace', libc.ptrace(16, 1, 0, 0), ctypes.get_errno(), flush=True)"
)  # PTRACE_ATTACH


@needs_bwrap
async def test_ptrace_of_the_sandbox_s_init_fails_and_the_call_ends(sandbox, workspace):  # noqa: F811
    """Attached, bwrap's init stopped and the call hung until its timeout: here a short one that is not hit."""
    try:
        out = await Bash().run({"command": f'{PY} -c "{PTRACE_INIT}"', "timeout": 30}, make_ctx(workspace, sandbox))
    except ToolError as exc:
        out = str(exc)
    assert "timed out" not in out
    assert out.strip() == "ptrace -1 1", out  # EPERM


# Every other process of the sandbox: whether the filter holds it, and whether its memory opens for writing
# (from there, a process without the filter could be made to do anything); and process_vm_readv of another.
STEER_OTHERS = """
import ctypes, os
me = os.getpid()
libc = ctypes.CDLL(None, use_errno=True)
print('own filter', open('/proc/self/status').read().split('Seccomp:')[1].split()[0])
for pid in sorted(int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != me):
    try:
        mode = open(f'/proc/{pid}/status').read().split('Seccomp:')[1].split()[0]
    except OSError as exc:
        mode = 'unknown'
    try:
        open(f'/proc/{pid}/mem', 'r+b').close()
        print(pid, 'filter', mode, 'opened')
    except OSError as exc:
        print(pid, 'filter', mode, 'refused', exc.errno)
buf = ctypes.create_string_buffer(8)
iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)
print('process_vm_readv', libc.process_vm_readv(os.getppid(), iov, 1, iov, 1, 0), ctypes.get_errno())
print('relay', os.environ.get('AGENTCLI_PROXY_PID'))
"""


@needs_bwrap
@pytest.mark.parametrize("hosts", [(), ("localhost",)], ids=["alone", "with the bridge to the allowed hosts"])
async def test_no_process_without_the_filter_can_be_steered(home, workspace, hosts):  # noqa: F811
    """bwrap's init (PID 1) and the bridge's relay run without the filter: their memory is out of reach."""
    (workspace / "steer.py").write_text(STEER_OTHERS)
    box = Sandbox("on", allowed_hosts=hosts)
    try:
        ok, out = await bash(make_ctx(workspace, box), f"{PY} steer.py")
    finally:
        box.close()
    lines = out.splitlines()
    assert "own filter 2" in lines, out  # SECCOMP_MODE_FILTER
    assert "1 filter unknown refused 2" in lines, out  # bwrap's init: its /proc/1 is hidden
    assert not [line for line in lines if "opened" in line and "filter 2 " not in line], out
    assert "process_vm_readv -1 1" in lines, out
    relay = lines[-1].removeprefix("relay ")
    if hosts:  # the relay was there, without the filter, and refused (EACCES: it is not dumpable)
        assert f"{relay} filter 0 refused 13" in lines, out
    else:
        assert relay == "None"


def run_filter(code: bytes, arch: int, nr: int, arg0: int = 0, arg2: int = 0) -> int:
    """What the classic BPF program ``code`` returns for a system call (the instructions seccomp allows)."""
    data = struct.pack("<IIQ6Q", nr, arch, 0, arg0, 0, arg2, 0, 0, 0)
    ops = [struct.unpack("<HBBI", code[i : i + 8]) for i in range(0, len(code), 8)]
    pc, acc = 0, 0
    while True:
        kind, jt, jf, k = ops[pc]
        if kind == 0x20:
            acc = struct.unpack_from("<I", data, k)[0]
        elif kind == 0x06:
            return k
        elif kind in (0x15, 0x35):
            pc += jt if (acc == k if kind == 0x15 else acc >= k) else jf
        else:
            raise AssertionError(f"unexpected instruction {kind:#x}")
        pc += 1


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_filter_for_each_architecture(arch):
    code, own = seccomp.program(arch), seccomp._ARCH[arch]
    other = seccomp._ARCH["aarch64" if arch == "x86_64" else "x86_64"]
    socket_nr, ptrace_nr = seccomp._SOCKET[arch], seccomp._SYSCALLS[arch]["ptrace"]
    assert run_filter(code, own, socket_nr, socket.AF_UNIX) == seccomp.DENY
    assert run_filter(code, own, socket_nr, socket.AF_INET) == seccomp.ALLOW
    assert run_filter(code, own, socket_nr, 0x1_0000_0000 | socket.AF_UNIX) == seccomp.DENY  # the kernel reads an int
    for family in (0, 17, 38, 40, 0x1_0000_0000 | 40, 0xFFFFFFFF):  # AF_UNSPEC, AF_PACKET, AF_ALG, AF_VSOCK
        assert run_filter(code, own, socket_nr, family) == seccomp.DENY, family
    assert run_filter(code, own, socket_nr, socket.AF_INET6) == seccomp.ALLOW
    assert run_filter(code, own, socket_nr, 16, 0) == run_filter(code, own, socket_nr, 16, 4) == seccomp.ALLOW
    assert run_filter(code, own, socket_nr, 16, 16) == run_filter(code, own, socket_nr, 16, 15) == seccomp.DENY
    for number in seccomp._SYSCALLS[arch].values():
        assert run_filter(code, own, number) == seccomp.DENY
    assert run_filter(code, own, 0) == run_filter(code, own, 63) == seccomp.ALLOW  # read, uname/read
    assert run_filter(code, own, 0xFFFFFFFF) == seccomp.ALLOW  # syscall(-1): ENOSYS from the kernel
    assert run_filter(code, other, 0) == run_filter(code, 0x40000003, ptrace_nr) == seccomp.KILL_PROCESS  # i386
    assert run_filter(code, own, 0x40000000 | socket_nr) == (
        seccomp.KILL_PROCESS if arch == "x86_64" else seccomp.ALLOW
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")
def test_on_an_unknown_machine_the_sandbox_is_not_usable(monkeypatch, workspace):  # noqa: F811
    monkeypatch.setattr(seccomp, "machine", lambda: "riscv64")
    with pytest.raises(SandboxError, match=r"seccomp filter for the sandbox does not know this machine \(riscv64\)"):
        Sandbox("on", bwrap="/bin/true").usable()


def test_a_filter_the_kernel_refuses_runs_nothing(tmp_path):
    planted = tmp_path / "ran"
    done = subprocess.run(
        [PY, "-I", "-S", "-c", seccomp.LOADER, "ffff000000000000", "touch", str(planted)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 126 and not planted.exists()
    assert done.stderr == (
        "agentcli's OS sandbox could not install its seccomp filter (Invalid argument), so the command was not run.\n"
    )


@needs_bwrap
@pytest.mark.skipif(seccomp.machine() != "x86_64", reason="the x32 ABI is x86-64's")
async def test_a_system_call_of_another_abi_kills_the_process(sandbox, workspace):  # noqa: F811
    """socket() by its x32 number would get past a filter that checked x86-64's numbers only."""
    script = (
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
        "print(libc.syscall(0x40000000 | 41, 1, 1, 0), ctypes.get_errno(), flush=True)"
    )
    ok, out = await bash(make_ctx(workspace, sandbox), f'{PY} -c "{script}"; echo exit=$?')
    assert "exit=159" in out, out  # 128 + SIGSYS


SOCKETCALL = """import ctypes, mmap
code = bytes.fromhex("53B866000000BB0100000031C9CD805BC3")  # push rbx; socketcall(SYS_SOCKET, NULL) by int 0x80; pop rbx
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
print("socketcall", ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))(), flush=True)
"""


@needs_bwrap
@pytest.mark.skipif(seccomp.machine() != "x86_64", reason="socketcall by int 0x80 is x86-64's 32-bit way")
async def test_the_32_bit_socketcall_is_no_way_around_the_socket_families(sandbox, workspace, tmp_path):  # noqa: F811
    """socketcall(SYS_SOCKET, …) names the family in memory, where the filter cannot read it: it must never run."""
    (workspace / "socketcall.py").write_text(SOCKETCALL)
    outside = await asyncio.to_thread(
        subprocess.run, [PY, str(workspace / "socketcall.py")], capture_output=True, text=True, timeout=60
    )
    if outside.stdout != "socketcall -14\n":  # EFAULT: the call ran (its arguments at NULL)
        pytest.skip("this kernel runs no 32-bit system calls")
    ok, out = await bash(make_ctx(workspace, sandbox), f"{PY} socketcall.py; echo exit=$?")
    assert "exit=159" in out and "socketcall" not in out.replace("socketcall.py", ""), out  # 128 + SIGSYS


def test_a_command_the_loader_cannot_find_is_one_line(tmp_path):
    done = subprocess.run(
        [PY, "-I", "-S", "-c", seccomp.LOADER, seccomp.program().hex(), "no-such-program-here"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (127, "no-such-program-here: No such file or directory\n")


# The filter reaches a command one of two ways (seccomp.py): bwrap installs it from a descriptor passed down
# (bash, hooks, the status line), or the loader does inside (an MCP server, which the SDK starts, and the
# bridge to the allowed hosts). The same attacks, through each: a Unix socket of the host, and ptrace of a
# process of the command's own (its child: allowed without the filter, and it does not hang the call).
ATTACKS = """
import ctypes, os, signal, socket, sys
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    print('unix', s.recv(100).decode().strip())
except OSError as exc:
    print('unix', exc.errno)
child = os.fork()
if child == 0:
    signal.pause()  # until the SIGKILL below
    os._exit(0)
libc = ctypes.CDLL(None, use_errno=True)
print('ptrace', libc.ptrace(16, child, 0, 0), ctypes.get_errno(), flush=True)
os.kill(child, 9)
while not os.WIFSIGNALED(os.waitpid(child, 0)[1]):
    pass
"""
REFUSED = ["unix 1", "ptrace -1 1"]  # EPERM both


@needs_bwrap
@pytest.mark.parametrize("hosts", [(), ("localhost",)], ids=["bwrap's --seccomp", "the loader, after the bridge"])
async def test_a_bash_call_refuses_both_attacks(home, workspace, unix_server, hosts):  # noqa: F811
    path, seen = unix_server
    (workspace / "attacks.py").write_text(ATTACKS)
    box = Sandbox("on", allowed_hosts=hosts)
    try:
        _, out = await bash(make_ctx(workspace, box), f"{PY} attacks.py {path}")
    finally:
        box.close()
    assert out.splitlines()[:2] == REFUSED, out
    assert not seen


@needs_bwrap
async def test_an_mcp_server_refuses_both_attacks(home, workspace, unix_server):  # noqa: F811
    """A workspace's .mcp.json runs the attacks before the server it names: the start the SDK makes (the loader)."""
    from agentcli.core.mcp.config import parse
    from agentcli.core.mcp.session_servers import McpServers
    from agentcli.core.system.secret_env import command_env
    from tests.core.test_mcp import stdio

    path, seen = unix_server
    (workspace / "attacks.py").write_text(ATTACKS)
    server = stdio()
    server["args"] = ["-c", f"{PY} attacks.py {path} > report.txt 2>&1; exec {PY} -m tests.fakes.mcp_server"]
    server["command"] = "/bin/sh"
    configs = parse({"mcpServers": {"attacker": server}}, str(workspace / ".mcp.json"), project=True)
    box = Sandbox("on")
    servers = McpServers(
        configs,
        root=workspace,
        env=command_env(),
        startup_timeout=60.0,
        tool_timeout=60.0,
        on_ready=lambda server: None,
        on_trouble=lambda text: None,
        sandbox=box,
    )
    try:
        await servers.wait_started()
        assert servers.servers["attacker"].state == "ready"
    finally:
        await servers.stop()
        box.close()
    report = (workspace / "report.txt").read_text()
    assert report.splitlines()[:2] == REFUSED, report
    assert not seen


def test_each_start_gets_the_filter_its_own_way(home, workspace):  # noqa: F811
    """bash's (a descriptor can be passed): bwrap's --seccomp, with the one program; an MCP server's (none can
    be): the loader; with the bridge to the allowed hosts: the loader, after the bridge, descriptor or not."""
    plain, bridged = Sandbox("on", bwrap="/usr/bin/bwrap"), Sandbox("on", bwrap="/usr/bin/bwrap", allowed_hosts=["x"])
    fds: list[int] = []
    try:
        by_bwrap = plain.wrap(["true"], cwd=workspace, writable=[], pass_fds=fds)
        assert len(fds) == 1 and by_bwrap[by_bwrap.index("--seccomp") + 1] == str(fds[0])
        assert os.read(fds[0], 4096) == seccomp.program() and os.read(fds[0], 1) == b""  # the one program, whole
        assert seccomp.LOADER not in by_bwrap and by_bwrap[-2:] == ["--", "true"]
        loaded = plain.wrap(["true"], cwd=workspace, writable=[])
        assert "--seccomp" not in loaded and loaded[loaded.index("--") + 1 :] == seccomp.confine(["true"])
        none: list[int] = []
        argv = bridged.wrap(["true"], cwd=workspace, writable=[], pass_fds=none)
        assert (
            none == []
            and "--seccomp" not in argv
            and argv[-len(loaded[loaded.index("--") + 1 :]) :] == seccomp.confine(["true"])
        )
        assert argv.index(BRIDGE) < argv.index(seccomp.LOADER)  # the relay first, then the filter
    finally:
        for fd in fds:
            os.close(fd)
        plain.close()
        bridged.close()


def still_open(pipes: list[tuple[int, int, int]]) -> list[int]:
    """Which of the filter's pipes (descriptor, device, inode) are still open here: the number may have gone to
    another file since (another test's thread in this worker), so the pipe is told by its inode."""

    def same(fd: int, dev: int, ino: int) -> bool:
        try:
            info = os.fstat(fd)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) == (dev, ino)

    return [fd for fd, dev, ino in pipes if same(fd, dev, ino)]


@needs_bwrap
async def test_the_descriptors_passed_to_bwrap_are_closed(home, workspace, monkeypatch):  # noqa: F811
    """bash, a workspace's hook and its status line each pass the filter down: none stays open in agentcli."""
    from agentcli.core.policy.hooks import WORKSPACE_MARK, Hooks, parse_hooks
    from agentcli.core.policy.status_command import StatusCommand

    made: list[tuple[int, int, int]] = []
    real = seccomp.descriptor

    def recorded() -> int:
        fd = real()
        info = os.fstat(fd)
        made.append((fd, info.st_dev, info.st_ino))
        return fd

    monkeypatch.setattr(seccomp, "descriptor", recorded)
    box = Sandbox("on")
    hooks = Hooks(
        parse_hooks({"Stop": [{"hooks": [{"command": "exit 0"}], WORKSPACE_MARK: True}]}, "hooks"),
        root=workspace,
        emit=lambda e: None,
        sandbox=box,
    )
    line = StatusCommand("echo status", workspace, workspace=True, sandbox=box)
    try:
        assert (await bash(make_ctx(workspace, box), "echo warm"))[0]  # the first call also tries bwrap
        assert await bash(make_ctx(workspace, box), "echo once") == (True, "once")
        await hooks.stopping(False, False, "")
        assert line.run(b"{}", lambda proc: None) == ("status", "")
        assert len(made) >= 4 and still_open(made) == []  # the probe, two bash calls, the hook and the line
    finally:
        box.close()
