"""The package's PEP 517 build backend, standard library only.

Why it is the package's own and not setuptools, flit_core or hatchling: docs/decisions/
0033-python-client-build-backend.md of the repository (none of them builds this package with
no package index on every Python >= 3.9 the machines have). A pure-Python package needs
little: its files in a zip, METADATA, WHEEL and RECORD (packaging.python.org/specifications/
binary-distribution-format/), and an sdist with PKG-INFO (source-distribution-format/).

Hooks: build_wheel, build_sdist and build_editable (PEP 660). Metadata is core metadata 2.2
with every field static, the same text in the wheel's METADATA and the sdist's PKG-INFO. The
output is reproducible: fixed timestamps (SOURCE_DATE_EPOCH when set), files in sorted order.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "tempinbox_client"
SOURCE = ROOT / "src"

#: Files of the sdist besides the package: what the build and a reader need.
SDIST_EXTRA = ["pyproject.toml", "README.md", "build_backend/wheel_backend.py", "examples/signup_code.py"]

#: Zip entries' time when SOURCE_DATE_EPOCH is not set: the earliest a zip can hold.
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def read_project(root: Path = ROOT) -> Dict[str, Any]:
    """The ``[project]`` table of pyproject.toml."""
    text = (root / "pyproject.toml").read_text("utf-8")
    try:
        import tomllib  # pyright: ignore[reportMissingTypeStubs] (Python 3.11+)
    except ImportError:
        return read_project_table(text)
    return dict(tomllib.loads(text)["project"])


def read_project_table(text: str) -> Dict[str, Any]:
    """``[project]`` of a pyproject.toml whose values are strings or one-line string arrays
    (TOML's basic strings are JSON strings): enough for this package's own file."""
    table: Dict[str, Any] = {}
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = line.strip("[] ")
            continue
        if current != "project":
            continue
        key, sep, value = line.partition("=")
        try:
            if not sep:
                raise ValueError("no '='")
            table[key.strip()] = json.loads(value.strip())
        except ValueError as error:
            raise ValueError(f"pyproject.toml line {number}: keep [project] values plain strings or one-line arrays ({error})") from None
    return table


def _dist_name(project: Dict[str, Any]) -> str:
    return str(project["name"]).replace("-", "_").replace(".", "_").lower()


#: Core metadata version written: 2.2 is the least an sdist's PKG-INFO may have (the source
#: distribution format), and every field of this package is static (no ``Dynamic``).
METADATA_VERSION = "2.2"


def metadata(project: Dict[str, Any], root: Path = ROOT) -> str:
    """METADATA / PKG-INFO (core metadata 2.2) with the README as the long description."""
    lines = [
        f"Metadata-Version: {METADATA_VERSION}",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project['description']}",
    ]
    if project.get("keywords"):
        lines.append("Keywords: " + ",".join(project["keywords"]))
    if project.get("license"):
        lines.append(f"License: {project['license']}")
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    lines.append(f"Requires-Python: {project['requires-python']}")
    readme = project.get("readme")
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        return "\n".join(lines) + "\n\n" + (root / readme).read_text("utf-8")
    return "\n".join(lines) + "\n"


def _zip_time() -> Tuple[int, int, int, int, int, int]:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None:
        return ZIP_EPOCH
    return max(time.gmtime(int(epoch))[:6], ZIP_EPOCH)  # type: ignore[return-value]


def _package_files() -> List[Tuple[str, bytes]]:
    """(path in the wheel, bytes) of the package's modules and its py.typed marker."""
    files: List[Tuple[str, bytes]] = []
    for path in sorted((SOURCE / PACKAGE).rglob("*")):
        if path.is_file() and (path.suffix == ".py" or path.name == "py.typed") and "__pycache__" not in path.parts:
            files.append((path.relative_to(SOURCE).as_posix(), path.read_bytes()))
    return files


def _write_wheel(directory: str, files: List[Tuple[str, bytes]]) -> str:
    project = read_project()
    name, version = _dist_name(project), str(project["version"])
    dist_info = f"{name}-{version}.dist-info"
    files = files + [
        (f"{dist_info}/METADATA", metadata(project).encode("utf-8")),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: tempinbox wheel_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record: List[str] = []
    for path, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode("utf-8")))
    filename = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files:
            entry = zipfile.ZipInfo(path, date_time=_zip_time())
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(entry, data)
    return filename


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None) -> str:
    """PEP 517: the wheel, ``<name>-<version>-py3-none-any.whl``."""
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None) -> str:
    """PEP 660: a wheel whose .pth file puts this checkout's src/ on the path."""
    return _write_wheel(wheel_directory, [(f"_{PACKAGE}_editable.pth", f"{SOURCE}\n".encode("utf-8"))])


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    """PEP 517: the source distribution, ``<name>-<version>.tar.gz``, with PKG-INFO."""
    project = read_project()
    base = f"{_dist_name(project)}-{project['version']}"
    members = [(p, (ROOT / p).read_bytes()) for p in SDIST_EXTRA]
    members += [(f"src/{path}", data) for path, data in _package_files()]
    members.append(("PKG-INFO", metadata(project).encode("utf-8")))
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    filename = f"{base}.tar.gz"
    with open(os.path.join(sdist_directory, filename), "wb") as out:
        with gzip.GzipFile(fileobj=out, mode="wb", mtime=mtime) as zipped:
            with tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for path, data in sorted(members):
                    info = tarfile.TarInfo(f"{base}/{path}")
                    info.size, info.mtime, info.mode = len(data), mtime, 0o644
                    tar.addfile(info, io.BytesIO(data))
    return filename


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    """Nothing to install before a build."""
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    """Nothing to install before a build."""
    return []


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    """Nothing to install before a build."""
    return []
