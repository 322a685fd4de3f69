"""The supervisor's seccomp filter (network off) covers every ABI a process can call in on.

A 32-bit program reaches the kernel through the i386 compat entry, with its own system
call numbers; on x86_64 an x32 program uses the native architecture with bit 30 set in
the number. Either way it could make an AF_INET socket without the ``socket`` call the
filter watches (io_uring's IORING_OP_SOCKET) and send UDP. The filter's decisions are read
here with a small BPF interpreter, for every ABI, and a real i386 program (built from
``compat_udp.c`` when ``gcc -m32`` can build it) tries exactly that against a UDP socket
the test holds, as native code does with Python's socket module.
"""

from __future__ import annotations

import shutil
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from janito_system import _supervisor

from janito_core.testing import ToolsetTester

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="seccomp is Linux's")

ALLOW, KILL = 0x7FFF0000, 0x80000000
EACCES, EPERM = 0x00050000 | 13, 0x00050000 | 1

AUDIT_ARCH = {"x86_64": 0xC000003E, "i386": 0x40000003, "aarch64": 0xC00000B7,
              "arm": 0x40000028}
X32 = 0x40000000
AF_INET, AF_INET6, AF_UNIX, AF_NETLINK = 2, 10, 1, 16


def decide(program: bytes, arch: int, nr: int, arg0: int = 0) -> int:
    """What the kernel would answer for this call: classic BPF run over seccomp_data."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    code = [struct.unpack_from("=HBBI", program, offset) for offset in range(0, len(program), 8)]
    accumulator = 0
    pc = 0
    while True:
        op, true_offset, false_offset, k = code[pc]
        if op == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            accumulator = struct.unpack_from("=I", data, k)[0]
        elif op == 0x06:  # BPF_RET | BPF_K
            return k
        elif op == 0x15:  # BPF_JMP | BPF_JEQ | BPF_K
            pc += true_offset if accumulator == k else false_offset
        elif op == 0x45:  # BPF_JMP | BPF_JSET | BPF_K
            pc += true_offset if accumulator & k else false_offset
        else:
            raise AssertionError(f"instruction {op:#x} is not one this interpreter knows")
        pc += 1


@pytest.mark.parametrize("machine", sorted(_supervisor._SECCOMP_ARCHES))
def test_the_filter_refuses_other_abis_and_io_uring(machine: str) -> None:
    program = _supervisor.seccomp_program(machine)
    native = AUDIT_ARCH[machine]
    socket_nr, io_uring_setup = {"x86_64": (41, 425), "aarch64": (198, 425)}[machine]
    assert decide(program, native, socket_nr, AF_INET) == EACCES
    assert decide(program, native, socket_nr, AF_INET6) == EACCES
    assert decide(program, native, socket_nr, AF_UNIX) == ALLOW
    assert decide(program, native, socket_nr, AF_NETLINK) == ALLOW
    assert decide(program, native, io_uring_setup) == EPERM
    assert decide(program, native, 0) == ALLOW  # read, or io_setup: ordinary calls pass
    compat = {"x86_64": "i386", "aarch64": "arm"}[machine]
    # socketcall, socket, io_uring_setup, exit, read: nothing of another ABI gets through
    for nr in (102, 359, 281, 425, 1, 3):
        assert decide(program, AUDIT_ARCH[compat], nr, AF_INET) == KILL, (compat, nr)
    assert decide(program, 0xDEADBEEF, 0) == KILL
    if machine == "x86_64":
        for nr in (41, 425, 0, 1, 44):
            assert decide(program, native, X32 | nr, AF_INET) == KILL, ("x32", nr)


# -- real programs under the sandbox --------------------------------------------------------


class Listener:
    """A UDP socket on 127.0.0.1; what it received is read without waiting."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.setblocking(False)
        self.port = int(self.sock.getsockname()[1])

    def received(self) -> list[bytes]:
        # A datagram to loopback is queued on this socket before the sender's call returns,
        # so once the sandboxed program has ended, what is not here was never sent.
        got = []
        while True:
            try:
                got.append(self.sock.recv(65536))
            except BlockingIOError:
                return got


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    try:
        yield server
    finally:
        server.sock.close()


def build_compat_program(folder: Path, port: int) -> Path:
    """The i386 program of compat_udp.c aimed at ``port``, or a skip saying why not."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("needs gcc to build a 32-bit program")
    out = folder / "compat_udp"
    source = Path(__file__).with_name("compat_udp.c")
    done = subprocess.run([gcc, "-m32", "-nostdlib", "-static", "-ffreestanding", "-fno-pic",
                           "-fno-stack-protector", "-fno-builtin", "-O1", f"-DPORT={port}",
                           "-o", str(out), str(source)], capture_output=True, text=True,
                          timeout=120, check=False)
    if done.returncode != 0:
        pytest.skip(f"gcc -m32 cannot build a 32-bit program here: {done.stderr[-300:]}")
    probe = subprocess.run([str(out)], capture_output=True, timeout=60, check=False)
    if probe.returncode != 0 and b"ring" not in probe.stdout:
        pytest.skip(f"this kernel runs no i386 program with io_uring: {probe.stdout!r}")
    return out


@pytest.fixture
def system(janito: ToolsetTester, mechanism: str) -> ToolsetTester:
    janito.load("system", privileges="rwx")
    return janito


def test_a_32_bit_program_sends_no_udp_with_the_network_off(
        system: ToolsetTester, listener: Listener, monkeypatch: pytest.MonkeyPatch,
        mechanism: str) -> None:
    program = build_compat_program(system.workspace, listener.port)
    listener.received()  # the build's own check sent one: not the sandbox's doing
    result = system.call("RunBashCode", code=f"{program}")
    assert listener.received() == [], result
    if mechanism == "supervisor":
        assert result["signal"] == "SIGSYS", result  # killed at its first i386 call
        assert "32-bit" in result["sandbox"], result
    # under bubblewrap the datagram goes to the loopback of the call's own network
    # namespace, where nothing listens: sent, but to nobody
    monkeypatch.setenv("JANITO_SANDBOX", "workspace-write+network")
    granted = system.call("RunBashCode", code=f"{program}")
    assert granted["success"] is True and granted["stdout"].endswith("sent\n"), granted
    assert listener.received() == [b"janito-compat-udp"]


UDP_SEND = """
import socket
for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.sendto(b"janito-native-udp", (address, {port}))
        print("sent")
    except OSError as exc:
        print("refused:", exc.strerror)
"""


def test_native_udp_is_refused_as_tcp_is(system: ToolsetTester, listener: Listener,
                                         monkeypatch: pytest.MonkeyPatch, mechanism: str) -> None:
    result = system.call("RunPythonCode", code=UDP_SEND.format(port=listener.port))
    assert listener.received() == [], result
    if mechanism == "supervisor":
        assert result["stdout"].count("refused:") == 2, result
    monkeypatch.setenv("JANITO_SANDBOX", "workspace-write+network")
    granted = system.call("RunPythonCode", code=UDP_SEND.format(port=listener.port))
    assert granted["stdout"].startswith("sent\n"), granted
    assert listener.received() == [b"janito-native-udp"]
