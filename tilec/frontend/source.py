"""Reading a source file as Python does: a UTF-8 BOM or a PEP 263 coding cookie selects the
encoding (UTF-8 otherwise); only regular files up to MAX_SOURCE_BYTES are read, so `/dev/zero`, a
FIFO or a huge file is a clear message instead of a hang or a MemoryError."""
from __future__ import annotations

import io
import os
import stat
import tokenize
from pathlib import Path

MAX_SOURCE_BYTES = 16 * 1024 * 1024


class SourceError(Exception):
    """The file cannot be compiled as source text (the message says why)."""


def read_source(path: str) -> str:
    try:
        with open(path, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise SourceError("not a regular file")
            data = f.read(MAX_SOURCE_BYTES + 1)
    except OSError as e:
        raise SourceError(f"cannot read file: {e.strerror}") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise SourceError(f"larger than {MAX_SOURCE_BYTES // (1024 * 1024)} MiB; tilec does not compile "
                          "files this large")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as e:  # an unknown or contradictory coding cookie
        raise SourceError(str(e)) from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        raise SourceError(f"not valid {encoding} text") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\0" in text:
        raise SourceError("contains a NUL character: not Python source")
    return text


def package_root(folder: Path) -> Path:
    """The folder holding the outermost package folder above `folder` (folder itself outside packages):
    where a module named without dots is found besides the importer's folder."""
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
    return folder
