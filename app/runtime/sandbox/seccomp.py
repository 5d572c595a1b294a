"""The socket filter bubblewrap loads (``--seccomp FD``): no door from the sandbox to the desk.

A read-only bind and a network namespace do not stop ``connect()`` to a Unix socket by path:
the socket of teamdeck's bridge, a session bus, a docker or ssh agent socket all answer a
sandboxed command. seccomp sees a system call's arguments but cannot read memory behind a
pointer, so it cannot tell one socket path from another (``connect``'s ``sockaddr``,
``sendmsg``'s ``msg_name``). The filter therefore decides where the address family is an
argument, when the socket is made:

- ``socket(AF_UNIX, ...)`` is refused (``EPERM``): no path socket and no abstract socket can be
  reached, whatever the address later given to ``connect``, ``sendto`` or ``sendmsg``, and no
  socket can be bound to wait for the desk either. ``socketpair(AF_UNIX, SOCK_STREAM or
  SOCK_SEQPACKET)`` stays allowed (pipes between the command's own processes: Python's
  multiprocessing, ssh's helpers); a datagram pair is refused, since a datagram socket can be
  re-connected or sent to another address.
- ``AF_INET``/``AF_INET6`` are allowed: without the network the command is in a network
  namespace of its own, whose only interface is its own loopback (a project's tests may serve
  on 127.0.0.1); with the network on they are the network. ``AF_NETLINK`` only for
  ``NETLINK_ROUTE`` (name resolution asks it which addresses exist).
- Every other family (``AF_PACKET``, ``AF_VSOCK``, ``AF_ALG``, Bluetooth...) is refused.
- ``io_uring`` is refused (``ENOSYS``): its ``socket`` and ``connect`` operations bypass the
  system calls above. So are the x32 system calls and those of a foreign ABI (a 32-bit program
  on a 64-bit kernel has ``socketcall``), which the filter would otherwise not see.

With unix sockets allowed (``sandbox.network.allowUnixSockets`` lists paths, or
``allowAllUnixSockets`` is true) ``socket(AF_UNIX)`` is allowed: seccomp cannot hold a command
to the listed paths, so the file system does: teamdeck's home, ``~/.claude`` and ``/run/user``
stay hidden unless a listed path is inside them, and every other bound path socket in sight is
covered by an empty file (:mod:`.sockets`). The README says so.

The program is classic BPF written here (no libseccomp: its Python bindings are for the
system's Python, not a virtualenv's); :func:`run_filter` interprets it, for the tests.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

# BPF instruction classes and modes (linux/bpf_common.h).
_LD_W_ABS = 0x00 | 0x00 | 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x05 | 0x10 | 0x00  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x05 | 0x30 | 0x00  # BPF_JMP | BPF_JGE | BPF_K
_AND = 0x04 | 0x50 | 0x00  # BPF_ALU | BPF_AND | BPF_K
_RET = 0x06 | 0x00  # BPF_RET | BPF_K

RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6];
_NR, _ARCH = 0, 4


def _arg(i: int) -> int:
    """Offset of the low 32 bits of argument ``i`` (little-endian: the ints we look at)."""
    return 16 + 8 * i


def errno_ret(code: int) -> int:
    return _RET_ERRNO | (code & 0xFFFF)


AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET = 1, 2, 5
_SOCK_TYPE_MASK = 0xF
NETLINK_ROUTE = 0
_X32_BIT = 0x40000000


@dataclass(frozen=True)
class Arch:
    audit: int
    socket: int
    socketpair: int
    io_uring: tuple[int, ...] = (425, 426, 427)
    x32: bool = False


ARCHES: dict[str, Arch] = {
    "x86_64": Arch(0xC000003E, 41, 53, x32=True),
    "aarch64": Arch(0xC00000B7, 198, 199),
}


def native_arch() -> Arch | None:
    """This machine's ABI, or ``None`` where the filter is not written (the sandbox then says
    so: see :func:`filter_problem`)."""
    machine = platform.machine().lower()
    return ARCHES.get({"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine))


def filter_problem() -> str | None:
    if native_arch() is None:
        return f"no socket filter for this machine ({platform.machine()})"
    return None


class _Program:
    """A straight-line BPF program with forward jumps to labels."""

    def __init__(self) -> None:
        self.code: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def emit(self, op: int, k: int, jt: object = 0, jf: object = 0) -> None:
        self.code.append((op, jt, jf, k))

    def assemble(self) -> list[tuple[int, int, int, int]]:
        out: list[tuple[int, int, int, int]] = []
        for pc, (op, jt, jf, k) in enumerate(self.code):
            out.append((op, self._offset(pc, jt), self._offset(pc, jf), k))
        return out

    def _offset(self, pc: int, target: object) -> int:
        if isinstance(target, int):
            return target
        offset = self.labels[str(target)] - pc - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"BPF jump to {target} out of range ({offset})")
        return offset


def build_filter(*, allow_unix: bool, arch: Arch | None = None) -> list[tuple[int, int, int, int]]:
    """The filter's instructions as ``(code, jt, jf, k)`` (see the module docstring)."""
    arch = arch or native_arch()
    if arch is None:
        raise ValueError(filter_problem() or "no socket filter")
    refuse, nosys = errno_ret(errno.EPERM), errno_ret(errno.ENOSYS)
    p = _Program()
    p.emit(_LD_W_ABS, _ARCH)
    p.emit(_JEQ, arch.audit, 0, "nosys")  # another ABI: nothing it asks is seen here
    p.emit(_LD_W_ABS, _NR)
    if arch.x32:
        p.emit(_JGE, _X32_BIT, "nosys", 0)
    p.emit(_JEQ, arch.socket, "socket", 0)
    p.emit(_JEQ, arch.socketpair, "pair", 0)
    for nr in arch.io_uring:
        p.emit(_JEQ, nr, "nosys", 0)
    p.emit(_RET, RET_ALLOW)
    p.label("socket")
    p.emit(_LD_W_ABS, _arg(0))
    p.emit(_JEQ, AF_INET, "allow", 0)
    p.emit(_JEQ, AF_INET6, "allow", 0)
    p.emit(_JEQ, AF_UNIX, "allow" if allow_unix else "refuse", 0)
    p.emit(_JEQ, AF_NETLINK, 0, "refuse")
    p.emit(_LD_W_ABS, _arg(2))
    p.emit(_JEQ, NETLINK_ROUTE, "allow", "refuse")
    p.label("pair")
    p.emit(_LD_W_ABS, _arg(0))
    p.emit(_JEQ, AF_UNIX, 0, "refuse")
    if not allow_unix:
        p.emit(_LD_W_ABS, _arg(1))
        p.emit(_AND, _SOCK_TYPE_MASK)
        p.emit(_JEQ, SOCK_STREAM, "allow", 0)
        p.emit(_JEQ, SOCK_SEQPACKET, "allow", "refuse")
    p.label("allow")
    p.emit(_RET, RET_ALLOW)
    p.label("refuse")
    p.emit(_RET, refuse)
    p.label("nosys")
    p.emit(_RET, nosys)
    return p.assemble()


def filter_bytes(*, allow_unix: bool, arch: Arch | None = None) -> bytes:
    """The program as ``struct sock_filter`` records, what ``bwrap --seccomp`` reads."""
    return b"".join(
        struct.pack("=HBBI", *ins) for ins in build_filter(allow_unix=allow_unix, arch=arch)
    )


def filter_fd(*, allow_unix: bool) -> int:
    """A descriptor holding the program, positioned at its start, for ``--seccomp`` (the
    caller passes it to the child and closes it)."""
    data = filter_bytes(allow_unix=allow_unix)
    fd = os.memfd_create("teamdeck-seccomp", 0)  # not inheritable until passed on purpose
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


def run_filter(
    program: list[tuple[int, int, int, int]], nr: int, arch: int, args: tuple[int, ...] = ()
) -> int:
    """What ``program`` returns for one system call (an interpreter of the instructions this
    module emits, for the tests)."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, *(list(args) + [0] * 6)[:6])
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        if code == _LD_W_ABS:
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == _AND:
            acc &= k
        elif code in (_JEQ, _JGE):
            hit = acc == k if code == _JEQ else acc >= k
            pc += jt if hit else jf
        elif code == _RET:
            return k
        else:
            raise ValueError(f"unknown BPF instruction {code:#x}")
        pc += 1
