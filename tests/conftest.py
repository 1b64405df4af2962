"""Shared test helpers."""

import os
import sys

import matplotlib

matplotlib.use("Agg")

HERE = os.path.dirname(__file__)
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
