"""Tests of the pure-Python parts of logger.py (no torch needed):
python3 -m unittest data/logger/test_logger.py"""
import json
import math
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import logger  # noqa: E402


class TransformTest(unittest.TestCase):
    # The reference values below are the ones data/transform_test.go
    # asserts for Go's Transformer, so both sides implement one transform.
    L = [math.log(0.5), math.log(0.25), math.log(0.125), math.log(0.125)]

    def close(self, a, b):
        for x, y in zip(a, b):
            self.assertAlmostEqual(x, y, places=12)

    def test_identity(self):
        self.close(logger.process_row(self.L), [0.5, 0.25, 0.125, 0.125])

    def test_temperature(self):
        # T = 0.5 squares the probabilities: 1/4, 1/16, 1/64, 1/64 over 22/64.
        self.close(logger.process_row(self.L, temperature=0.5), [16 / 22, 4 / 22, 1 / 22, 1 / 22])

    def test_top_k_ties_kept(self):
        self.close(logger.process_row(self.L, top_k=3), [0.5, 0.25, 0.125, 0.125])
        self.close(logger.process_row(self.L, top_k=2), [2 / 3, 1 / 3, 0, 0])

    def test_top_p(self):
        # mass before token 1 is 0.5 < 0.6: kept; before token 2 is 0.75 >= 0.6: cut.
        self.close(logger.process_row(self.L, top_p=0.6), [2 / 3, 1 / 3, 0, 0])
        self.close(logger.process_row(self.L, top_p=0.5), [1, 0, 0, 0])

    def test_min_p(self):
        self.close(logger.process_row(self.L, min_p=0.3), [2 / 3, 1 / 3, 0, 0])

    def test_greedy(self):
        self.assertEqual(logger.process_row([0.0, 2.0, 2.0], temperature=0), [0.0, 1.0, 0.0])

    def test_bad_logits(self):
        with self.assertRaises(ValueError):
            logger.process_row([float("nan"), 0.0])
        with self.assertRaises(ValueError):
            logger.process_row([-math.inf, -math.inf])


class VerifyTest(unittest.TestCase):
    def test_accept_all_and_bonus(self):
        p = [[0.5, 0.5], [0.5, 0.5], [0.0, 1.0]]
        q = [[0.5, 0.5], [0.5, 0.5]]
        us = iter([0.1, 0.1, 0.9])
        self.assertEqual(logger.verify([0, 1], p, q, lambda: next(us)), [0, 1, 1])

    def test_reject_residual(self):
        # p = (0.2, 0.8), q = (0.8, 0.2): x = 0 accepted w.p. 1/4; residual is one-hot on 1.
        p = [[0.2, 0.8], [0.5, 0.5]]
        q = [[0.8, 0.2]]
        us = iter([0.3, 0.0])
        self.assertEqual(logger.verify([0], p, q, lambda: next(us)), [1])


class RowTest(unittest.TestCase):
    def test_jsonl_row_schema(self):
        s = {"temperature": 0.7, "top_k": 2, "top_p": 1.0, "min_p": 0.0}
        row = logger.make_row("r", 0, 3, [1], [1, 0], [[0.0, 1.0, -math.inf]],
                              [[0.0, 1.0, 2.0], [1.0, 0.0, -math.inf]], "t", "d", s)
        self.assertEqual(sorted(row), sorted(logger.COLUMNS))
        self.assertEqual(row["q"][2], logger.F32_LOWEST)
        with tempfile.TemporaryDirectory() as d:
            sink = logger.JsonlSink(os.path.join(d, "x.jsonl"), {"writer": "test"})
            sink.write(row)
            sink.close()
            back = json.loads(open(os.path.join(d, "x.jsonl")).read())
            self.assertEqual(back["p"], [0.0, 1.0, 2.0, 1.0, 0.0, logger.F32_LOWEST])
            self.assertEqual(back["vocab_size"], 3)


class TreeTest(unittest.TestCase):
    S = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0}

    def test_sample_without_replacement(self):
        us = iter([0.0, 0.0, 0.0])
        # q = (0.5, 0.5, 0): first token 0, then 1 (renormalised), then no mass left.
        self.assertEqual(logger.sample_without_replacement([0.5, 0.5, 0.0], 3, lambda: next(us)), [0, 1])

    def test_build_tree_shape(self):
        # logits of token t after any prefix: uniform over 3 tokens.
        rows = lambda ids: [0.0, 0.0, 0.0]
        us = iter([0.1, 0.9] * 20)
        nodes = logger.build_tree([0], rows, rows, 2, 2, self.S, lambda: next(us))
        self.assertEqual([n["parent"] for n in nodes], [-1, 0, 0, 1, 1, 2, 2])
        self.assertEqual([n["depth"] for n in nodes], [0, 1, 1, 2, 2, 2, 2])
        for n in nodes[1:]:
            sibs = [m["token"] for m in nodes if m["parent"] == n["parent"]]
            self.assertEqual(len(sibs), len(set(sibs)))
        row = logger.make_tree_row("r", 0, 1, nodes, [1, 3], 2, "t", "d", self.S)
        self.assertEqual(sorted(row), sorted(logger.TREE_COLUMNS))
        self.assertEqual(row["node_q"], [0, 1, 2, -1, -1, -1, -1])
        self.assertEqual(row["node_p"], list(range(7)))
        self.assertEqual(row["gamma"], 2)
        self.assertEqual(len(row["p"]), 7 * 3)
        self.assertEqual(row["emitted_tokens"], [nodes[1]["token"], nodes[3]["token"], 2])

    def tree(self, p_root, q_root, tokens, p_kids):
        nodes = [{"parent": -1, "token": -1, "depth": 0, "kids": list(range(1, len(tokens) + 1)), "p": p_root, "q": q_root}]
        for x, pk in zip(tokens, p_kids):
            nodes.append({"parent": 0, "token": x, "depth": 1, "kids": [], "p": pk})
        return nodes

    def test_verify_tree_accept_then_bonus(self):
        nodes = self.tree([0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0, 1], [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
        us = iter([0.2, 0.5])  # accept node 1 (p/q = 1), bonus from its row: token 2
        self.assertEqual(logger.verify_tree(nodes, lambda: next(us)), ([1], 2))

    def test_verify_tree_second_child_and_residual(self):
        # p = (0.1, 0.1, 0.8), q = (0.5, 0.5, 0): node 1 (token 0) accepted w.p. 0.2.
        # Rejected: r = (0, 0, 1) and s = (0, 1, 0); node 2 (token 1) w.p. 0: the
        # extra token comes from r, token 2.
        nodes = self.tree([0.1, 0.1, 0.8], [0.5, 0.5, 0.0], [0, 1], [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
        us = iter([0.3, 0.0, 0.4])
        self.assertEqual(logger.verify_tree(nodes, lambda: next(us)), ([], 2))

    def test_verify_tree_first_token_law(self):
        # The first emitted token of a depth-1 tree of 2 children drawn without
        # replacement has law p (RSD is lossless). 100,000 runs with seed 5:
        # each frequency is within 5 standard errors (sqrt(p(1-p)/n) <= 0.0016)
        # of p, a bound exceeded with probability < 1e-5 per token.
        import random
        rng = random.Random(5)
        p, q = [0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]
        n, counts = 100000, [0] * 4
        for _ in range(n):
            toks = logger.sample_without_replacement(q, 2, rng.random)
            nodes = self.tree(p, q, toks, [p, p])
            path, extra = logger.verify_tree(nodes, rng.random)
            counts[nodes[path[0]]["token"] if path else extra] += 1
        for x in range(4):
            se = math.sqrt(p[x] * (1 - p[x]) / n)
            self.assertLess(abs(counts[x] / n - p[x]), 5 * se, "token %d: %d of %d" % (x, counts[x], n))


if __name__ == "__main__":
    unittest.main()
