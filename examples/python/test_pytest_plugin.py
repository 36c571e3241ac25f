"""The pytest fixture specsim_check of the installed specsim_ext package
(run by TestWheel in a virtual environment where the wheel, simulate
included, was installed with pip, offline, and Go is off PATH)."""

import pytest

import numpy_verify
import tree_verify

SMALL = dict(source="dirichlet:V=100,contexts=8", trials=20000, batch=512, seed=1)


def test_lossless_passes(specsim_check):
    r = specsim_check(numpy_verify.verify, **SMALL)
    assert r["verdict"] == "not_detected" and r["protocol"] == 2, r


def test_tree_mode(specsim_check):
    specsim_check(tree_verify.specinfer, mode="tree", draft="iid", k=3, gamma=3,
                  source="markov:V=6", trials=20000, batch=500)


def test_bug_fails_with_the_checks_message(specsim_check):
    with pytest.raises(pytest.fail.Exception) as e:
        specsim_check(numpy_verify.bug_batch_rows, **SMALL)
    msg = str(e.value)
    assert "want not_detected" in msg and "bug_batch_rows: verdict violated (Holm-adjusted p = " in msg, msg
    assert "test position " in msg, msg


def test_expected_violation(specsim_check):
    r = specsim_check(numpy_verify.bug_zero_coin, expect="violated", **SMALL)
    assert r["edge_verdict"] == "violated", r


def test_no_verdict_fails(specsim_check):
    with pytest.raises(pytest.fail.Exception) as e:
        specsim_check(numpy_verify.lie_shape, **SMALL)
    assert "emitted has shape" in str(e.value), str(e.value)
