"""The pytest plugin of specsim_ext: the fixture specsim_check.

Installed with the package (entry point pytest11), or named in a
conftest.py as pytest_plugins = ["specsim_ext.pytest_plugin"].
"""

import pytest

from . import CheckError, check, describe

#: The verdicts a check reaches (sim/check's words): the values `expect`
#: takes (any other string could never match, so it is refused).
VERDICTS = ("not_detected", "violated", "inconclusive")


@pytest.fixture
def specsim_check():
    """specsim_check(fn, mode="verify", trials=200000, expect="not_detected",
    **kw) runs `simulate check --external` on fn (the keyword arguments
    are specsim_ext.check's: source, gamma, batch, seed, sampling, rows,
    draft, k, conform, seconds, binary, ...) and returns the report. It
    fails the test with the check's own message when the verdict is not
    `expect`, or when the harness could not reach a verdict. `expect` is
    one of VERDICTS; another string raises ValueError before any check."""

    def run(fn, mode="verify", trials=200000, expect="not_detected", **kw):
        if expect not in VERDICTS:
            raise ValueError("specsim_check: expect = %r; give one of %s" % (expect, ", ".join(VERDICTS)))
        try:
            r = check(fn, mode=mode, trials=trials, **kw)
        except CheckError as e:
            pytest.fail("specsim check --external: %s" % e, pytrace=False)
        if r["verdict"] != expect:
            pytest.fail("specsim check --external: want %s\n%s" % (expect, describe(r)), pytrace=False)
        return r

    return run
