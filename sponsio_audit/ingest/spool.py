"""``Spool``: how a worker's large result reaches the main process, through a shared-memory file.

A result sent back the pool's way (pickled into its pipe) is read by the main
process's result thread in 64 KiB pieces, each needing the GIL, which the main
thread holds while it inserts rows: a chunk's ~7 MB of Arrow batches took
40-240 ms to arrive, during which the worker that sent it sat idle (measured
with ``--jobs 2`` on ``bench/ingest.py``'s 200k spans: the workers were busy
2.0-2.6 s of a 3.5-4.2 s ingest). So a worker writes the result's buffers
(pickle protocol 5, out of band) into a file of the spool's directory (in
``/dev/shm`` where there is one) and sends only the file's name and the small
pickle; the main process maps the file, removes its name at once, and builds the
result on the mapped memory without copying it (the mapping is released when
the last Arrow buffer on it is freed).

A result whose buffers are small, or that cannot be written (the directory
full, as a container's small ``/dev/shm`` can be), is sent the usual way, as is
every result outside POSIX systems.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SHM = "/dev/shm"
"""Memory-backed files on Linux; elsewhere the system's temporary directory is used."""

MIN_BYTES = 256 << 10
"""Results whose out-of-band buffers add up to less than this go the pool's way."""

PREFIX = "sponsio-audit-"
"""Spool directories are named ``PREFIX<pid>-<random>``: a spool whose process is gone
can be told and removed."""

ALIGN = 64
"""Each buffer starts at a multiple of this in the file (Arrow's buffer alignment)."""


@dataclass(frozen=True)
class Spooled:
    """A result written to ``path``: its pickle ``head`` and its buffers' (offset, size)."""

    path: str
    head: bytes
    buffers: list[tuple[int, int]]
    size: int


@dataclass(frozen=True)
class Spool:
    """A directory for one pool's results (removed, with what is left in it, by ``close``);
    None when none could be made: then every result goes the pool's way."""

    directory: str | None

    @classmethod
    def open(cls) -> Spool:
        """A new private directory (mode 0700) under ``SHM``, or the temporary directory,
        named after this process; the spools of this user's processes that are gone (killed
        before they could remove theirs: memory, in ``/dev/shm``) are removed first."""
        base = SHM if os.path.isdir(SHM) and os.access(SHM, os.W_OK | os.X_OK) else None
        root = base if base is not None else tempfile.gettempdir()
        sweep(root)
        try:
            return cls(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=root))
        except OSError:  # no room or no right to make it: the pipe still works
            return cls(None)

    def close(self) -> None:
        """Remove the directory: results landed already keep their mapped memory."""
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)


def sweep(root: str) -> None:
    """Remove ``root``'s spool directories that belong to this user and to no live process
    (POSIX only: elsewhere ``os.kill`` cannot ask whether a process lives)."""
    if os.name != "posix":
        return
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        pid, dash, _ = name[len(PREFIX) :].partition("-")
        if not (name.startswith(PREFIX) and dash and pid.isdigit()) or _alive(int(pid)):
            continue
        path = os.path.join(root, name)
        try:
            st = os.lstat(path)  # not followed: a link is never a spool
        except OSError:
            continue
        if st.st_uid == os.getuid() and stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, but is another user's
        return True
    return True


def _padded(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def ship(result: Any, directory: str | None) -> Any:
    """``result`` as a ``Spooled`` in ``directory``, or as itself when that does not pay or
    fails (small buffers, no room); a tuple element by element, each in its own file.

    One file per element, because a mapping lives as long as any buffer on it: the
    main process keeps a chunk's events (``staging.Stage``) long after it has
    inserted the chunk's spans, and with one file per result those events held
    every chunk's whole mapping (peak RSS 1,076 MiB against 685 for 1M spans).
    """
    if type(result) is tuple:
        return tuple(_ship(x, directory) for x in result)
    return _ship(result, directory)


def _ship(result: Any, directory: str | None) -> Any:
    if directory is None or os.name != "posix":  # Windows cannot remove a mapped file's name
        return result
    bufs: list[pickle.PickleBuffer] = []
    head = pickle.dumps(result, protocol=5, buffer_callback=bufs.append)
    views = [b.raw() for b in bufs]
    size = sum(_padded(v.nbytes) for v in views)
    if size < MIN_BYTES:
        return result
    try:
        fd, path = tempfile.mkstemp(dir=directory)
    except OSError:  # the directory is gone or refuses files: the usual way
        return result
    placed: list[tuple[int, int]] = []
    try:
        with os.fdopen(fd, "wb") as f:
            offset = 0
            for v in views:
                f.write(v)
                pad = _padded(v.nbytes) - v.nbytes
                if pad:
                    f.write(bytes(pad))
                placed.append((offset, v.nbytes))
                offset += v.nbytes + pad
    except OSError:  # no room (ENOSPC) or another write failure: the usual way
        _remove(path)
        return result
    return Spooled(path, head, placed, size)


def land(shipped: Any) -> Any:
    """The result ``ship`` made of a worker's result, here (its files' names removed)."""
    if type(shipped) is tuple:
        return tuple(_land(x) for x in shipped)
    return _land(shipped)


def _land(shipped: Any) -> Any:
    if not isinstance(shipped, Spooled):
        return shipped
    try:
        with open(shipped.path, "rb") as f:
            mapped = mmap.mmap(f.fileno(), shipped.size, access=mmap.ACCESS_READ)
    finally:
        _remove(shipped.path)
    whole = memoryview(mapped)
    return pickle.loads(shipped.head, buffers=[whole[o : o + n] for o, n in shipped.buffers])


def shipped(fn: Callable[[Any], Any], directory: str | None, item: Any) -> Any:
    """``ship(fn(item))``: what a worker runs (a module-level function, so it pickles)."""
    return ship(fn(item), directory)


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
