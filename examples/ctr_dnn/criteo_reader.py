"""The pipe_command of the CTR example: Criteo lines on stdin -> MultiSlot lines on stdout.

    python criteo_reader.py SPARSE_FEATURE_DIM < raw_data/part-0

Counts are scaled into [0, 1] by their usual range; a categorical value becomes the id
crc32(column + value) % SPARSE_FEATURE_DIM (a stable hash: Python's own `hash` of a string changes
from process to process, and every trainer's reader must give a value the same id).
"""

import sys
import zlib

import fleetgraph.distributed.fleet as fleet

CONT_MIN = [0, -3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
CONT_DIFF = [20, 603, 100, 50, 64000, 500, 100, 50, 500, 10, 10, 10, 50]
DENSE_COLUMNS, SPARSE_COLUMNS = range(1, 14), range(14, 40)


class CriteoDataset(fleet.MultiSlotDataGenerator):
    def __init__(self, sparse_feature_dim: int) -> None:
        super().__init__()
        self.sparse_feature_dim = sparse_feature_dim

    def generate_sample(self, line):
        def reader():
            features = line.rstrip("\n").split("\t")
            dense = [
                0.0 if features[i] == "" else (float(features[i]) - CONT_MIN[i - 1]) / CONT_DIFF[i - 1]
                for i in DENSE_COLUMNS
            ]
            sparse = [[zlib.crc32(f"{i}{features[i]}".encode()) % self.sparse_feature_dim] for i in SPARSE_COLUMNS]
            yield (
                [("dense_input", dense)]
                + [(f"C{i}", ids) for i, ids in enumerate(sparse, 1)]
                + [("label", [int(features[0])])]
            )

        return reader


if __name__ == "__main__":
    CriteoDataset(int(sys.argv[1])).run_from_stdin()
