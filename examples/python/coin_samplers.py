"""Where a sampler takes its coins, and why it matters to the edge cases.

    simulate check --external "python3 -m specsim_ext examples/python/coin_samplers.py:inclusive_batch_coins" \\
        --source dirichlet:V=100,contexts=8 --trials 20000

The harness checks two scripted-coin edge cases (every coin exactly 0, then
just below 1): an inclusive comparison u <= p/q accepts a draft of target
probability 0 only when u is exactly 0, which random coins never give, so
only the edge cases can see it. They can only do so if the sampler's coins
are the ones the harness scripts: batch.uniforms(...) (or rng.random and
rng.uniform). A GPU or torch sampler that seeds a generator of its own from
rng.integers never sees them; the harness sees that identical rows under
identical scripted coins give different outcomes and reports the edge cases
not_exercised, never passed.

Each function is token verification (numpy_verify._verify) with the coins
taken from one place; the inclusive ones have the bug of sglang issue 35771.
"""

import numpy as np

from numpy_verify import _verify


class _BatchCoins:
    """A stand-in for the generator _verify draws from: random((B, ...))
    returns the batch's coins, batch.uniforms(...)."""

    def __init__(self, batch):
        self.batch = batch

    def random(self, shape):
        return self.batch.uniforms(*np.atleast_1d(shape)[1:])


def _own_generator(batch):
    """A generator of the sampler's own, seeded from the batch's: what a
    torch.Generator().manual_seed(rng.integers(...)) does."""
    return np.random.default_rng(int(batch.rng.integers(2**62)))


def correct_batch_coins(batch):
    """Correct, coins from the batch: not detected, edge cases passed."""
    return _verify(batch.p, batch.q, batch.drafts, _BatchCoins(batch))


def correct_own_generator(batch):
    """Correct, coins from its own generator: not detected, edge cases
    not_exercised."""
    return _verify(batch.p, batch.q, batch.drafts, _own_generator(batch))


def inclusive_batch_coins(batch):
    """Accepts while u * q <= p, coins from the batch: the coin of exactly 0
    accepts a draft of p = 0, and the edge cases are violated."""
    return _verify(batch.p, batch.q, batch.drafts, _BatchCoins(batch), inclusive=True)


def inclusive_own_generator(batch):
    """The same bug, coins from its own generator: no random coin is
    exactly 0, the statistical tests see nothing, and the edge cases are
    not_exercised (they could not test it)."""
    return _verify(batch.p, batch.q, batch.drafts, _own_generator(batch), inclusive=True)
