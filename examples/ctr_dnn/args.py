"""Command-line arguments of the CTR example's train.py."""

import argparse


def parse_args():
    p = argparse.ArgumentParser(description="CTR-DNN on Criteo-format data, locally or with parameter servers")
    p.add_argument("--is_local", type=int, default=0, help="1: train in this process; 0: a Fleet role")
    return p.parse_args()
