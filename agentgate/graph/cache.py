"""The import graph's cache under ``.git/agentgate/graph``: compact, versioned, never trusted.

Three kinds of file, each a marshal payload behind a one-line header naming the format
version, the interpreter (marshal's format is the interpreter's), the payload's length and
its SHA-256:

- ``graph.bin``, read by every build: the assembled graph of the last build -- the tree it
  is the graph of, each path's module name, the reversed edges (graph.reverse) and the
  escalations. A plan of a tree the cache already describes reads nothing else;
- ``state.bin``, read only when a build has to patch the graph into another tree's: per
  path the blob it came from and what scanning it escalated, each module's edges, the
  edges that depend on which modules exist, the symlinks. It carries the token of the
  ``graph.bin`` it belongs to: a pair that does not match (another build replaced one
  between the two reads) is not used;
- ``blobs-*.bin`` segments, read only when a path needs resolving again without its blob
  being new (a moved file, a new top-level package): per blob, the raw imports and
  escalations. A build appends one small segment for the blobs it read; many segments are
  compacted into one.

A file that is missing, truncated, from another version or interpreter, or whose checksum
or shape is wrong is ignored (and rebuilt), never repaired. Every write goes to a temporary
file renamed into place, so a reader sees a whole old file or a whole new one.
marshal is not hardened against hostile input: the checksum catches corruption, and anyone
who can write into ``.git`` can already replace the hooks.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
import tempfile
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentgate.graph.reverse import TYPECODE, packed_fits

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

VERSION = 24  # bump when raw records or layouts change meaning (24: loaders told to build)
FILE_NAME = "graph.bin"
STATE_NAME = "state.bin"
SEGMENTS = "blobs-*.bin"
LEGACY = ("imports.bin",)  # earlier versions' files: removed by the next write
COMPACT_AT = 8  # segments
_MAGIC = b"agentgate-graph"
# marshal's format is the interpreter's; the packed ids are the machine's
_TAG = (f"{sys.implementation.cache_tag}-m{marshal.version}-{sys.byteorder}"
        f"{array(TYPECODE).itemsize}").encode()
# key -> the container type it must have (contents are the builder's)
HOT_SHAPE: dict[str, type] = {
    "context": tuple,  # what resolution depended on: schema, roots
    "tree": str,  # the id of the tree this is the graph of
    "token": str,  # names the state.bin written with it
    "tops": frozenset,  # top-level names, which decide what counts as internal
    "names": dict,  # path -> module name of every Python file
    "modules": dict,  # module -> path
    "nodes": list,  # graph.reverse.Reverse: the name table
    "flat": bytes,  # graph.reverse.Reverse.pack: every name's importers' ids, row after row
    "starts": bytes,  # graph.reverse.Reverse.pack: where each name's row starts
    "reported": tuple,  # ((path, code, detail), ...): the graph's escalations, sorted
}
STATE_SHAPE: dict[str, type] = {
    "token": str,
    "blobs": dict,  # path -> blob of every Python file
    "imports": dict,  # module -> its edges (expansions included) as packed ids of "nodes"
    "expand": dict,  # path -> (edges, probes, stars, sys.path folders): edges that depend on
    # others
    "escalations": dict,  # path -> ((code, detail), ...) from scanning and resolving
    "links": dict,  # symlink path -> (blob, target)
    "pythonpath": tuple,  # pytest's pythonpath folders the expansions were computed with
    "stored": str,  # "\n"-delimited blob ids the segments hold (as far as this writer knows)
}
# blob -> (raw imports, escalations)
BlobRecord = tuple[tuple[str, ...], tuple[tuple[str, str], ...]]


class _Bad(Exception):
    pass


@dataclass
class Cache:
    directory: Path
    hot: dict[str, Any] = field(default_factory=dict)
    status: str = "cold"  # "warm", "cold", or "rebuilt: why"
    segments: list[Path] = field(default_factory=list)
    _blobs: dict[str, BlobRecord] | None = None

    def blobs(self) -> dict[str, BlobRecord]:
        """Raw records by blob id from every readable segment, decoded on first use."""
        if self._blobs is None:
            self._blobs = {}
            for segment in self.segments:
                self._blobs.update(_read_segment(segment))
        return self._blobs

    def previous(self) -> dict[str, Any]:
        """The last build whole (graph and state) for a build to patch, or {} -- and the
        status says why -- when there is none to use."""
        if self.status != "warm":
            return {}
        try:
            state = _checked(_read(self.directory / STATE_NAME), STATE_SHAPE)
        except FileNotFoundError:
            self.status = "rebuilt: state missing"
            return {}
        except OSError as exc:
            self.status = f"rebuilt: state unreadable ({exc.strerror})"
            return {}
        except _Bad as exc:
            self.status = f"rebuilt: state {exc}"
            return {}
        if state["token"] != self.hot["token"]:
            self.status = "rebuilt: state from another build"
            return {}
        return {**state, **self.hot}


def load(directory: Path) -> Cache:
    """The graph part of the cache (the state and the segments are read if a build needs
    them)."""
    segments = sorted(directory.glob(SEGMENTS)) if directory.is_dir() else []
    try:
        hot = _checked(_read(directory / FILE_NAME), HOT_SHAPE)
        if not packed_fits(len(hot["nodes"]), hot["flat"], hot["starts"]):
            raise _Bad("corrupt")
    except FileNotFoundError:
        return Cache(directory, segments=segments)
    except OSError as exc:
        return Cache(directory, status=f"rebuilt: unreadable ({exc.strerror})",
                     segments=segments)
    except _Bad as exc:
        return Cache(directory, status=f"rebuilt: {exc}", segments=segments)
    return Cache(directory, hot, "warm", segments)


def _checked(payload: Any, shape: dict[str, type]) -> dict[str, Any]:
    if not isinstance(payload, dict) or payload.keys() != shape.keys() or not all(
        type(payload[k]) is t for k, t in shape.items()
    ):
        raise _Bad("corrupt")
    return payload


def _read(path: Path) -> Any:
    with path.open("rb") as file:
        header = file.readline(1000)
        length, checksum = _header(header)
        data = file.read(length + 1)
    if len(data) != length or _sum(data) != checksum:
        raise _Bad("corrupt")
    try:
        return marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        raise _Bad("corrupt") from None


def _header(line: bytes) -> tuple[int, bytes]:
    fields = line.rstrip(b"\n").split(b" ")
    if not line.endswith(b"\n") or len(fields) != 5 or fields[0] != _MAGIC:
        raise _Bad("not a graph cache")
    if fields[1] != str(VERSION).encode() or fields[2] != _TAG:
        raise _Bad("from another version")
    try:
        return int(fields[3]), fields[4]
    except ValueError:
        raise _Bad("corrupt header") from None


def _read_segment(path: Path) -> dict[str, BlobRecord]:
    try:
        blobs = _read(path)
    except (OSError, _Bad):
        return {}  # gone (compacted by another build) or damaged: those blobs are read again
    return blobs if isinstance(blobs, dict) else {}  # records are checked when used


def _sum(data: bytes) -> bytes:
    return hashlib.sha256(data).hexdigest().encode()


def save(cache: Cache, hot: Mapping[str, Any], state: Mapping[str, Any] | None,
         new_blobs: Mapping[str, BlobRecord],
         compacted: Mapping[str, BlobRecord] | None = None) -> None:
    """Write the graph part, the state when it changed (None: the one on disk, whose token
    ``hot`` carries, still holds) and the new blobs; ``compacted`` replaces every old
    segment. The state goes first: a reader between the two renames finds a pair whose
    tokens differ and rebuilds. A cache that cannot be written (read-only git dir, full
    disk) only makes the next build slower, so write errors are dropped."""
    with contextlib.suppress(OSError):
        cache.directory.mkdir(parents=True, exist_ok=True)
        if state is not None:
            _write(cache.directory, STATE_NAME, dict(state))
        _write(cache.directory, FILE_NAME, dict(hot))
        if compacted is not None:
            _write(cache.directory, None, dict(compacted))
            for old in cache.segments:
                old.unlink(missing_ok=True)
        elif new_blobs:
            _write(cache.directory, None, dict(new_blobs))
        for name in LEGACY:
            (cache.directory / name).unlink(missing_ok=True)


def new_token() -> str:
    return os.urandom(8).hex()


def _write(directory: Path, name: str | None, payload: dict[str, Any]) -> None:
    data = marshal.dumps(payload)
    header = b" ".join([_MAGIC, str(VERSION).encode(), _TAG, b"%d" % len(data), _sum(data)])
    fd, tmp_name = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(header + b"\n" + data)
        if name is None:  # a new segment: a fresh unique name
            name = f"blobs-{os.urandom(8).hex()}.bin"
        tmp.replace(directory / name)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class LazyMap(Mapping[str, Any]):
    """A read-only mapping whose values are decoded from bytes on first access: a plan that
    touches a few hundred modules never pays for the other 20,000."""

    def __init__(self, raw: Mapping[str, bytes], decode: Callable[[bytes], Any]) -> None:
        self._raw, self._decode = raw, decode
        self._done: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        try:
            return self._done[key]
        except KeyError:
            value = self._done[key] = self._decode(self._raw[key])
            return value

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)
