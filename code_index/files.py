"""Which files an index reads: the directories agents may name (CODE_INDEX_ROOTS), the walk of one
with its ignore rules (a default list, every ``.gitignore``), and the test for binary content.

An agent must never make the server read arbitrary files. A path is accepted only when it is
absolute, has no ``..`` and, symlinks resolved, lies under one of the roots the operator listed for
the agent's organization. The walk never follows a symlink (to a file or a directory) and reads
regular files only (a FIFO would block it).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pathspec
from django.conf import settings

from memory_platform.exceptions import ValidationError

PATH_MAX_CHARS = 1000
# Suffixes of files that are never text: skipped without being read.
BINARY_SUFFIXES = frozenset(
    [
        ".png",
        ".jpg",
        ".jpeg",
        ".gif",
        ".bmp",
        ".ico",
        ".icns",
        ".webp",
        ".tif",
        ".tiff",
        ".psd",
        ".svgz",
        ".pdf",
        ".zip",
        ".gz",
        ".tgz",
        ".bz2",
        ".xz",
        ".7z",
        ".rar",
        ".tar",
        ".jar",
        ".war",
        ".ear",
        ".class",
        ".so",
        ".dylib",
        ".dll",
        ".exe",
        ".o",
        ".obj",
        ".a",
        ".lib",
        ".pyc",
        ".pyo",
        ".pyd",
        ".whl",
        ".egg",
        ".woff",
        ".woff2",
        ".ttf",
        ".otf",
        ".eot",
        ".mp3",
        ".mp4",
        ".m4a",
        ".wav",
        ".ogg",
        ".flac",
        ".avi",
        ".mov",
        ".mkv",
        ".webm",
        ".sqlite",
        ".sqlite3",
        ".db",
        ".bin",
        ".dat",
        ".npy",
        ".npz",
        ".pkl",
        ".pickle",
        ".parquet",
        ".onnx",
        ".pt",
        ".pth",
        ".h5",
        ".iso",
        ".dmg",
        ".deb",
        ".rpm",
    ]
)
# Looked at for a NUL byte: text files have none.
SNIFF_BYTES = 8192


@dataclass(frozen=True)
class Root:
    path: Path
    organization: str | None  # None: open to every organization


def configured_roots() -> list[Root]:
    """CODE_INDEX_ROOTS: ``/srv/code`` (every organization) or ``acme=/srv/acme`` (one organization)."""
    roots = []
    for entry in settings.CODE_INDEX_ROOTS:
        slug, _, directory = entry.rpartition("=") if "=" in entry else ("", "", entry)
        roots.append(Root(Path(os.path.realpath(directory.strip())), slug.strip() or None))
    return roots


def roots_for(organization: str) -> list[Path]:
    return [root.path for root in configured_roots() if root.organization in (None, organization)]


def checked_root(raw: object, organization: str) -> Path:
    """The directory ``raw`` names, resolved, if the organization may have it indexed."""
    roots = roots_for(organization)
    if not roots:
        raise ValidationError(
            "indexing a directory on the server is turned off here (CODE_INDEX_ROOTS lists none for your "
            "organization). Send your files instead: code-index with `manifest` (path → sha256), then `files`",
            details={"field": "path"},
        )
    listed = ", ".join(str(root) for root in roots)
    if not isinstance(raw, str) or not raw.strip() or "\x00" in raw or len(raw) > PATH_MAX_CHARS:
        raise ValidationError(
            f"path must be the absolute path of a directory under {listed}", details={"field": "path"}
        )
    if not PurePosixPath(raw).is_absolute():
        raise ValidationError(
            f"path must be absolute (a directory under {listed}), not {raw!r}", details={"field": "path"}
        )
    if ".." in PurePosixPath(raw).parts:
        raise ValidationError(
            f"path must not contain '..': name the directory itself ({raw!r})", details={"field": "path"}
        )
    real = Path(os.path.realpath(raw))
    if not any(real == root or real.is_relative_to(root) for root in roots):
        raise ValidationError(
            f"{raw} is not under a directory this server indexes for you ({listed}); symlinks are resolved "
            "before this check, so a link cannot lead out of them",
            details={"field": "path"},
        )
    if not real.is_dir():
        raise ValidationError(f"{raw} is not a directory on the server", details={"field": "path"})
    return real


# --- ignore rules ------------------------------------------------------------------------------------


def default_ignore() -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(settings.CODE_INDEX_IGNORE)


def is_binary_name(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in BINARY_SUFFIXES


def ignored_by_default(path: str, spec: pathspec.GitIgnoreSpec | None = None) -> bool:
    """Whether a relative path (a manifest's) is left out whatever the repository says: the default
    ignore list (also matched against every parent directory) or a binary suffix."""
    spec = spec or default_ignore()
    parts = PurePosixPath(path).parts
    for depth in range(1, len(parts)):
        if spec.match_file("/".join(parts[:depth]) + "/"):
            return True
    return spec.match_file(path) or is_binary_name(path)


def checked_relative_path(raw: object) -> str:
    """A manifest's path: relative, forward slashes, no '..', no empty parts."""
    if not isinstance(raw, str) or not raw or len(raw) > PATH_MAX_CHARS or "\x00" in raw:
        raise ValidationError(f"each path must be a relative file path of 1-{PATH_MAX_CHARS} characters")
    path = raw.replace("\\", "/")
    parts = path.split("/")
    if path.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise ValidationError(
            f"path {raw[:100]!r} must be relative to the repository's root, like src/app.py (no leading '/', "
            "no '.' or '..' parts, no empty parts)"
        )
    return path


@dataclass(frozen=True)
class FoundFile:
    path: str  # relative, forward slashes
    absolute: Path
    size: int
    mtime_ns: int


def _lines_of(file: Path) -> list[str]:
    if not file.is_file() or file.is_symlink():
        return []
    try:
        return file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


class _Ignores:
    """The default list, the repository's .git/info/exclude and every .gitignore on the way down."""

    def __init__(self, root: Path) -> None:
        self.default = default_ignore()
        # (directory relative to the root, its rules), outer directories first: the deepest decides.
        self.specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        self._add("", _lines_of(root / ".git" / "info" / "exclude") + _lines_of(root / ".gitignore"))

    def enter(self, relative_dir: str, directory: Path) -> None:
        self._add(relative_dir, _lines_of(directory / ".gitignore"))

    def _add(self, base: str, lines: list[str]) -> None:
        if lines:
            self.specs.append((base, pathspec.GitIgnoreSpec.from_lines(lines)))

    def ignored(self, relative: str, *, directory: bool) -> bool:
        probe = relative + "/" if directory else relative
        if self.default.match_file(probe):
            return True
        verdict: bool | None = None
        for base, spec in self.specs:
            if base and not relative.startswith(base + "/"):
                continue
            result = spec.check_file(probe[len(base) + 1 :] if base else probe).include
            if result is not None:
                verdict = result
        return bool(verdict)


def walk(root: Path) -> Iterator[FoundFile]:
    """Every regular file under ``root`` that no ignore rule leaves out, in path order.

    Symlinks are never followed, to directories or to files: a link cannot lead the walk out of
    the root. What a file holds (binary, too large) is for the reader to decide.
    """
    ignores = _Ignores(root)
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        current = Path(directory)
        relative_dir = current.relative_to(root).as_posix()
        relative_dir = "" if relative_dir == "." else relative_dir
        if relative_dir:
            ignores.enter(relative_dir, current)
        dirnames[:] = [
            name
            for name in sorted(dirnames)
            if not (current / name).is_symlink()
            and not ignores.ignored(f"{relative_dir}/{name}" if relative_dir else name, directory=True)
        ]
        for name in sorted(filenames):
            relative = f"{relative_dir}/{name}" if relative_dir else name
            if ignores.ignored(relative, directory=False):
                continue
            try:
                info = os.lstat(current / name)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):  # not a symlink, FIFO, socket or device
                yield FoundFile(relative, current / name, info.st_size, info.st_mtime_ns)


def decoded(data: bytes) -> str | None:
    """The text of a file's bytes, or None if it is binary (it has a NUL byte near its start)."""
    if b"\x00" in data[:SNIFF_BYTES]:
        return None
    return data.decode("utf-8", errors="replace")
