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


if __name__ == "__main__":
    unittest.main()
