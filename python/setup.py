"""The build hook of specsim-ext: the wheel ships the harness binary.

    python3 -m pip wheel --no-index --no-build-isolation --no-deps ./python

runs `go build ./cmd/simulate` in the specsim checkout that holds this
directory (with the Go on PATH; in a clone the binary is stamped with the
checkout's revision, which simulate --version shows) and puts the binary
in the wheel's scripts, so that installing the wheel puts `simulate` on
the environment's PATH next to the package (specsim_ext finds it there
first). The wheel is tagged py3-none-PLATFORM: the Python code is pure,
the binary is not. The metadata lives in pyproject.toml.
"""

import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.install import install

try:  # setuptools >= 70.1 carries bdist_wheel itself
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = "module github.com/specsim/specsim"


class BuildError(SystemExit):
    """One line that says what the build needs; setuptools prints it."""


def go_env(go, *names):
    out = subprocess.run([go, "env"] + list(names), cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


def preflight():
    """Go on PATH and this directory inside a specsim checkout, or one
    line saying which is missing; returns the go command."""
    try:
        with open(os.path.join(ROOT, "go.mod")) as f:
            first = f.readline().strip()
    except OSError:
        first = ""
    if first != MODULE or not os.path.isdir(os.path.join(ROOT, "cmd", "simulate")):
        raise BuildError("specsim-ext: %s is not a specsim checkout (no go.mod of %s with cmd/simulate): the wheel "
                         "bundles the simulate binary built from the checkout, so build it from the python/ "
                         "directory of a specsim clone" % (ROOT, MODULE.split()[1]))
    go = shutil.which("go")
    if go is None:
        raise BuildError("specsim-ext: Go is not on PATH: building the wheel compiles the simulate binary it "
                         "ships (go build ./cmd/simulate, Go 1.26 or later); install Go (https://go.dev/dl/) and "
                         "put its bin/ on PATH, e.g. PATH=$PATH:/usr/local/go/bin")
    goos, goarch, hostos, hostarch = go_env(go, "GOOS", "GOARCH", "GOHOSTOS", "GOHOSTARCH")
    if (goos, goarch) != (hostos, hostarch):
        raise BuildError("specsim-ext: GOOS/GOARCH name %s/%s, but the wheel is tagged for this machine "
                         "(%s/%s); unset GOOS and GOARCH" % (goos, goarch, hostos, hostarch))
    return go


def build_simulate(dest):
    """go build -o DEST/simulate ./cmd/simulate in the checkout ROOT."""
    go = preflight()
    os.makedirs(dest, exist_ok=True)
    out = os.path.join(dest, "simulate")
    env = dict(os.environ)
    env.setdefault("CGO_ENABLED", "0")  # a static binary: it runs wherever the wheel's platform tag says
    # -buildvcs=auto, over a GOFLAGS=-buildvcs=false default: in a clone the
    # binary carries the checkout's revision (simulate --version shows it).
    print("specsim-ext: go build -buildvcs=auto -o %s ./cmd/simulate (in %s)" % (out, ROOT))
    res = subprocess.run([go, "build", "-buildvcs=auto", "-o", out, "./cmd/simulate"], cwd=ROOT, env=env)
    if res.returncode != 0:
        raise BuildError("specsim-ext: go build ./cmd/simulate failed (exit %d); its errors are above"
                         % res.returncode)
    return out


class install_with_simulate(install):
    """install, then the simulate binary into the scripts directory (the
    wheel's .data/scripts under bdist_wheel)."""

    def run(self):
        preflight()  # before the Python files, so that a missing Go is the last line printed
        super().run()
        out = build_simulate(os.path.abspath(self.install_scripts))
        self.outputs_simulate = [out]

    def get_outputs(self):
        return super().get_outputs() + getattr(self, "outputs_simulate", [])


class BinaryDistribution(Distribution):
    """A distribution with native code (the binary), so that the package
    installs into platlib and bdist_wheel makes a platform wheel."""

    def has_ext_modules(self):
        return True


class bdist_wheel_platform(bdist_wheel):
    """A platform wheel tagged py3-none-PLATFORM: the binary depends on the
    platform, not on the Python version or ABI."""

    def run(self):
        preflight()
        # pip builds in python/build: start from an empty build/lib, so that
        # a module removed from the checkout is not shipped from an old build
        shutil.rmtree(self.get_finalized_command("build").build_lib, ignore_errors=True)
        super().run()

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


setup(distclass=BinaryDistribution,
      cmdclass={"install": install_with_simulate, "bdist_wheel": bdist_wheel_platform})
