"""Installed as a user installs it: a wheel built offline, a fresh venv, the example run from there."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .server_process import ServerProcess, skip_or_fail

PACKAGE_DIR = Path(__file__).resolve().parent.parent
EXAMPLE = PACKAGE_DIR / "examples" / "signup_code.py"

#: Seconds one pip or venv command may take (on a loaded machine pip starts in seconds).
TOOL_TIMEOUT = 120


def offline_env(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment without the machine's pip settings, and pip told to use no index."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON")) and k != "VIRTUAL_ENV"}
    env.update({"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"})
    env.update(extra or {})
    return env


def run(args: List[str], **kwargs: object) -> subprocess.CompletedProcess:
    done = subprocess.run(args, capture_output=True, timeout=TOOL_TIMEOUT, env=offline_env(), **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout.decode()}\n{done.stderr.decode()}")
    return done


@functools.lru_cache(maxsize=1)
def pip_version() -> Optional[Tuple[int, ...]]:
    """The version of this Python's pip, or None when it has none."""
    done = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, env=offline_env())
    if done.returncode != 0:
        return None
    return tuple(int(part) for part in done.stdout.decode().split()[1].split(".")[:2] if part.isdigit())


def venv_with(target: str, venv: Path) -> str:
    """A fresh venv with ``target`` (a wheel or a source folder) installed; its python.

    With pip 22.3 or later the machine's pip installs into a venv made without pip: the same
    install, without the seconds ensurepip takes to give the venv a pip of its own.
    """
    python = str(venv / "bin" / "python")
    if (pip_version() or ()) >= (22, 3):
        run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
        run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", target])
    else:
        run([sys.executable, "-m", "venv", str(venv)])
        run([python, "-m", "pip", "install", "--no-deps", target])
    return python


class InstallTests(unittest.TestCase):
    def setUp(self) -> None:
        if pip_version() is None:
            skip_or_fail(f"{sys.executable} has no pip to build and install the wheel with")
        if subprocess.run([sys.executable, "-c", "import venv"], capture_output=True).returncode != 0:
            skip_or_fail(f"{sys.executable} cannot make a venv (on Debian: apt-get install python3-venv)")
        self.work = Path(tempfile.mkdtemp(prefix="tempinbox-py-install-"))
        self.addCleanup(shutil.rmtree, self.work, True)

    def test_the_wheel_installs_offline_in_a_fresh_venv_and_the_example_gets_a_code(self) -> None:
        # The wheel, with nothing from a package index (the build backend is the package's own).
        run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(self.work / "wheels"), str(PACKAGE_DIR)])
        wheels = list((self.work / "wheels").glob("tempinbox_client-*-py3-none-any.whl"))
        self.assertEqual(len(wheels), 1, wheels)
        with zipfile.ZipFile(wheels[0]) as wheel:
            names = wheel.namelist()
            metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        self.assertIn("tempinbox_client/py.typed", names)
        self.assertIn("Requires-Python: >=3.9", metadata)
        self.assertFalse([n for n in names if "test" in n or n.endswith(".pyc")], names)

        venv = self.work / "venv"
        python = venv_with(str(wheels[0]), venv)
        where = run([python, "-c", "import tempinbox_client; print(tempinbox_client.__file__)"], cwd=str(self.work)).stdout.decode()
        self.assertTrue(where.startswith(str(venv)), where)

        server = ServerProcess()
        self.addCleanup(server.stop)
        example = subprocess.Popen(
            [python, str(EXAMPLE)],
            cwd=str(self.work),
            env=offline_env({"TEMPINBOX_URL": server.base_url, "TIMEOUT_SECONDS": "20"}),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.addCleanup(example.kill)
        assert example.stdout is not None and example.stderr is not None
        address = example.stdout.readline().decode().strip()
        self.assertRegex(address, r"^[a-z][a-z0-9]{9}@tempinbox\.test$")
        server.send(address, "Your sign-up code", "Welcome! Your verification code is 204816.")
        code = example.stdout.readline().decode().strip()
        self.assertEqual(example.wait(30), 0, example.stderr.read().decode())
        self.assertEqual(code, "204816")
        example.stdout.close()
        example.stderr.close()

    def test_pip_installs_the_source_folder_offline_with_build_isolation(self) -> None:
        # The build runs in an isolated environment that gets pyproject.toml's `requires`: nothing.
        python = venv_with(str(PACKAGE_DIR), self.work / "venv")
        version = run([python, "-c", "import tempinbox_client; print(tempinbox_client.__version__)"], cwd=str(self.work)).stdout.decode().strip()
        self.assertEqual(version, "0.1.0")

if __name__ == "__main__":
    unittest.main()
