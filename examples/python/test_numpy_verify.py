"""How a sampler's own test suite uses specsim_ext.check (pytest style:
run with pytest, or call the functions). The harness binary comes from
$SPECSIM_SIMULATE or PATH."""

import numpy_verify
import specsim_ext

SMALL = dict(source="dirichlet:V=100,contexts=8", trials=20000, batch=512, seed=1)


def test_verify_is_lossless():
    r = specsim_ext.check(numpy_verify.verify, **SMALL)
    assert r["verdict"] == "not_detected", r
    assert r["min_detectable_tv"] < 0.05
    # check's fields for Go rules, then the external run's.
    for k in ("verdict", "p_value", "min_detectable_quantity", "min_detectable_tv", "mode", "trials",
              "seed", "alpha_hat", "mean_emitted", "edge_verdict", "invalid_outcomes", "tests",
              "elapsed_seconds", "implementation", "external_mode", "batch", "steps_per_second"):
        assert k in r, k
    assert r["mode"] == "lossless" and r["external_mode"] == "verify" and r["batch"] == 512, r


def test_step_is_lossless():
    r = specsim_ext.check(numpy_verify.step, mode="step", **SMALL)
    assert r["verdict"] == "not_detected", r


def test_batch_row_bug_is_caught():
    r = specsim_ext.check(numpy_verify.bug_batch_rows, **SMALL)
    assert r["verdict"] == "violated", r
    assert r["edge_verdict"] == "passed", r
    assert r["p_value"] < 0.01, r


def test_conforms_to_token():
    r = specsim_ext.check(numpy_verify.verify, conform="token", **SMALL)
    assert r["verdict"] == "not_detected" and r["mode"] == "conform:token", r


def test_changed_tokens_are_violated():
    # Accepted tokens that are not the drafts sent are a sampler bug, not a
    # protocol error: counted as invalid outcomes, shown with examples.
    r = specsim_ext.check(numpy_verify.lie_drafts, **SMALL)
    assert r["verdict"] == "violated" and r["invalid_outcomes"] > 0, r
    comp = {c["name"]: c for c in r["components"]}
    assert "accepted tokens were changed" in comp["outcomes"]["detail"], comp


def test_malformed_is_an_error():
    try:
        specsim_ext.check(numpy_verify.lie_shape, **SMALL)
    except specsim_ext.CheckError as e:
        assert "emitted has shape" in str(e), e
    else:
        raise AssertionError("a malformed answer got a verdict")


if __name__ == "__main__":
    for name, f in sorted(globals().items()):
        if name.startswith("test_"):
            f()
            print("ok", name)
