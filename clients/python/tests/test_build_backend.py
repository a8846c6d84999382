"""The package's own build backend: the metadata it reads, and the wheel and sdist it writes."""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent


# The backend as pip loads it: a module of build_backend/ (pyproject.toml's backend-path).
sys.path.insert(0, str(PACKAGE_DIR / "build_backend"))
import wheel_backend as backend  # noqa: E402 (after its folder is on the path)


class BuildBackendTests(unittest.TestCase):
    def setUp(self) -> None:
        self.out = Path(tempfile.mkdtemp(prefix="tempinbox-py-build-"))
        self.addCleanup(shutil.rmtree, self.out, True)

    def test_the_reader_for_python_before_3_11_reads_pyproject_as_tomllib_does(self) -> None:
        text = (PACKAGE_DIR / "pyproject.toml").read_text("utf-8")
        table = backend.read_project_table(text)
        self.assertEqual((table["name"], table["requires-python"], table["readme"]), ("tempinbox-client", ">=3.9", "README.md"))
        try:
            import tomllib  # pyright: ignore[reportMissingTypeStubs] (Python 3.11+)
        except ImportError:
            return  # Python 3.9 and 3.10: the values above are the check
        self.assertEqual(table, tomllib.loads(text)["project"])

    def test_the_module_version_is_the_distribution_version(self) -> None:
        from tempinbox_client import __version__

        self.assertEqual(__version__, backend.read_project()["version"])

    def test_the_wheel_is_reproducible_and_its_record_holds(self) -> None:
        first = backend.build_wheel(str(self.out))
        copy = self.out / "first.whl"
        (self.out / first).rename(copy)
        self.assertEqual(backend.build_wheel(str(self.out)), first)
        self.assertEqual(copy.read_bytes(), (self.out / first).read_bytes())
        with zipfile.ZipFile(copy) as wheel:
            record = wheel.read("tempinbox_client-0.1.0.dist-info/RECORD").decode().splitlines()
            for line in record:
                path, digest, size = line.rsplit(",", 2)
                if path.endswith("RECORD"):
                    continue
                data = wheel.read(path)
                expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual((digest, int(size)), (f"sha256={expected}", len(data)), path)
            self.assertEqual(len(record), len(wheel.namelist()))

    def test_the_sdist_builds_the_same_wheel(self) -> None:
        sdist = backend.build_sdist(str(self.out))
        with tarfile.open(self.out / sdist) as archive:
            names = archive.getnames()
            # filter="data" where tarfile has it (3.12, and security releases of 3.9-3.11).
            options = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            archive.extractall(self.out / "unpacked", **options)  # type: ignore[arg-type]
        base = "tempinbox_client-0.1.0"
        for member in ("PKG-INFO", "pyproject.toml", "README.md", "build_backend/wheel_backend.py", "src/tempinbox_client/py.typed"):
            self.assertIn(f"{base}/{member}", names)
        script = "import sys; sys.path.insert(0, 'build_backend'); import wheel_backend; print(wheel_backend.build_wheel(sys.argv[1]))"
        built = subprocess.run([sys.executable, "-c", script, str(self.out)], cwd=str(self.out / "unpacked" / base), capture_output=True, check=True)
        from_sdist = self.out / built.stdout.decode().strip()
        with zipfile.ZipFile(from_sdist) as wheel:
            names_from_sdist = wheel.namelist()
        (self.out / "direct").mkdir()
        direct = backend.build_wheel(str(self.out / "direct"))
        with zipfile.ZipFile(self.out / "direct" / direct) as wheel:
            self.assertEqual(names_from_sdist, wheel.namelist())

    def test_the_metadata_follows_the_core_metadata_and_sdist_specifications(self) -> None:
        # packaging.python.org/specifications: core metadata (a header block, then the long
        # description as the body) and source distribution format ("PKG-INFO … MUST conform to
        # at least version 2.2 of the metadata specification").
        import email.parser

        sdist = backend.build_sdist(str(self.out))
        with tarfile.open(self.out / sdist) as archive:
            member = archive.extractfile("tempinbox_client-0.1.0/PKG-INFO")
            assert member is not None
            pkg_info = member.read().decode("utf-8")
        wheel_name = backend.build_wheel(str(self.out))
        with zipfile.ZipFile(self.out / wheel_name) as wheel:
            metadata = wheel.read("tempinbox_client-0.1.0.dist-info/METADATA").decode("utf-8")
            wheel_file = wheel.read("tempinbox_client-0.1.0.dist-info/WHEEL").decode("utf-8")
            self.assertTrue(wheel.namelist()[-1].endswith(".dist-info/RECORD"))
        for text in (pkg_info, metadata):
            fields = email.parser.Parser().parsestr(text)
            major, minor = (int(part) for part in fields["Metadata-Version"].split("."))
            self.assertGreaterEqual((major, minor), (2, 2))
            self.assertEqual((fields["Name"], fields["Version"], fields["Requires-Python"]), ("tempinbox-client", "0.1.0", ">=3.9"))
            self.assertEqual(fields["Description-Content-Type"], "text/markdown")
            self.assertTrue(fields.get_payload().startswith("# tempinbox-client\n"))
            self.assertIsNone(fields["Dynamic"])  # every field is static, so an sdist's wheel has the same
        self.assertEqual(pkg_info, metadata)
        wheel_fields = email.parser.Parser().parsestr(wheel_file)
        self.assertEqual((wheel_fields["Wheel-Version"], wheel_fields["Root-Is-Purelib"], wheel_fields["Tag"]), ("1.0", "true", "py3-none-any"))

    def test_the_editable_wheel_points_at_the_checkout(self) -> None:
        editable = backend.build_editable(str(self.out))
        with zipfile.ZipFile(self.out / editable) as wheel:
            self.assertEqual(wheel.read("_tempinbox_client_editable.pth").decode().strip(), str(PACKAGE_DIR / "src"))
            self.assertNotIn("tempinbox_client/__init__.py", wheel.namelist())


if __name__ == "__main__":
    unittest.main()
